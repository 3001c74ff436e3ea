"""/proc/stat snapshots, and the `procstat` window collector (snapshots separated by `--- <epoch>`).

Sample input::

    cpu  2255 34 2290 22625563 6290 127 456 0 0 0
    cpu0 1132 34 1441 11311718 3675 127 438 0 0 0
    intr 114930548 113199788 3 0 5 263 0 4 [... 250 more items]
    ctxt 1990473
    softirq 91285 0 4217 11 3219 1007 0 83 2063 0 80685

Result: {"cpus": {"all"|"0"...: {field: jiffies}}, "ctxt": int, "intr": int, "softirq": int,
"notes": [...]}. `parse_series()` returns [(epoch, snapshot)]; `utilisation()` turns two
snapshots into mpstat-like percentages per CPU.

Examples:
    >>> a = parse("cpu0 100 0 100 800 0 0 0 0 0 0\\nctxt 10")
    >>> b = parse("cpu0 150 0 250 800 0 0 0 0 0 0\\nctxt 30")
    >>> utilisation(a, b)["0"]["sys"], b["ctxt"]
    (75.0, 30)
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ._common import add_note, integer, lines, number

# read by the mpstat facts when sysstat is missing (parsers/mpstat.py utilisation_facts)
COLLECTORS = ("procstat", "proc.stat")

FIELDS = ("usr", "nice", "sys", "idle", "iowait", "irq", "soft", "steal", "guest", "gnice")


def parse(text: str) -> dict:
    notes: List[str] = []
    return _parse_lines(lines(text, notes), notes)


def _parse_lines(content: List[str], notes: List[str]) -> dict:
    result = {"cpus": {}, "ctxt": None, "intr": None, "softirq": None, "notes": notes}
    for line in content:
        tokens = line.split()
        if not tokens:
            continue
        values = [integer(t) for t in tokens[1:]]
        if tokens[0].startswith("cpu"):
            cpu = tokens[0][3:] or "all"
            counts = [v for v in values if v is not None]
            if len(counts) < 4 or (cpu != "all" and not cpu.isdecimal()):
                add_note(notes, "proc.stat: unreadable cpu line(s) ignored")
                continue
            result["cpus"][cpu] = dict(zip(FIELDS, counts))
        elif tokens[0] in ("ctxt", "intr", "softirq") and values and values[0] is not None:
            result[tokens[0]] = values[0]
    return result


def parse_series(text: str) -> List[Tuple[Optional[float], dict]]:
    """Split the window collector output at `--- <epoch>` lines.

    Examples:
        >>> [(t, s["ctxt"]) for t, s in parse_series("--- 100\\nctxt 5\\n--- 101\\nctxt 9")]
        [(100.0, 5), (101.0, 9)]
    """
    notes: List[str] = []
    series: List[Tuple[Optional[float], dict]] = []
    chunk: List[str] = []
    epoch: Optional[float] = None
    for line in lines(text, notes) + ["--- end"]:
        if line.startswith("---"):
            if chunk:
                series.append((epoch, _parse_lines(chunk, notes)))
            epoch, chunk = number(line[3:].strip() or "x"), []
        else:
            chunk.append(line)
    return series


def utilisation(start: dict, end: dict) -> Dict[str, Dict[str, float]]:
    """Per CPU percent of each field between two snapshots (guest time is inside usr: subtract)."""
    result = {}
    for cpu, after in end.get("cpus", {}).items():
        before = start.get("cpus", {}).get(cpu)
        if not before:
            continue
        steps = {f: max(after.get(f, 0) - before.get(f, 0), 0) for f in FIELDS}
        steps["usr"] = max(steps["usr"] - steps["guest"], 0)
        steps["nice"] = max(steps["nice"] - steps["gnice"], 0)
        total = sum(steps.values())
        if total > 0:
            result[cpu] = {f: round(100.0 * v / total, 2) for f, v in steps.items()}
    return result


def parse_series_result(text: str) -> dict:
    """parse_series() wrapped as a parser result: {"series": [(epoch, snapshot)], "notes": [...]}.

    Examples:
        >>> len(parse_series_result("--- 1\\ncpu0 1 0 1 1\\n--- 2\\ncpu0 2 0 2 2")["series"])
        2
    """
    series = parse_series(text)
    notes = [note for _, snapshot in series for note in snapshot["notes"]]
    return {"series": series, "notes": sorted(set(notes))}
