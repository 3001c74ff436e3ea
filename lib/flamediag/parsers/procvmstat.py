"""/proc/vmstat: `name value` counters.

Sample input::

    nr_free_pages 6039492
    compact_stall 12
    zone_reclaim_failed 3

Result: {"counters": {name: int}, "notes": [...]}.

Examples:
    >>> parse("compact_stall 12\\nzone_reclaim_failed 3\\ngarbage")["counters"]
    {'compact_stall': 12, 'zone_reclaim_failed': 3}
"""
from __future__ import annotations

from typing import Dict, List

from ._builder import builds
from ._common import add_note, integer, lines

COLLECTORS = ("proc.vmstat",)
LOST_WITHOUT = {"proc.vmstat": "reclaim/compaction counters unknown"}  # said when absent


def parse(text: str) -> dict:
    notes: List[str] = []
    counters: Dict[str, int] = {}
    for line in lines(text, notes):
        tokens = line.split()
        value = integer(tokens[1]) if len(tokens) == 2 else None
        if value is None:
            if tokens:
                add_note(notes, "proc.vmstat: unreadable line(s) ignored")
            continue
        counters[tokens[0]] = value
    return {"counters": counters, "notes": notes}


ZONES = ("dma", "dma32", "normal", "movable", "high", "device")


def delta(start: dict, end: dict) -> Dict[str, int]:
    """end - start per counter present in both. Counters older/newer kernels split per zone
    (`allocstall_normal`, `pgscan_direct_dma32`, ...) are also summed under their base name
    when the kernel has no such counter itself.

    Examples:
        >>> delta({"counters": {"a": 1, "allocstall_normal": 2, "pgscan_direct_dma32": 1}},
        ...       {"counters": {"a": 5, "allocstall_normal": 4, "allocstall_movable": 9, "pgscan_direct_dma32": 8}})
        {'a': 4, 'allocstall_normal': 2, 'pgscan_direct_dma32': 7, 'allocstall': 2, 'pgscan_direct': 7}
    """
    before, after = start.get("counters", {}), end.get("counters", {})
    result = {name: after[name] - before[name] for name in after if name in before}
    summed: Dict[str, int] = {}
    for name, step in result.items():
        base, _, zone = name.rpartition("_")
        if base and zone in ZONES and base not in after:
            summed[base] = summed.get(base, 0) + step
    result.update(summed)
    return result


@builds("vmstat.delta.<counter>", "vmstat.rate.<counter>")
def vmstat_counter_facts(src) -> None:
    start, end, path, bad = src.pair("proc.vmstat", parse)
    if start is None:
        return
    src.seen("proc.vmstat")
    seconds = src.window_seconds()
    for counter, step in delta(start, end).items():
        src.facts.set(f"vmstat.delta.{counter}", step, path, bad)
        if seconds:
            src.facts.set(f"vmstat.rate.{counter}", round(step / seconds, 3), path, bad)
