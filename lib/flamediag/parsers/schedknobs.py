"""Scheduler knobs: `name: value` for /sys/kernel/debug/sched/* or /proc/sys/kernel/sched_*.

Sample input::

    sched_migration_cost_ns: 500000
    sched_autogroup_enabled: 1

Result: {"knobs": {name: int|str}, "notes": [...]}.

Examples:
    >>> parse("sched_migration_cost_ns: 500000\\nbad line")["knobs"]
    {'sched_migration_cost_ns': 500000}
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import key_value_lines, scalar

COLLECTORS = ("sched.debug",)


def parse(text: str) -> dict:
    notes: List[str] = []
    knobs = {k.rsplit("/", 1)[-1]: scalar(v) for k, v in key_value_lines(text, notes).items()}
    return {"knobs": knobs, "notes": notes}


@builds("sched.<knob>")
def sched_facts(src) -> None:
    result, path, bad = src.parsed("sched.debug", parse)
    if result is None:
        return
    for knob, value in result["knobs"].items():
        name = knob[len("sched_"):] if knob.startswith("sched_") else knob
        src.facts.set(f"sched.{name}", value, path, bad)
