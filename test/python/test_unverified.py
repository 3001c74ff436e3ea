"""Evidence from files failing SHA256SUMS (or from a bundle without SHA256SUMS) never raises
confidence, the headline says so, and every fact read from such a file (the manifest too) is
marked unverified (doc/safety.md "Integrity: SHA256SUMS")."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import hostile

from flamediag.diagnose import run_diagnosis

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"




def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def zone_reclaim(bundle: Path):
    diagnosis = run_diagnosis(str(bundle))
    finding = next(f for f in diagnosis.findings if f.playbook.id == "zone-reclaim")
    return finding, str(diagnosis.headline)


def test_a_setting_edited_after_capture_does_not_raise_confidence(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    edit(bundle / "system" / "sysctl.txt", "vm.zone_reclaim_mode = 1", "vm.zone_reclaim_mode = 0")
    hostile.resum(bundle)
    honest, _ = zone_reclaim(bundle)
    edit(bundle / "system" / "sysctl.txt", "vm.zone_reclaim_mode = 0", "vm.zone_reclaim_mode = 1")
    tampered, headline = zone_reclaim(bundle)
    assert honest.confidence != "high"
    assert tampered.score <= honest.score + 1e-9 or tampered.confidence == honest.confidence
    assert tampered.confidence != "high"
    assert "UNVERIFIED" in headline and "system/sysctl.txt" in headline
    sysctl = next(e for e in tampered.evidence if e.fact == "sysctl.vm.zone_reclaim_mode")
    assert sysctl.unverified and sysctl.supports


def test_a_bundle_without_sha256sums_never_heads_with_high(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    assert zone_reclaim(bundle)[0].confidence == "high"       # the honest bundle
    (bundle / "SHA256SUMS").unlink()
    finding, headline = zone_reclaim(bundle)
    assert finding.confidence != "high"
    assert "UNVERIFIED evidence: the bundle has no SHA256SUMS" in headline


def test_the_headline_on_stdout_and_in_findings_json_says_unverified(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    (bundle / "SHA256SUMS").unlink()
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(bundle), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "UNVERIFIED" in proc.stderr.splitlines()[0]
    assert "UNVERIFIED" in json.loads((tmp_path / "out" / "findings.json").read_text())["headline"]


def test_facts_from_a_manifest_failing_sha256sums_are_unverified(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    edit(bundle / "manifest.json", '"cpus": 8', '"cpus": 9')
    proc = subprocess.run([str(FLAMEDIAG), "facts", str(bundle), "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    unverified = json.loads(proc.stdout)["unverified"]
    assert {"cpus", "kernel.release"} <= set(unverified)
    assert not any(name.startswith("mpstat.") for name in unverified)
