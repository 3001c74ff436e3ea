"""`vmstat [-w] [-t] 1` output (procps 3.2-4.x).

Sample input::

    procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
     r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
    16  0      0 241579   5652 341680    0    0  1325  1036  291 1096 13  7 78  1  1
    11  0      0 241579   5652 341680    0    0     0  5364 6763 77399 25 75  0  0  1

Result: {"columns": [...], "rows": [{col: int}], "average": {col: float}, "notes": [...]}.
The first row reports averages since boot, so `average` covers the rows after it (all rows when
there is only one, e.g. a pasted single line).

Examples:
    >>> r = parse(''' r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
    ... 16  0      0 241579   5652 341680    0    0  1325  1036  291 1096 13  7 78  1  1
    ... 11  0      0 241579   5652 341680    0    0     0  5364 6763 77399 25 75  0  0  1
    ...  1  0      0 241579   5652 341680    0    0     0  5364 6763 77401 25 65  0  0  1''')
    >>> r["average"]["cs"], r["average"]["sy"], len(r["rows"])
    (77400.0, 70.0, 3)
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import add_note, integer, lines

COLLECTORS = ("vmstat",)

KNOWN = ("r", "b", "swpd", "free", "buff", "cache", "inact", "active", "si", "so", "bi", "bo", "in", "cs",
         "us", "sy", "id", "wa", "st", "gu")


def parse(text: str) -> dict:
    notes: List[str] = []
    columns: List[str] = []
    rows: List[dict] = []
    for line in lines(text, notes):
        tokens = line.split()
        if not tokens or tokens[0].startswith("procs") or tokens[0].startswith("-"):
            continue
        if tokens[:2] == ["r", "b"]:
            columns = [t for t in tokens if t in KNOWN]  # drops the -t time zone column (UTC, CET...)
            continue
        if not columns:
            continue
        values = [integer(t) for t in tokens[:len(columns)]]
        if len(values) < len(columns) or any(v is None for v in values):
            add_note(notes, "vmstat: unreadable row(s) ignored")
            continue
        rows.append(dict(zip(columns, values)))
    if not columns and (text or "").strip():
        add_note(notes, "vmstat: no 'r b ...' header line found (unknown format)")
    window = rows[1:] if len(rows) > 1 else rows
    average = {c: round(sum(r[c] for r in window) / len(window), 2) for c in columns} if window else {}
    return {"columns": columns, "rows": rows, "average": average, "notes": notes}


@builds("vmstat.window.<col>")
def vmstat_window_facts(src) -> None:
    result, path, bad = src.parsed("vmstat", parse)
    if result is None:
        return
    for column, value in result["average"].items():
        src.facts.set(f"vmstat.window.{column}", value, path, bad)
