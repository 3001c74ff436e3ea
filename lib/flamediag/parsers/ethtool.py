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
from typing import Dict, List

from ._builder import builds
from ._common import add_note, integer, key_value_lines, lines

COLLECTORS = ("ethtool.i", "ethtool.c", "ethtool.l", "ethtool.S")
# ethtool -S counters worth a fact when they moved in the window
TROUBLE_STAT = re.compile(r"drop|miss|err|discard|no_buf|fifo|timeout|overrun|fail")


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


# --- facts ---------------------------------------------------------------------------------------

@builds("nic.names", "nic.<nic>.driver", "nic.drivers")
def driver_facts(src) -> None:
    names = src.instances("ethtool.i")
    drivers: List[str] = []
    for nic in names:
        result, path, bad = src.parsed("ethtool.i", parse, instance=nic)
        driver = (result or {}).get("values", {}).get("driver") if (result or {}).get("kind") == "i" else None
        if driver:
            src.facts.set(f"nic.{nic}.driver", driver, path, bad)
            if driver not in drivers:
                drivers.append(driver)
    if names:
        src.facts.set("nic.names", names, "manifest.json")
        src.facts.set("nic.drivers", drivers, src.path("ethtool.i", None, names[0]))


@builds("nic.<nic>.rx_queues", "nic.rx_queues.min", "nic.rx_queues.max", "nic.rx_queues.min_nic")
def queue_facts(src) -> None:
    """RX queues per NIC (current combined, else rx channels) and across NICs: the fewest (with the
    NIC that has them: its file is the source) and the most."""
    queues: Dict[str, tuple] = {}
    for nic in src.instances("ethtool.l"):
        result, path, bad = src.parsed("ethtool.l", parse, instance=nic)
        if not result or result["kind"] != "l":
            continue
        current = result["values"]["current"]
        count = current.get("combined") or current.get("rx")
        src.facts.set(f"nic.{nic}.rx_queues", count, path, bad)
        if count is not None:
            queues[nic] = (count, path, bad)
    if queues:
        fewest = min(queues, key=lambda nic: queues[nic][0])
        most = max(queues, key=lambda nic: queues[nic][0])
        count, path, bad = queues[fewest]
        src.facts.set("nic.rx_queues.min", count, path, bad)
        src.facts.set("nic.rx_queues.min_nic", fewest, path, bad)
        src.facts.set("nic.rx_queues.max", queues[most][0], queues[most][1], queues[most][2])


@builds("nic.<nic>.delta.<stat>")
def statistics_facts(src) -> None:
    """Per-NIC ethtool -S deltas: packet totals and the non-zero trouble counters (drops, errors...)."""
    for nic in src.instances("ethtool.S"):
        start, _, start_bad = src.parsed("ethtool.S", parse, phase="start", instance=nic)
        end, path, end_bad = src.parsed("ethtool.S", parse, phase="end", instance=nic)
        if not start or not end or start["kind"] != "S" or end["kind"] != "S":
            continue
        before, after = start["values"]["stats"], end["values"]["stats"]
        for stat, value in after.items():
            if stat not in before:
                continue
            step = value - before[stat]
            if stat in ("rx_packets", "tx_packets") or (step and TROUBLE_STAT.search(stat)):
                src.facts.set(f"nic.{nic}.delta.{stat}", step, path, start_bad or end_bad)


@builds("nic.<nic>.rx_usecs", "nic.<nic>.adaptive_rx")
def coalescing_facts(src) -> None:
    for nic in src.instances("ethtool.c"):
        result, path, bad = src.parsed("ethtool.c", parse, instance=nic)
        if result and result["kind"] == "c":
            src.facts.set(f"nic.{nic}.rx_usecs", result["values"].get("rx-usecs"), path, bad)
            src.facts.set(f"nic.{nic}.adaptive_rx", result["values"].get("adaptive_rx"), path, bad)
