"""NIC interrupt lines and their CPU affinity: `<irq> <name> <smp_affinity_list>` lines.

Sample input::

    48 eth0-TxRx-0 0
    49 eth0-TxRx-1 0
    50 eth0 0-3

Result: {"irqs": [{"irq": int, "name": str, "cpus": [int]}], "cpus": [int], "notes": [...]}.

Examples:
    >>> r = parse("48 eth0-TxRx-0 0\\n49 eth0-TxRx-1 2-3")
    >>> r["cpus"], r["irqs"][1]["cpus"]
    ([0, 2, 3], [2, 3])
"""
from __future__ import annotations

from typing import List

from ._common import add_note, cpu_list, integer, lines


def parse(text: str) -> dict:
    notes: List[str] = []
    irqs = []
    for line in lines(text, notes):
        tokens = line.split()
        if not tokens:
            continue
        irq = integer(tokens[0].rstrip(":"))
        cpus = cpu_list(tokens[-1]) if len(tokens) >= 3 else None
        if irq is None or cpus is None:
            add_note(notes, "nic.irqs: line(s) not '<irq> <name> <cpu list>' ignored")
            continue
        irqs.append({"irq": irq, "name": " ".join(tokens[1:-1]), "cpus": cpus})
    all_cpus = sorted({cpu for entry in irqs for cpu in entry["cpus"]})
    return {"irqs": irqs, "cpus": all_cpus, "notes": notes}
