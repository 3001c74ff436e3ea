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

from ._builder import builds
from ._common import add_note, cpu_list, integer, lines

COLLECTORS = ("nic.irqs",)


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


@builds("nic.irqs.cpus", "nic.irqs.count", "nic.irqs.single_cpu", series=("nic.irqs",), shares=("nic.irqs.labels",))
def nic_irq_facts(src) -> None:
    result, path, bad = src.parsed("nic.irqs", parse)
    if result is None or not result["irqs"]:
        return
    src.facts.set("nic.irqs.cpus", result["cpus"], path, bad)
    src.facts.set("nic.irqs.count", len(result["irqs"]), path, bad)
    single = len(result["cpus"]) == 1
    src.facts.set("nic.irqs.single_cpu", single, path, bad)
    src.facts.series["nic.irqs"] = result["irqs"]
    src.shared["nic.irqs.labels"] = [str(entry["irq"]) for entry in result["irqs"]]


@builds("nic.irqs.delta.total", "nic.irqs.delta.top_cpu", "nic.irqs.delta.top_share",
        uses=("nic.irqs.labels", "interrupts.deltas"))
def nic_irq_load_facts(src) -> None:
    """Where the NIC interrupts actually landed in the window (/proc/interrupts deltas of its IRQs)."""
    labels = src.shared.get("nic.irqs.labels")
    if not labels or src.shared.get("interrupts.deltas") is None:
        return
    deltas, path, bad = src.shared["interrupts.deltas"]
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
