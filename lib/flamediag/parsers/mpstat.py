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
import re
from typing import Dict, List, Optional

from ._common import add_note, lines, number

RENAME = {"user": "usr", "system": "sys"}
_BANNER = re.compile(r"^Linux\s+\S+.*\((\d+) CPU\)")


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
        banner = _BANNER.match(line)
        if banner:
            result["cpus"] = int(banner.group(1))
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
