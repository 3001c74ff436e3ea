"""Memory cgroups (v1 and v2): `== <path> ==` then `file: value` lines per captured cgroup.

Sample input::

    == /system.slice/hadoop.service ==
    memory.limit_in_bytes: 8589934592
    memory.usage_in_bytes: 8455716864
    memory.failcnt: 1234
    memory.stat: total_rss 8000000000

v2 files: memory.max (`max` = unlimited), memory.current, and memory.events either as
`memory.events: high 5` lines or bare `high 5` lines following `memory.events:`.

Result: {"cgroups": {path: {"version": 1|2|None, "limit": int|None, "usage": int|None,
"failcnt": int|None, "events": {name: int}, "stat": {name: int}}}, "notes": [...]}.

Examples:
    >>> r = parse("== /a ==\\nmemory.max: 1000\\nmemory.current: 900\\nmemory.events:\\nhigh 5\\nmax 2")
    >>> g = r["cgroups"]["/a"]
    >>> g["version"], g["limit"], g["usage"], g["events"]
    (2, 1000, 900, {'high': 5, 'max': 2})
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, integer, lines

COLLECTORS = ("memcg",)

UNLIMITED = 2 ** 62  # v1 prints 9223372036854771712 for "no limit"
FILES = {"memory.limit_in_bytes": ("limit", 1), "memory.usage_in_bytes": ("usage", 1),
         "memory.failcnt": ("failcnt", 1), "memory.max": ("limit", 2), "memory.current": ("usage", 2)}


def parse(text: str) -> dict:
    notes: List[str] = []
    cgroups = {}
    current, last_file = None, None
    for line in lines(text, notes):
        stripped = line.strip()
        header = re.match(r"^==\s*(.*?)\s*==$", stripped)
        if header:
            current = cgroups.setdefault(header.group(1) or "/", _empty())  # capture writes "==  ==" for the root
            last_file = None
            continue
        if not stripped:
            continue
        if current is None:
            current = cgroups.setdefault("?", _empty())
            add_note(notes, "memcg: values before any '== <path> ==' header")
        last_file = _line(stripped, current, last_file, notes)
    return {"cgroups": cgroups, "notes": notes}


def _empty() -> dict:
    return {"version": None, "limit": None, "usage": None, "failcnt": None, "events": {}, "stat": {}}


def _line(stripped: str, group: dict, last_file, notes: List[str]):
    name, found, value = stripped.partition(":")
    if found and name.startswith("memory."):
        _file_value(name.strip(), value.strip(), group)
        return name.strip()
    tokens = stripped.split()
    if last_file in ("memory.events", "memory.stat") and len(tokens) == 2 and integer(tokens[1]) is not None:
        _file_value(last_file, stripped, group)
        return last_file
    add_note(notes, "memcg: unknown line(s) ignored")
    return last_file


def _file_value(name: str, value: str, group: dict) -> None:
    if name in FILES:
        field, version = FILES[name]
        group["version"] = version
        amount = integer(value)
        if field == "limit" and (value == "max" or (amount is not None and amount >= UNLIMITED)):
            amount = None
        group[field] = amount
        return
    tokens = value.split()
    if name in ("memory.events", "memory.stat") and len(tokens) == 2 and integer(tokens[1]) is not None:
        group["events" if name == "memory.events" else "stat"][tokens[0]] = int(tokens[1])
        if name == "memory.events":
            group["version"] = 2


@builds("cgroup.version", "memcg.max_failcnt", "memcg.events.high", "memcg.events.max", "memcg.events.oom",
        "memcg.max_usage_ratio", "memcg.top.path")
def memcg_facts(src) -> None:
    result, path, bad = src.parsed("memcg", parse)
    if result is None or not result["cgroups"]:
        return
    groups = result["cgroups"]
    facts = src.facts
    versions = sorted({g["version"] for g in groups.values() if g.get("version") in (1, 2)})
    if versions:
        facts.set("cgroup.version", versions[-1], path, bad)
    failcnts = [g["failcnt"] for g in groups.values() if g["failcnt"] is not None]
    if failcnts:
        facts.set("memcg.max_failcnt", max(failcnts), path, bad)
    for event in ("high", "max", "oom"):
        counts = [g["events"][event] for g in groups.values() if event in g["events"]]
        if counts:
            facts.set(f"memcg.events.{event}", sum(counts), path, bad)
    ratios = {p: g["usage"] / g["limit"] for p, g in groups.items() if g["usage"] is not None and g["limit"]}
    if ratios:
        fullest = max(sorted(ratios), key=lambda p: ratios[p])
        facts.set("memcg.max_usage_ratio", round(ratios[fullest], 4), path, bad)
        facts.set("memcg.top.path", fullest, path, bad)
