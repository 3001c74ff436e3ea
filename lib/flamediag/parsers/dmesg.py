"""Kernel log tail: counts of the messages that matter for CPU-system spikes.

Sample input::

    [12345.678] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable
    [12400.001] watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [java:1234]

Result: {"counts": {event: int}, "lines": int, "notes": [...]}; events: tsc_unstable,
soft_lockup, hung_task, rcu_stall, page_alloc_failure, oom_kill, netdev_watchdog,
hugepage_compaction (khugepaged / compaction messages), nmi.

Examples:
    >>> parse("Marking TSC unstable due to clocksource watchdog\\nINFO: task java:1 blocked for more than 120 seconds.")["counts"]["hung_task"]
    1
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import lines

COLLECTORS = ("dmesg",)

EVENTS = {
    "tsc_unstable": re.compile(r"Marking TSC unstable|clocksource tsc unstable|clocksource 'tsc' as unstable", re.I),
    "soft_lockup": re.compile(r"soft lockup", re.I),
    "hung_task": re.compile(r"blocked for more than \d+ seconds"),
    "rcu_stall": re.compile(r"rcu_\w+ (self-)?detected stall|rcu: INFO: \w+ (self-)?detected stall"),
    "page_alloc_failure": re.compile(r"page allocation failure"),
    "oom_kill": re.compile(r"Out of memory|oom-kill|invoked oom-killer"),
    "netdev_watchdog": re.compile(r"NETDEV WATCHDOG"),
    "hugepage_compaction": re.compile(r"khugepaged|compaction", re.I),
    "nmi": re.compile(r"NMI (received|watchdog|backtrace)", re.I),
}


def parse(text: str) -> dict:
    notes: List[str] = []
    content = lines(text, notes)
    counts = {name: 0 for name in EVENTS}
    for line in content:
        for name, pattern in EVENTS.items():
            if pattern.search(line):
                counts[name] += 1
    return {"counts": counts, "lines": len(content), "notes": notes}


@builds("dmesg.tsc_unstable", "dmesg.count.<event>")
def dmesg_facts(src) -> None:
    result, path, bad = src.parsed("dmesg", parse)
    if result is None:
        return
    counts = result["counts"]
    src.facts.set("dmesg.tsc_unstable", counts["tsc_unstable"] > 0, path, bad)
    for event, count in counts.items():
        src.facts.set(f"dmesg.count.{event}", count, path, bad)
