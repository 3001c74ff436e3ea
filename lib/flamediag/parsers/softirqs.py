"""/proc/softirqs: per-CPU counts per softirq vector.

Sample input::

                        CPU0       CPU1
              HI:          0          0
           TIMER:      13467      13795
          NET_RX:     901234         12

Result: {"cpus": ["CPU0", ...], "vectors": {VEC: [count per CPU]}, "notes": [...]}.

Examples:
    >>> r = parse('''        CPU0       CPU1
    ...   NET_RX:     901234         12''')
    >>> r["vectors"]["NET_RX"]
    [901234, 12]
"""
from __future__ import annotations

from typing import Dict, List

from ._builder import builds
from ._common import add_note, per_cpu_rows

COLLECTORS = ("proc.softirqs",)
LOST_WITHOUT = {"proc.softirqs": "per-CPU softirq counts unknown"}  # said when absent


def parse(text: str) -> dict:
    notes: List[str] = []
    cpus, table = per_cpu_rows(text, notes, "proc.softirqs")
    vectors = {label: counts for label, counts, _ in table if counts}
    if len(vectors) < len(table):
        add_note(notes, "proc.softirqs: row(s) without counts ignored")
    return {"cpus": cpus, "vectors": vectors, "notes": notes}


def delta(start: dict, end: dict) -> Dict[str, List[int]]:
    """Per-vector, per-CPU end - start (CPUs present in both snapshots).

    Examples:
        >>> delta({"vectors": {"NET_RX": [1, 2]}}, {"vectors": {"NET_RX": [11, 3]}})
        {'NET_RX': [10, 1]}
    """
    result = {}
    for name, after in end.get("vectors", {}).items():
        before = start.get("vectors", {}).get(name)
        if before is not None:
            result[name] = [a - b for a, b in zip(after, before)]
    return result


@builds("softirq.delta.<VEC>.total", "softirq.delta.<VEC>.top_cpu", "softirq.delta.<VEC>.top_share",
        "softirq.delta.<VEC>.concentration", series=("softirqs",))
def softirq_facts(src) -> None:
    start, end, path, bad = src.pair("proc.softirqs", parse)
    if start is None:
        return
    src.seen("proc.softirqs")
    deltas = delta(start, end)
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
