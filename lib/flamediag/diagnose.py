"""The diagnosis pipeline: input -> Profile + Facts -> matches -> findings -> outputs.

    diagnosis = run_diagnosis("samples/zone-reclaim-rhel6")
    diagnosis.findings_json()        # the findings.json document (schema 1)
    write_outputs(diagnosis, Path("out"))   # report.md, flamegraph.svg, findings.json

Layers stay apart: inputs (detect + read), match (stacks), scoring (findings), report (text).
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from . import __version__, inputs, match, playbooks, report, scoring
from .facts import why_cut_short
from .profile import Profile, is_idle

SCHEMA_VERSION = 1
TOP_HOTSPOTS = 10
EXAMPLE_STACK_FRAMES = 60
RUNBOOK_QUOTED = ("Mitigate", "Verify the fix")


@dataclass
class Diagnosis:
    source: str
    input: inputs.Input
    playbooks: List[playbooks.Playbook]
    findings: List[scoring.Finding]
    ruled_out: List[scoring.RuledOut]
    hotspots: List[dict]
    samples: Dict[str, int]
    data_quality: List[str]
    restricted: bool
    headline: str = ""
    extra: Dict[str, object] = field(default_factory=dict)

    def findings_json(self) -> dict:
        manifest = self.input.manifest
        return {
            "schema": SCHEMA_VERSION,
            "input": self.source,
            "host": str(manifest.get("host") or ""),
            "kernel": str(manifest.get("kernel") or self.input.facts.get("kernel.release") or ""),
            "window": window(self.input),
            "samples": self.samples,
            "findings": [_finding_json(f, self.input.unverified) for f in self.findings],
            "ruled_out": [r.to_json() for r in self.ruled_out],
            "hotspots": self.hotspots,
            "data_quality": self.data_quality,
        }


def _unverified_note(evidence: scoring.Evidence, unverified: set) -> bool:
    return bool(evidence.source) and evidence.source in unverified


def _finding_json(finding: scoring.Finding, unverified: set) -> dict:
    doc = finding.to_json()
    for item, evidence in zip(doc["evidence"], finding.evidence):
        if _unverified_note(evidence, unverified):
            item["text"] += " (unverified: the file failed SHA256SUMS)"
    return doc


# -- window, samples, hotspots -------------------------------------------------------------------
def window(inp: inputs.Input) -> dict:
    manifest = inp.manifest
    seconds = manifest.get("duration_actual") or manifest.get("duration_requested")
    if seconds is None and inp.profile.time_span:
        first, last = inp.profile.time_span
        seconds = round(last - first, 3)
    return {"start": manifest.get("start_utc"), "seconds": seconds}


def count_samples(profile: Profile) -> Dict[str, int]:
    total = busy = kernel = softirq = 0.0
    for record in profile:
        total += record.weight
        if is_idle(record):
            continue
        busy += record.weight
        if record.frames and record.frames[-1].kind == "kernel":
            kernel += record.weight
        if record.context == "softirq":
            softirq += record.weight
    return {"total": int(round(total)), "busy": int(round(busy)), "kernel": int(round(kernel)),
            "softirq": int(round(softirq))}


def hotspots(profile: Profile, limit: int = TOP_HOTSPOTS) -> List[dict]:
    """Kernel frames by self share of busy samples, with the heaviest stack ending in each."""
    busy = match.busy_records(profile)
    total_busy = sum(r.weight for r, _ in busy) or 1.0
    self_weight: Counter = Counter()
    total_weight: Counter = Counter()
    example: Dict[str, tuple] = {}
    best: Dict[str, float] = defaultdict(float)
    kernel_names: Dict[tuple, set] = {}        # once per distinct stack, not per record
    for record, names in busy:
        inside = kernel_names.get(record.frames)
        if inside is None:
            inside = kernel_names[record.frames] = {n for f, n in zip(record.frames, names) if f.kind == "kernel"}
        for name in inside:
            total_weight[name] += record.weight
        if record.frames and record.frames[-1].kind == "kernel":
            leaf = names[-1]
            self_weight[leaf] += record.weight
            if record.weight > best[leaf]:
                best[leaf], example[leaf] = record.weight, names
    return [{"frame": name, "self": round(weight / total_busy, 4),
             "total": round(total_weight[name] / total_busy, 4),
             "example_stack": ";".join(example[name][-EXAMPLE_STACK_FRAMES:])}
            for name, weight in self_weight.most_common(limit)]


# -- data quality --------------------------------------------------------------------------------
def kernel_symbols_restricted(inp: inputs.Input) -> bool:
    perf = inp.manifest.get("perf") if isinstance(inp.manifest.get("perf"), dict) else {}
    if perf.get("kernel_symbols") == "restricted" or inp.facts.get("perf.kernel_symbols") == "restricted":
        return True
    return any("kernel symbols restricted" in line for line in inp.profile.data_quality)


def _manifest_quality(manifest: dict) -> List[str]:
    lines = []
    if manifest.get("complete") is False or manifest.get("end_signal"):
        seconds = manifest.get("duration_actual")
        signal = why_cut_short(manifest)
        lines.append(f"capture interrupted after {seconds} s{signal}: the window is shorter than requested"
                     if seconds is not None else f"capture interrupted{signal}: window length unknown")
    perf = manifest.get("perf") if isinstance(manifest.get("perf"), dict) else {}
    if perf.get("lost_chunks"):
        lines.append(f"perf lost {perf['lost_chunks']} chunks: some samples are missing (raise -m or lower -F)")
    for warning in perf.get("warnings") or []:
        lines.append(f"perf: {warning}")
    return lines


def data_quality(inp: inputs.Input, restricted: bool, inconclusive_ids: Sequence[str]) -> List[str]:
    lines = list(inp.problems) + _manifest_quality(inp.manifest)
    lines += list(inp.profile.data_quality) + list(getattr(inp.facts, "data_quality", []) or [])
    if inp.stack_source in inp.unverified:
        lines.append(f"{inp.stack_source} failed SHA256SUMS: stack evidence is unverified")
    if restricted:
        lines.append("kernel symbols restricted: kernel signatures are inconclusive ("
                     + (", ".join(inconclusive_ids) or "none loaded")
                     + "), not ruled out; recapture as root with kernel.kptr_restrict=0 and perf_event_paranoid <= 1")
    lines += inp.notes
    seen, unique = set(), []
    for line in lines:
        if line and line not in seen:
            seen.add(line)
            unique.append(line)
    return unique


# -- headline ------------------------------------------------------------------------------------
def headline(diagnosis: Diagnosis) -> str:
    confident = [f for f in diagnosis.findings if f.confidence != "low"]
    if confident:
        top = confident[0]
        cpus = top.to_json()["cpus"]
        where = f" ({report.where_cpus(cpus)})" if cpus else ""
        return (f"{top.playbook.id} ({top.confidence} confidence): {top.playbook.title}, in "
                f"{report.pct(top.match.share)} of busy samples{where}; fix: {top.playbook.mitigation_summary}")
    if diagnosis.restricted:
        return ("Inconclusive: kernel symbols were restricted in this capture, so kernel signatures could not be "
                "checked; recapture as root with kernel.kptr_restrict=0")
    hot = diagnosis.hotspots[0]["frame"] if diagnosis.hotspots else None
    weak = f"; weak match only: {diagnosis.findings[0].playbook.id} (low)" if diagnosis.findings else ""
    tail = f"; top kernel hotspot {hot}" if hot else "; busy time is in user space"
    return f"No known problem found ({len(diagnosis.playbooks)} playbooks checked){weak}{tail}"


# -- pipeline ------------------------------------------------------------------------------------
def load_playbooks(extra_dirs: Sequence[str] = (), min_share: Optional[float] = None) -> List[playbooks.Playbook]:
    loaded = playbooks.load_all(extra_dirs)
    if min_share is not None:
        for playbook in loaded:
            playbook.signature["min_share"] = min_share
    return loaded


def run_diagnosis(source: str, extra_dirs: Sequence[str] = (), min_share: Optional[float] = None,
                  loaded: Optional[List[playbooks.Playbook]] = None) -> Diagnosis:
    inp = inputs.load(source)
    books = loaded if loaded is not None else load_playbooks(extra_dirs, min_share)
    restricted = kernel_symbols_restricted(inp)
    matches = match.match_all(books, inp.profile)
    findings, ruled_out = scoring.score_all(matches, inp.facts, len(inp.profile.cpus()), inp.stack_source,
                                            kernel_symbols_restricted=restricted)
    inconclusive_ids = [r.id for r in ruled_out if r.inconclusive]
    diagnosis = Diagnosis(source, inp, books, findings, ruled_out, hotspots(inp.profile),
                          count_samples(inp.profile), data_quality(inp, restricted, inconclusive_ids), restricted)
    diagnosis.headline = headline(diagnosis)
    return diagnosis


# -- outputs -------------------------------------------------------------------------------------
def _finding_context(finding: scoring.Finding, unverified: set) -> dict:
    hottest = finding.match.hottest_stack()
    hottest_weight = finding.match.stacks.get(hottest, 0)
    evidence = [{"kind": e.kind, "text": e.text, "source": e.source, "supports": e.supports,
                 "unverified": _unverified_note(e, unverified)} for e in finding.evidence]
    sections = report.playbook_sections(finding.playbook, list(RUNBOOK_QUOTED))
    return {
        "json": finding.to_json(), "summary": finding.playbook.summary, "evidence": evidence,
        "not_captured": finding.not_captured, "hottest": list(hottest),
        "hottest_share": hottest_weight / finding.match.matched if finding.match.matched else 0,
        "mitigate": sections["Mitigate"], "verify": sections["Verify the fix"],
    }


def grouped_ruled_out(ruled_out: Sequence[scoring.RuledOut]) -> List[dict]:
    """One report row per distinct reason, ids joined (findings.json keeps one entry per id)."""
    rows: Dict[str, List[str]] = {}
    for entry in ruled_out:
        rows.setdefault(entry.reason, []).append(entry.id)
    return [{"ids": ids, "reason": reason} for reason, ids in rows.items()]


def window_text(inp: inputs.Input) -> str:
    win = window(inp)
    if win["start"] and win["seconds"] is not None:
        return f"{win['start']} + {win['seconds']} s"
    if win["seconds"] is not None:
        return f"{win['seconds']} s of samples"
    return "unknown"


def render_report(diagnosis: Diagnosis) -> str:
    inp = diagnosis.input
    doc = diagnosis.findings_json()
    context = {
        "input_name": inp.name, "headline": diagnosis.headline, "host": doc["host"], "kernel": doc["kernel"],
        "window_text": window_text(inp), "samples": diagnosis.samples, "input_kind": inp.kind,
        "stack_source": inp.stack_source, "tools_missing": inp.tools_missing,
        "data_quality": diagnosis.data_quality, "inconclusive": diagnosis.restricted,
        "findings": [_finding_context(f, inp.unverified) for f in diagnosis.findings],
        "ruled_out": grouped_ruled_out(diagnosis.ruled_out), "hotspots": diagnosis.hotspots,
        "show_hotspots": not any(f.confidence != "low" for f in diagnosis.findings),
        "playbook_count": len(diagnosis.playbooks), "version": __version__,
    }
    return report.render({"d": context})


def render_flamegraph(diagnosis: Diagnosis) -> str:
    from . import flamegraph

    highlights = [flamegraph.Highlight(f.playbook.id, frozenset(f.match.frames), f.playbook.color)
                  for f in diagnosis.findings if f.match.frames]
    return flamegraph.render_svg(flamegraph.folded_lines(diagnosis.input.profile),
                                 title=f"flamediag: {diagnosis.input.name}", subtitle=diagnosis.headline,
                                 highlights=highlights)


def write_outputs(diagnosis: Diagnosis, out_dir: Path) -> Dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: out_dir / name for name in ("findings.json", "report.md", "flamegraph.svg")}
    paths["findings.json"].write_text(json.dumps(diagnosis.findings_json(), indent=2) + "\n", encoding="utf-8")
    paths["report.md"].write_text(render_report(diagnosis), encoding="utf-8")
    paths["flamegraph.svg"].write_text(render_flamegraph(diagnosis), encoding="utf-8")
    return paths
