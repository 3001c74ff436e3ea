"""Pasted tickets through `bin/flamediag diagnose FILE`: the finding each paste must produce."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "test" / "fixtures" / "paste"
FLAMEDIAG = ROOT / "bin" / "flamediag"

# fixture -> the playbook that must rank first
TOP_FINDING = {
    "seed-003-zone-reclaim-ja.txt": "zone-reclaim",
    "hand-perf2632-report-fractal-zone-reclaim.txt": "zone-reclaim",
    "hand-crash-bt-a-zone-reclaim-rhel6.txt": "zone-reclaim",
    "hand-soft-lockup-rhel6-zone-reclaim.txt": "zone-reclaim",
    "hand-rcu-stall-soft-lockup-5x-node-reclaim.txt": "zone-reclaim",
    "html-pre-soft-lockup-node-reclaim.txt": "zone-reclaim",
    "hand-sysrq-l-clocksource-hpet-6x.txt": "slow-clocksource",
    "hand-perf-top-rhel7-thp-compaction.txt": "thp-compaction",     # flat, corroborated by pasted THP lines
    "hand-perf2632-top-futex.txt": "futex-contention",              # 2.6.32 perf top columns
    "real-perf61-report-callee-futex.txt": "futex-contention",
    "real-perf61-report-caller-futex.txt": "futex-contention",
    "real-perf61-report-children-futex.txt": "futex-contention",
    "real-perf61-report-fractal-futex.txt": "futex-contention",
    "md-quoted-fenced-perf61-report-callee-futex.txt": "futex-contention",
    "mixed-ticket-futex-top-report-metrics.txt": "futex-contention",
    "hand-bcc-profile-folded-futex.txt": "futex-contention",
    "crlf-fenced-bcc-profile-folded-futex.txt": "futex-contention",
    "real-bpftrace-kstack-futex.txt": "futex-contention",
    "real-proc-stack-futex.txt": "futex-contention",
    "md-fenced-perf-script-excerpt-futex.txt": "futex-contention",
    "real-perf61-report-tui-dump-children-futex.txt": "futex-contention",
    "real-perf61-top-stdio-g-futex.txt": "futex-contention",
    "hand-bcc-profile-multiline-delimited-futex.txt": "futex-contention",
}
# A quoted, wrapped or re-rendered paste gives the finding (and confidence) its plain source gives.
SAME_AS = {
    "mail-wrapped-72-perf61-report-caller-futex.txt": "real-perf61-report-caller-futex.txt",
    "mixed-prefix-quoted-perf61-report-callee-futex.txt": "real-perf61-report-callee-futex.txt",
    "hard-wrapped-80-perf61-report-flat-children-futex.txt": "real-perf61-report-flat-children-futex.txt",
    "comma-decimals-perf61-report-flat-futex.txt": "real-perf61-report-flat-futex.txt",
    "pipe-quoted-perf61-report-sort-cpu-pipes.txt": "real-perf61-report-sort-cpu-pipes.txt",
    "html-br-crash-bt-a-elided-frames-zone-reclaim-rhel6.txt": "hand-crash-bt-a-zone-reclaim-rhel6.txt",
}
# Flat profiles: no ancestry, so the futex finding heads the list (its distinctive frames) but
# nothing may claim high confidence from a flat profile alone.
FLAT = ["real-perf61-report-flat-futex.txt", "real-perf61-report-flat-children-futex.txt",
        "real-perf61-top-futex.txt", "html-br-perf61-top-futex.txt"]


def diagnose(name: str, tmp_path: Path):
    out = tmp_path / "dx"
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(FIXTURES / name), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    return proc, out


def findings(out: Path):
    return json.loads((out / "findings.json").read_text())["findings"]


@pytest.mark.parametrize("name", sorted(TOP_FINDING))
def test_paste_diagnosed(name, tmp_path):
    proc, out = diagnose(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = findings(out)
    assert found and found[0]["id"] == TOP_FINDING[name], [f["id"] for f in found]


@pytest.mark.parametrize("name", FLAT)
def test_flat_paste_is_capped_and_still_names_the_culprit(name, tmp_path):
    proc, out = diagnose(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    found = findings(out)
    assert found and found[0]["id"] == "futex-contention"
    assert all(f["confidence"] != "high" for f in found)
    assert "no ancestry" in (out / "report.md").read_text()


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


def test_seed_003_evidence_names_zone_reclaim_and_the_spin_lock(tmp_path):
    proc, out = diagnose("seed-003-zone-reclaim-ja.txt", tmp_path)
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


@pytest.mark.parametrize("wrapped", sorted(SAME_AS))
def test_wrapped_paste_gives_the_finding_of_its_plain_source(wrapped, tmp_path):
    got = [(f["id"], f["confidence"]) for f in findings(diagnose(wrapped, tmp_path / "a")[1])]
    want = [(f["id"], f["confidence"]) for f in findings(diagnose(SAME_AS[wrapped], tmp_path / "b")[1])]
    assert got[:1] == want[:1]


# Off-CPU time and call durations are read and never diagnosed as CPU time.
NOT_CPU = ["hand-bcc-offcputime-multiline-futex.txt", "hand-ftrace-function-graph-futex-wait.txt"]


@pytest.mark.parametrize("name", NOT_CPU)
def test_not_cpu_time_is_read_and_not_diagnosed(name, tmp_path):
    proc, out = diagnose(name, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Not diagnosed, not a CPU profile" in proc.stderr
    document = json.loads((out / "findings.json").read_text())
    assert document["findings"] == [] and document["hotspots"] == [] and document["ruled_out"] == []
    assert document["headline"].startswith("Not diagnosed, not a CPU profile")
    assert "not a CPU profile" in (out / "report.md").read_text()


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
