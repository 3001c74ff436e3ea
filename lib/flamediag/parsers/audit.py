"""`auditctl -s` status and the loaded rule count (`rules: N`).

Sample input::

    enabled 1
    failure 1
    pid 612
    backlog_limit 8192
    lost 0
    backlog 0
    rules: 42

Result: {"enabled": int|None, "rules": int|None, "lost": int|None, "backlog": int|None,
"notes": [...]}; "auditctl: command not found" gives Nones without a note.

Examples:
    >>> r = parse("enabled 1\\nlost 3\\nrules: 42")
    >>> r["enabled"], r["rules"], r["lost"]
    (1, 42, 3)
"""
from __future__ import annotations

from typing import List

from ._builder import builds
from ._common import integer, lines

COLLECTORS = ("audit",)


def parse(text: str) -> dict:
    notes: List[str] = []
    result = {"enabled": None, "rules": None, "lost": None, "backlog": None, "notes": notes}
    available = "not found" not in (text or "")
    for line in lines(text, notes):
        tokens = line.replace(":", " ").split()
        if len(tokens) == 2 and tokens[0] in result and tokens[0] != "notes":
            result[tokens[0]] = integer(tokens[1])
    if not available:
        result["rules"] = None
    return result


@builds("audit.rules", "audit.enabled")
def audit_facts(src) -> None:
    result, path, bad = src.parsed("audit", parse)
    if result is not None:
        src.facts.set("audit.rules", result["rules"], path, bad)
        src.facts.set("audit.enabled", result["enabled"], path, bad)
