"""`sysctl -a` style `key = value` lines (also `key: value` and /proc/sys paths from pastes).

Sample input::

    vm.zone_reclaim_mode = 1
    kernel.numa_balancing = 0
    net.ipv4.tcp_rmem = 4096	131072	6291456

Result: {"values": {key: int|str}, "notes": [...]}. Integers become int; multi-value settings keep
their text with whitespace collapsed. `/proc/sys/vm/x` keys become `vm.x`.

Examples:
    >>> parse("vm.zone_reclaim_mode = 1\\n/proc/sys/vm/swappiness: 60\\nnet.ipv4.tcp_rmem = 4096\\t131072")["values"]
    {'vm.zone_reclaim_mode': 1, 'vm.swappiness': 60, 'net.ipv4.tcp_rmem': '4096 131072'}
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines, scalar

COLLECTORS = ("sysctl",)
LOST_WITHOUT = {"sysctl": "kernel settings (vm.zone_reclaim_mode ...) unknown"}  # said when absent

_KEY = re.compile(r"^[A-Za-z0-9_.\-/*]+$")


def parse(text: str) -> dict:
    notes: List[str] = []
    values = {}
    for line in lines(text, notes):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("sysctl: "):
            continue
        key, value = _split(stripped)
        if key is None:
            add_note(notes, "sysctl: line(s) that are not 'key = value' ignored")
            continue
        values[key] = scalar(" ".join(value.split()))
    return {"values": values, "notes": notes}


def _split(line: str):
    for sep in (" = ", "=", ": "):
        key, found, value = line.partition(sep)
        key = key.strip()
        if found and _KEY.match(key):
            if key.startswith("/proc/sys/"):
                key = key[len("/proc/sys/"):].replace("/", ".")
            return key, value
    return None, ""


@builds("sysctl.<key>")
def sysctl_facts(src) -> None:
    result, path, bad = src.parsed("sysctl", parse)
    if result is None:
        return
    src.seen("sysctl")
    for key, value in result["values"].items():
        src.facts.set(f"sysctl.{key}", value, path, bad)
