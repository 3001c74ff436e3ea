"""CPU frequency policies: `policyN: driver=... governor=... min=... max=... cur=...` lines.

Sample input::

    policy0: driver=intel_pstate governor=powersave min=800000 max=3500000 cur=1200000

Result: {"policies": {policy: {key: int|str}}, "notes": [...]}; an empty file means no cpufreq
(typical for VMs).

Examples:
    >>> parse("policy0: driver=acpi-cpufreq governor=ondemand cur=1200000")["policies"]["policy0"]
    {'driver': 'acpi-cpufreq', 'governor': 'ondemand', 'cur': 1200000}
"""
from __future__ import annotations

import re
from typing import List

from ._common import add_note, lines, scalar

_PAIR = re.compile(r"(\w+)=(\S*)")


def parse(text: str) -> dict:
    notes: List[str] = []
    policies = {}
    for line in lines(text, notes):
        name, found, rest = line.partition(":")
        if not found or not re.fullmatch(r"\s*(policy|cpu)\d+\s*", name):
            if line.strip():
                add_note(notes, "cpufreq: unknown line(s) ignored")
            continue
        policies[name.strip()] = {k: scalar(v) for k, v in _PAIR.findall(rest)}
    return {"policies": policies, "notes": notes}
