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

import re
from typing import List

from ._builder import builds
from ._common import add_note, integer, key_value_lines

COLLECTORS = ("proc.meminfo",)


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


@builds("meminfo.<field>", "meminfo.available_ratio")
def memory_facts(src) -> None:
    """The end snapshot, every field (`Active(anon)` becomes `meminfo.Active_anon`), and how much of
    memory the kernel thinks is available without swapping (MemAvailable / MemTotal, 3.14+)."""
    result, path, bad = src.parsed("proc.meminfo", parse, phase="end")
    if result is None:
        return
    values = result["kb"]
    for field, amount in values.items():
        src.facts.set("meminfo." + re.sub(r"[()]", "_", field).strip("_"), amount, path, bad)
    if values.get("MemTotal") and "MemAvailable" in values:
        src.facts.set("meminfo.available_ratio", round(values["MemAvailable"] / values["MemTotal"], 4), path, bad)
