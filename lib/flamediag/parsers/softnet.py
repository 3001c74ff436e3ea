"""/proc/net/softnet_stat: one hex row per CPU (processed, dropped, time_squeeze, ...).

Sample input::

    00026ec1 00000000 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000

Result: {"cpus": [{"processed", "dropped", "time_squeeze", "received_rps", "flow_limit"}],
"notes": [...]}. received_rps (column 10) and flow_limit (11) are 0 on kernels without them.

Examples:
    >>> parse("00026ec1 00000002 00000003 0 0 0 0 0 0 0 0")["cpus"][0]["time_squeeze"]
    3
"""
from __future__ import annotations

from typing import Dict, List

from ._builder import builds
from ._common import add_note, hex_int, lines

COLLECTORS = ("proc.softnet_stat",)

FIELDS = {"processed": 0, "dropped": 1, "time_squeeze": 2, "received_rps": 9, "flow_limit": 10}


def parse(text: str) -> dict:
    notes: List[str] = []
    cpus: List[dict] = []
    for line in lines(text, notes):
        values = [hex_int(t) for t in line.split()]
        if not values:
            continue
        if len(values) < 3 or None in values:
            add_note(notes, "proc.softnet_stat: unreadable row(s) ignored")
            continue
        cpus.append({name: (values[i] if i < len(values) else 0) for name, i in FIELDS.items()})
    return {"cpus": cpus, "notes": notes}


def delta(start: dict, end: dict) -> Dict[str, int]:
    """Summed over CPUs: end - start per field (32-bit counters wrap: a negative step adds 2**32).

    Examples:
        >>> a = parse("00000010 00000000 00000001 0 0 0 0 0 0 0 0")
        >>> b = parse("00000020 00000001 00000004 0 0 0 0 0 0 0 0")
        >>> delta(a, b)["time_squeeze"], delta(a, b)["dropped"]
        (3, 1)
    """
    result = {name: 0 for name in FIELDS}
    for before, after in zip(start.get("cpus", []), end.get("cpus", [])):
        for name in FIELDS:
            step = after[name] - before[name]
            result[name] += step if step >= 0 else step + 2 ** 32
    return result


@builds("softnet.delta.processed", "softnet.delta.dropped", "softnet.delta.time_squeeze",
        "softnet.delta.received_rps", "softnet.delta.flow_limit")
def softnet_facts(src) -> None:
    start, end, path, bad = src.pair("proc.softnet_stat", parse)
    if start is None:
        return
    for field, step in delta(start, end).items():
        src.facts.set(f"softnet.delta.{field}", step, path, bad)
