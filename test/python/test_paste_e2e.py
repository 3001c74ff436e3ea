"""Pasted tickets through `bin/flamediag diagnose FILE`: each test/fixtures/paste/<name>.txt with a
<name>.expect.yaml beside it gives that expectation (format: expectations.py)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import cases
from expectations import describe, unmet

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "fixtures" / "paste"
FLAMEDIAG = ROOT / "bin" / "flamediag"


def diagnose(name: str, tmp_path: Path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "dx"
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(FIXTURES / name), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    return proc, out


def findings(out: Path):
    return json.loads((out / "findings.json").read_text())["findings"]


@pytest.mark.parametrize("paste", cases.paste_cases(), ids=lambda p: p.stem)
def test_paste_gives_its_expectation(paste, tmp_path):
    """Every test/fixtures/paste/<name>.txt with a <name>.expect.yaml beside it."""
    assert paste.is_file(), f"{cases.expectation_path(paste).name} has no {paste.name} beside it"
    proc, out = diagnose(paste.name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "findings.json").read_text())
    expect = cases.case_expectation(paste)
    problems = unmet(doc, expect, (out / "report.md").read_text())
    assert not problems, f"{paste.name}: {'; '.join(problems)} ({describe(doc)})"
    if "same_as" in expect:
        source_proc, source_out = diagnose(expect["same_as"], tmp_path / "plain")
        assert source_proc.returncode == 0, source_proc.stderr
        first = [(f["id"], f["confidence"]) for f in findings(out)][:1]
        assert first == [(f["id"], f["confidence"]) for f in findings(source_out)][:1], expect["same_as"]


def test_flat_paste_without_corroboration_is_at_most_medium(tmp_path):
    text = (FIXTURES / "hand-perf-top-rhel7-thp-compaction.txt").read_text()
    uncorroborated = tmp_path / "top-only.txt"
    uncorroborated.write_text("\n".join(l for l in text.splitlines() if "transparent_hugepage" not in l
                                        and not l.strip().endswith("never")))
    out = tmp_path / "dx"
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(uncorroborated), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    thp = [f for f in findings(out) if f["id"] == "thp-compaction"]
    assert thp and thp[0]["confidence"] == "medium"          # high with the THP lines, capped without


def test_hadoop_blog_evidence_names_zone_reclaim_and_the_spin_lock(tmp_path):
    proc, out = diagnose("blog-hadoop-zone-reclaim-ja.txt", tmp_path)
    assert proc.returncode == 0, proc.stderr
    top = findings(out)[0]
    assert top["id"] == "zone-reclaim"
    assert {"zone_reclaim", "_spin_lock_irq"} <= set(top["frames"])
    report = (out / "report.md").read_text()
    assert "zone\\_reclaim" in report or "zone_reclaim" in report
    assert "perf-report-callgraph" in report or "perf report" in report     # the format read is stated


def test_no_stacks_exits_65_and_lists_formats(tmp_path):
    proc, out = diagnose("no-stacks-mpstat-prose.txt", tmp_path)
    assert proc.returncode == 65
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "no stacks found" in lines[0] and "crash bt" in lines[0]
    assert "Traceback" not in proc.stderr


def test_not_cpu_time_says_so_on_stderr(tmp_path):
    """Off-CPU time is read and not diagnosed (`not_cpu: true` in its expect file); the headline on
    stderr says why."""
    proc, _ = diagnose("hand-bcc-offcputime-multiline-futex.txt", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Not diagnosed, not a CPU profile" in proc.stderr


def test_off_cpu_folded_file_is_not_diagnosed(tmp_path):
    """bcc offcputime -f saved to a file: read by the folded reader, judged by its frames."""
    folded = tmp_path / "offcpu.folded"
    folded.write_text("bash;entry_SYSCALL_64;do_syscall_64;__x64_sys_wait4;do_wait;schedule 699320\n"
                      "sshd;entry_SYSCALL_64;do_syscall_64;do_select;schedule_hrtimeout_range;schedule 1377627\n"
                      "kworker/0:2;ret_from_fork;kthread;worker_thread;schedule 4832023\n")
    out = tmp_path / "dx"
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(folded), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "this is off-CPU time" in proc.stderr
    assert findings(out) == []


def test_unrecognised_layout_is_read_not_refused(tmp_path):
    proc, out = diagnose("unrecognised-layout-dashboard-top-functions-futex.txt", tmp_path)
    assert proc.returncode == 0, proc.stderr
    quality = json.loads((out / "findings.json").read_text())["data_quality"]
    assert any(line.startswith("layout not recognised") for line in quality)
