"""Judge a findings.json document against an `expect:` block (the one format every case uses:
signature fixtures, samples, pasted tickets).

    top: <id> | null        the first finding at medium/high confidence; null: none at all
    first: <id>             the first finding at any confidence (a flat paste may only reach low)
    confidence: high        that top finding's confidence
    max_confidence: medium  no finding above this (a flat profile alone never claims high)
    not: [ids]              look-alikes: never reported at medium/high (a low "weak match only"
                            line is allowed: it is not a diagnosis)
    also: [ids]             reported too, at medium/high
    order: [ids]            these findings rank in this order among the medium/high ones
    report_mentions: [text] report.md says each text
    not_cpu: true           off-CPU time or call durations: read, never diagnosed as CPU time (no
                            findings, hotspots or ruled-out rows; the headline says why)
    same_as: <file>         (pastes) the first finding and its confidence equal those of this
                            plain source beside it: a quoted, wrapped or re-rendered copy reads alike
"""
from __future__ import annotations

from typing import List

CONFIDENT = ("medium", "high")
RANK = {"low": 0, "medium": 1, "high": 2}
KEYS = {"top", "first", "confidence", "max_confidence", "not", "also", "order", "report_mentions", "not_cpu", "same_as"}


def confident(doc: dict) -> List[dict]:
    return [f for f in doc["findings"] if f["confidence"] in CONFIDENT]


def describe(doc: dict) -> str:
    rows = [f"{f['id']} {f['confidence']} score={f['score']:.2f} share={f['share']:.2f}" for f in doc["findings"]]
    return "; ".join(rows) or "no findings"


def unmet(doc: dict, expect: dict, report: str = "") -> List[str]:
    """What of `expect` the diagnosis `doc` (findings.json) does not give; [] when all of it."""
    problems = [f"unknown expect key {key!r} (known: {', '.join(sorted(KEYS))})" for key in expect if key not in KEYS]
    sure = confident(doc)
    ids = [f["id"] for f in sure]
    top = ids[0] if ids else None
    if "top" in expect and top != expect["top"]:
        problems.append(f"top finding {top}, expected {expect['top']}")
    first = doc["findings"][0]["id"] if doc["findings"] else None
    if "first" in expect and first != expect["first"]:
        problems.append(f"first finding {first}, expected {expect['first']}")
    if "confidence" in expect and sure and sure[0]["confidence"] != expect["confidence"]:
        problems.append(f"top finding at {sure[0]['confidence']} confidence, expected {expect['confidence']}")
    if "max_confidence" in expect:
        over = [f["id"] for f in doc["findings"] if RANK[f["confidence"]] > RANK[expect["max_confidence"]]]
        problems += [f"{i} above {expect['max_confidence']} confidence" for i in over]
    problems += [f"look-alike misread as {i}" for i in expect.get("not") or [] if i in ids]
    problems += [f"{i} not reported" for i in expect.get("also") or [] if i not in ids]
    wanted = list(expect.get("order") or [])
    if [i for i in ids if i in wanted] != wanted:
        problems.append(f"ranking {[i for i in ids if i in wanted]}, expected {wanted}")
    problems += [f"report.md does not say {text!r}" for text in expect.get("report_mentions") or [] if text not in report]
    if expect.get("not_cpu"):
        problems += _cpu_claims(doc)
    return problems


def _cpu_claims(doc: dict) -> List[str]:
    """What a diagnosis of input that is not CPU time must not hold."""
    problems = [f"{key} not empty for input that is not CPU time" for key in ("findings", "hotspots", "ruled_out")
                if doc.get(key)]
    if not str(doc.get("headline", "")).startswith("Not diagnosed, not a CPU profile"):
        problems.append(f"headline {doc.get('headline')!r} does not say it is not a CPU profile")
    return problems
