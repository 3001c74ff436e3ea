"""The facts layer: collector output (through the bundle reader) -> one flat `name -> value` mapping.

Playbook checks read facts, never raw files (doc/facts.md lists every name). Each fact remembers the
bundle file it came from and whether that file failed SHA256SUMS. Parser notes, unusable windows and
missing collectors that matter become `data_quality` sentences.

    facts = build_facts(bundle)              # bundle: flamediag.bundle.Bundle or anything duck-typed
    facts.get("sysctl.vm.zone_reclaim_mode")   # 1
    facts.source("mpstat.soft_pct.0")          # 'metrics/mpstat.txt'
    facts.series["mpstat"]                      # {cpu: {col: pct}} per-CPU window averages

Examples:
    >>> f = build_facts_from_sections({"sysctl": "vm.zone_reclaim_mode = 1",
    ...     "numactl.hardware": "available: 2 nodes (0-1)\\nnode distances:\\nnode 0 1\\n 0: 10 21\\n 1: 21 10"})
    >>> f.get("sysctl.vm.zone_reclaim_mode"), f.get("numa.max_distance"), f.source("numa.nodes")
    (1, 21, 'pasted:numactl.hardware')
"""
from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .parsers import (audit, clocksource, cpufreq, dmesg, ethtool, interrupts, loadavg, memcg,
                      modparams, mpstat, nicirqs, numactl, numastat, pidstat, pressure, procstat,
                      procvmstat, schedknobs, softirqs, softnet, ss, sysctl, thp, tuned, vmstat)

MPSTAT_COLUMNS = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "idle")
# Collectors whose absence weakens a diagnosis: name -> what is lost.
IMPORTANT = {
    "mpstat": "per-CPU %sys/%soft unknown",
    "sysctl": "kernel settings (vm.zone_reclaim_mode ...) unknown",
    "proc.vmstat": "reclaim/compaction counters unknown",
    "proc.softirqs": "per-CPU softirq counts unknown",
    "numactl.hardware": "NUMA topology unknown",
    "thp": "transparent huge page settings unknown",
}


class Facts:
    """Flat facts with provenance. Absent facts stay absent (a check then says "not captured")."""

    def __init__(self) -> None:
        self._values: Dict[str, Any] = {}
        self._sources: Dict[str, Optional[str]] = {}
        self._unverified: set = set()
        self.data_quality: List[str] = []
        self.series: Dict[str, Any] = {}
        self.collectors_read: set = set()  # collector names that yielded facts

    def set(self, name: str, value: Any, source: Optional[str], unverified: bool = False) -> None:
        if value is None:
            return
        self._values[name] = value
        self._sources[name] = source
        if unverified:
            self._unverified.add(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def has(self, name: str) -> bool:
        return name in self._values

    def source(self, name: str) -> Optional[str]:
        return self._sources.get(name)

    def unverified(self, name: str) -> bool:
        return name in self._unverified

    def items(self) -> Iterator[Tuple[str, Any]]:
        return iter(sorted(self._values.items()))

    def as_dict(self) -> Dict[str, Any]:
        return dict(sorted(self._values.items()))

    def __contains__(self, name: str) -> bool:
        return self.has(name)

    def __len__(self) -> int:
        return len(self._values)

    def warn(self, sentence: str) -> None:
        if sentence not in self.data_quality:
            self.data_quality.append(sentence)


class _Source:
    """Reads one collector through the reader, parses it, and records provenance and notes."""

    def __init__(self, reader, facts: Facts, pasted: bool = False):
        self.reader = reader
        self.facts = facts
        self.pasted = pasted
        self.interrupt_deltas = None  # (per-IRQ deltas, path, unverified) once proc.interrupts is read

    def parsed(self, name: str, parse, phase: Optional[str] = None, instance: Optional[str] = None):
        """(parsed result, source path, unverified) or (None, None, False) when not captured."""
        try:
            text = self.reader.read_text(name, phase=phase, instance=instance)
        except Exception as err:  # a broken reader must not take the diagnosis down
            self.facts.warn(f"{name}: could not be read ({type(err).__name__}: {err})")
            return None, None, False
        if text is None:
            return None, None, False
        path = self._path(name, phase, instance)
        result = parse(text)
        for note in result.get("notes", []) if isinstance(result, dict) else []:
            self.facts.warn(note if path == name else f"{path}: {note}")
        return result, path, self._is_unverified(path)

    def pair(self, name: str, parse):
        """Parsed start and end snapshots, the end path, unverified flag; Nones if either is missing."""
        start, _, start_bad = self.parsed(name, parse, phase="start")
        end, path, end_bad = self.parsed(name, parse, phase="end")
        if start is None or end is None:
            return None, None, None, False
        return start, end, path, start_bad or end_bad

    def instances(self, name: str) -> List[str]:
        try:
            return [str(i) for i in (self.reader.instances(name) or [])]
        except Exception:
            return []

    def _path(self, name, phase, instance) -> str:
        if self.pasted:
            return f"pasted:{name}"
        try:
            path = self.reader.source(name, phase, instance)
        except Exception:
            path = None
        return path or name

    def _is_unverified(self, path: Optional[str]) -> bool:
        try:
            return bool(path) and path in (getattr(self.reader, "unverified", None) or set())
        except TypeError:
            return False


def build_facts(reader) -> Facts:
    """All facts from a bundle reader (duck-typed like flamediag.bundle.Bundle)."""
    facts = Facts()
    src = _Source(reader, facts)
    manifest = getattr(reader, "manifest", None) or {}
    if not isinstance(manifest, dict):
        manifest = {}
    _guarded(lambda s: _capture_facts(s, manifest), src, "capture facts")
    for builder in BUILDERS:
        _guarded(builder, src)
    _guarded(lambda s: _window_facts(s, manifest), src, "window facts")
    _guarded(lambda s: _missing_collectors(s, manifest), src, "missing collector check")
    return facts


def build_facts_from_sections(sections: Dict[str, str]) -> Facts:
    """Facts from pasted ticket text: {"mpstat": text, "sysctl": text, ...}. Single snapshots, no deltas."""
    facts = Facts()
    reader = _SectionReader(sections or {})
    src = _Source(reader, facts, pasted=True)
    for builder in BUILDERS:
        _guarded(builder, src)
    return facts


class _SectionReader:
    """Reader over pasted sections: every phase but `start` sees the pasted text (so no deltas)."""

    manifest: dict = {}
    unverified: set = set()

    def __init__(self, sections: Dict[str, str]):
        self.sections = {k: v for k, v in sections.items() if isinstance(v, str)}

    def read_text(self, name, phase=None, instance=None):
        return None if phase == "start" else self.sections.get(name)

    def instances(self, name):
        return []

    def source(self, name, phase=None, instance=None):
        return f"pasted:{name}" if name in self.sections else None


def _guarded(builder, src: _Source, label: Optional[str] = None) -> None:
    try:
        builder(src)
    except Exception as err:  # one broken collector must not cost the other facts
        label = label or builder.__name__.strip("_")
        src.facts.warn(f"facts: {label} failed ({type(err).__name__}: {err}); those facts are missing")


# --- capture / manifest ------------------------------------------------------------------------

def _capture_facts(src: _Source, manifest: dict) -> None:
    facts = src.facts
    _kernel_facts(src, manifest)
    if isinstance(manifest.get("cpus"), int) and not isinstance(manifest.get("cpus"), bool):
        facts.set("cpus", manifest["cpus"], "manifest.json")
    else:
        _lscpu_cpus(src)
    perf = manifest.get("perf") if isinstance(manifest.get("perf"), dict) else {}
    if isinstance(perf.get("kernel_symbols"), str):
        facts.set("perf.kernel_symbols", perf["kernel_symbols"], "manifest.json")
    if isinstance(perf.get("lost_chunks"), int):
        facts.set("perf.lost_chunks", perf["lost_chunks"], "manifest.json")


def _kernel_facts(src: _Source, manifest: dict) -> None:
    release = manifest.get("kernel") if isinstance(manifest.get("kernel"), str) else None
    origin = "manifest.json"
    if not release:  # `uname -a`: Linux <host> <release> ...
        tokens = (src.reader.read_text("uname") or "").split()
        release = tokens[2] if len(tokens) > 2 and tokens[0] == "Linux" else None
        origin = src._path("uname", None, None)
    if not release:
        return
    src.facts.set("kernel.release", release, origin)
    version = re.match(r"^(\d+)\.(\d+)", release)
    if version:
        src.facts.set("kernel.version", [int(version.group(1)), int(version.group(2))], origin)


def _lscpu_cpus(src: _Source) -> None:
    match = re.search(r"^CPU\(s\):\s*(\d+)\s*$", src.reader.read_text("lscpu") or "", re.M)
    if match:
        src.facts.set("cpus", int(match.group(1)), src._path("lscpu", None, None))


def why_cut_short(manifest: dict) -> str:
    """' by SIGINT', ' because its output directory filled up (ENOSPC)', or '' (cause unknown)."""
    if manifest.get("end_signal"):
        return f" by {manifest['end_signal']}"
    if manifest.get("state") == "disk_full":
        return " because its output directory filled up (ENOSPC)"
    return ""


def _window_facts(src: _Source, manifest: dict) -> None:
    facts = src.facts
    seconds = _window_seconds(manifest)
    if seconds is not None:
        facts.set("window.seconds", seconds, "manifest.json")
    requested = manifest.get("duration_requested")
    if manifest.get("complete") is False:
        after = f" after {seconds:g} s" if seconds is not None else ""
        facts.warn(f"capture interrupted{after}{why_cut_short(manifest)}: the window may miss the spike")
    elif isinstance(requested, (int, float)) and seconds is not None and seconds < 0.8 * requested:
        facts.warn(f"capture window {seconds:g} s is shorter than the requested {requested:g} s")
    if manifest and seconds is None:
        facts.warn("capture window length unknown (no duration_actual / start_utc / end_utc): rates not computed")


def _window_seconds(manifest: dict) -> Optional[float]:
    actual = manifest.get("duration_actual")
    if isinstance(actual, (int, float)) and not isinstance(actual, bool) and actual > 0:
        return float(actual)
    try:
        start = datetime.strptime(manifest["start_utc"], "%Y-%m-%dT%H:%M:%SZ")
        end = datetime.strptime(manifest["end_utc"], "%Y-%m-%dT%H:%M:%SZ")
    except (KeyError, TypeError, ValueError):
        return None
    seconds = (end - start).total_seconds()
    return seconds if seconds > 0 else None


def _missing_collectors(src: _Source, manifest: dict) -> None:
    """One sentence per collector the manifest says failed (with its reason); one sentence for
    all the important ones simply absent from the bundle."""
    listed = manifest.get("collectors")
    collectors = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    absent = []
    for name, loss in IMPORTANT.items():
        if name in src.facts.collectors_read:
            continue
        entry = next((c for c in collectors if c.get("name") == name and c.get("status") != "ok"), None)
        if entry:
            why = f"{entry.get('status')}: {entry.get('reason') or 'no reason given'}"
            src.facts.warn(f"{name} not captured ({why}): {loss}")
        else:
            absent.append(f"{name} ({loss})")
    if absent:
        src.facts.warn("not in the bundle: " + "; ".join(absent))


def _seen(src: _Source, name: str) -> None:
    src.facts.collectors_read.add(name)


# --- settings --------------------------------------------------------------------------------

def _sysctl(src: _Source) -> None:
    result, path, bad = src.parsed("sysctl", sysctl.parse)
    if result is None:
        return
    _seen(src, "sysctl")
    for key, value in result["values"].items():
        src.facts.set(f"sysctl.{key}", value, path, bad)


def _thp(src: _Source) -> None:
    result, path, bad = src.parsed("thp", thp.parse)
    if result is None:
        return
    _seen(src, "thp")
    for key, value in result["settings"].items():
        src.facts.set("thp." + key.replace("/", "."), value, path, bad)


def _numa(src: _Source) -> None:
    result, path, bad = src.parsed("numactl.hardware", numactl.parse)
    if result is None:
        return
    _seen(src, "numactl.hardware")
    src.facts.set("numa.nodes", result["nodes"], path, bad)
    src.facts.set("numa.max_distance", result["max_distance"], path, bad)
    if result["distances"]:
        src.facts.series["numa.distances"] = result["distances"]


def _numastat(src: _Source) -> None:
    start, end, path, bad = src.pair("numastat", numastat.parse)
    if start is None:
        return
    for row, total in end["totals"].items():
        if row in start["totals"]:
            src.facts.set(f"numastat.delta.{row}", total - start["totals"][row], path, bad)


def _clocksource(src: _Source) -> None:
    result, path, bad = src.parsed("clocksource", clocksource.parse)
    if result is None:
        return
    src.facts.set("clocksource.current", result["current"], path, bad)
    if result["available"]:
        src.facts.set("clocksource.available", " ".join(result["available"]), path, bad)


def _dmesg(src: _Source) -> None:
    result, path, bad = src.parsed("dmesg", dmesg.parse)
    if result is None:
        return
    counts = result["counts"]
    src.facts.set("dmesg.tsc_unstable", counts["tsc_unstable"] > 0, path, bad)
    for event, count in counts.items():
        src.facts.set(f"dmesg.count.{event}", count, path, bad)


def _cpufreq(src: _Source) -> None:
    result, path, bad = src.parsed("cpufreq", cpufreq.parse)
    if result is None or not result["policies"]:
        return
    for key in ("governor", "driver"):
        seen = Counter(str(p[key]) for p in result["policies"].values() if key in p)
        if seen:
            src.facts.set(f"cpufreq.{key}", seen.most_common(1)[0][0], path, bad)


def _tuned(src: _Source) -> None:
    result, path, bad = src.parsed("tuned", tuned.parse)
    if result is not None:
        src.facts.set("tuned.profile", result["profile"], path, bad)


def _audit(src: _Source) -> None:
    result, path, bad = src.parsed("audit", audit.parse)
    if result is not None:
        src.facts.set("audit.rules", result["rules"], path, bad)
        src.facts.set("audit.enabled", result["enabled"], path, bad)


def _schedknobs(src: _Source) -> None:
    result, path, bad = src.parsed("sched.debug", schedknobs.parse)
    if result is None:
        return
    for knob, value in result["knobs"].items():
        name = knob[len("sched_"):] if knob.startswith("sched_") else knob
        src.facts.set(f"sched.{name}", value, path, bad)


def _loadavg(src: _Source) -> None:
    result, path, bad = src.parsed("loadavg", loadavg.parse, phase="end")
    if result is not None:
        src.facts.set("loadavg.1", result["1"], path, bad)


def _pressure(src: _Source) -> None:
    result, path, bad = src.parsed("proc.pressure", pressure.parse, phase="end")
    if result is None:
        return
    for resource, kinds in result["resources"].items():
        for kind in ("some", "full"):
            value = kinds.get(kind, {}).get("avg10")
            src.facts.set(f"psi.{resource}.{kind}_avg10", value, path, bad)


# --- counters (start/end deltas) ---------------------------------------------------------------

def _procvmstat(src: _Source) -> None:
    start, end, path, bad = src.pair("proc.vmstat", procvmstat.parse)
    if start is None:
        return
    _seen(src, "proc.vmstat")
    seconds = _rate_seconds(src)
    for counter, step in procvmstat.delta(start, end).items():
        src.facts.set(f"vmstat.delta.{counter}", step, path, bad)
        if seconds:
            src.facts.set(f"vmstat.rate.{counter}", round(step / seconds, 3), path, bad)


def _rate_seconds(src: _Source) -> Optional[float]:
    manifest = getattr(src.reader, "manifest", None) or {}
    return _window_seconds(manifest) if isinstance(manifest, dict) else None


def _softirqs(src: _Source) -> None:
    start, end, path, bad = src.pair("proc.softirqs", softirqs.parse)
    if start is None:
        return
    _seen(src, "proc.softirqs")
    deltas = softirqs.delta(start, end)
    src.facts.series["softirqs"] = deltas
    for vector, per_cpu in deltas.items():
        total = sum(per_cpu)
        src.facts.set(f"softirq.delta.{vector}.total", total, path, bad)
        if total > 0:
            top = max(range(len(per_cpu)), key=lambda i: per_cpu[i])
            src.facts.set(f"softirq.delta.{vector}.top_cpu", top, path, bad)
            src.facts.set(f"softirq.delta.{vector}.top_share", round(per_cpu[top] / total, 4), path, bad)
            concentration = per_cpu[top] / (total / len(per_cpu))
            src.facts.set(f"softirq.delta.{vector}.concentration", round(concentration, 3), path, bad)


def _interrupts(src: _Source) -> None:
    start, end, path, bad = src.pair("proc.interrupts", interrupts.parse)
    if start is None:
        return
    totals: Dict[str, int] = {}
    deltas = interrupts.delta(start, end)
    src.interrupt_deltas = (deltas, path, bad)
    for label, row in deltas.items():
        key = label if not label.isdecimal() else (row["name"] or label)
        totals[key] = totals.get(key, 0) + sum(row["counts"])
    src.facts.series["interrupts"] = totals
    for key, total in totals.items():
        src.facts.set(f"interrupts.delta.{key}.total", total, path, bad)


def _softnet(src: _Source) -> None:
    start, end, path, bad = src.pair("proc.softnet_stat", softnet.parse)
    if start is None:
        return
    for field, step in softnet.delta(start, end).items():
        src.facts.set(f"softnet.delta.{field}", step, path, bad)


# --- window metrics ------------------------------------------------------------------------------

def _mpstat(src: _Source) -> None:
    averages, path, bad, intervals = None, None, False, []
    for name in ("mpstat", "mpstat.json"):
        result, path, bad = src.parsed(name, mpstat.parse)
        if result and result["average"]:
            averages, intervals = result["average"], result["intervals"]
            break
    if averages is None:
        averages, path, bad = _procstat_utilisation(src)
    if not averages:
        return
    _seen(src, "mpstat")
    src.facts.series["mpstat"] = averages
    _mpstat_facts(src, averages, path, bad)
    if intervals:
        src.facts.series["mpstat.intervals"] = intervals
        _mpstat_coverage(src, len(intervals), path)


def _mpstat_coverage(src: _Source, count: int, path: Optional[str]) -> None:
    window = _rate_seconds(src)
    if window and window >= 5 and count < 0.5 * window:
        src.facts.warn(f"{path}: mpstat covers {count} s of the {window:g} s window: per-CPU averages may miss the spike")


def _procstat_utilisation(src: _Source):
    """Fallback without sysstat: the procstat window series, else proc.stat start/end."""
    result, path, bad = src.parsed("procstat", procstat.parse_series_result)
    if result and len(result["series"]) >= 2:
        first, last = result["series"][0][1], result["series"][-1][1]
        return procstat.utilisation(first, last), path, bad
    start, end, path, bad = src.pair("proc.stat", procstat.parse)
    if start is None:
        return None, None, False
    return procstat.utilisation(start, end), path, bad


def _mpstat_facts(src: _Source, averages: Dict[str, Dict[str, float]], path, bad) -> None:
    facts = src.facts
    per_cpu = {cpu: cols for cpu, cols in averages.items() if cpu.isdecimal()}
    for column in MPSTAT_COLUMNS:
        if "all" in averages and column in averages["all"]:
            facts.set(f"mpstat.{column}_pct.avg", averages["all"][column], path, bad)
        for cpu, cols in per_cpu.items():
            if column in cols:
                facts.set(f"mpstat.{column}_pct.{cpu}", cols[column], path, bad)
    if "all" not in averages and per_cpu:
        for column in MPSTAT_COLUMNS:
            values = [cols[column] for cols in per_cpu.values() if column in cols]
            if values:
                facts.set(f"mpstat.{column}_pct.avg", round(sum(values) / len(values), 2), path, bad)
    for column in ("soft", "sys", "irq"):
        _hottest(facts, column, per_cpu, path, bad)
    if not facts.has("cpus") and per_cpu:
        facts.set("cpus", len(per_cpu), path, bad)


def _hottest(facts: Facts, column: str, per_cpu: Dict[str, Dict[str, float]], path, bad) -> None:
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


def _vmstat_window(src: _Source) -> None:
    result, path, bad = src.parsed("vmstat", vmstat.parse)
    if result is None:
        return
    for column, value in result["average"].items():
        src.facts.set(f"vmstat.window.{column}", value, path, bad)


def _pidstat(src: _Source) -> None:
    result, path, bad = src.parsed("pidstat", pidstat.parse)
    if result is None:
        return
    rows = result["switches"] or result["average_switches"]
    intervals = result["intervals"] or 1
    if not rows:
        return
    src.facts.set("pidstat.cswch_per_s", round(sum(r.get("cswch/s", 0) for r in rows) / intervals, 2), path, bad)
    src.facts.set("pidstat.nvcswch_per_s", round(sum(r.get("nvcswch/s", 0) for r in rows) / intervals, 2), path, bad)
    by_comm: Counter = Counter()
    for row in rows:
        by_comm[row["command"]] += row.get("cswch/s", 0) + row.get("nvcswch/s", 0)
    src.facts.set("pidstat.top_cswch_comm", by_comm.most_common(1)[0][0], path, bad)


def _ss(src: _Source) -> None:
    result, path, bad = src.parsed("ss", ss.parse, phase="end")
    if result is None:
        return
    sockets = result["sockets"]
    facts = src.facts
    facts.set("ss.sockets", len(sockets), path, bad)
    facts.set("ss.retrans_total", sum(s["retrans_total"] for s in sockets), path, bad)
    facts.set("ss.lost_total", sum(s["lost"] for s in sockets), path, bad)
    facts.set("ss.sockets_retrans", sum(1 for s in sockets if s["retrans_total"] > 0), path, bad)
    facts.set("ss.congestion", sorted({s["congestion"] for s in sockets if s["congestion"]}), path, bad)


# --- NIC ---------------------------------------------------------------------------------------

def _nic(src: _Source) -> None:
    facts = src.facts
    names = src.instances("ethtool.i")
    drivers: List[str] = []
    for nic in names:
        result, path, bad = src.parsed("ethtool.i", ethtool.parse, instance=nic)
        driver = (result or {}).get("values", {}).get("driver") if (result or {}).get("kind") == "i" else None
        if driver:
            facts.set(f"nic.{nic}.driver", driver, path, bad)
            if driver not in drivers:
                drivers.append(driver)
    if names:
        facts.set("nic.names", names, "manifest.json")
        facts.set("nic.drivers", drivers, src._path("ethtool.i", None, names[0]))
    for nic in src.instances("ethtool.l"):
        _nic_queues(src, nic)
    for nic in src.instances("ethtool.S"):
        _nic_stats(src, nic)
    for nic in src.instances("ethtool.c"):
        _nic_coalesce(src, nic)


def _nic_queues(src: _Source, nic: str) -> None:
    result, path, bad = src.parsed("ethtool.l", ethtool.parse, instance=nic)
    if not result or result["kind"] != "l":
        return
    current = result["values"]["current"]
    queues = current.get("combined") or current.get("rx")
    src.facts.set(f"nic.{nic}.rx_queues", queues, path, bad)


_TROUBLE_STAT = re.compile(r"drop|miss|err|discard|no_buf|fifo|timeout|overrun|fail")


def _nic_stats(src: _Source, nic: str) -> None:
    """Per-NIC ethtool -S deltas: packet totals and the non-zero trouble counters (drops, errors...)."""
    start, _, start_bad = src.parsed("ethtool.S", ethtool.parse, phase="start", instance=nic)
    end, path, end_bad = src.parsed("ethtool.S", ethtool.parse, phase="end", instance=nic)
    if not start or not end or start["kind"] != "S" or end["kind"] != "S":
        return
    before, after = start["values"]["stats"], end["values"]["stats"]
    for stat, value in after.items():
        if stat not in before:
            continue
        step = value - before[stat]
        if stat in ("rx_packets", "tx_packets") or (step and _TROUBLE_STAT.search(stat)):
            src.facts.set(f"nic.{nic}.delta.{stat}", step, path, start_bad or end_bad)


def _nic_coalesce(src: _Source, nic: str) -> None:
    result, path, bad = src.parsed("ethtool.c", ethtool.parse, instance=nic)
    if result and result["kind"] == "c":
        src.facts.set(f"nic.{nic}.rx_usecs", result["values"].get("rx-usecs"), path, bad)
        adaptive = result["values"].get("adaptive_rx")
        src.facts.set(f"nic.{nic}.adaptive_rx", adaptive, path, bad)


def _nic_irqs(src: _Source) -> None:
    result, path, bad = src.parsed("nic.irqs", nicirqs.parse)
    if result is None or not result["irqs"]:
        return
    src.facts.set("nic.irqs.cpus", result["cpus"], path, bad)
    src.facts.set("nic.irqs.count", len(result["irqs"]), path, bad)
    single = len(result["cpus"]) == 1
    src.facts.set("nic.irqs.single_cpu", single, path, bad)
    src.facts.series["nic.irqs"] = result["irqs"]
    _nic_irq_load(src, [str(entry["irq"]) for entry in result["irqs"]])


def _nic_irq_load(src: _Source, labels: List[str]) -> None:
    """Where the NIC interrupts actually landed in the window (/proc/interrupts deltas of its IRQs)."""
    if src.interrupt_deltas is None:
        return
    deltas, path, bad = src.interrupt_deltas
    per_cpu: List[int] = []
    for label in labels:
        for cpu, count in enumerate(deltas.get(label, {}).get("counts", [])):
            per_cpu.extend([0] * (cpu + 1 - len(per_cpu)))
            per_cpu[cpu] += count
    total = sum(per_cpu)
    if total <= 0:
        return
    top = max(range(len(per_cpu)), key=lambda cpu: per_cpu[cpu])
    src.facts.set("nic.irqs.delta.total", total, path, bad)
    src.facts.set("nic.irqs.delta.top_cpu", top, path, bad)
    src.facts.set("nic.irqs.delta.top_share", round(per_cpu[top] / total, 4), path, bad)


def _modparams(src: _Source) -> None:
    result, path, bad = src.parsed("nic.modparams", modparams.parse)
    if result is None:
        return
    for driver, params in result["drivers"].items():
        for param, value in params.items():
            src.facts.set(f"modparam.{driver}.{param}", value, path, bad)


# --- memory cgroups --------------------------------------------------------------------------

def _memcg(src: _Source) -> None:
    result, path, bad = src.parsed("memcg", memcg.parse)
    if result is None or not result["cgroups"]:
        return
    groups = result["cgroups"]
    facts = src.facts
    versions = sorted({g["version"] for g in groups.values() if g.get("version") in (1, 2)})
    if versions:
        facts.set("cgroup.version", versions[-1], path, bad)
    failcnts = [g["failcnt"] for g in groups.values() if g["failcnt"] is not None]
    if failcnts:
        facts.set("memcg.max_failcnt", max(failcnts), path, bad)
    for event in ("high", "max", "oom"):
        counts = [g["events"][event] for g in groups.values() if event in g["events"]]
        if counts:
            facts.set(f"memcg.events.{event}", sum(counts), path, bad)
    ratios = {p: g["usage"] / g["limit"] for p, g in groups.items() if g["usage"] is not None and g["limit"]}
    if ratios:
        fullest = max(sorted(ratios), key=lambda p: ratios[p])
        facts.set("memcg.max_usage_ratio", round(ratios[fullest], 4), path, bad)
        facts.set("memcg.top.path", fullest, path, bad)


BUILDERS = (
    _sysctl, _thp, _numa, _numastat, _procvmstat, _mpstat, _vmstat_window, _softirqs, _interrupts,
    _softnet, _nic, _nic_irqs, _modparams, _memcg, _clocksource, _dmesg, _cpufreq, _tuned, _audit,
    _schedknobs, _loadavg, _pressure, _pidstat, _ss,
)
