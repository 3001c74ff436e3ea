"""Two diagnoses compared: what a fix changed (doc/diff.md).

    result = compare(run_diagnosis("before.tar.gz"), run_diagnosis("after.tar.gz"))
    result.headline          # 'zone-reclaim gone (77 % -> 0 %); %sys 38 % -> 6 %'
    result.to_json()         # diff.json (schema lib/flamediag/schemas/diff.schema.json)

Signatures: every playbook that is a finding (any confidence) on either side gets a status:
- `gone`: a finding before, not after (its share fell below the playbook's min_share);
- `new`: not a finding before, one after;
- `reduced` / `grew`: a finding on both sides whose share of busy samples moved by more than
  the tolerance: max(TOLERANCE_POINTS, TOLERANCE_RELATIVE x the larger share) (5 points, or
  20 % of the larger share: 77 % -> 65 % is unchanged, 77 % -> 40 % reduced);
- `unchanged`: within it (a confidence change alone is shown, not a status).

Facts that moved (both sides have the fact): settings (`sysctl.*`, `thp.*`, ... any text) when
they differ; percentages (`mpstat.*_pct.*`, the kernel/softirq share of busy samples) by at least
FACT_POINTS; other numbers (counter deltas and rates, ...) by at least FACT_RELATIVE of the
larger value and by at least 1. Compared: the facts the compared findings' checks read, the CPU
split (mpstat %sys/%soft/%usr, kernel and softirq share of busy samples) and every setting.

    >>> status(0.77, 0.0, True, False), status(0.77, 0.65, True, True), status(0.77, 0.40, True, True)
    ('gone', 'unchanged', 'reduced')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from . import __version__
from .report import pct

SCHEMA_VERSION = 1
TOLERANCE_POINTS = 0.05
TOLERANCE_RELATIVE = 0.20
FACT_POINTS = 5.0
FACT_RELATIVE = 0.5
STATUS_ORDER = ("gone", "new", "reduced", "grew", "unchanged")
CPU_FACTS = ("mpstat.sys_pct.avg", "mpstat.soft_pct.avg", "mpstat.usr_pct.avg", "mpstat.sys_pct.max",
             "mpstat.soft_pct.max")
SETTING_PREFIXES = ("sysctl.", "thp.", "modparam.", "clocksource.current", "cpufreq.", "tuned.", "sched.")


def status(before: float, after: float, was: bool, is_now: bool) -> str:
    if was and not is_now:
        return "gone"
    if is_now and not was:
        return "new"
    tolerance = max(TOLERANCE_POINTS, TOLERANCE_RELATIVE * max(before, after))
    if abs(after - before) <= tolerance:
        return "unchanged"
    return "grew" if after > before else "reduced"


@dataclass
class SignatureChange:
    id: str
    title: str
    status: str
    before: float
    after: float
    before_confidence: Optional[str]
    after_confidence: Optional[str]

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "status": self.status,
                "before": {"share": round(self.before, 4), "confidence": self.before_confidence},
                "after": {"share": round(self.after, 4), "confidence": self.after_confidence},
                "change": round(self.after - self.before, 4)}

    def sentence(self) -> str:
        return f"{self.id} {self.status} ({pct(self.before)} -> {pct(self.after)})"


@dataclass
class FactChange:
    name: str
    before: Any
    after: Any
    source_before: Optional[str]
    source_after: Optional[str]

    @property
    def percent(self) -> bool:
        return "_pct." in self.name or self.name.startswith("samples.")

    def shown(self, value) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return str(value)
        if self.name.startswith("samples."):
            return str(pct(value))
        if self.percent:
            return f"{value:.0f} %"
        if float(value).is_integer():
            return f"{int(value):,}"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"

    def sentence(self) -> str:
        return f"{self.name} {self.shown(self.before)} -> {self.shown(self.after)}"

    def to_json(self) -> dict:
        number = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (self.before, self.after))
        return {"name": self.name, "before": self.before, "after": self.after,
                "change": round(self.after - self.before, 4) if number else None,
                "source_before": self.source_before, "source_after": self.source_after}


@dataclass
class Diff:
    before: Any                         # diagnose.Diagnosis
    after: Any
    signatures: List[SignatureChange]
    facts: List[FactChange]
    frames: Dict[str, List[dict]] = field(default_factory=dict)   # grew / shrank: top frames
    headline: str = ""

    @property
    def changed(self) -> List[SignatureChange]:
        return [s for s in self.signatures if s.status != "unchanged"]

    def to_json(self) -> dict:
        return {"schema": SCHEMA_VERSION, "tool": {"name": "flamediag", "version": __version__},
                "headline": self.headline, "before": _side(self.before), "after": _side(self.after),
                "tolerance": {"points": TOLERANCE_POINTS, "relative": TOLERANCE_RELATIVE,
                              "fact_points": FACT_POINTS, "fact_relative": FACT_RELATIVE},
                "signatures": [s.to_json() for s in self.signatures],
                "facts": [f.to_json() for f in self.facts], "frames": self.frames}


def _side(diagnosis) -> dict:
    doc = diagnosis.findings_json()
    return {"input": doc["input"], "host": doc["host"], "kernel": doc["kernel"], "window": doc["window"],
            "samples": doc["samples"], "headline": str(diagnosis.headline)}


# -- signatures -----------------------------------------------------------------------------------
def _shares(diagnosis) -> Dict[str, float]:
    return {m.playbook.id: m.share for m in diagnosis.matches}


def signature_changes(before, after) -> List[SignatureChange]:
    found_before = {f.playbook.id: f for f in before.findings}
    found_after = {f.playbook.id: f for f in after.findings}
    shares_before, shares_after = _shares(before), _shares(after)
    changes = []
    for ident in list(found_before) + [i for i in found_after if i not in found_before]:
        finding = found_before.get(ident) or found_after[ident]
        was, now = found_before.get(ident), found_after.get(ident)
        share_before = was.match.share if was else shares_before.get(ident, 0.0)
        share_after = now.match.share if now else shares_after.get(ident, 0.0)
        changes.append(SignatureChange(ident, finding.playbook.title, status(share_before, share_after, bool(was),
                                                                             bool(now)),
                                       share_before, share_after, was.confidence if was else None,
                                       now.confidence if now else None))
    return sorted(changes, key=lambda c: (STATUS_ORDER.index(c.status), -max(c.before, c.after)))


# -- facts ----------------------------------------------------------------------------------------
def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def moved(name: str, before, after) -> bool:
    """Whether a fact moved enough to say so (rules in the module docstring).

    >>> moved("mpstat.sys_pct.avg", 38.0, 6.0), moved("mpstat.sys_pct.avg", 38.0, 35.0)
    (True, False)
    >>> moved("vmstat.rate.zone_reclaim_failed", 120.0, 0.0), moved("sysctl.vm.zone_reclaim_mode", 1, 0)
    (True, True)
    """
    if not (_numeric(before) and _numeric(after)):
        return before != after
    if name.startswith(SETTING_PREFIXES):
        return before != after
    if "_pct." in name:
        return abs(after - before) >= FACT_POINTS
    if name.startswith("samples."):
        return abs(after - before) * 100 >= FACT_POINTS
    largest = max(abs(before), abs(after))
    return abs(after - before) >= max(1.0, FACT_RELATIVE * largest)


def _check_facts(diagnoses, ids: Sequence[str]) -> List[str]:
    names: List[str] = []
    for diagnosis in diagnoses:
        for book in diagnosis.playbooks:
            if book.id in ids:
                names += [c["fact"] for c in book.checks if c.get("fact") and c["fact"] not in names]
    return names


def _sample_facts(diagnosis) -> Dict[str, float]:
    samples = diagnosis.samples
    busy = samples.get("busy") or 0
    if not busy:
        return {}
    return {"samples.kernel_share": round(samples["kernel"] / busy, 4),
            "samples.softirq_share": round(samples["softirq"] / busy, 4)}


def _facts_of(diagnosis) -> Dict[str, Any]:
    facts = diagnosis.input.facts
    values = dict(facts.items()) if hasattr(facts, "items") else {}
    values.update(_sample_facts(diagnosis))
    return values


def fact_changes(before, after, ids: Sequence[str]) -> List[FactChange]:
    values_before, values_after = _facts_of(before), _facts_of(after)
    wanted = list(CPU_FACTS) + ["samples.kernel_share", "samples.softirq_share"] + _check_facts((before, after), ids)
    wanted += sorted(n for n in values_before if n.startswith(SETTING_PREFIXES))
    changes, seen = [], set()
    for name in wanted:
        if name in seen or name not in values_before or name not in values_after:
            continue
        seen.add(name)
        if moved(name, values_before[name], values_after[name]):
            changes.append(FactChange(name, values_before[name], values_after[name],
                                      before.input.facts.source(name), after.input.facts.source(name)))
    return changes


# -- headline -------------------------------------------------------------------------------------
def _sys_text(before, after) -> Optional[str]:
    values = [d.input.facts.get("mpstat.sys_pct.avg") for d in (before, after)]
    if all(_numeric(v) for v in values):
        return f"%sys {values[0]:.0f} % -> {values[1]:.0f} %"
    shares = [_sample_facts(d).get("samples.kernel_share") for d in (before, after)]
    if all(s is not None for s in shares):
        return f"kernel share of busy samples {pct(shares[0])} -> {pct(shares[1])}"
    return None


def headline(result: Diff) -> str:
    cpu = _sys_text(result.before, result.after)
    tail = f"; {cpu}" if cpu else ""
    if result.changed:
        return "; ".join(c.sentence() for c in result.changed) + tail
    kept = ", ".join(c.sentence() for c in result.signatures)
    what = f": {kept}" if kept else ": no known problem on either side"
    if result.facts:
        return f"No signature changed{what}; moved: " + ", ".join(f.sentence() for f in result.facts[:3])
    return f"Nothing changed{what}{tail}"


def compare(before, after) -> Diff:
    from .diffgraph import frame_changes

    signatures = signature_changes(before, after)
    result = Diff(before, after, signatures, fact_changes(before, after, [s.id for s in signatures]))
    result.frames = frame_changes(before.input.profile, after.input.profile)
    result.headline = headline(result)
    return result
