"""Where `diagnose` takes a bundle's stacks from: perf script, else bcc's folded profile, else the
bpftrace kstack map capture writes when bcc cannot compile (every `stacks` collector of the table)."""
from __future__ import annotations

from pathlib import Path

from diagnose_helpers import build_bundle, read_findings, run_cli
from flamediag import collectors, inputs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "bpftrace-profile-dd-read-zero.txt"


def bpftrace_only_bundle(tmp_path: Path, extra_files=None) -> Path:
    files = {"bpf/bpftrace-profile.txt": FIXTURE.read_text()}
    files.update(extra_files or {})
    return build_bundle({"name": "bpftrace-only", "kernel": "6.18.44-fc-v782", "files": files}, tmp_path / "b")


def test_every_stacks_collector_of_the_table_has_a_reader_in_order_of_preference():
    assert tuple(inputs.STACK_READERS) == collectors.named("stacks")
    assert next(iter(inputs.STACK_READERS)) == "perf.script"


def test_bpftrace_profile_is_the_stack_source_when_perf_and_bcc_gave_none(tmp_path):
    loaded = inputs.load(str(bpftrace_only_bundle(tmp_path)))
    assert loaded.stack_source == "bpf/bpftrace-profile.txt"
    assert loaded.profile.source_format == "bpftrace-kstack"
    leaves = {record.frames[-1].name: record.weight for record in loaded.profile}
    assert leaves["read_zero"] >= 98 and all(r.frames[-1].kind in ("kernel", "user") for r in loaded.profile)
    assert loaded.profile.total() == sum(int(line.rsplit(":", 1)[1]) for line in FIXTURE.read_text().splitlines()
                                         if line.startswith(("]:", "@[]:")))
    assert any("stacks from bpftrace" in sentence for sentence in loaded.profile.data_quality)
    assert loaded.manifest["collectors"][0]["name"] == "bpftrace.profile"


def test_perf_stacks_win_over_bpftrace(tmp_path):
    perf = "dd 4242/4242 [000] 100.000000:   10101010 cpu-clock:\n\tffffffff81000000 clear_user ([kernel.kallsyms])\n\n"
    import gzip
    bundle = bpftrace_only_bundle(tmp_path)
    (bundle / "perf").mkdir()
    (bundle / "perf" / "perf.script.gz").write_bytes(gzip.compress(perf.encode()))
    loaded = inputs.load(str(bundle))
    assert loaded.stack_source == "perf/perf.script.gz" and loaded.profile.source_format != "bpftrace-kstack"


def test_diagnose_reads_a_bpftrace_only_bundle(tmp_path):
    result = run_cli("diagnose", bpftrace_only_bundle(tmp_path), "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    doc = read_findings(tmp_path / "out")
    assert doc["samples"]["total"] > 0 and any(h["frame"] == "read_zero" for h in doc["hotspots"])
    assert any("stacks from bpftrace" in sentence for sentence in doc["data_quality"])
