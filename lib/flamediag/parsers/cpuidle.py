"""cpuidle states of cpu0: a `# driver=... governor=...` line, then `cpuN stateM name=... latency=...
disable=... usage=... time=...` lines (names may hold spaces; latency is the exit latency in µs).

Sample input::

    # driver=intel_idle governor=menu
    cpu0 state0 name=POLL latency=0 disable=0 usage=1 time=2
    cpu0 state1 name=C1 latency=2 disable=0 usage=9263 time=581273
    cpu0 state3 name=C6 latency=133 disable=1 usage=0 time=0

Result: {"driver": str|None, "governor": str|None, "states": [{"cpu": int, "state": str,
"name": str, "latency": int, "disable": int, ...}], "notes": [...]}.

Examples:
    >>> r = parse("# driver=haltpoll governor=haltpoll\\ncpu0 state1 name=haltpoll idle latency=1 disable=0")
    >>> r["driver"], r["states"][0]["name"]
    ('haltpoll', 'haltpoll idle')
"""
from __future__ import annotations

import re
from typing import List, Optional

from ._builder import builds
from ._common import add_note, lines, scalar

COLLECTORS = ("cpuidle",)
_LINE = re.compile(r"^cpu(\d+)\s+(state\d+)\s+(.*)$")
_HEADER = re.compile(r"^#\s*(.*)$")
_PAIR = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|$)")


def parse(text: str) -> dict:
    notes: List[str] = []
    result = {"driver": None, "governor": None, "states": [], "notes": notes}
    for line in lines(text, notes):
        header = _HEADER.match(line.strip())
        match = _LINE.match(line.strip())
        if header:
            pairs = dict(_PAIR.findall(header.group(1)))
            result["driver"] = pairs.get("driver") or None
            result["governor"] = pairs.get("governor") or None
        elif match:
            state = {"cpu": int(match.group(1)), "state": match.group(2)}
            state.update({k: scalar(v) for k, v in _PAIR.findall(match.group(3))})
            result["states"].append(state)
        elif line.strip():
            add_note(notes, "cpuidle: unknown line(s) ignored")
    return result


def _latency(state: dict) -> Optional[int]:
    value = state.get("latency")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@builds("cpuidle.driver", "cpuidle.governor", "cpuidle.states", "cpuidle.deepest_enabled",
        "cpuidle.max_enabled_latency_us", "cpuidle.disabled", "cpuidle.deep_states_disabled")
def idle_state_facts(src) -> None:
    """How deep cpu0 may sleep: the enabled state with the longest exit latency, and whether deeper
    states exist but are disabled (`disable=1`: tuned profiles, `cpupower idle-set -d`)."""
    result, path, bad = src.parsed("cpuidle", parse)
    if result is None:
        return
    facts = src.facts
    facts.set("cpuidle.driver", result["driver"], path, bad)
    facts.set("cpuidle.governor", result["governor"], path, bad)
    states = [s for s in result["states"] if s["cpu"] == 0 and _latency(s) is not None]
    if not states:
        return
    enabled = [s for s in states if s.get("disable") != 1]
    disabled = [s for s in states if s.get("disable") == 1]
    facts.set("cpuidle.states", len(states), path, bad)
    facts.set("cpuidle.disabled", [str(s.get("name", s["state"])) for s in disabled], path, bad)
    deepest = max(enabled, key=_latency, default=None)
    if deepest is not None:
        facts.set("cpuidle.deepest_enabled", str(deepest.get("name", deepest["state"])), path, bad)
        facts.set("cpuidle.max_enabled_latency_us", _latency(deepest), path, bad)
    floor = _latency(deepest) if deepest is not None else -1
    facts.set("cpuidle.deep_states_disabled", any(_latency(s) > floor for s in disabled), path, bad)
