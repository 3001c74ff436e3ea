"""/proc/loadavg.

Sample input::

    0.52 0.58 0.59 2/345 12345

Result: {"1": float, "5": float, "15": float, "running": int, "tasks": int, "notes": [...]}.

Examples:
    >>> r = parse("0.52 0.58 0.59 2/345 12345")
    >>> r["1"], r["tasks"]
    (0.52, 345)
    >>> parse("junk")["notes"]
    ['loadavg: unknown format']
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import add_note, integer, lines, number

COLLECTORS = ("loadavg",)


def parse(text: str) -> dict:
    notes: List[str] = []
    result = {"1": None, "5": None, "15": None, "running": None, "tasks": None, "notes": notes}
    content = [line for line in lines(text, notes) if line.strip()]
    tokens = content[0].split() if content else []
    loads = [number(t) for t in tokens[:3]]
    if len(tokens) < 3 or None in loads:
        if content:
            add_note(notes, "loadavg: unknown format")
        return result
    result["1"], result["5"], result["15"] = loads
    if len(tokens) > 3 and "/" in tokens[3]:
        running, _, tasks = tokens[3].partition("/")
        result["running"], result["tasks"] = integer(running), integer(tasks)
    return result


@builds("loadavg.1")
def loadavg_facts(src) -> None:
    result, path, bad = src.parsed("loadavg", parse, phase="end")
    if result is not None:
        src.facts.set("loadavg.1", result["1"], path, bad)
