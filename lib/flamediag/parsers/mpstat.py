"""mpstat -P ALL (text, sysstat 9-12, any locale and time format) and `mpstat -o JSON`.

Sample input::

    Linux 2.6.32-358.el6.x86_64 (ip-10-0-0-1)   05/12/2014  _x86_64_  (4 CPU)

    02:46:26 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest   %idle
    02:46:27 AM  all    0.30    0.00    5.04    0.00    0.30   11.57    0.00    0.00   82.79
    02:46:27 AM    0    1.52    0.00   15.15    0.00    1.52   59.09    0.00    0.00   22.73

Result: {"columns": [...], "intervals": [{"time": str, "cpus": {cpu: {col: pct}}}],
"average": {cpu: {col: pct}}, "cpus": int|None, "notes": [...]}. Columns lose their `%`
(`%user` of sysstat 8 becomes `usr`, `%system` becomes `sys`). `average` is the mean of the
intervals (mpstat's own `Average:` lines, kept in `reported_average`, are used only when no
interval row was readable).

Examples:
    >>> r = parse('''02:46:26 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest   %idle
    ... 02:46:27 AM  all    0.30    0.00    5.04    0.00    0.30   11.57    0.00    0.00   82.79
    ... 02:46:27 AM    0    1.52    0.00   15.15    0.00    1.52   59,09    0.00    0.00   22.73''')
    >>> r["average"]["0"]["soft"], r["intervals"][0]["time"], r["notes"]
    (59.09, '02:46:27 AM', [])
"""
from __future__ import annotations

import json
import math
from typing import Dict, List, Optional

from . import procstat
from ._builder import builds
from ._common import add_note, lines, number
from ._cpucount import SYSSTAT_BANNER

COLLECTORS = ("mpstat", "mpstat.json")
LOST_WITHOUT = {"mpstat": "per-CPU %sys/%soft unknown"}  # said when absent (and no /proc/stat fallback)
FACT_COLUMNS = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "idle")

RENAME = {"user": "usr", "system": "sys"}


def parse(text: str) -> dict:
    notes: List[str] = []
    stripped = (text or "").lstrip()
    if stripped.startswith("{"):
        return parse_json(stripped, notes)
    return _parse_text(text, notes)


def _column(token: str) -> str:
    name = token.lstrip("%").lower()
    return RENAME.get(name, name)


def _parse_text(text: str, notes: List[str]) -> dict:
    result = _empty(notes)
    columns: Optional[List[str]] = None
    averages: Dict[str, Dict[str, float]] = {}
    for line in lines(text, notes):
        tokens = line.split()
        if not tokens:
            continue
        banner = SYSSTAT_BANNER.match(line)
        if banner:
            result["cpus"] = int(banner["n"])
            continue
        if "CPU" in tokens:
            columns = _header(tokens, notes)
            continue
        if columns is None:
            continue
        _row(tokens, columns, result, averages, notes)
    if columns is None and (text or "").strip():
        add_note(notes, "mpstat: no CPU header line found (unknown format)")
    result["columns"] = columns or []
    result["average"] = _mean(result["intervals"]) or averages
    result["reported_average"] = averages
    return result


def _header(tokens: List[str], notes: List[str]) -> Optional[List[str]]:
    names = [_column(t) for t in tokens[tokens.index("CPU") + 1:]]
    if "usr" not in names or "sys" not in names:
        add_note(notes, f"mpstat: skipped a section with columns {' '.join(names[:6])} (not CPU utilisation)")
        return None
    return names


def _row(tokens, columns, result, averages, notes) -> None:
    width = len(columns) + 1
    if len(tokens) < width + 1:
        add_note(notes, "mpstat: short row(s) ignored")
        return
    cpu = tokens[-width]
    values = _values(tokens[-len(columns):])
    if (cpu != "all" and not cpu.isdecimal()) or values is None:
        add_note(notes, "mpstat: unreadable row(s) ignored")
        return
    when = " ".join(tokens[:-width])
    sample = dict(zip(columns, values))
    if when.rstrip(":").lower() in ("average", "moyenne", "durchschn.", "media", "promedio"):
        averages[cpu] = sample
        return
    intervals = result["intervals"]
    if not intervals or intervals[-1]["time"] != when or cpu in intervals[-1]["cpus"]:
        intervals.append({"time": when, "cpus": {}})
    intervals[-1]["cpus"][cpu] = sample


def _values(tokens: List[str]) -> Optional[List[float]]:
    try:  # fast path: C locale
        values = [float(t) for t in tokens]
        if math.isfinite(sum(values)):
            return values
    except ValueError:
        pass
    values = [number(t) for t in tokens]  # decimal commas
    return None if None in values else values


def average(intervals: List[dict]) -> Dict[str, Dict[str, float]]:
    """Per-CPU mean of some interval rows (e.g. those of one spike), as `average` of parse()."""
    return _mean(intervals)


def _mean(intervals: List[dict]) -> Dict[str, Dict[str, float]]:
    sums: Dict[str, Dict[str, float]] = {}
    counts: Dict[str, int] = {}
    for interval in intervals:
        for cpu, sample in interval["cpus"].items():
            target = sums.setdefault(cpu, {})
            counts[cpu] = counts.get(cpu, 0) + 1
            for col, value in sample.items():
                target[col] = target.get(col, 0.0) + value
    return {cpu: {col: round(v / counts[cpu], 2) for col, v in cols.items()} for cpu, cols in sums.items()}


def _empty(notes: List[str]) -> dict:
    return {"columns": [], "intervals": [], "average": {}, "reported_average": {}, "cpus": None, "notes": notes}


def parse_json(text: str, notes: Optional[List[str]] = None) -> dict:
    """`mpstat -o JSON` output.

    Examples:
        >>> r = parse('{"sysstat": {"hosts": [{"number-of-cpus": 1, "statistics": [{"timestamp": "07:08:04",'
        ...           ' "cpu-load": [{"cpu": "0", "usr": 1.0, "sys": 80.2, "soft": 3}]}]}]}}')
        >>> r["average"]["0"]["sys"], r["cpus"]
        (80.2, 1)
    """
    notes = [] if notes is None else notes
    result = _empty(notes)
    try:
        doc = json.loads(text)
        host = doc["sysstat"]["hosts"][0]
        statistics = host.get("statistics") or []
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        add_note(notes, "mpstat JSON: unreadable or unknown structure")
        return result
    if isinstance(host.get("number-of-cpus"), int):
        result["cpus"] = host["number-of-cpus"]
    columns: List[str] = []
    for stat in statistics:
        interval = _json_interval(stat, columns, notes)
        if interval:
            result["intervals"].append(interval)
    result["columns"] = columns
    result["average"] = _mean(result["intervals"])
    return result


def _json_interval(stat, columns: List[str], notes: List[str]) -> Optional[dict]:
    loads = stat.get("cpu-load", stat.get("cpu-load-all")) if isinstance(stat, dict) else None
    if not isinstance(loads, list):
        add_note(notes, "mpstat JSON: statistics entry without cpu-load ignored")
        return None
    interval = {"time": str(stat.get("timestamp", "")), "cpus": {}}
    for load in loads:
        if not isinstance(load, dict) or "cpu" not in load:
            add_note(notes, "mpstat JSON: cpu-load entry without cpu ignored")
            continue
        sample = {_column(k): float(v) for k, v in load.items()
                  if k != "cpu" and isinstance(v, (int, float)) and not isinstance(v, bool)}
        for col in sample:
            if col not in columns:
                columns.append(col)
        interval["cpus"][str(load["cpu"])] = sample
    return interval


# --- facts ---------------------------------------------------------------------------------------

@builds("mpstat.<col>_pct.avg", "mpstat.<col>_pct.<cpu>", "mpstat.soft_pct.max", "mpstat.soft_pct.max_cpu",
        "mpstat.soft_pct.concentration", "mpstat.<col>_pct.vs_rest", "mpstat.sys_pct.max",
        "mpstat.sys_pct.max_cpu", "mpstat.sys_pct.concentration", "mpstat.irq_pct.max",
        "mpstat.irq_pct.max_cpu", "mpstat.irq_pct.concentration", "cpus",
        uses=("cpus",), series=("mpstat", "mpstat.intervals", "procstat.intervals"))
def utilisation_facts(src) -> None:
    """Per-CPU window averages: mpstat text, else its JSON, else (no sysstat) the procstat series or
    the proc.stat snapshots. Sets `cpus` only when the manifest and lscpu did not."""
    averages, path, bad, intervals = None, None, False, []
    for name in COLLECTORS:
        result, path, bad = src.parsed(name, parse)
        if result and result["average"]:
            averages, intervals = result["average"], result["intervals"]
            break
    if averages is None:
        averages, path, bad = _procstat_utilisation(src)
    if not averages:
        return
    src.seen("mpstat")
    src.facts.series["mpstat"] = averages
    _column_facts(src.facts, averages, path, bad)
    if intervals:
        src.facts.series["mpstat.intervals"] = intervals
        _coverage(src, len(intervals), path)


def _coverage(src, count: int, path: Optional[str]) -> None:
    window = src.window_seconds()
    if window and window >= 5 and count < 0.5 * window:
        src.facts.warn(f"{path}: mpstat covers {count} s of the {window:g} s window: per-CPU averages may miss the spike")


def _procstat_utilisation(src):
    """Fallback without sysstat: the procstat window series, else proc.stat start/end."""
    result, path, bad = src.parsed("procstat", procstat.parse_series_result)
    if result and len(result["series"]) >= 2:
        series = result["series"]
        src.facts.series["procstat.intervals"] = [
            {"time": "", "epoch": epoch, "cpus": procstat.utilisation(before, after)}
            for (_, before), (epoch, after) in zip(series, series[1:])]
        first, last = series[0][1], series[-1][1]
        return procstat.utilisation(first, last), path, bad
    start, end, path, bad = src.pair("proc.stat", procstat.parse)
    if start is None:
        return None, None, False
    return procstat.utilisation(start, end), path, bad


def restricted_to(facts, intervals: List[dict]):
    """A copy of `facts` whose `mpstat.*` facts are averages over `intervals` only (the rows of
    a spike or of a --from/--to range, in `facts.series["mpstat.intervals"]` form); every other
    fact (settings, start/end counter deltas) stays the whole window's."""
    copy = type(facts)()
    path = facts.source("mpstat.sys_pct.avg") or facts.source("mpstat.usr_pct.avg")
    bad = facts.unverified("mpstat.sys_pct.avg")
    for name, value in facts.items():
        if not name.startswith("mpstat."):
            copy.set(name, value, facts.source(name), facts.unverified(name))
    copy.data_quality = list(facts.data_quality)
    copy.series = dict(facts.series)
    copy.collectors_read = set(facts.collectors_read)
    copy.made_by = dict(facts.made_by)
    averages = average(intervals)
    if averages:
        _column_facts(copy, averages, path, bad)
    return copy


def _column_facts(facts, averages: Dict[str, Dict[str, float]], path, bad) -> None:
    per_cpu = {cpu: cols for cpu, cols in averages.items() if cpu.isdecimal()}
    for column in FACT_COLUMNS:
        if "all" in averages and column in averages["all"]:
            facts.set(f"mpstat.{column}_pct.avg", averages["all"][column], path, bad)
        for cpu, cols in per_cpu.items():
            if column in cols:
                facts.set(f"mpstat.{column}_pct.{cpu}", cols[column], path, bad)
    if "all" not in averages and per_cpu:
        for column in FACT_COLUMNS:
            values = [cols[column] for cols in per_cpu.values() if column in cols]
            if values:
                facts.set(f"mpstat.{column}_pct.avg", round(sum(values) / len(values), 2), path, bad)
    for column in ("soft", "sys", "irq"):
        _hottest(facts, column, per_cpu, path, bad)
    if not facts.has("cpus") and per_cpu:
        facts.set("cpus", len(per_cpu), path, bad)


def _hottest(facts, column: str, per_cpu: Dict[str, Dict[str, float]], path, bad) -> None:
    values = {int(cpu): cols[column] for cpu, cols in per_cpu.items() if column in cols}
    if not values:
        return
    top = max(sorted(values), key=lambda cpu: values[cpu])
    facts.set(f"mpstat.{column}_pct.max", values[top], path, bad)
    facts.set(f"mpstat.{column}_pct.max_cpu", top, path, bad)
    mean = sum(values.values()) / len(values)
    concentration = round(values[top] / mean, 3) if mean > 0 else 1.0
    facts.set(f"mpstat.{column}_pct.concentration", concentration, path, bad)
    if len(values) >= 2:
        # max/mean can never exceed the CPU count (2 on a 2-CPU host), so also compare the hottest
        # CPU with the mean of the others; the 0.5 % floor keeps an idle rest from dividing by 0.
        rest = [v for cpu, v in values.items() if cpu != top]
        facts.set(f"mpstat.{column}_pct.vs_rest", round(values[top] / max(sum(rest) / len(rest), 0.5), 3), path, bad)
