"""The diagnosis pipeline: input -> Profile + Facts -> matches -> findings -> outputs.

    diagnosis = run_diagnosis("samples/zone-reclaim-rhel6")
    diagnosis.findings_json()        # the findings.json document (schema 2, doc/findings-json.md)
    write_outputs(diagnosis, Path("out"))   # report.md, report.txt, flamegraph.svg, findings.json

Layers stay apart: inputs (detect + read), match (stacks), scoring (findings), report (text).
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from . import __version__, advice, headline as headlines, inputs, match, offcpu, playbooks, report, scoring, timeview
from .bundlewriter import file_sha256
from .clock import Clock, clock_for
from .paste import WEIGHTED
from .profile import Profile, is_idle
from .report import Prose
from .text import from_os

SCHEMA_VERSION = 2
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
    headline: Prose = Prose()
    cpu: Optional[headlines.CpuSplit] = None
    busy_commands: Dict[str, float] = field(default_factory=dict)
    extra: Dict[str, object] = field(default_factory=dict)
    matches: List[match.Match] = field(default_factory=list)      # every playbook, whole window
    clock: Clock = field(default_factory=Clock)
    timeline: Optional["timeline.Timeline"] = None
    spikes: List["timeview.SpikeDiagnosis"] = field(default_factory=list)
    time_range: Optional[Tuple[int, int]] = None                   # --from/--to, second indexes

    @property
    def label(self) -> str:
        return report.strip_controls(self.input.capture.get("label") or "")

    def chosen_advice(self, finding: scoring.Finding) -> Dict[str, advice.Chosen]:
        return {name: advice.choose(finding.playbook.advice_for(name), self.input.facts) for name in RUNBOOK_QUOTED}

    def findings_json(self) -> dict:
        capture = self.input.capture
        return {
            "schema": SCHEMA_VERSION,
            "tool": {"name": "flamediag", "version": __version__},
            "headline": str(self.headline),
            "label": self.label,
            "input": from_os(self.source),
            "input_digest": input_digest(self.source),
            "host": capture.get("host") or "",
            "kernel": capture.get("kernel") or str(self.input.facts.get("kernel.release") or ""),
            "window": self.window(),
            "samples": self.samples,
            "cpu": self.cpu.to_json() if self.cpu else None,
            "findings": [self._finding_json(f) for f in self.findings],
            "ruled_out": [r.to_json() for r in self.ruled_out],
            "hotspots": self.hotspots,
            "data_quality": self.data_quality,
            **self.time_json(),
        }

    def _finding_json(self, finding: scoring.Finding) -> dict:
        doc = finding.to_json()
        for item, evidence in zip(doc["evidence"], finding.evidence):
            item["unverified"] = _unverified_note(evidence, self.input.unverified)
            if item["unverified"]:
                item["text"] += " (unverified: the file failed SHA256SUMS)"
        doc["advice"] = [chosen.to_json(name) for name, chosen in self.chosen_advice(finding).items()]
        return doc

    def fix_for(self, finding: scoring.Finding) -> str:
        """The one-line fix: the chosen advice branch's Fix: line, else the playbook's summary."""
        chosen = self.chosen_advice(finding)["Mitigate"]
        fixes = [b.fix for b in chosen.shown if b.fix] if chosen.mode in ("one", "otherwise") else []
        return fixes[0] if fixes else finding.playbook.mitigation_summary

    def window(self) -> dict:
        if self.time_range is None:
            return window(self.input)
        first, last = self.time_range
        return {"start": self.clock.iso(first), "seconds": last - first}

    def time_json(self) -> dict:
        """`timeline` and `spikes` (inputs with sample times only; doc/timeline.md)."""
        if self.timeline is None:
            return {}
        return {"timeline": self.timeline.to_json(), "spikes": [s.to_json(self) for s in self.spikes]}

    def whole_share(self, ident: str) -> float:
        return next((m.share for m in self.matches if m.playbook.id == ident), 0.0)


def input_digest(source: str) -> Optional[str]:
    """`sha256:<hex>` of the input file; for a bundle directory, of its sorted `digest  path` lines
    (the SHA256SUMS layout over every regular file). None for anything else (a pipe)."""
    path = Path(source)
    if inputs.is_stream(source):
        return None
    try:
        if path.is_file():
            return "sha256:" + file_sha256(path)
        if path.is_dir():
            lines = [f"{file_sha256(p)}  {p.relative_to(path).as_posix()}\n"
                     for p in sorted(path.rglob("*")) if p.is_file() and not p.is_symlink()]
            return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
    except OSError:
        return None
    return None


def _unverified_note(evidence: scoring.Evidence, unverified: set) -> bool:
    return evidence.unverified or (bool(evidence.source) and evidence.source in unverified)


# -- window, samples, hotspots -------------------------------------------------------------------
def window(inp: inputs.Input) -> dict:
    return {"start": inp.capture.get("start_utc"), "seconds": inp.capture.window_seconds(inp.profile.time_span)}


def counts_samples(profile: Profile) -> bool:
    """Its weights count samples (rule AH1): the stack formats a paste weighs by count
    (paste.WEIGHTED); a listing of percentages (percent_of set) does not."""
    return profile.percent_of is None and profile.source_format in WEIGHTED


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
            if leaf not in example or record.weight > best[leaf]:
                best[leaf], example[leaf] = record.weight, names
    return [{"frame": name, "self": round(weight / total_busy, 4),
             "total": round(total_weight[name] / total_busy, 4),
             "example_stack": ";".join(example[name][-EXAMPLE_STACK_FRAMES:])}
            for name, weight in self_weight.most_common(limit)]


# -- data quality --------------------------------------------------------------------------------
def kernel_symbols_restricted(inp: inputs.Input) -> bool:
    if inp.capture.kernel_symbols() == "restricted" or inp.facts.get("perf.kernel_symbols") == "restricted":
        return True
    return any("kernel symbols restricted" in line for line in inp.profile.data_quality)


def data_quality(inp: inputs.Input, restricted: bool, inconclusive_ids: Sequence[str]) -> List[str]:
    lines = list(inp.problems) + inp.capture.quality()
    lines += list(inp.profile.data_quality) + inp.profile.limit_sentences()
    lines += list(getattr(inp.facts, "data_quality", []) or [])
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
def unverified_warning(diagnosis: Diagnosis, finding: scoring.Finding) -> list:
    """Headline words saying that the finding rests on evidence failing SHA256SUMS (or unchecked)."""
    files = sorted({e.source for e in finding.evidence if _unverified_note(e, diagnosis.input.unverified)})
    if not files:
        return []
    if any(problem.startswith("SHA256SUMS missing") for problem in diagnosis.input.problems):
        return ["; UNVERIFIED evidence: the bundle has no SHA256SUMS"]
    shown = files[:3] + ([f"{len(files) - 3} more"] if len(files) > 3 else [])
    return ["; UNVERIFIED evidence (changed after capture?): ", *_joined_code(shown), " failed SHA256SUMS"]


def _joined_code(names: Sequence[str]) -> list:
    parts: list = []
    for index, name in enumerate(names):
        parts += [", " if index else "", Prose.code(name)]
    return parts


def headline(diagnosis: Diagnosis) -> Prose:
    if diagnosis.input.profile.not_cpu:
        return Prose.of(offcpu.headline(diagnosis.input.profile.not_cpu))
    spiked = timeview.spike_headline(diagnosis)
    if spiked:
        return spiked
    confident = [f for f in diagnosis.findings if f.confidence != "low"]
    if confident:
        top = confident[0]
        sentence = headlines.with_finding(top.to_json(), diagnosis.fix_for(top))
        return Prose.of(sentence, *unverified_warning(diagnosis, top))
    if diagnosis.restricted:
        return headlines.RESTRICTED
    sentence = headlines.without_finding(diagnosis.cpu, headlines.user_share(diagnosis.samples),
                                         diagnosis.busy_commands,
                                         diagnosis.hotspots[0] if diagnosis.hotspots else None,
                                         len(diagnosis.playbooks))
    if diagnosis.findings:
        sentence = Prose.of(sentence, "; weak match only: ", Prose.code(diagnosis.findings[0].playbook.id), " (low)")
    return sentence


# -- pipeline ------------------------------------------------------------------------------------
def load_playbooks(extra_dirs: Sequence[str] = (), min_share: Optional[float] = None) -> List[playbooks.Playbook]:
    loaded = playbooks.load_all(extra_dirs)
    if min_share is not None:
        for playbook in loaded:
            playbook.signature["min_share"] = min_share
    return loaded


def run_diagnosis(source: str, extra_dirs: Sequence[str] = (), min_share: Optional[float] = None,
                  loaded: Optional[List[playbooks.Playbook]] = None,
                  time_range: Tuple[Optional[str], Optional[str]] = (None, None)) -> Diagnosis:
    """Diagnose INPUT; `time_range` is diagnose's --from/--to as typed (None: open end)."""
    inp = inputs.load(source)
    books = loaded if loaded is not None else load_playbooks(extra_dirs, min_share)
    clock = clock_for(inp.profile.time_span, inp.profile.origin, inp.manifest)
    seconds = timeview.restrict(inp, clock, time_range)
    restricted = kernel_symbols_restricted(inp)
    not_cpu = inp.profile.not_cpu        # off-CPU time or call durations: never diagnosed as CPU time
    matches = [] if not_cpu else match.match_all(books, inp.profile)
    samples = count_samples(inp.profile)
    few = scoring.few_busy(samples["busy"], samples["total"] - samples["busy"], counts_samples(inp.profile))
    findings, ruled_out = scoring.score_all(matches, inp.facts, len(inp.profile.cpus()), inp.stack_source,
                                            kernel_symbols_restricted=restricted,
                                            stacks_unverified=inp.stack_source in inp.unverified, few=few,
                                            cpu_window=inp.profile.cpu_window,
                                            interrupt_cpus=inp.profile.interrupt_cpus)
    if not_cpu:
        ruled_out = []                   # nothing was checked: the headline and Data quality say why
    inconclusive_ids = [r.id for r in ruled_out if r.inconclusive]
    diagnosis = Diagnosis(source, inp, books, findings, ruled_out, [] if not_cpu else hotspots(inp.profile), samples,
                          data_quality(inp, restricted, inconclusive_ids), restricted,
                          cpu=None if not_cpu else headlines.cpu_split(inp.facts, samples),
                          busy_commands=headlines.busy_commands(inp.profile),
                          matches=matches, clock=clock, time_range=seconds)
    timeview.add_timeline(diagnosis)
    diagnosis.headline = headline(diagnosis)
    return diagnosis


# -- outputs -------------------------------------------------------------------------------------
def _condition(condition: Optional[dict]) -> Prose:
    if condition is None:
        return Prose.of("Otherwise")
    value = condition.get("value")
    shown = [" ", Prose.code(scoring._show(value))] if "value" in condition else []
    return Prose.of("When ", Prose.code(condition["fact"]), f" {condition['op']}", *shown)


def _chosen_by(chosen: advice.Chosen) -> Optional[Prose]:
    source = [" (from ", Prose.code(chosen.source), ")"] if chosen.source else []
    if chosen.mode == "one":
        return Prose.of("For this input: ", Prose.code(chosen.fact), " = ", Prose.code(scoring._show(chosen.value)),
                        *source)
    if chosen.mode == "otherwise":
        return Prose.of("For this input: none of the cases applies (", Prose.code(chosen.fact), " = ",
                        Prose.code(scoring._show(chosen.value)), ")", *source)
    if chosen.mode == "all":
        return Prose.of("The input does not say ", *_joined_code(chosen.missing),
                        ": every case is shown, pick the one that applies")
    return None


def _advice_context(name: str, chosen: advice.Chosen) -> dict:
    return {"title": name, "common": report.Trusted(chosen.common), "mode": chosen.mode,
            "chosen_by": _chosen_by(chosen),
            "branches": [{"condition": _condition(b.condition), "text": report.Trusted(b.text)} for b in chosen.shown]}


def _finding_context(diagnosis: Diagnosis, finding: scoring.Finding) -> dict:
    hottest = finding.match.hottest_stack()
    hottest_weight = finding.match.stacks.get(hottest, 0)
    evidence = [{"kind": e.kind, "text": e.text, "source": e.source, "supports": e.supports,
                 "unverified": _unverified_note(e, diagnosis.input.unverified)} for e in finding.evidence]
    return {
        "json": finding.to_json(), "summary": report.Trusted(finding.playbook.summary), "evidence": evidence,
        "not_captured": finding.not_captured, "hottest": list(hottest),
        "hottest_share": hottest_weight / finding.match.matched if finding.match.matched else 0,
        "advice": [_advice_context(name, chosen) for name, chosen in diagnosis.chosen_advice(finding).items()],
    }


def mpstat_summary(facts, column: str) -> Optional[str]:
    """`12 % average, CPU 3 45 %` from the mpstat facts of one column (sys, soft)."""
    average = headlines._fact(facts, f"mpstat.{column}_pct.avg")
    if average is None:
        return None
    peak, peak_cpu = headlines._fact(facts, f"mpstat.{column}_pct.max"), facts.get(f"mpstat.{column}_pct.max_cpu")
    text = f"{average:.1f} % average"
    if peak is not None and peak_cpu is not None:
        text += f", peak CPU {peak_cpu} {peak:.1f} %"
    return text


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


def report_context(diagnosis: Diagnosis) -> dict:
    """What report.md and report.txt show: one context, two templates."""
    inp = diagnosis.input
    doc = diagnosis.findings_json()
    return {
        "input_name": inp.name, "headline": diagnosis.headline, "label": diagnosis.label,
        "host": doc["host"], "kernel": doc["kernel"],
        "window_text": window_text(inp), "samples": diagnosis.samples, "input_kind": inp.kind,
        "mpstat_sys": mpstat_summary(inp.facts, "sys"), "mpstat_soft": mpstat_summary(inp.facts, "soft"),
        "stack_source": inp.stack_source, "tools_missing": inp.tools_missing,
        "data_quality": diagnosis.data_quality, "inconclusive": diagnosis.restricted,
        "findings": [_finding_context(diagnosis, f) for f in diagnosis.findings],
        "ruled_out": grouped_ruled_out(diagnosis.ruled_out), "hotspots": diagnosis.hotspots,
        "show_hotspots": not any(f.confidence != "low" for f in diagnosis.findings) and not inp.profile.not_cpu,
        "not_cpu": inp.profile.not_cpu,
        "playbook_count": len(diagnosis.playbooks), "version": __version__, "schema": SCHEMA_VERSION,
        "time": timeview.report_context(diagnosis),
    }


def render_report(diagnosis: Diagnosis) -> str:
    return report.render({"d": report_context(diagnosis)})


def render_text(diagnosis: Diagnosis) -> str:
    return report.render_text({"d": report_context(diagnosis)})


def render_flamegraph(diagnosis: Diagnosis) -> str:
    """Busy stacks by default (percentages as in the report); idle ones behind 'Show idle'."""
    from . import flamegraph

    highlights = [flamegraph.Highlight(f.playbook.id, frozenset(f.match.frames), f.playbook.color,
                                       faded=f.confidence == "low")
                  for f in diagnosis.findings if f.match.frames]
    profile = diagnosis.input.profile
    return flamegraph.render_svg(flamegraph.folded_lines(profile, idle=False),
                                 idle_stacks=flamegraph.folded_lines(profile, idle=True),
                                 title=f"flamediag: {diagnosis.input.name}", subtitle=str(diagnosis.headline),
                                 highlights=highlights)


def write_outputs(diagnosis: Diagnosis, out_dir: Path) -> Dict[str, Path]:
    """Every output, written as one set; findings.json last (it marks a finished set)."""
    renders = {"report.md": lambda: render_report(diagnosis), "report.txt": lambda: render_text(diagnosis),
               "flamegraph.svg": lambda: render_flamegraph(diagnosis),
               "profile.speedscope.json": lambda: render_speedscope(diagnosis)}
    if diagnosis.timeline is not None:
        renders["timeline.svg"] = lambda: timeview.render_svg(diagnosis)
    renders["findings.json"] = lambda: json.dumps(diagnosis.findings_json(), indent=2) + "\n"
    return write_texts(out_dir, renders)


def write_texts(out_dir: Path, renders: Dict[str, Callable[[], str]]) -> Dict[str, Path]:
    """A command's output files, all rendered first, then written as one set by outputs.write_set
    (no symlink followed, renamed into place in this order, the directory locked)."""
    from .outputs import write_set

    return write_set(out_dir, {name: render().encode("utf-8") for name, render in renders.items()})


def render_speedscope(diagnosis: Diagnosis) -> str:
    from .speedscope import document

    return json.dumps(document(diagnosis.input.profile, f"flamediag: {diagnosis.input.name}"),
                      separators=(",", ":")) + "\n"
