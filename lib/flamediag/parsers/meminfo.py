"""/proc/meminfo: `Key:   value kB` lines.

Sample input::

    MemTotal:       24555680 kB
    MemFree:        24157968 kB
    HugePages_Total:       0

Result: {"kb": {key: int}, "notes": [...]}; values without a unit (HugePages_*) are kept as is.

Examples:
    >>> parse("MemTotal:       24555680 kB\\nHugePages_Total:       0")["kb"]
    {'MemTotal': 24555680, 'HugePages_Total': 0}
"""
from __future__ import annotations

from typing import List

from ._common import add_note, integer, key_value_lines


def parse(text: str) -> dict:
    notes: List[str] = []
    values = {}
    for key, raw in key_value_lines(text, notes).items():
        amount = integer(raw.split()[0]) if raw.split() else None
        if amount is None:
            add_note(notes, "proc.meminfo: unreadable value(s) ignored")
            continue
        values[key] = amount
    return {"kb": values, "notes": notes}
