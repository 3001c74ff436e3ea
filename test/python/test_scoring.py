"""Scoring per doc/playbook-format.md: stack score, checks, concentration, flat cap, inconclusive, ranking."""
from __future__ import annotations

import pytest

import diagnose_helpers  # noqa: F401
from flamediag.match import match_playbook
from flamediag.playbooks import parse_playbook
from flamediag.profile import Frame, Profile
from flamediag.scoring import Finding, RuledOut, confidence_for, evaluate_op, score_all, score_match


class StubFacts:
    """The doc/facts.md interface: `in`, get(), source(), data_quality."""

    def __init__(self, values, sources=None):
        self.values, self.sources, self.data_quality = values, sources or {}, []

    def __contains__(self, name):
        return name in self.values

    def get(self, name, default=None):
        return self.values.get(name, default)

    def source(self, name):
        return self.sources.get(name)


BOOK = """---
id: demo
title: Demo
summary: demo
eras: [any]
evidence: [stacks]
frames:
  reclaim: [zone_reclaim]
  lock: [_spin_lock_irq]
signature:
  patterns: [[reclaim, lock], [reclaim]]
  strong: [0]
  distinctive: [zone_reclaim]
  min_share: 0.05
  strong_share: 0.20
  {conc}
checks:
  - {fact: sysctl.vm.zone_reclaim_mode, op: ne, value: 0, weight: 0.25, against: 0.25,
     says: "mode = {value}", else: "mode off ({value})"}
  - {fact: numa.max_distance, op: gt, value: 20, weight: 0.1, says: "distance {value} > {threshold}"}
---
## Symptom & evidence
## Why it happens
## Confirm by hand
## Mitigate
## Verify the fix
## References
"""


def book(conc=""):
    return parse_playbook(BOOK.replace("{conc}", conc), "demo.md")


def prof(matched, other, cpus=(0,), ancestry=True):
    p = Profile(ancestry=ancestry)
    frames = [Frame("zone_reclaim", "kernel"), Frame("_spin_lock_irq", "kernel")] if ancestry else [Frame("zone_reclaim", "kernel")]
    for cpu in cpus:
        p.add(frames, matched / len(cpus), cpu=cpu, comm="java")
    p.add([Frame("other", "kernel")], other, cpu=0)
    return p


def score(playbook, profile, facts, cpus_seen=4):
    return score_match(match_playbook(playbook, profile), facts, cpus_seen, "perf/perf.script.gz")


def test_stack_evidence_alone_is_at_most_medium():
    finding = score(book(), prof(50, 50), StubFacts({}))
    assert finding.score == pytest.approx(0.6) and finding.confidence == "medium"
    assert finding.not_captured == ["sysctl.vm.zone_reclaim_mode", "numa.max_distance"]


def test_stack_score_scales_below_strong_share():
    finding = score(book(), prof(10, 90), StubFacts({}))
    assert finding.score == pytest.approx(0.1 / 0.2 * 0.6)


def test_passed_checks_raise_confidence_and_cite_their_source():
    facts = StubFacts({"sysctl.vm.zone_reclaim_mode": 1, "numa.max_distance": 21},
                      {"sysctl.vm.zone_reclaim_mode": "system/sysctl.txt"})
    finding = score(book(), prof(50, 50), facts)
    assert finding.score == pytest.approx(0.95) and finding.confidence == "high"
    texts = {e.text: e.source for e in finding.evidence}
    assert texts["mode = 1"] == "system/sysctl.txt"
    assert "distance 21 > 20" in texts


def test_failed_check_subtracts_against_and_says_else():
    finding = score(book(), prof(50, 50), StubFacts({"sysctl.vm.zone_reclaim_mode": 0}))
    assert finding.score == pytest.approx(0.35) and finding.confidence == "low"
    assert any(e.text == "mode off (0)" and e.supports is False for e in finding.evidence)


def test_below_min_share_is_ruled_out_with_the_numbers():
    result = score(book(), prof(2, 98), StubFacts({}))
    assert isinstance(result, RuledOut) and "2.0 %" in result.reason and "5.0 %" in result.reason


def test_no_match_is_ruled_out():
    result = score(book(), prof(0, 100), StubFacts({}))
    assert isinstance(result, RuledOut) and "no busy sample" in result.reason


def test_required_concentration_absent_rules_out():
    conc = "concentration: {by: cpu, top_share: 0.6, top_n: 1, required: true}"
    spread = score(book(conc), prof(60, 40, cpus=(0, 1, 2, 3)), StubFacts({}))
    assert isinstance(spread, RuledOut) and "spread" in spread.reason
    focused = score(book(conc), prof(60, 40, cpus=(2,)), StubFacts({}))
    assert isinstance(focused, Finding) and focused.score == pytest.approx(0.7)
    assert any("CPU 2" in e.text for e in focused.evidence)


def test_concentration_unknown_without_cpu_field_does_not_rule_out():
    conc = "concentration: {by: cpu, top_share: 0.6, top_n: 1, required: true}"
    p = Profile()
    p.add([Frame("zone_reclaim", "kernel")], 50)
    p.add([Frame("x", "kernel")], 50)
    finding = score(book(conc), p, StubFacts({}), cpus_seen=0)
    assert isinstance(finding, Finding) and any(e.kind == "absence" for e in finding.evidence)


def test_flat_profile_capped_at_medium_unless_a_check_passed():
    flat = prof(80, 20, ancestry=False)
    facts = StubFacts({"numa.max_distance": 21, "sysctl.vm.zone_reclaim_mode": 0})
    capped = score(book(), flat, StubFacts({}))
    assert capped.confidence == "medium"
    lifted = score(book(), flat, StubFacts({"sysctl.vm.zone_reclaim_mode": 1, "numa.max_distance": 21}))
    assert lifted.confidence == "high"
    assert score(book(), flat, facts).confidence == "low"


def test_restricted_symbols_make_kernel_signatures_inconclusive():
    findings, ruled_out = score_all([match_playbook(book(), prof(50, 50))], StubFacts({}), 4,
                                    kernel_symbols_restricted=True)
    assert findings == [] and ruled_out[0].inconclusive and "inconclusive" in ruled_out[0].reason


WEAK = """---
id: aa
title: Weak
summary: weak
eras: [any]
evidence: [stacks]
kernel: false
frames: {}
signature:
  patterns: [["*"]]
checks:
  - {fact: other, op: eq, value: 1, against: 0.15, says: "other"}
---
## Symptom & evidence
## Why it happens
## Confirm by hand
## Mitigate
## Verify the fix
## References
"""


def test_low_findings_rank_after_medium_ones_even_with_a_larger_share():
    weak = parse_playbook(WEAK, "aa.md")
    p = prof(50, 50)
    findings, _ = score_all([match_playbook(weak, p), match_playbook(book(), p)], StubFacts({"other": 0}), 4)
    assert [(f.playbook.id, f.confidence) for f in findings] == [("demo", "medium"), ("aa", "low")]
    assert findings[1].match.share * findings[1].score > findings[0].match.share * findings[0].score


@pytest.mark.parametrize("op,actual,expected,result", [
    ("eq", "1", 1, True), ("ne", 0, "0", False), ("gt", 21, 20, True), ("ge", 20, 20, True),
    ("lt", "x", 3, None), ("le", 2.5, 3, True), ("in", "always", ["always"], True),
    ("not_in", "never", ["always", "madvise"], True), ("contains", ["ixgbevf", "lo"], "ixgbevf", True),
    ("contains", "1,1,1", "1", True), ("matches", "virtio_net", "virtio|ena", True), ("exists", None, None, True),
    ("eq", True, True, True),
])
def test_operators(op, actual, expected, result):
    assert evaluate_op(op, actual, expected) is result


def test_confidence_thresholds():
    assert [confidence_for(s) for s in (0.75, 0.7499, 0.5, 0.4999)] == ["high", "medium", "medium", "low"]


def test_flat_note_says_which_thread_stands_for_the_path_and_whose_frames_are_beside():
    """A claim identified by a kworker's own name (rule J3: `kworker/u16:2+e` stands for its
    worker_thread) or by another thread's frames (`kswapd0`'s shrink_page_list) is named so in the
    evidence line; thread names hold `:` and must not be cut there."""
    from pathlib import Path
    from flamediag.diagnose import run_diagnosis
    pastes = Path(__file__).resolve().parents[1] / "fixtures" / "paste"

    def evidence(name: str) -> str:
        finding = run_diagnosis(str(pastes / name)).findings[0]
        return " ".join(item.text for item in finding.evidence)

    kworker = evidence("hand-perf-top-sort-comm-kworker-truncated-name-no-loop-frame-i2c-hid.txt")
    assert "because kworker/u16:2+e runs this path's worker_thread and nothing else" in kworker
    kswapd = evidence("hand-perf-top-sort-comm-allocators-shrink-beside-kswapd-direct-reclaim.txt")
    assert "are listed for the same command, beside kswapd0's shrink_inactive_list" in kswapd


def _user_heavy(matched, kernel_other, user):
    p = Profile(ancestry=True)
    p.add([Frame("zone_reclaim", "kernel"), Frame("_spin_lock_irq", "kernel")], matched, cpu=0, comm="java")
    if kernel_other:
        p.add([Frame("other", "kernel")], kernel_other, cpu=0, comm="java")
    p.add([Frame("main", "user"), Frame("work", "user")], user, cpu=0, comm="java")
    return p


def test_rule_ar1_kernel_dominant_signature_is_medium_at_a_modest_share():
    """Rule AR1 (realworld-probe-ar cases 1803, 1807, 1815): 13 % of samples, nearly all the kernel's
    time, is medium; the same 13 % beside more kernel work, or 8 % (under twice min_share), stays low."""
    def conf(matched, kernel_other, user):
        result = score_match(match_playbook(book(), _user_heavy(matched, kernel_other, user)), StubFacts({}), 1)
        return result.confidence if isinstance(result, Finding) else "ruled out"
    assert conf(13, 2, 85) == "medium"
    assert conf(13, 20, 67) == "low"
    assert conf(8, 0, 92) == "low"


def _first_finding(fixture: str, **bounds):
    """The paste fixture's profile and its first finding as (id, confidence, matched), scored with
    the bounds given (cpu_window, interrupt_cpus) and no facts."""
    from pathlib import Path
    from flamediag.match import match_all
    from flamediag.paste import read_paste
    from flamediag.playbooks import load_all
    paste = Path(__file__).resolve().parents[1] / "fixtures" / "paste" / f"{fixture}.txt"
    profile = read_paste(paste.read_text()).profile
    findings, _ = score_all(match_all(load_all(), profile), StubFacts({}), len(profile.cpus()), **bounds)
    first = findings[0]
    return profile, (first.match.playbook.id, first.confidence, first.match.matched)


def test_rule_bz1_a_finding_under_half_a_cpu_of_the_window_is_no_cpu_spike():
    """Rule BZ1 (a variant of realworld-probe-bx case 2428: an idle host as a bcc profile, its NIC's
    interrupts most of the few busy samples, nic-softirq at medium, a false alarm): where the banner
    gives the window (99 Hz for 30 s: one CPU gives 2970 samples), a finding whose samples take less
    than half of one CPU is capped at low, whatever share of the busy samples it holds; the same
    layout with one receive queue saturating a CPU keeps nic-softirq at medium. Without a window
    nothing changes, and playbooks whose cost is not busy CPU (`takes_cpu: false`) are not judged so."""
    from flamediag.playbooks import load_all
    from flamediag.scoring import SPIKE_CPU

    def top(name, keep_window=True):
        profile = _first_finding(name)[0]
        window = profile.cpu_window if keep_window else None
        return window, _first_finding(name, cpu_window=window)[1]

    window, (pb, confidence, matched) = top("hand-bcc-profile-rule-bz1-idle-host-nic-interrupts-415")
    assert window == 2970.0 and pb == "nic-softirq" and confidence == "low" and matched < 0.2 * window
    assert top("hand-bcc-profile-rule-bz1-idle-host-nic-interrupts-415", keep_window=False)[1][:2] == ("nic-softirq", "medium")
    window, (pb, confidence, matched) = top("hand-bcc-profile-rule-bz1-one-rx-queue-saturates-one-cpu-415")
    assert (pb, confidence) == ("nic-softirq", "medium") and matched > SPIKE_CPU * window
    exempt = sorted(b.id for b in load_all() if b.signature["takes_cpu"] is False)
    assert exempt == ["cpu-power-saving", "slow-clocksource", "tcp-retransmit", "xen-netfront"]


def test_rule_cf1_softirq_finding_on_a_machine_with_under_half_a_cpu_of_interrupt_time_is_capped():
    """Rule CF1 (the class of realworld-probe-bw case 2416: a healthy download spread by RSS queues,
    nic-softirq at medium, a false alarm): `top`'s `%Cpu(s)` si and hi, or mpstat's `all` row, are a
    share of every CPU's time; times a CPU count the tools print (sysstat's banner, perf top's
    `(all, N CPUs)`, `# nrcpus online`, lscpu) they give the machine's interrupt work in CPUs. Under
    half a CPU in all, no CPU can be saturated by receive softirq, so nic-softirq (`context: softirq`)
    is capped at low; the same layout with one queue saturating a CPU of 16 (6.5 % si, a whole CPU)
    keeps it at medium. A `ksoftirqd/N` name only bounds the count from below, which says nothing."""
    from flamediag.paste import read_paste
    from flamediag.scoring import SPIKE_CPU

    def top(name, keep=True):
        bound = _first_finding(name)[0].interrupt_cpus
        return bound, _first_finding(name, interrupt_cpus=bound if keep else None)[1][:2]

    spread = "hand-top-perftop-comm-rule-cf1-rss-receive-under-half-a-cpu-of-16-none-418"
    (cpus, said), first = top(spread)
    assert first == ("nic-softirq", "low") and round(cpus, 3) == 0.304 and "16 CPUs at most (perf top's header)" in said
    assert top(spread, keep=False)[1] == ("nic-softirq", "medium")
    (cpus, _), first = top("hand-top-perftop-comm-rule-cf1-one-queue-saturates-one-cpu-of-16-nic-softirq-418")
    assert first == ("nic-softirq", "medium") and cpus > 2 * SPIKE_CPU
    si = "%Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,  3.6 si,  0.0 st"
    listing = "\n# Overhead  Command  Symbol\n#\n    41.02%  swapper  [k] igb_poll\n    20.11%  ksoftirqd/5  [k] napi_gro_receive\n"
    assert read_paste(si + "\n" + listing).profile.interrupt_cpus is None                     # no count
    banner = "Linux 5.10.0-9-amd64 (dl1)  11/27/2021  _x86_64_  (12 CPU)\n"
    assert round(read_paste(banner + si + listing).profile.interrupt_cpus[0], 3) == 0.432
    mpstat = (banner + "\n21:14:03     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n"
              "21:14:08     all    2.88    0.00    2.31    0.42    0.10    3.61    0.00    0.00    0.00   90.68\n")
    assert round(read_paste(mpstat + listing).profile.interrupt_cpus[0], 4) == 0.4452    # %irq + %soft
    threaded = listing + "    10.00%  napi/eth0-8193  [k] napi_threaded_poll\n"
    assert read_paste(banner + si + threaded).profile.interrupt_cpus is None               # process time, not si


def test_rule_ck1_busy_cpus_clock_held_low_corroborates_cpu_power_saving():
    """Rule CK1 (the class of realworld-probe-ce case 2514: a firmware power profile, no cpufreq
    driver, the clock held low): turbostat's Bzy_MHz under 60 % of TSC_MHz on CPUs at Busy% 80 or
    more, not hot and not RAPL-throttled, is the measured stand-in for a power-saving governor and
    weighs as much (0.2): a build host's perf top with ACPI idle entry at 4.3 % goes from low to
    medium. The same host at night (Busy% 3-13, Bzy_MHz 1200 of 2095) stays low: a demand-based
    governor clocks a CPU that idle low, as it should. 2514 itself (Busy% 34.81) is not decided."""
    from pathlib import Path
    from flamediag.facts import build_facts_from_sections
    from flamediag.match import match_all
    from flamediag.paste import read_paste
    from flamediag.playbooks import load_all

    def first(name, with_turbostat=True):
        paste = read_paste((Path(__file__).resolve().parents[1] / "fixtures" / "paste" / f"{name}.txt").read_text())
        sections = {k: v for k, v in paste.sections.items() if with_turbostat or k != "turbostat"}
        found, _ = score_all(match_all(load_all(), paste.profile), build_facts_from_sections(sections),
                             len(paste.profile.cpus()))
        return found[0].playbook.id, found[0].confidence

    held = "hand-perftop-turbostat-rule-ck1-busy-cpus-held-at-half-clock-static-low-power-310"
    assert first(held) == ("cpu-power-saving", "medium")
    assert first(held, with_turbostat=False) == ("cpu-power-saving", "low")
    assert first("hand-perftop-turbostat-rule-ck1-low-clock-at-light-load-none-310") == ("cpu-power-saving", "low")
