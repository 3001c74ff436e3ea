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

from ._common import add_note, integer, lines


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


def delta(start: dict, end: dict) -> Dict[str, int]:
    """end - start per counter present in both; `allocstall` sums allocstall_* (4.x+ split it).

    Examples:
        >>> delta({"counters": {"a": 1, "allocstall_normal": 2}},
        ...       {"counters": {"a": 5, "allocstall_normal": 4, "allocstall_movable": 9}})
        {'a': 4, 'allocstall_normal': 2, 'allocstall': 2}
    """
    before, after = start.get("counters", {}), end.get("counters", {})
    result = {name: after[name] - before[name] for name in after if name in before}
    split = [v for k, v in result.items() if k.startswith("allocstall_")]
    if "allocstall" not in result and split:
        result["allocstall"] = sum(split)
    return result
