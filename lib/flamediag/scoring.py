"""Scoring: matches + facts -> findings (with confidence and evidence) and ruled-out reasons.

Implements doc/playbook-format.md "Scoring":
- stack score = min(1, strong form / strong_share + weak form / weak_share) x 0.6 (weak_share defaults
  to strong_share, so by default min(1, share / strong_share)), and below `min_share` the playbook is
  ruled out;
- + weight of each passed check, - `against` of each failed one; a fact the input lacks moves nothing;
- required concentration absent -> ruled out; present -> + 0.1;
- flat profiles (no ancestry) cap confidence at medium unless a check of non-zero weight passed;
- unverified evidence (a file failing SHA256SUMS, or a bundle without SHA256SUMS) never raises
  confidence: a passed check on an unverified fact adds nothing (a failed one still subtracts), and
  high confidence needs verified support: unverified stacks or checks for the finding cap it at medium;
- kernel symbols restricted -> kernel signatures are inconclusive (neither found nor ruled out);
- not CPU time (off-CPU data, call durations: `Profile.not_cpu` says why) -> nothing is named: every
  playbook is ruled out with that reason;
- a sampled profile with fewer than FEW_BUSY busy samples beside more idle ones (rule AH1) caps every
  finding at low: the machine was idle, and a share of a handful of samples is not measured;
- where the profile says what one CPU gives over its window (a bcc profile's banner), a finding whose
  samples take less than SPIKE_CPU of one CPU is capped at low (rule BZ1, few_cpu), unless its
  playbook's cost is not the CPU its frames take (`signature.takes_cpu: false`);
- where a paste gives the machine-wide interrupt share and a bound on the CPUs, a softirq playbook's
  finding is capped at low when all the machine's hard and soft interrupt time is under SPIKE_CPU of
  one CPU (rules CF1-CF2, few_interrupt);
- confidence high >= 0.75, medium >= 0.5, else low; findings ranked by share x score, a low
  finding never ahead of a medium/high one.

    >>> confidence_for(0.8), confidence_for(0.5), confidence_for(0.49)
    ('high', 'medium', 'low')
    >>> evaluate_op("ne", 1, 0), evaluate_op("gt", "21", 20), evaluate_op("in", "always", ["always", "defer"])
    (True, True, True)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .flatclaims import STANDS_FOR
from .match import BUSY_THREAD, Match, concentration
from .spikes import MIN_BUSY
from .text import pct, pct_whole

STACK_WEIGHT = 0.6
CONCENTRATION_BONUS = 0.1
FLAT_CAP = 0.74                     # just below "high"
# rule AH1: as a second needs spikes.MIN_BUSY busy samples to be hot, a whole sampled profile needs as
# many to name a problem; fewer, beside more idle samples, is an idle machine
FEW_BUSY = MIN_BUSY
FEW_BUSY_CAP = 0.49                 # just below "medium"
# rule BZ1: a CPU spike takes half a CPU or more over the window (the bound rules BR1, I2 and R5 use)
SPIKE_CPU = BUSY_THREAD
# rule AR1: a signature holding this much of the kernel's busy samples is what the kernel spends its time on
DOMINANT = 2 / 3
HIGH, MEDIUM = 0.75, 0.5
SETTING_PREFIXES = ("sysctl.", "thp.", "modparam.", "nic.", "clocksource.", "cpufreq.", "tuned.", "numa.")


@dataclass
class Evidence:
    kind: str                       # stacks | metric | setting | absence
    text: str
    source: str = ""
    supports: Optional[bool] = True  # True for, False against, None neutral (not captured)
    fact: Optional[str] = None       # what was compared: a fact name, or stacks.share / stacks.concentration
    value: Any = None                # its value in this input
    op: Optional[str] = None         # eq ne gt ge lt le in not_in contains matches exists
    threshold: Any = None            # what the playbook compares it with
    unverified: bool = False         # its file failed SHA256SUMS: shown, but it added nothing

    def to_json(self) -> dict:
        return {"kind": self.kind, "text": self.text, "source": self.source, "supports": self.supports,
                "fact": self.fact, "value": json_value(self.value), "op": self.op,
                "threshold": json_value(self.threshold)}


def json_value(value):
    """A fact value as strict JSON: NaN/Infinity become null, tuples lists, anything else a string."""
    if isinstance(value, (list, tuple, set)):
        return [json_value(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, float):
        return round(value, 6)
    return value if isinstance(value, (str, int, bool)) or value is None else str(value)


@dataclass
class Finding:
    match: Match
    score: float
    confidence: str
    evidence: List[Evidence] = field(default_factory=list)
    not_captured: List[str] = field(default_factory=list)
    checks_passed: int = 0

    @property
    def playbook(self):
        return self.match.playbook

    @property
    def rank_key(self) -> Tuple[int, float]:
        return (0 if self.confidence != "low" else 1, -self.match.share * self.score)

    def to_json(self) -> dict:
        pb = self.playbook
        return {
            "id": pb.id, "title": pb.title, "confidence": self.confidence, "score": round(self.score, 3),
            "share": round(self.match.share, 4),
            "cpus": {k: round(v, 4) for k, v in self.match.fractions(self.match.cpus).items()},
            "commands": {k: round(v, 4) for k, v in list(self.match.fractions(self.match.comms).items())[:10]},
            "evidence": [e.to_json() for e in self.evidence],
            "frames": sorted(self.match.frames),
            "playbook": pb.path,
        }


# machine-readable reasons a playbook was ruled out (findings.json `ruled_out[].code`)
NO_MATCH, BELOW_MIN_SHARE, NOT_CONCENTRATED, SYMBOLS_RESTRICTED = (
    "no_match", "below_min_share", "not_concentrated", "kernel_symbols_restricted")


@dataclass
class RuledOut:
    id: str
    reason: str
    inconclusive: bool = False
    code: str = NO_MATCH

    def to_json(self) -> dict:
        return {"id": self.id, "code": self.code, "reason": self.reason}


def confidence_for(score: float) -> str:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


# -- facts access (doc/facts.md: mapping name -> value, .source(name)) ------------------------
def fact_lookup(facts, name: str) -> Tuple[bool, Any]:
    if facts is None:
        return False, None
    try:
        if name in facts:
            getter = getattr(facts, "get", None)
            return True, getter(name) if callable(getter) else facts[name]
    except TypeError:
        pass
    return False, None


def fact_unverified(facts, name: str) -> bool:
    checker = getattr(facts, "unverified", None)
    return bool(checker(name)) if callable(checker) else False


def fact_source(facts, name: str) -> str:
    getter = getattr(facts, "source", None)
    try:
        return (getter(name) if callable(getter) else None) or ""
    except Exception:  # a facts implementation without a source for this name
        return ""


def _number(value) -> Optional[float]:
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def evaluate_op(op: str, actual, expected) -> Optional[bool]:
    """True/False, or None when the two values cannot be compared."""
    if op in ("eq", "ne"):
        a, b = _number(actual), _number(expected)
        equal = (a == b) if a is not None and b is not None else str(actual) == str(expected)
        return equal if op == "eq" else not equal
    if op in ("gt", "ge", "lt", "le"):
        a, b = _number(actual), _number(expected)
        if a is None or b is None:
            return None
        return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[op]
    if op in ("in", "not_in"):
        values = expected if isinstance(expected, (list, tuple)) else [expected]
        inside = any(evaluate_op("eq", actual, v) for v in values)
        return inside if op == "in" else not inside
    if op == "contains":
        if isinstance(actual, (list, tuple, set)):
            return any(evaluate_op("eq", item, expected) for item in actual)
        return str(expected) in str(actual)
    if op == "matches":
        return re.search(str(expected), str(actual)) is not None
    if op == "exists":
        return True
    return None


def _show(value) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(_show(v) for v in value)
    return str(value)


def fill(template: str, facts, values: Dict[str, Any]) -> str:
    """Fill {value} {threshold} {cpu} {comm} {share} and {fact:NAME}; a `:pct` suffix shows a
    fraction as a percentage.

    >>> fill("{value:pct} on CPU {cpu}, {fact:x}", {"x": 3}, {"value": 0.981, "cpu": 0})
    '98 % on CPU 0, 3'
    """
    def replace(match):
        key, as_pct = match.group(1), False
        if key.endswith(":pct"):
            key, as_pct = key[:-4], True
        if key.startswith("fact:"):
            present, value = fact_lookup(facts, key[5:])
        else:
            present, value = key in values and values[key] is not None, values.get(key)
        if not present:
            return "?" if key.startswith("fact:") else match.group(0)
        number = _number(value)
        return pct_whole(number) if as_pct and number is not None else _show(value)

    return re.sub(r"\{([a-z_]+(?::[A-Za-z0-9_.:/-]+)?)\}", replace, template)


def _check_kind(check: dict) -> str:
    if check.get("kind"):
        return check["kind"]
    return "setting" if check["fact"].startswith(SETTING_PREFIXES) else "metric"


def run_check(check: dict, facts, values: Dict[str, Any]):
    """(delta, Evidence or None, not-captured fact name or None)."""
    name = check["fact"]
    present, actual = fact_lookup(facts, name)
    if not present:
        return 0.0, None, name
    result = evaluate_op(check["op"], actual, check["value"])
    if result is None:
        return 0.0, None, name
    context = dict(values, value=actual, threshold=check["value"])
    source = fact_source(facts, name)
    compared = {"fact": name, "value": actual, "op": check["op"], "threshold": check["value"]}
    unverified = fact_unverified(facts, name)
    if result:
        return 0.0 if unverified else check["weight"], Evidence(
            _check_kind(check), fill(check["says"], facts, context), source, True, unverified=unverified,
            **compared), None
    text = check["else"] or f"{name} = {_show(actual)} (the signature expects {check['op']} {_show(check['value'])})"
    return -check["against"], Evidence(_check_kind(check), fill(text, facts, context), source, False,
                                       unverified=unverified, **compared), None


# -- one playbook ------------------------------------------------------------------------
def _flat_note(match: Match) -> str:
    note = " (flat profile: no call chains, so ancestry is missing; counted by distinctive frames"
    if match.claimed:
        named = sorted(name for name in match.claimed_by if STANDS_FOR in name)
        beside = sorted(name for name in match.claimed_by if STANDS_FOR not in name and ":" in name)
        own = sorted(set(match.claimed_by) - set(named) - set(beside))
        reasons = [f"{', '.join(own[:4])} {'is' if len(own) == 1 else 'are'} listed for the same command"] if own else []
        reasons += [f"{name.rpartition(STANDS_FOR)[0]} runs this path's {name.rpartition(STANDS_FOR)[2]} and "
                    f"nothing else" for name in named[:2]]
        beside = ["'s ".join(name.rpartition(":")[::2]) for name in beside]
        note += (f", plus {pct(match.claimed / match.busy)} in entries that name no path themselves (a spin "
                 f"lock, a page-table walk shared with mprotect, a softirq thread's helpers), attributed to "
                 f"this one because {' and '.join(reasons)}")
        if beside:
            note += f", beside {', '.join(beside[:2])}"
        if match.rivals:
            note += f" (frames of {', '.join(sorted(match.rivals))} are listed too)"
    return note + ")"


def _stack_evidence(match: Match, stack_source: str) -> Evidence:
    text = (f"{pct(match.share)} of busy samples ({match.matched:.0f} of {match.busy:.0f}) carry the signature")
    if match.flat:
        text += _flat_note(match)
    elif match.strong < match.matched:
        text += f"; {pct(match.strong_share)} in its strong form"
    if match.unlisted:
        text += (f"; the pasted entries cover {pct(1 - match.unlisted / match.busy)} of the samples, the rest "
                 f"counts as busy ({pct(match.listed_share)} of the listed entries)")
    return Evidence("stacks", text, stack_source, fact="stacks.share", value=round(match.share, 4), op="ge",
                    threshold=match.playbook.signature["min_share"])


def _concentration(match: Match, cpus_seen: int):
    """(bonus, Evidence or None, ruled-out reason or None)."""
    spec = match.playbook.signature["concentration"]
    if not spec:
        return 0.0, None, None
    by, top_n, need = spec["by"], spec["top_n"], spec["top_share"]
    found = concentration(match, by, top_n)
    if found is None or (by == "cpu" and cpus_seen <= top_n):
        return 0.0, Evidence("absence", f"per-{by} concentration unknown (input has no {by} per sample)", "", None,
                             fact=f"stacks.concentration.{by}", op="ge", threshold=need), None
    share, top = found
    label = "CPU " + ", ".join(top) if by == "cpu" else ", ".join(top)
    if share >= need:
        return CONCENTRATION_BONUS, Evidence("stacks", f"{pct(share)} of the matching samples ran on {label}",
                                             fact=f"stacks.concentration.{by}", value=round(share, 4), op="ge",
                                             threshold=need), None
    reason = f"matching samples are spread: the top {top_n} {by}(s) ({label}) hold {pct(share)} < {pct(need)}"
    return 0.0, None, reason if spec["required"] else None


def score_match(match: Match, facts, cpus_seen: int, stack_source: str = "", stacks_unverified: bool = False,
                few: Optional[str] = None, cpu_window: Optional[float] = None,
                interrupt_cpus: Optional[Tuple[float, str]] = None):
    """A Finding, or a RuledOut with its reason; `few` (rule AH1, few_busy) caps the score at low, and
    so does a finding under SPIKE_CPU of one CPU where `cpu_window` says what one CPU gives (rule BZ1),
    and a softirq finding where `interrupt_cpus` puts the machine's interrupt time under it (rule CF1)."""
    pb, sig = match.playbook, match.playbook.signature
    if match.matched <= 0:
        return RuledOut(pb.id, "no busy sample carries the signature"
                        + (" (flat profile: none of its distinctive frames seen)" if match.flat else ""))
    # a pasted listing's left-out entries weaken the evidence (share) but do not hide what it lists
    if match.listed_share < sig["min_share"]:
        return RuledOut(pb.id, f"only {pct(match.listed_share)} of busy samples carry the signature "
                               f"(threshold {pct(sig['min_share'])})", code=BELOW_MIN_SHARE)
    bonus, conc_evidence, conc_reason = _concentration(match, cpus_seen)
    if conc_reason:
        return RuledOut(pb.id, conc_reason, code=NOT_CONCENTRATED)
    unjudged = _required_but_unknown(match, conc_evidence)
    score = stack_score(match, strong_only=unjudged) + bonus
    evidence = [_stack_evidence(match, stack_source)] + ([conc_evidence] if conc_evidence else [])
    dominant = None if unjudged else kernel_dominant(match)
    if dominant and score < MEDIUM:
        score = MEDIUM
        evidence.append(dominant)
    thread = None if unjudged else busy_background(match)
    if thread and score < MEDIUM:
        score = MEDIUM
        evidence.append(thread)
    if unjudged and match.strong < match.matched:
        evidence.append(Evidence("absence", "the defining concentration cannot be judged from this input, so only "
                                            f"the signature's strong form counts ({pct(match.strong_share)})",
                                 "", None))
    for ev in evidence:
        if ev.kind == "stacks" and not ev.source:
            ev.source = stack_source
        ev.unverified = ev.kind == "stacks" and stacks_unverified
    values = _template_values(match)
    not_captured, passed = [], 0
    for check in pb.checks:
        delta, ev, missing = run_check(check, facts, values)
        score += delta
        if ev is not None:
            evidence.append(ev)
            # a check of weight 0 only shows a figure (turbostat's clocks, the cpufreq driver): it
            # corroborates nothing, so it lifts no cap
            passed += 1 if ev.supports and check["weight"] > 0 else 0
        if missing:
            not_captured.append(missing)
    score = max(0.0, min(1.0, score))
    if (match.flat and not passed) or any(ev.unverified and ev.supports for ev in evidence):
        score = min(score, FLAT_CAP)
    if few and score > FEW_BUSY_CAP:
        score = FEW_BUSY_CAP
        evidence.append(Evidence("absence", few, "", False))
    small = few_cpu(match, cpu_window)
    if small and score > FEW_BUSY_CAP:
        score = FEW_BUSY_CAP
        evidence.append(Evidence("absence", small, "", False))
    quiet = few_interrupt(match, interrupt_cpus)
    if quiet and score > FEW_BUSY_CAP:
        score = FEW_BUSY_CAP
        evidence.append(Evidence("metric", quiet, "pasted top / mpstat", False, fact="interrupt.cpus",
                                 value=round(interrupt_cpus[0], 4), op="ge", threshold=SPIKE_CPU))
    return Finding(match, score, confidence_for(score), evidence, not_captured, passed)


def busy_background(match: Match) -> Optional[Evidence]:
    """Rule BY1: a background kernel thread of the signature (`background`: ksmd, kcompactd) that a
    pasted `top` or `pidstat` row shows taking half a CPU or more is the problem's own symptom, one
    CPU taken by a thread nobody waits for, measured by the tool that shows it: with the signature
    at `min_share` or more of the listing (checked before) it is named at medium at least, however
    small one CPU's share of a many-CPU host's listing is (ksmd at 100 % of one CPU of 40 is 2.5 %
    of the host).

    >>> from types import SimpleNamespace as NS
    >>> busy_background(NS(busy_thread=("ksmd", 1.0))).text
    'a pasted top / pidstat row shows ksmd at 100 % of one CPU: the background thread takes a CPU of its own'
    >>> busy_background(NS(busy_thread=None)) is None
    True
    """
    if not match.busy_thread:
        return None
    comm, cpu = match.busy_thread
    return Evidence("metric", f"a pasted top / pidstat row shows {comm} at {pct_whole(cpu)} of one CPU: the "
                              f"background thread takes a CPU of its own", "top / pidstat",
                    fact="tasks.cpu", value=cpu, op="ge", threshold=0.5)


def kernel_dominant(match: Match) -> Optional[Evidence]:
    """Rule AR1: the kernel's time is this problem. A signature whose strong form holds at least
    DOMINANT of the busy samples whose leaf is a kernel frame (a weak form only suggests the problem:
    an IPI wait for irq-storm, plain switching for sched-overhead), and at least twice its playbook's
    `min_share` of all busy samples, is what the kernel spends its time on: medium at least, however
    far below `strong_share` it is (a modest cost its reporter saw: compaction at 14 % of a JVM host, TLB
    shootdowns at 13 % of a Go service). Healthy look-alikes carry the same frames below min_share,
    or beside other kernel work that outweighs them.

    >>> from types import SimpleNamespace as NS
    >>> pb = NS(signature={"min_share": 0.05})
    >>> kernel_dominant(NS(playbook=pb, strong=13.0, kernel=16.0, share=0.13)).value
    0.8125
    >>> kernel_dominant(NS(playbook=pb, strong=13.0, kernel=24.0, share=0.13)) is None   # other kernel work
    True
    >>> kernel_dominant(NS(playbook=pb, strong=8.0, kernel=9.0, share=0.08)) is None     # under 2 x min_share
    True
    """
    twice_min_share = 2 * match.playbook.signature["min_share"]
    if match.kernel <= 0 or match.strong < DOMINANT * match.kernel or match.share < twice_min_share:
        return None
    held = match.strong / match.kernel
    return Evidence("stacks", f"the signature holds {pct(held)} of the samples spent in the kernel: the kernel's "
                              "time is this problem", fact="stacks.kernel_dominant", value=round(held, 4), op="ge",
                    threshold=DOMINANT)


def stack_score(match: Match, strong_only: bool = False) -> float:
    """The stacks' part of the score: the weak form needs `weak_share` for what the strong form
    gets at `strong_share` (sched-overhead: plain context switching is part of every blocking
    workload, so it alone is strong evidence only when it dominates)."""
    sig = match.playbook.signature
    weak = 0.0 if strong_only else (match.share - match.strong_share) / sig["weak_share"]
    return min(1.0, match.strong_share / sig["strong_share"] + weak) * STACK_WEIGHT


def _required_but_unknown(match: Match, conc_evidence: Optional[Evidence]) -> bool:
    """A concentration the problem is defined by (nic-softirq: one CPU) that the input cannot show:
    then the weak form proves nothing (RX work through process_backlog on loopback looks the same
    as one NIC queue's softirq when no CPU is known), only the strong form counts."""
    spec = match.playbook.signature["concentration"]
    return bool(spec and spec["required"] and conc_evidence is not None and conc_evidence.supports is None)


def _template_values(match: Match) -> Dict[str, Any]:
    top_cpu = match.cpus.most_common(1)[0][0] if match.cpus else None
    top_comm = match.comms.most_common(1)[0][0] if match.comms else None
    return {"cpu": top_cpu, "comm": top_comm, "share": pct_whole(match.share)}


def inconclusive(playbook) -> RuledOut:
    return RuledOut(playbook.id, "inconclusive: kernel symbols are restricted, so kernel frames cannot be "
                                 "matched (recapture with kernel.kptr_restrict=0 and perf_event_paranoid <= 1)",
                    inconclusive=True, code=SYMBOLS_RESTRICTED)


def few_busy(busy: float, idle: float, counted: bool) -> Optional[str]:
    """Rule AH1: why no share of this profile can name a problem, or None. Only for weights that count
    samples (perf script, folded stacks, bpftrace / bcc stack maps): a percentage listing says nothing
    of how many samples it was made of.

    >>> few_busy(8, 7093, True)
    'only 8 busy samples beside 7093 idle ones: the machine was idle, and a share of so few samples is not measured'
    >>> few_busy(8, 7093, False), few_busy(40, 7093, True), few_busy(1, 0, True)
    (None, None, None)
    """
    if not counted or not 0 < busy < FEW_BUSY or idle <= busy:
        return None
    return (f"only {int(round(busy))} busy samples beside {int(round(idle))} idle ones: the machine was idle, "
            "and a share of so few samples is not measured")


def few_cpu(match: Match, cpu_window: Optional[float]) -> Optional[str]:
    """Rule BZ1: why this finding is no CPU spike, or None. `cpu_window` is what one CPU gives over the
    profiled window (a bcc profile's banner `Sampling at 99 Hertz ... for 10 secs`: 990 samples); the
    finding's samples, summed over every CPU, must take SPIKE_CPU of one CPU or more. A share of the busy
    samples does not say that: on a mostly idle host a NIC's interrupts, a timer or a kernel thread are
    most of the few busy samples while taking a few percent of one CPU. Playbooks whose cost is not the
    CPU their frames take (`takes_cpu: false`: idle-state exits, a clocksource's slow reads, packet loss)
    are not judged so, nor is a profile whose window is unknown.

    >>> from types import SimpleNamespace as NS
    >>> nic = NS(playbook=NS(signature={"takes_cpu": True}), matched=310.0)
    >>> few_cpu(nic, 2970.0)
    'its 310 samples take 10 % of one CPU over the profiled window (one CPU gives 2970): a CPU spike takes half a CPU or more'
    >>> few_cpu(nic, 297.0), few_cpu(nic, None)
    (None, None)
    >>> few_cpu(NS(playbook=NS(signature={"takes_cpu": False}), matched=31.0), 2970.0) is None
    True
    """
    if not cpu_window or match.playbook.signature.get("takes_cpu") is False:
        return None
    if match.matched >= SPIKE_CPU * cpu_window:
        return None
    return (f"its {int(round(match.matched))} samples take {pct(match.matched / cpu_window)} of one CPU over the "
            f"profiled window (one CPU gives {int(round(cpu_window))}): a CPU spike takes half a CPU or more")


def few_interrupt(match: Match, interrupt_cpus: Optional[Tuple[float, str]]) -> Optional[str]:
    """Rules CF1-CF2: why this softirq finding is no CPU spike, or None. `interrupt_cpus` is the CPUs'
    worth of hard and soft interrupt time the whole machine had at most, from a pasted machine-wide
    share (`top`'s `%Cpu(s)` si and hi, mpstat's `all` row) times an upper bound on the CPUs
    (paste.irqtime). A playbook whose frames run in softirq (`context: softirq`: nic-softirq, one CPU
    saturated by its receive softirq) takes at least that CPU's softirq time, so it cannot be a spike
    when the whole machine's is under SPIKE_CPU of one CPU; a small share alone proves nothing (one
    CPU at 100 % softirq is 3 % of a 32-CPU host's time).

    >>> from types import SimpleNamespace as NS
    >>> nic = NS(playbook=NS(signature={"context": "softirq"}))
    >>> few_interrupt(nic, (0.43, "... 43 % of one CPU in all"))
    '... 43 % of one CPU in all, less than one CPU saturated by its receive softirq would take on its own'
    >>> few_interrupt(nic, (1.0, "...")), few_interrupt(nic, None)
    (None, None)
    >>> few_interrupt(NS(playbook=NS(signature={"context": "any"})), (0.1, "...")) is None
    True
    """
    if not interrupt_cpus or match.playbook.signature.get("context") != "softirq":
        return None
    cpus, said = interrupt_cpus
    if cpus >= SPIKE_CPU:
        return None
    return f"{said}, less than one CPU saturated by its receive softirq would take on its own"


def score_all(matches: Sequence[Match], facts, cpus_seen: int, stack_source: str = "",
              kernel_symbols_restricted: bool = False, not_cpu: Optional[str] = None,
              stacks_unverified: bool = False, few: Optional[str] = None, cpu_window: Optional[float] = None,
              interrupt_cpus: Optional[Tuple[float, str]] = None):
    """(findings ranked best first, ruled_out list); `few` (rule AH1, few_busy) caps them at low,
    `cpu_window` (rule BZ1, few_cpu) each finding under half a CPU, and `interrupt_cpus` (rule CF1,
    few_interrupt) each softirq finding on a machine whose interrupt time is under half a CPU."""
    findings: List[Finding] = []
    ruled_out: List[RuledOut] = []
    for match in matches:
        if not_cpu:
            ruled_out.append(RuledOut(match.playbook.id, f"not checked: the input is not a CPU profile ({not_cpu})"))
            continue
        if kernel_symbols_restricted and match.playbook.kernel:
            ruled_out.append(inconclusive(match.playbook))
            continue
        result = score_match(match, facts, cpus_seen, stack_source, stacks_unverified, few, cpu_window,
                             interrupt_cpus)
        (findings if isinstance(result, Finding) else ruled_out).append(result)
    findings.sort(key=lambda f: f.rank_key)
    return findings, ruled_out
