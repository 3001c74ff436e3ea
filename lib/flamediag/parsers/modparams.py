"""NIC driver module parameters: `/sys/module/<drv>/parameters/<p>: <value>` lines.

Sample input::

    /sys/module/ixgbevf/parameters/InterruptThrottleRate: 1,1,1,1,1,1,1,1

Result: {"drivers": {driver: {param: str}}, "notes": [...]} (values stay text: `1,1,1`, `Y`).

Examples:
    >>> parse("/sys/module/ixgbevf/parameters/InterruptThrottleRate: 1,1,1\\n# ena: no parameters")
    {'drivers': {'ixgbevf': {'InterruptThrottleRate': '1,1,1'}}, 'notes': []}
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines

COLLECTORS = ("nic.modparams",)

_LINE = re.compile(r"^/sys/module/([^/\s]+)/parameters/([^/:\s]+):\s?(.*)$")


def parse(text: str) -> dict:
    notes: List[str] = []
    drivers = {}
    for line in lines(text, notes):
        match = _LINE.match(line.strip())
        if line.startswith("#"):  # capture's "# <driver>: no parameters"
            continue
        if not match:
            if line.strip():
                add_note(notes, "nic.modparams: line(s) not '/sys/module/<drv>/parameters/<p>: <value>' ignored")
            continue
        drivers.setdefault(match.group(1), {})[match.group(2)] = match.group(3).strip()
    return {"drivers": drivers, "notes": notes}


@builds("modparam.<driver>.<param>")
def modparam_facts(src) -> None:
    result, path, bad = src.parsed("nic.modparams", parse)
    if result is None:
        return
    for driver, params in result["drivers"].items():
        for param, value in params.items():
            src.facts.set(f"modparam.{driver}.{param}", value, path, bad)
