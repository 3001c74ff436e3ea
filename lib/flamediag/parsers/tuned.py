"""`tuned-adm active`.

Sample input::

    Current active profile: throughput-performance

Result: {"profile": str|None, "notes": [...]}; "command not found" / "No current active profile"
give None without a note.

Examples:
    >>> parse("Current active profile: virtual-guest")["profile"]
    'virtual-guest'
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import add_note, lines

COLLECTORS = ("tuned",)


def parse(text: str) -> dict:
    notes: List[str] = []
    profile = None
    for line in lines(text, notes):
        key, found, value = line.partition(":")
        if found and key.strip().lower() == "current active profile" and value.strip():
            profile = value.strip()
    content = (text or "").strip()
    if profile is None and content and "not found" not in content and "No current" not in content:
        add_note(notes, "tuned: no 'Current active profile' line")
    return {"profile": profile, "notes": notes}


@builds("tuned.profile")
def tuned_facts(src) -> None:
    result, path, bad = src.parsed("tuned", parse)
    if result is not None:
        src.facts.set("tuned.profile", result["profile"], path, bad)
