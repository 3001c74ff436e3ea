"""`numastat` and `numastat -m` (numactl 2.x) tables.

Sample input::

                               node0           node1
    numa_hit              1775216830       6808979012
    numa_miss             4091495494         56266227
    other_node            4185010285         61345624

Result: {"nodes": ["node0", ...], "rows": {row: [value per node]}, "totals": {row: sum},
"unit": "pages"|"MB", "notes": [...]}. `numastat -m` rows (MemFree, ...) are in MB; its
`Total` column is dropped (recomputed in `totals`).

Examples:
    >>> r = parse('''                           node0           node1
    ... numa_hit              1775216830       6808979012
    ... other_node            4185010285         61345624''')
    >>> r["totals"]["other_node"], r["nodes"]
    (4246355909, ['node0', 'node1'])
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines, number

COLLECTORS = ("numastat",)


def parse(text: str) -> dict:
    notes: List[str] = []
    nodes: List[str] = []
    rows = {}
    unit = "pages"
    for line in lines(text, notes):
        tokens = line.split()
        if not tokens or set(line.strip()) <= set("- ") or line.endswith("not in hash table."):
            continue
        if "MB" in line and ":" in line:
            unit = "MB"
            continue
        header = _header(tokens)
        if header:
            nodes = header
            continue
        values = [number(t) for t in tokens[1:]]
        if not nodes or not values or any(v is None for v in values):
            add_note(notes, "numastat: unreadable line(s) ignored")
            continue
        values = values[:len(nodes)]
        rows[tokens[0]] = [int(v) if v == int(v) else v for v in values]
    if not nodes and (text or "").strip():
        add_note(notes, "numastat: no node header line found (unknown format)")
    totals = {name: sum(values) for name, values in rows.items()}
    return {"nodes": nodes, "rows": rows, "totals": totals, "unit": unit, "notes": notes}


def _header(tokens: List[str]) -> List[str]:
    joined = " ".join(tokens)
    if re.fullmatch(r"(node\d+\s*)+", joined):
        return re.findall(r"node\d+", joined)
    if re.fullmatch(r"(Node \d+\s*)+(Total)?", joined):
        return ["node" + n for n in re.findall(r"Node (\d+)", joined)]
    return []


@builds("numastat.delta.<row>")
def numastat_facts(src) -> None:
    start, end, path, bad = src.pair("numastat", parse)
    if start is None:
        return
    for row, total in end["totals"].items():
        if row in start["totals"]:
            src.facts.set(f"numastat.delta.{row}", total - start["totals"][row], path, bad)
