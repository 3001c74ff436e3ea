"""test/live/verdict.py: how the live lab judges a findings.json (no root, no load needed)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

VERDICT = Path(__file__).resolve().parents[2] / "test" / "live" / "verdict.py"
spec = importlib.util.spec_from_file_location("live_verdict", VERDICT)
verdict = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdict)


def finding(fid, confidence="high", share=0.3, evidence=(), cpus=None):
    return {"id": fid, "confidence": confidence, "share": share, "evidence": list(evidence),
            "cpus": cpus or {}}


FAILCNT = {"kind": "metric", "text": "cgroup v1 memory failcnt = 4433883: charges hit the limit",
           "source": "system/memcg.txt", "supports": True}
AGAINST = {"kind": "metric", "text": "memcg.max_failcnt = 0 (the signature expects gt 0)",
           "source": "system/memcg.txt", "supports": False}
NEUTRAL = {"kind": "metric", "text": "memcg: not captured", "source": "system/memcg.txt", "supports": None}
STACKS = {"kind": "stacks", "text": "23 % of busy samples carry the signature", "source": "perf/perf.script.gz",
          "supports": True}


def test_expected_top_finding_with_matching_metric_passes():
    doc = {"findings": [finding("memcg-reclaim", evidence=[STACKS, FAILCNT])]}
    ok, reason, row = verdict.judge(doc, "memcg-reclaim", "failcnt", None)
    assert ok, reason
    assert row[:3] == ["memcg-reclaim", "high", "30.0%"]


def test_stack_evidence_alone_does_not_corroborate():
    doc = {"findings": [finding("memcg-reclaim", evidence=[STACKS])]}
    ok, reason, _ = verdict.judge(doc, "memcg-reclaim", None, None)
    assert not ok and "no corroborating" in reason


@pytest.mark.parametrize("item", [AGAINST, NEUTRAL, dict(FAILCNT, supports=False)], ids=["against", "neutral", "flag"])
def test_only_evidence_that_supports_the_finding_corroborates(item):
    doc = {"findings": [finding("memcg-reclaim", evidence=[STACKS, item])]}
    ok, reason, _ = verdict.judge(doc, "memcg-reclaim", None, None)
    assert not ok and "no corroborating" in reason


def test_wrong_top_finding_fails_and_names_the_ruled_out_reason():
    doc = {"findings": [finding("futex-contention")],
           "ruled_out": [{"id": "sched-overhead", "reason": "only 1.3 % of busy samples"}]}
    ok, reason, _ = verdict.judge(doc, "sched-overhead", None, None)
    assert not ok
    assert "futex-contention(high)" in reason and "only 1.3 %" in reason


def test_busiest_cpu_must_match_when_asked():
    softirq = {"kind": "metric", "text": "/proc/softirqs: CPU 0 ran 100 % of NET_RX", "source": "x", "supports": True}
    doc = {"findings": [finding("nic-softirq", evidence=[softirq], cpus={"0": 0.2, "1": 0.8})]}
    ok, reason, _ = verdict.judge(doc, "nic-softirq", "NET_RX", "0")
    assert not ok and "busiest CPU is 1" in reason
    doc["findings"][0]["cpus"] = {"0": 0.9, "1": 0.1}
    assert verdict.judge(doc, "nic-softirq", "NET_RX", "0")[0]


@pytest.mark.parametrize("confidence, ok", [("low", True), ("medium", False), ("high", False)])
def test_healthy_passes_only_without_medium_or_high_findings(confidence, ok):
    doc = {"findings": [finding("sched-overhead", confidence=confidence)]}
    assert verdict.judge(doc, "none", None, None)[0] is ok


def test_command_line_prints_one_tab_separated_row_and_exit_code(tmp_path):
    path = tmp_path / "findings.json"
    path.write_text(json.dumps({"findings": [finding("tlb-shootdown", evidence=[
        {"kind": "metric", "text": "TLB shootdown interrupts +350000", "source": "snap", "supports": True}])]}))
    run = subprocess.run([sys.executable, str(VERDICT), str(path), "tlb-shootdown", "TLB"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    cells = run.stdout.rstrip("\n").split("\t")
    assert cells[0] == "tlb-shootdown" and cells[5] == "PASS"
    run = subprocess.run([sys.executable, str(VERDICT), str(path), "sched-overhead"],
                         capture_output=True, text=True)
    assert run.returncode == 1


def test_unreadable_findings_is_exit_65(tmp_path):
    run = subprocess.run([sys.executable, str(VERDICT), str(tmp_path / "missing.json"), "x"],
                         capture_output=True, text=True)
    assert run.returncode == 65 and "did diagnose run" in run.stderr
