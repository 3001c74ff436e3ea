"""Clock source: `current_clocksource: tsc` and `available_clocksource: tsc hpet acpi_pm`.

Sample input::

    current_clocksource: xen
    available_clocksource: xen tsc hpet acpi_pm

Result: {"current": str|None, "available": [str], "notes": [...]}.

Examples:
    >>> parse("current_clocksource: xen\\navailable_clocksource: xen tsc")
    {'current': 'xen', 'available': ['xen', 'tsc'], 'notes': []}
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import add_note, key_value_lines

COLLECTORS = ("clocksource",)


def parse(text: str) -> dict:
    notes: List[str] = []
    values = key_value_lines(text, notes)
    current = values.get("current_clocksource") or None
    if current is None and (text or "").strip():
        add_note(notes, "clocksource: no current_clocksource line")
    return {"current": current, "available": values.get("available_clocksource", "").split(), "notes": notes}


@builds("clocksource.current", "clocksource.available")
def clocksource_facts(src) -> None:
    result, path, bad = src.parsed("clocksource", parse)
    if result is None:
        return
    src.facts.set("clocksource.current", result["current"], path, bad)
    if result["available"]:
        src.facts.set("clocksource.available", " ".join(result["available"]), path, bad)
