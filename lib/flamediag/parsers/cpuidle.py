"""cpuidle states: `cpuN stateM name=... latency=... disable=...` lines (names may hold spaces).

Sample input::

    cpu0 state0 name=POLL latency=0 disable=0
    cpu0 state1 name=haltpoll idle latency=1 disable=0

Result: {"states": [{"cpu": int, "state": str, "name": str, "latency": int, "disable": int}],
"notes": [...]}.

Examples:
    >>> parse("cpu0 state1 name=haltpoll idle latency=1 disable=0")["states"][0]["name"]
    'haltpoll idle'
"""
from __future__ import annotations

import re
from typing import List

from ._common import add_note, lines, scalar

_LINE = re.compile(r"^cpu(\d+)\s+(state\d+)\s+(.*)$")
_PAIR = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|$)")


def parse(text: str) -> dict:
    notes: List[str] = []
    states = []
    for line in lines(text, notes):
        match = _LINE.match(line.strip())
        if not match:
            if line.strip():
                add_note(notes, "cpuidle: unknown line(s) ignored")
            continue
        state = {"cpu": int(match.group(1)), "state": match.group(2)}
        state.update({k: scalar(v) for k, v in _PAIR.findall(match.group(3))})
        states.append(state)
    return {"states": states, "notes": notes}
