"""The diagnosis over time, for inputs with sample times (doc/timeline.md): --from/--to, the
timeline, the spikes found in it and each spike diagnosed on its own, and what the report and
timeline.svg show of them. The pipeline (diagnose.py) calls:

    seconds = restrict(inp, clock, ("25", "35"))    # --from/--to: the profile and mpstat facts cut
    add_timeline(diagnosis)                          # diagnosis.timeline, diagnosis.spikes
    spike_headline(diagnosis)                        # the headline when a spike found more
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import diagnose as pipeline
from . import errors, match, report, scoring, spikes, timeline
from .errors import UserError
from .clock import Clock, TimeError, parse_point
from .parsers.mpstat import restricted_to

SPIKE_MPSTAT = ("mpstat.sys_pct.avg", "mpstat.sys_pct.max", "mpstat.sys_pct.max_cpu",
                "mpstat.soft_pct.avg", "mpstat.soft_pct.max", "mpstat.soft_pct.max_cpu")


@dataclass
class SpikeDiagnosis:
    """A spike's seconds diagnosed on their own (mpstat facts of those seconds only)."""
    spike: spikes.Spike
    findings: List[scoring.Finding]
    samples: Dict[str, int]
    mpstat: Dict[str, float] = field(default_factory=dict)      # mpstat.* facts of the spike's rows

    def confident(self) -> List[scoring.Finding]:
        return [f for f in self.findings if f.confidence != "low"]

    def to_json(self, whole: "pipeline.Diagnosis") -> dict:
        doc = self.spike.to_json()
        doc.update({"start": whole.clock.iso(self.spike.start), "end": whole.clock.iso(self.spike.end),
                    "samples": self.samples, "mpstat": self.mpstat,
                    "findings": [dict(whole._finding_json(f),
                                      whole_share=round(whole.whole_share(f.playbook.id), 4))
                                 for f in self.findings]})
        return doc


def restrict(inp, clock: Clock, time_range) -> Optional[Tuple[int, int]]:
    """Apply --from/--to to the input's profile; the second indexes kept, None when not asked."""
    start_text, end_text = time_range
    if start_text is None and end_text is None:
        return None
    total = inp.profile.seconds()
    if not total:
        raise UserError(f"{inp.name}: --from/--to need sample times (perf script or a bundle); "
                        f"this {inp.kind} input has none", errors.USAGE)
    try:
        first = parse_point(start_text, clock, total) if start_text is not None else 0.0
        last = parse_point(end_text, clock, total) if end_text is not None else float(total)
    except TimeError as err:
        raise UserError(f"--from/--to {err}", errors.USAGE)
    first, last = max(0, int(first // 1)), min(total, int(-(-last // 1)))
    if last <= first:
        raise UserError(f"--from/--to select no second: the samples span seconds 0-{total} "
                        f"({clock.range_text(0, total)})", errors.USAGE)
    inp.profile = inp.profile.between(first, last)
    inp.facts = _facts_of(inp.facts, clock, first, last)
    inp.notes.append(f"restricted by --from/--to to seconds {first}-{last} ({clock.range_text(first, last)}); "
                     "start/end counter deltas and settings are still the whole window's")
    return first, last


def _facts_of(facts, clock: Clock, first: int, last: int):
    rows = timeline.rows_between(facts, clock, first, last)
    return restricted_to(facts, rows) if rows and hasattr(facts, "items") else facts


def add_timeline(diagnosis: "pipeline.Diagnosis") -> None:
    """Timeline, spikes and each spike's own diagnosis, for inputs with sample times."""
    profile = diagnosis.input.profile
    if not profile.seconds() or profile.not_cpu:   # off-CPU weights have no busy/kernel share
        return
    first, last = diagnosis.time_range or (0, profile.seconds())
    if last - first > timeline.MAX_SECONDS:
        diagnosis.data_quality.append(
            f"the samples span {last - first} s: no timeline or spike search beyond {timeline.MAX_SECONDS} s; "
            "choose a range with --from/--to")
        return
    line = timeline.build(profile, diagnosis.matches, diagnosis.input.facts, diagnosis.clock, first, last)
    line.trigger = timeline.watch_trigger(diagnosis.input.manifest, diagnosis.clock)
    found = spikes.find(line.busy, {"kernel": line.kernel, "softirq": line.softirq, **line.signatures}, first)
    diagnosis.timeline = line
    diagnosis.spikes = [diagnose_window(diagnosis, spike) for spike in found]
    shown = [f.playbook.id for f in diagnosis.findings]
    for spike in diagnosis.spikes:
        shown += [f.playbook.id for f in spike.confident() if f.playbook.id not in shown]
    line.shown = shown


def diagnose_window(diagnosis: "pipeline.Diagnosis", spike: spikes.Spike) -> SpikeDiagnosis:
    inp = diagnosis.input
    profile = inp.profile.between(spike.start, spike.end)
    facts = _facts_of(inp.facts, diagnosis.clock, spike.start, spike.end)
    matches = match.match_all(diagnosis.playbooks, profile)
    findings, _ = scoring.score_all(matches, facts, len(profile.cpus()), inp.stack_source,
                                    kernel_symbols_restricted=diagnosis.restricted)
    mpstat = {name: facts.get(name) for name in SPIKE_MPSTAT if facts.get(name) is not None} \
        if facts is not inp.facts else {}
    return SpikeDiagnosis(spike, findings, pipeline.count_samples(profile), mpstat)


def spike_headline(diagnosis: "pipeline.Diagnosis") -> Optional[report.Prose]:
    """The first spike whose own diagnosis found what the whole window did not (at medium/high)."""
    whole = {f.playbook.id for f in diagnosis.findings if f.confidence != "low"}
    for spike in diagnosis.spikes:
        top = next((f for f in spike.confident() if f.playbook.id not in whole), None)
        if top is None:
            continue
        seconds = diagnosis.timeline.seconds if diagnosis.timeline else 0
        return report.Prose.of(
            report.Prose.code(top.playbook.id),
            f" ({top.confidence}), in {report.pct(top.match.share)} of busy samples during "
            f"{diagnosis.clock.range_text(spike.spike.start, spike.spike.end)}; "
            f"{report.pct(diagnosis.whole_share(top.playbook.id))} over the whole {seconds} s window; fix: ",
            diagnosis.fix_for(top))
    return None


def _mpstat_text(values: Dict[str, float]) -> str:
    """`%sys 95 % (hottest CPU 2 97 %), %soft 1 % (hottest CPU 0 1 %)` from a spike's mpstat facts."""
    parts = []
    for column in ("sys", "soft"):
        average = values.get(f"mpstat.{column}_pct.avg")
        if average is None:
            continue
        text = f"%{column} {average:.0f} %"
        if values.get(f"mpstat.{column}_pct.max") is not None:
            text += f" (hottest CPU {values.get(f'mpstat.{column}_pct.max_cpu')} {values[f'mpstat.{column}_pct.max']:.0f} %)"
        parts.append(text)
    return ", ".join(parts)


def report_context(diagnosis: "pipeline.Diagnosis") -> Optional[dict]:
    """What the report's Spikes and Timeline sections show (None without sample times)."""
    line = diagnosis.timeline
    if line is None:
        return None
    shown = {f.playbook.id for f in diagnosis.findings}
    spikes_shown = []
    for spike in diagnosis.spikes:
        confident = spike.confident()
        spikes_shown.append({
            "range": diagnosis.clock.range_text(spike.spike.start, spike.spike.end),
            "seconds": spike.spike.end - spike.spike.start, "first": spike.spike.start,
            "rose": [{"series": name, "peak": spike.spike.peak[name], "baseline": spike.spike.baseline[name]}
                     for name in spike.spike.series],
            "busy": spike.samples["busy"], "mpstat": _mpstat_text(spike.mpstat),
            "findings": [{"id": f.playbook.id, "title": f.playbook.title, "confidence": f.confidence,
                          "share": f.match.share, "whole": diagnosis.whole_share(f.playbook.id)}
                         for f in spike.findings],
            "details": [pipeline._finding_context(diagnosis, f) | {"runbook": f.playbook.id not in shown}
                        for f in confident[:1]],
        })
    trigger = line.trigger
    return {"clock": diagnosis.clock.describe(), "seconds": line.seconds,
            "trigger": None if trigger is None else
            f"{trigger['label']} at {diagnosis.clock.stamp(trigger['second'])} (second {trigger['second']:g})",
            "range": diagnosis.clock.range_text(line.first, line.first + line.seconds),
            "restricted": diagnosis.time_range is not None, "spikes": spikes_shown}


def render_svg(diagnosis: "pipeline.Diagnosis") -> str:
    from . import timeline_svg

    colors = {f.playbook.id: f.playbook.color for f in diagnosis.findings if f.playbook.color}
    for spike in diagnosis.spikes:
        colors.update({f.playbook.id: f.playbook.color for f in spike.findings if f.playbook.color})
    return timeline_svg.render(diagnosis.timeline, f"flamediag timeline: {diagnosis.input.name}",
                               [(s.spike.start, s.spike.end) for s in diagnosis.spikes], colors)
