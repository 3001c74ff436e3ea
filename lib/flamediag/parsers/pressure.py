"""/proc/pressure/{cpu,memory,io} (PSI), as captured: `== <resource> ==` sections.

Sample input::

    == cpu ==
    some avg10=37.77 avg60=26.36 avg300=9.34 total=67818402
    full avg10=0.00 avg60=0.00 avg300=0.00 total=0

Result: {"resources": {res: {"some": {"avg10": float, ...}, "full": {...}}}, "notes": [...]}.
Lines before any section header are taken as `cpu` (a plain /proc/pressure/cpu paste), with a note.

Examples:
    >>> r = parse("== memory ==\\nsome avg10=1.50 avg60=0.00 avg300=0.00 total=12")
    >>> r["resources"]["memory"]["some"]["avg10"]
    1.5
"""
from __future__ import annotations

import re
from typing import List

from ._builder import builds
from ._common import add_note, lines, number

COLLECTORS = ("proc.pressure",)


def parse(text: str) -> dict:
    notes: List[str] = []
    resources = {}
    current = None
    for line in lines(text, notes):
        header = re.match(r"^==\s*(\w+)\s*==", line.strip())
        if header:
            current = header.group(1)
            continue
        tokens = line.split()
        if not tokens or tokens[0] not in ("some", "full"):
            if tokens:
                add_note(notes, "proc.pressure: unknown line(s) ignored")
            continue
        if current is None:
            current = "cpu"
            add_note(notes, "proc.pressure: no '== resource ==' header; assumed cpu")
        values = {}
        for token in tokens[1:]:
            key, _, raw = token.partition("=")
            value = number(raw)
            if value is not None:
                values[key] = value
        resources.setdefault(current, {})[tokens[0]] = values
    return {"resources": resources, "notes": notes}


@builds("psi.<res>.some_avg10", "psi.<res>.full_avg10")
def pressure_facts(src) -> None:
    result, path, bad = src.parsed("proc.pressure", parse, phase="end")
    if result is None:
        return
    for resource, kinds in result["resources"].items():
        for kind in ("some", "full"):
            value = kinds.get(kind, {}).get("avg10")
            src.facts.set(f"psi.{resource}.{kind}_avg10", value, path, bad)
