"""/proc/interrupts: per-CPU counts per IRQ line (numbered with chip and device, or named rows).

Sample input::

               CPU0       CPU1
     38:     812345          3   PCI-MSI 49153-edge      eth0-TxRx-0
    LOC:      72617      71544   Local timer interrupts
    ERR:          0

Result: {"cpus": ["CPU0", ...], "rows": {label: {"counts": [int per CPU], "name": str}},
"notes": [...]}. `name` is the device (last word) for numbered IRQs, the description for named rows.

Examples:
    >>> r = parse('''           CPU0       CPU1
    ...  38:     812345          3   PCI-MSI 49153-edge      eth0-TxRx-0
    ... LOC:      72617      71544   Local timer interrupts
    ... ERR:          0''')
    >>> r["rows"]["38"], r["rows"]["ERR"]["counts"]
    ({'counts': [812345, 3], 'name': 'eth0-TxRx-0'}, [0])
"""
from __future__ import annotations

from typing import Dict, List

from ._builder import builds
from ._common import per_cpu_rows

COLLECTORS = ("proc.interrupts",)


def parse(text: str) -> dict:
    notes: List[str] = []
    cpus, table = per_cpu_rows(text, notes, "proc.interrupts")
    rows = {label: {"counts": counts, "name": _device(label, rest)} for label, counts, rest in table}
    return {"cpus": cpus, "rows": rows, "notes": notes}


def _device(label: str, rest: List[str]) -> str:
    """The device (last word) of a numbered IRQ, the description of a named row."""
    return rest[-1] if label.isdecimal() and rest else " ".join(rest)


def delta(start: dict, end: dict) -> Dict[str, dict]:
    """Per-row per-CPU end - start, keeping the name.

    Examples:
        >>> a = {"rows": {"LOC": {"counts": [1, 1], "name": "Local timer interrupts"}}}
        >>> b = {"rows": {"LOC": {"counts": [5, 2], "name": "Local timer interrupts"}}}
        >>> delta(a, b)["LOC"]["counts"]
        [4, 1]
    """
    result = {}
    for label, after in end.get("rows", {}).items():
        before = start.get("rows", {}).get(label)
        if before is not None:
            counts = [a - b for a, b in zip(after["counts"], before["counts"])]
            result[label] = {"counts": counts, "name": after["name"]}
    return result


@builds("interrupts.delta.<ROW>.total", series=("interrupts",), shares=("interrupts.deltas",))
def interrupt_facts(src) -> None:
    """Totals per named row or device; the per-IRQ per-CPU deltas are shared as `interrupts.deltas`
    ((deltas, path, unverified)) for builders that follow one device's IRQs."""
    start, end, path, bad = src.pair("proc.interrupts", parse)
    if start is None:
        return
    totals: Dict[str, int] = {}
    deltas = delta(start, end)
    src.shared["interrupts.deltas"] = (deltas, path, bad)
    for label, row in deltas.items():
        key = label if not label.isdecimal() else (row["name"] or label)
        totals[key] = totals.get(key, 0) + sum(row["counts"])
    src.facts.series["interrupts"] = totals
    for key, total in totals.items():
        src.facts.set(f"interrupts.delta.{key}.total", total, path, bad)
