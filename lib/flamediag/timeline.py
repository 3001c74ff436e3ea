"""Per-second series of a timed profile: what `timeline.svg`, findings.json `timeline` and the
spike search read (doc/timeline.md).

One pass over the profile's records (each keeps its weight per second, see profile.py) gives,
for every second of the window:

- `busy`: busy samples (weights; idle excluded, softirq on an idle CPU counted, as everywhere);
- `kernel`, `softirq`: share of that second's busy samples whose leaf is a kernel frame / that
  run in softirq context (the definitions of findings.json `samples`);
- one share of busy per playbook signature (from match.Match.seconds): all of them feed the
  spike search, the findings' ones are shown;
- mpstat (or watch's /proc/stat series) `%sys` / `%soft`: the all-CPU average, the hottest CPU's
  value and its number, placed on the seconds through the clock (clock.row_seconds);
- per CPU, the kernel share of ALL that CPU's samples in the second (idle included, so an idle
  CPU is cold): the heat map.

A share is null for a second without busy samples; mpstat values are null for seconds without
a row.

    >>> from flamediag.profile import Frame, Profile
    >>> p = Profile()
    >>> p.add([Frame("f", "kernel")], 3, cpu=0, seconds={0: 1, 1: 2})
    >>> p.add([Frame("main", "user")], 2, cpu=1, seconds={1: 2})
    >>> t = build(p, [], {}, Clock(None))
    >>> t.busy, t.kernel, t.cpu_kernel[0]
    ([1.0, 4.0], [1.0, 0.5], [1.0, 1.0])
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence

from .clock import Clock, epoch_seconds, row_seconds
from .profile import Profile, is_idle

MPSTAT_COLUMNS = ("sys", "soft")
# Longer spans get no timeline (a data-quality line says to use --from/--to): an hour is 3 600
# values per series and per CPU, while one stray timestamp years away would be millions.
MAX_SECONDS = 3600


@dataclass
class Timeline:
    clock: Clock
    first: int                                       # second index of column 0
    seconds: int
    busy: List[float]
    kernel: List[Optional[float]]
    softirq: List[Optional[float]]
    signatures: Dict[str, List[Optional[float]]]     # playbook id -> share of busy per second
    shown: List[str] = field(default_factory=list)   # ids of the findings whose series are shown
    mpstat: Dict[str, List[Optional[float]]] = field(default_factory=dict)
    cpu_kernel: Dict[int, List[Optional[float]]] = field(default_factory=dict)
    trigger: Optional[dict] = None                   # watch's trigger: {"second", "rule", "time", "label"}

    @property
    def indexes(self) -> range:
        return range(self.first, self.first + self.seconds)

    def series(self) -> Dict[str, list]:
        """The findings.json `series` object: busy, kernel, softirq, each shown finding, mpstat."""
        out: Dict[str, list] = {"busy": [round(b, 3) for b in self.busy], "kernel": self.kernel,
                                "softirq": self.softirq}
        for ident in self.shown:
            out[ident] = self.signatures.get(ident, [None] * self.seconds)
        out.update(self.mpstat)
        return out

    def to_json(self) -> dict:
        start = self.clock.epoch(self.first)
        return {"start": None if start is None else round(start, 3), "step": 1, "seconds": self.seconds,
                "first_second": self.first, "clock": self.clock.to_json(), "series": self.series(),
                "cpu_kernel": {str(cpu): values for cpu, values in sorted(self.cpu_kernel.items())},
                **({"trigger": {k: v for k, v in self.trigger.items() if k != "label"}} if self.trigger else {})}


def _share(part: List[float], whole: List[float]) -> List[Optional[float]]:
    return [round(p / w, 4) if w > 0 else None for p, w in zip(part, whole)]


def build(profile: Profile, matches: Iterable, facts, clock: Clock, first: int = 0,
          last: Optional[int] = None, shown: Sequence[str] = ()) -> Timeline:
    """The timeline of second indexes first <= i < last (default: the whole profile)."""
    last = profile.seconds() if last is None else last
    count = max(0, last - first)
    busy, kernel, softirq = [0.0] * count, [0.0] * count, [0.0] * count
    cpu_total: Dict[int, List[float]] = defaultdict(lambda: [0.0] * count)
    cpu_kernel: Dict[int, List[float]] = defaultdict(lambda: [0.0] * count)
    for record in profile:
        idle = is_idle(record)
        in_kernel = not idle and bool(record.frames) and record.frames[-1].kind == "kernel"
        in_softirq = not idle and record.context == "softirq"
        cpu = record.cpu
        for second, weight in record.seconds.items():
            column = second - first
            if not 0 <= column < count:
                continue
            if cpu is not None:
                cpu_total[cpu][column] += weight
                if in_kernel:
                    cpu_kernel[cpu][column] += weight
            if idle:
                continue
            busy[column] += weight
            kernel[column] += weight if in_kernel else 0
            softirq[column] += weight if in_softirq else 0
    signatures = {}
    for match in matches:
        matched = [float(match.seconds.get(i, 0)) for i in range(first, first + count)]
        signatures[match.playbook.id] = _share(matched, busy)
    return Timeline(clock, first, count, busy, _share(kernel, busy), _share(softirq, busy), signatures,
                    list(shown), mpstat_series(facts, clock, first, count),
                    {cpu: _share(cpu_kernel[cpu], totals) for cpu, totals in sorted(cpu_total.items())})


def watch_trigger(manifest: dict, clock: Clock) -> Optional[dict]:
    """Where `flamediag watch`'s trigger falls: {"second": index (float), "rule", "time", "label"}.

    >>> watch_trigger({"trigger": {"rule": "sys-above", "threshold": 30, "cpu": None, "value": 41.5,
    ...                "epoch": 1000.5, "time": "1970-01-01T00:16:40Z"}}, Clock(990.0, "realtime"))["second"]
    10.5
    """
    trigger = manifest.get("trigger") if isinstance(manifest, dict) else None
    if not isinstance(trigger, dict) or clock.origin is None:
        return None
    epoch = trigger.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, (int, float)):
        return None
    rule = str(trigger.get("rule") or "trigger")
    where = f" CPU {trigger['cpu']}" if isinstance(trigger.get("cpu"), int) else ""
    value = trigger.get("value")
    shown = f" {value:g} %" if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
    return {"second": round(epoch - clock.origin, 3), "rule": rule, "time": trigger.get("time"),
            "label": f"watch trigger: {rule} > {trigger.get('threshold')}{where}{shown}"}


# -- mpstat / procstat rows on the timeline ------------------------------------------------------
def _rows(facts, clock: Clock):
    """(second index, {cpu: {col: pct}}) per interval row the facts kept, placed by the clock."""
    series = getattr(facts, "series", None) or {}
    intervals = series.get("mpstat.intervals")
    if intervals:
        return list(zip(row_seconds([str(i.get("time", "")) for i in intervals], clock), intervals))
    intervals = series.get("procstat.intervals")
    if intervals:
        return list(zip(epoch_seconds([i.get("epoch") for i in intervals], clock), intervals))
    return []


def rows_between(facts, clock: Clock, first: int, last: int) -> List[dict]:
    """The interval rows (mpstat.intervals form) of seconds first <= i < last."""
    return [row for second, row in _rows(facts, clock) if second is not None and first <= second < last]


def _row_values(row: dict, column: str):
    cpus = row.get("cpus") or {}
    per_cpu = {int(c): v[column] for c, v in cpus.items() if c.isdecimal() and column in v}
    if "all" in cpus and column in cpus["all"]:
        average = cpus["all"][column]
    elif per_cpu:
        average = round(sum(per_cpu.values()) / len(per_cpu), 2)
    else:
        return None
    hottest = max(sorted(per_cpu), key=lambda c: per_cpu[c]) if per_cpu else None
    return average, (per_cpu[hottest] if hottest is not None else average), hottest


def mpstat_series(facts, clock: Clock, first: int, count: int) -> Dict[str, List[Optional[float]]]:
    rows = _rows(facts, clock)
    if not rows:
        return {}
    out: Dict[str, List[Optional[float]]] = {}
    for column in MPSTAT_COLUMNS:
        average, peak, where = [None] * count, [None] * count, [None] * count
        for second, row in rows:
            values = _row_values(row, column)
            if second is None or values is None or not 0 <= second - first < count:
                continue
            average[second - first], peak[second - first], where[second - first] = values
        if any(v is not None for v in average):
            out[f"mpstat.{column}_pct.avg"] = average
            out[f"mpstat.{column}_pct.max"] = peak
            out[f"mpstat.{column}_pct.max_cpu"] = where
    return out
