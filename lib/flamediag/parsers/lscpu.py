"""lscpu: `Field: value` lines; the online CPU count is `CPU(s):`.

Sample input::

    Architecture:                            x86_64
    CPU(s):                                  2
    On-line CPU(s) list:                     0,1
    NUMA node(s):                            1

Result: {"values": {field: text}, "cpus": int|None, "notes": [...]}.

Examples:
    >>> parse("Architecture:   x86_64\\nCPU(s):   64\\nNUMA node(s):   2")["cpus"]
    64
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import integer, key_value_lines
from ._cpucount import LSCPU_FIELD

COLLECTORS = ("lscpu",)


def parse(text: str) -> dict:
    notes: List[str] = []
    values = key_value_lines(text, notes)
    return {"values": values, "cpus": integer(values.get(LSCPU_FIELD, "")), "notes": notes}


@builds("cpus")
def cpu_count_facts(src) -> None:
    """Online CPUs: the manifest's count (the capture's), else lscpu's (mpstat's count is the last resort)."""
    cpus = src.manifest.get("cpus")
    if isinstance(cpus, int) and not isinstance(cpus, bool):
        src.facts.set("cpus", cpus, "manifest.json")
        return
    result, path, bad = src.parsed("lscpu", parse)
    if result and result["cpus"] is not None:
        src.facts.set("cpus", result["cpus"], path, bad)
