"""`numactl --hardware` (topology, sizes, node distance matrix).

Sample input::

    available: 2 nodes (0-1)
    node 0 cpus: 0 2 4 6
    node 0 size: 32733 MB
    node 0 free: 1021 MB
    node 1 cpus: 1 3 5 7
    node 1 size: 32768 MB
    node 1 free: 530 MB
    node distances:
    node   0   1
      0:  10  21
      1:  21  10

Result: {"nodes": int|None, "node_cpus": {node: [cpu]}, "size_mb": {node: int},
"free_mb": {node: int}, "distances": {node: {node: int}}, "max_distance": int|None,
"notes": [...]}. max_distance is the largest off-diagonal distance (None with one node).

Examples:
    >>> r = parse('''available: 2 nodes (0-1)
    ... node distances:
    ... node   0   1
    ...   0:  10  21
    ...   1:  21  10''')
    >>> r["nodes"], r["max_distance"], r["distances"][1][0]
    (2, 21, 21)
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, integer, lines

COLLECTORS = ("numactl.hardware",)
LOST_WITHOUT = {"numactl.hardware": "NUMA topology unknown"}  # said when absent

_NODE_LINE = re.compile(r"^node (\d+) (cpus|size|free):\s*(.*)$")


def parse(text: str) -> dict:
    notes: List[str] = []
    result = {"nodes": None, "node_cpus": {}, "size_mb": {}, "free_mb": {}, "distances": {},
              "max_distance": None, "notes": notes}
    columns: List[int] = []
    in_matrix = False
    for line in lines(text, notes):
        stripped = line.strip()
        available = re.match(r"^available:\s*(\d+) nodes?", stripped)
        node_line = _NODE_LINE.match(stripped)
        if available:
            result["nodes"] = int(available.group(1))
        elif node_line:
            _node_fact(node_line, result)
        elif stripped.startswith("node distances"):
            in_matrix = True
        elif in_matrix and stripped.startswith("node"):
            columns = [integer(t) for t in stripped.split()[1:]]
        elif in_matrix and re.match(r"^\d+:", stripped):
            _matrix_row(stripped, columns, result, notes)
        elif stripped and not stripped.startswith(("No NUMA", "No distance information", "...")):
            add_note(notes, "numactl: unknown line(s) ignored")
    distances = [d for row, cols in result["distances"].items() for col, d in cols.items() if row != col]
    result["max_distance"] = max(distances) if distances else None
    if result["nodes"] is None and result["distances"]:
        result["nodes"] = len(result["distances"])
    if result["nodes"] is None and (text or "").strip():
        add_note(notes, "numactl: no 'available: N nodes' line (unknown format)")
    return result


def _node_fact(match, result: dict) -> None:
    node, what, value = int(match.group(1)), match.group(2), match.group(3)
    if what == "cpus":
        result["node_cpus"][node] = [int(t) for t in value.split() if t.isdecimal()]
    else:
        amount = integer(value.split()[0]) if value.split() else None
        if amount is not None:
            result[what + "_mb"][node] = amount


def _matrix_row(stripped: str, columns: List, result: dict, notes: List[str]) -> None:
    head, _, rest = stripped.partition(":")
    values = [integer(t) for t in rest.split()]
    if not columns or len(values) != len(columns) or None in values or None in columns:
        add_note(notes, "numactl: distance row that does not fit the header ignored")
        return
    result["distances"][int(head)] = dict(zip(columns, values))


@builds("numa.nodes", "numa.max_distance", series=("numa.distances",))
def numa_facts(src) -> None:
    result, path, bad = src.parsed("numactl.hardware", parse)
    if result is None:
        return
    src.seen("numactl.hardware")
    src.facts.set("numa.nodes", result["nodes"], path, bad)
    src.facts.set("numa.max_distance", result["max_distance"], path, bad)
    if result["distances"]:
        src.facts.series["numa.distances"] = result["distances"]
