"""Transparent huge page settings: `path: content` lines for enabled, defrag, khugepaged/*.

Sample input::

    /sys/kernel/mm/transparent_hugepage/enabled: [always] madvise never
    /sys/kernel/mm/transparent_hugepage/defrag: always defer defer+madvise [madvise] never
    /sys/kernel/mm/transparent_hugepage/khugepaged/defrag: 1

Result: {"settings": {"enabled": "always", "defrag": "madvise", "khugepaged/defrag": 1, ...},
"notes": [...]}. The bracketed (active) choice is kept; RHEL 6 `redhat_transparent_hugepage`
paths and a bare `enabled: ...` are understood too.

Examples:
    >>> parse("/sys/kernel/mm/redhat_transparent_hugepage/enabled: [always] madvise never\\n"
    ...       "defrag: always [never]")["settings"]
    {'enabled': 'always', 'defrag': 'never'}
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines, scalar

COLLECTORS = ("thp",)
LOST_WITHOUT = {"thp": "transparent huge page settings unknown"}  # said when absent

_PATH = re.compile(r"^(?:/sys/kernel/mm/(?:redhat_)?transparent_hugepage/)?([A-Za-z0-9_/]+)\s*:\s*(.*)$")


def parse(text: str) -> dict:
    notes: List[str] = []
    settings = {}
    for line in lines(text, notes):
        if not line.strip():
            continue
        match = _PATH.match(line.strip())
        if not match:
            add_note(notes, "thp: line(s) that are not 'path: value' ignored")
            continue
        settings[match.group(1)] = _active(match.group(2))
    return {"settings": settings, "notes": notes}


def _active(content: str):
    chosen = re.search(r"\[([^\]]+)\]", content)
    return chosen.group(1) if chosen else scalar(content)


@builds("thp.enabled", "thp.defrag", "thp.khugepaged.<knob>", "thp.<setting>")
def thp_facts(src) -> None:
    result, path, bad = src.parsed("thp", parse)
    if result is None:
        return
    src.seen("thp")
    for key, value in result["settings"].items():
        src.facts.set("thp." + key.replace("/", "."), value, path, bad)
