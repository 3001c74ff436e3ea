"""ethtool -i (driver), -c (coalescing), -l (channels), -S (statistics); `parse()` detects which.

Sample input::

    driver: ixgbevf
    version: 2.12.1-k
    bus-info: 0000:00:03.0

Result: {"kind": "i"|"c"|"l"|"S"|None, "values": {...}, "notes": [...]} where values are
- i: {"driver", "version", "firmware-version", "bus-info", ...} (text)
- c: {"adaptive_rx": bool|None, "rx-usecs": int|None, "rx-frames": ..., ...} (`n/a` -> None)
- l: {"max": {"rx", "tx", "other", "combined"}, "current": {...}} (int or None)
- S: {"stats": {name: int}}

Examples:
    >>> parse("driver: ixgbevf\\nversion: 2.12.1-k")["values"]["driver"]
    'ixgbevf'
    >>> r = parse("Channel parameters for eth0:\\nPre-set maximums:\\nCombined:\\t8\\n"
    ...           "Current hardware settings:\\nCombined:\\t2")
    >>> r["kind"], r["values"]["current"]["combined"], r["values"]["max"]["combined"]
    ('l', 2, 8)
"""
from __future__ import annotations

import re
from typing import List

from ._common import add_note, integer, key_value_lines, lines


def parse(text: str) -> dict:
    notes: List[str] = []
    content = (text or "")[:1_000_000]
    if "NIC statistics" in content:
        return {"kind": "S", "values": parse_stats(content, notes), "notes": notes}
    if "Channel parameters" in content:
        return {"kind": "l", "values": parse_channels(content, notes), "notes": notes}
    if "Coalesce parameters" in content:
        return {"kind": "c", "values": parse_coalesce(content, notes), "notes": notes}
    if re.search(r"^driver:", content, re.M):
        return {"kind": "i", "values": key_value_lines(content, []), "notes": notes}
    if content.strip():
        first = content.strip().splitlines()[0][:80]
        add_note(notes, f"ethtool: unknown output ({first!r})")
    return {"kind": None, "values": {}, "notes": notes}


def parse_stats(text: str, notes: List[str]) -> dict:
    stats = {}
    for line in lines(text, notes):
        key, found, value = line.partition(":")
        amount = integer(value) if found else None
        if amount is not None:
            stats[key.strip()] = amount
    return {"stats": stats}


def parse_channels(text: str, notes: List[str]) -> dict:
    result = {"max": {}, "current": {}}
    section = None
    for line in lines(text, notes):
        if line.startswith("Pre-set maximums"):
            section = "max"
        elif line.startswith("Current hardware settings"):
            section = "current"
        elif section and ":" in line:
            key, _, value = line.partition(":")
            result[section][key.strip().lower()] = integer(value)
    return result


def parse_coalesce(text: str, notes: List[str]) -> dict:
    values = {}
    for line in lines(text, notes):
        adaptive = re.match(r"^Adaptive RX:\s*(\S+)\s+TX:\s*(\S+)", line)
        if adaptive:
            values["adaptive_rx"] = {"on": True, "off": False}.get(adaptive.group(1))
            values["adaptive_tx"] = {"on": True, "off": False}.get(adaptive.group(2))
            continue
        key, found, value = line.partition(":")
        if found and re.fullmatch(r"[a-z][a-z0-9\-]*", key.strip()):
            values[key.strip()] = integer(value)
    return values
