"""Runbook advice tailored to the facts: which branch of a Mitigate / Verify section applies.

A section's branches (`### When FACT OP VALUE`, `### Otherwise`; doc/playbook-format.md) are
tried in order: the first whose condition holds is shown, with the fact that chose it. When no
condition holds and every fact was captured, `Otherwise` is shown (or only the common text).
When a fact the conditions read was not captured, every branch is shown with its condition:
the reader picks.

Versions compare as versions: `kernel.version` ([major, minor]) `lt 3.16` is (2, 6) < (3, 16).

    >>> evaluate({"fact": "kernel.version", "op": "lt", "value": 3.16}, [3, 9])
    True
    >>> evaluate({"fact": "nic.drivers", "op": "contains", "value": "virtio_net"}, ["virtio_net"])
    True
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, List, Optional

from .playbooks import Advice, Branch
from .scoring import evaluate_op, fact_lookup, fact_source

_VERSION_OPS = ("eq", "ne", "gt", "ge", "lt", "le")


@dataclass
class Chosen:
    """What the report shows of one runbook section."""

    common: str
    shown: List[Branch] = field(default_factory=list)
    mode: str = "none"                 # one | otherwise | all | none
    fact: Optional[str] = None         # the fact that chose the branch (mode one)
    value: Any = None
    source: str = ""
    missing: List[str] = field(default_factory=list)   # facts not captured (mode all)

    def to_json(self, section: str) -> dict:
        return {"section": section, "shown": self.mode,
                "branches": [b.heading for b in self.shown],
                "chosen_by": ({"fact": self.fact, "value": _jsonable(self.value), "source": self.source}
                              if self.fact else None),
                "not_captured": self.missing}


def _jsonable(value):
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _version(value) -> Optional[tuple]:
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) for v in value):
        return tuple(value)
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", str(value).strip())
    return tuple(int(part) for part in match.groups() if part is not None) if match else None


def evaluate(condition: dict, actual) -> Optional[bool]:
    op, expected = condition["op"], condition.get("value")
    if op in _VERSION_OPS and isinstance(actual, (list, tuple)):
        left, right = _version(actual), _version(expected)
        if left is None or right is None:
            return None
        width = max(len(left), len(right))
        left, right = left + (0,) * (width - len(left)), right + (0,) * (width - len(right))
        return {"eq": left == right, "ne": left != right, "gt": left > right, "ge": left >= right,
                "lt": left < right, "le": left <= right}[op]
    return evaluate_op(op, actual, expected)


def choose(advice: Advice, facts) -> Chosen:
    if not advice.branches:
        return Chosen(advice.common)
    missing: List[str] = []
    for branch in advice.branches:
        if branch.condition is None:
            continue
        name = branch.condition["fact"]
        present, actual = fact_lookup(facts, name)
        result = evaluate(branch.condition, actual) if present else None
        if result is None:
            missing.append(name)
        elif result:
            return Chosen(advice.common, [branch], "one", name, actual, fact_source(facts, name))
    if missing:
        return Chosen(advice.common, list(advice.branches), "all", missing=sorted(set(missing)))
    otherwise = [b for b in advice.branches if b.condition is None]
    first = advice.branches[0].condition["fact"]
    return Chosen(advice.common, otherwise, "otherwise" if otherwise else "none", first,
                  fact_lookup(facts, first)[1], fact_source(facts, first))
