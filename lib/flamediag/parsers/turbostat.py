"""turbostat (tools/power/x86/turbostat): a header line of column names, then one row per CPU (and per
core and package where those columns are shown), the first row of each interval a summary (`-` in the
topology columns; turbostat before 3.13 left them blank). Each interval repeats the header. `--show`
/ `--hide` choose the columns, and a CPU that is not the first of its core or package leaves the
core's and package's columns out at the end of its row.

Sample input::

         CPU Avg_MHz   Busy% Bzy_MHz TSC_MHz CPU%c1 CPU%c6 CoreTmp PkgWatt
           -     418   34.81    1201    2497  21.47  43.72      38   61.12
           0     452   37.62    1201    2497  19.80  42.58      37   31.40

Column names of every era are read as today's: `%Busy` (3.13-4.x) and `%c0` (to 3.12) as `Busy%`,
`GHz` and `TSC` (to 3.12, in GHz) as `Bzy_MHz` and `TSC_MHz`, `pk`/`pkg` and `cor`/`core` as
`Package` and `Core`. Per-state columns are counts (`C6`, 4.13+) or residencies (`C6%`, `CPU%c6`).

Result: {"intervals": [{"summary": {column: float}|None, "cpus": [{column: float}]}], "interval_s":
float|None, "notes": [...]}; `Busy%` is C0 residency, `Bzy_MHz` the clock while in C0, `TSC_MHz` the
nominal clock.

Examples:
    >>> r = parse("CPU Avg_MHz Busy% Bzy_MHz TSC_MHz\\n- 418 34.81 1201 2497\\n0 452 37.62 1201 2497")
    >>> r["intervals"][0]["summary"]["Bzy_MHz"], r["intervals"][0]["cpus"][0]["CPU"]
    (1201.0, 0.0)
    >>> parse("cor CPU    %c0  GHz  TSC\\n           1.24 1.64 3.39\\n  0   0   3.08 1.61 3.39")["intervals"][0]["summary"]
    {'Busy%': 1.24, 'Bzy_MHz': 1640.0, 'TSC_MHz': 3390.0}
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

from ._builder import builds
from ._common import add_note

# section name of a pasted turbostat table (no collector captures it: pastes only)
SECTION = "turbostat"
COLLECTORS = ()

RENAMED = {"%Busy": "Busy%", "%c0": "Busy%", "GHz": "Bzy_MHz", "TSC": "TSC_MHz", "pk": "Package",
           "pkg": "Package", "cor": "Core", "core": "Core"}
IN_GHZ = ("GHz", "TSC")
TOPOLOGY = ("Package", "Die", "Node", "Core", "CPU")
# a header names at least two of these (any era): what tells a turbostat table from another one
KNOWN = {"Avg_MHz", "Busy%", "%Busy", "Bzy_MHz", "TSC_MHz", "%c0", "GHz", "TSC", "CPU%c1", "CPU%c3",
         "CPU%c6", "CPU%c7", "CoreTmp", "PkgTmp", "PkgWatt", "CorWatt", "RAMWatt", "Pkg%pc2", "Pkg%pc6",
         "PKG_%", "RAM_%", "POLL%", "C1%", "C1E%", "C6%", "%c1", "%c3", "%c6", "%c7", "%pc2", "%pc3", "%pc6"}
COMMAND = re.compile(r"\bturbostat\b")
_HEADER_WORD = re.compile(r"^(?:[A-Za-z%][\w%.-]*)$")
_VALUE = re.compile(r"^(?:-|\d+(?:\.\d+)?)$")

# rule CK1: a CPU is busy when C0 takes this much of its time: every demand-based governor (ondemand's
# up_threshold 80, schedutil's 1.25 headroom) has it at its highest clock there
BUSY_PCT = 80.0
# ... and its clock is held low when, so busy, it runs under this part of the nominal (TSC) clock:
# a healthy host at full load runs at or above it, heavy AVX-512 code rarely under two thirds of it
HELD_LOW = 0.6
# a core or package this hot (degrees C) may be throttling itself: the clock says nothing about power saving
HOT_C = 85.0


def is_header(line: str) -> bool:
    """A turbostat header: column names only, two of them turbostat's own.

    >>> is_header("Core\\tCPU\\tAvg_MHz\\tBusy%\\tBzy_MHz"), is_header("CPU %usr %sys")
    (True, False)
    """
    words = line.split()
    return len(words) >= 3 and all(_HEADER_WORD.match(w) for w in words) and len(KNOWN.intersection(words)) >= 2


def is_row(line: str, header: str) -> bool:
    """A row of the table under `header`: values (numbers, `-`) only, no more than the header's columns."""
    words = line.split()
    return 0 < len(words) <= len(header.split()) and all(_VALUE.match(w) for w in words) \
        and any(w != "-" for w in words)


def parse(text: str) -> dict:
    notes: List[str] = []
    intervals: List[dict] = []
    header: Optional[str] = None
    for line in text.split("\n"):
        if not line.strip():
            continue
        if is_header(line):
            header = line
            intervals.append({"summary": None, "cpus": []})
            continue
        if COMMAND.search(line):
            continue
        if header is None or not is_row(line, header):
            add_note(notes, "turbostat: unknown line(s) ignored")
            continue
        row = _row(header, line)
        interval = intervals[-1]
        if _is_summary(header, row):
            if interval["summary"] is not None or interval["cpus"]:
                intervals.append({"summary": None, "cpus": []})     # the next interval, header not repeated
                interval = intervals[-1]
            interval["summary"] = {k: v for k, v in row.items() if v is not None}
        else:
            interval["cpus"].append({k: v for k, v in row.items() if v is not None})
    return {"intervals": [i for i in intervals if i["summary"] or i["cpus"]], "interval_s": _interval(text),
            "notes": notes}


def _interval(text: str) -> Optional[float]:
    """The interval a pasted command line gives (`--interval 5`, `-i 5`), else None."""
    found = re.search(r"\bturbostat\b.*?(?:--interval[ =]|-i\s*)(\d+(?:\.\d+)?)", text)
    return float(found.group(1)) if found else None


def _is_summary(header: str, row: Dict[str, Optional[float]]) -> bool:
    names = [_name(w) for w in header.split()]
    shown = [n for n in TOPOLOGY if n in names]
    if not shown:
        return False
    return all(row.get(n) is None for n in shown)


def _name(word: str) -> str:
    return RENAMED.get(word, word)


def _row(header: str, line: str) -> Dict[str, Optional[float]]:
    """{column: value} of a row; `-` and columns the row leaves out are None. A row as long as the
    header, or split by tabs, is read from the left; a shorter row of a space-aligned table by where
    its values end (turbostat right-aligns them under their column names)."""
    names = header.split()
    if "\t" in line or len(line.split()) == len(names) or "\t" in header:
        columns = list(range(len(line.split())))
    else:
        columns = _aligned(header, line)
    row: Dict[str, Optional[float]] = {_name(n): None for n in names}
    for column, word in zip(columns, line.split()):
        name = names[column]
        value = None if word == "-" else float(word)
        if value is not None and name in IN_GHZ:
            value = round(value * 1000, 3)
        row[_name(name)] = value
    return row


def _aligned(header: str, line: str) -> List[int]:
    ends = [m.end() for m in re.finditer(r"\S+", header)]
    taken: List[int] = []
    for match in re.finditer(r"\S+", line):
        column = min(range(len(ends)), key=lambda i: abs(ends[i] - match.end()))
        if taken and column <= taken[-1]:
            return list(range(len(line.split())))          # not aligned: read from the left
        taken.append(column)
    return taken


def _temperature(row: dict) -> Optional[float]:
    found = [row[k] for k in ("CoreTmp", "PkgTmp") if k in row]
    return max(found) if found else None


def busy_clock(intervals: Sequence[dict], package: Optional[dict] = None) -> Optional[dict]:
    """Rule CK1: the clock of the busy CPUs (Busy% >= BUSY_PCT) as a part of the nominal clock, over
    every interval: each CPU row, or the summary where no CPU row is pasted. None when no CPU is
    busy, or the table lacks Bzy_MHz or TSC_MHz. `hot` when a temperature column is missing or at
    HOT_C or more, `limited` when RAPL throttled the package or DRAM (PKG_%, RAM_% above 0): then
    the clock may be the hardware protecting itself, not a power-saving setting.

    >>> cpus = [{"CPU": 0.0, "Busy%": 97.0, "Bzy_MHz": 1200.0, "TSC_MHz": 2500.0, "CoreTmp": 41.0}]
    >>> busy_clock([{"summary": None, "cpus": cpus}])
    {'cpus': 1, 'ratio': 0.48, 'hot': False, 'limited': False}
    >>> busy_clock([{"summary": {"Busy%": 34.8, "Bzy_MHz": 1201.0, "TSC_MHz": 2497.0}, "cpus": []}]) is None
    True
    """
    rows: List[dict] = []
    for interval in intervals:
        rows += interval["cpus"] or ([interval["summary"]] if interval["summary"] else [])
    summaries = [i["summary"] for i in intervals if i["summary"]]
    busy = [r for r in rows if r.get("Busy%", 0.0) >= BUSY_PCT and r.get("Bzy_MHz") and r.get("TSC_MHz")]
    if not busy:
        return None
    ratio = sum(r["Bzy_MHz"] / r["TSC_MHz"] for r in busy) / len(busy)
    # per-CPU rows of a CPU that is not the first of its core leave the core's temperature out: the
    # summary's (the hottest) stands for them
    temps = [t for t in map(_temperature, busy + summaries) if t is not None]
    limited = any(r.get(k, 0.0) > 0 for r in rows + summaries for k in ("PKG_%", "RAM_%"))
    return {"cpus": len(busy), "ratio": round(ratio, 3), "hot": not temps or max(temps) >= HOT_C,
            "limited": limited}


def average_stays(intervals: Sequence[dict], seconds: Optional[float]) -> Dict[str, float]:
    """Rule CK2 (read, not judged): each idle state's average stay in microseconds over the first
    interval's CPU rows, from their counts (`C6`, turbostat 4.13+) and residencies (`C6%`) over the
    interval a pasted command gives: the time in the state over the entries. The summary row is not
    used (which CPUs its counts add up is not pasted when the table was cut). turbostat does not print
    the state's target residency, which alone says whether the stay is too short.

    >>> average_stays([{"summary": None, "cpus": [{"CPU": 4.0, "C6": 66015.0, "C6%": 59.88}]}], 5.0)
    {'C6': 45.4}
    """
    if not seconds or not intervals:
        return {}
    rows = [row for row in intervals[0]["cpus"] if "CPU" in row]
    stays: Dict[str, float] = {}
    for name in (rows[0] if rows else {}):
        if name.endswith("%") or f"{name}%" not in rows[0]:
            continue
        pairs = [(row[name], row[f"{name}%"]) for row in rows if row.get(name) is not None and f"{name}%" in row]
        entries = sum(count for count, _ in pairs)
        if entries:
            stays[name] = round(sum(share for _, share in pairs) / 100 * seconds / entries * 1e6, 1)
    return stays


@builds("turbostat.intervals", "turbostat.busy_pct", "turbostat.bzy_mhz", "turbostat.tsc_mhz",
        "turbostat.busy_clock_pct", "turbostat.busy_clock_pct_cool", "turbostat.avg_stay_us.<STATE>",
        "turbostat.deepest_state", "turbostat.deepest_avg_stay_us")
def turbostat_facts(src) -> None:
    """A pasted turbostat table (no collector captures one): the first interval's summary, the
    clock of the busy CPUs against the nominal clock (rule CK1), idle states' average stays (CK2)."""
    if not getattr(src, "pasted", False):
        return
    result, path, bad = src.parsed(SECTION, parse)
    if result is None or not result["intervals"]:
        return
    facts = src.facts
    intervals = result["intervals"]
    facts.set("turbostat.intervals", len(intervals), path, bad)
    first = intervals[0]["summary"] or (intervals[0]["cpus"][0] if len(intervals[0]["cpus"]) == 1 else {})
    for name, column in (("busy_pct", "Busy%"), ("bzy_mhz", "Bzy_MHz"), ("tsc_mhz", "TSC_MHz")):
        facts.set(f"turbostat.{name}", first.get(column), path, bad)
    clock = busy_clock(intervals)
    if clock is not None:
        pct = round(clock["ratio"] * 100, 1)
        facts.set("turbostat.busy_clock_pct", pct, path, bad)
        if not clock["hot"] and not clock["limited"]:
            facts.set("turbostat.busy_clock_pct_cool", pct, path, bad)
    stays = average_stays(intervals, result["interval_s"])
    for state, stay in stays.items():
        facts.set(f"turbostat.avg_stay_us.{state}", stay, path, bad)
    # the deepest state with a stay: the last count column (turbostat prints them shallow to deep)
    deepest = [state for state in stays if state != "POLL"][-1:]
    if deepest:
        facts.set("turbostat.deepest_state", deepest[0], path, bad)
        facts.set("turbostat.deepest_avg_stay_us", stays[deepest[0]], path, bad)
