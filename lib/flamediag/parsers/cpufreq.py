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

from collections import Counter

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines, scalar

COLLECTORS = ("cpufreq",)

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


@builds("cpufreq.governor", "cpufreq.driver")
def cpufreq_facts(src) -> None:
    result, path, bad = src.parsed("cpufreq", parse)
    if result is None or not result["policies"]:
        return
    for key in ("governor", "driver"):
        seen = Counter(str(p[key]) for p in result["policies"].values() if key in p)
        if seen:
            src.facts.set(f"cpufreq.{key}", seen.most_common(1)[0][0], path, bad)
