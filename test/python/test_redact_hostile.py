"""`flamediag redact` cannot launder a tampered bundle: the files that failed SHA256SUMS in the
source stay unverified in the redacted bundle, however large the source manifest or its problem
list (doc/redact.md, doc/safety.md "Integrity: SHA256SUMS")."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import hostile

from flamediag.bundle import MAX_MANIFEST_BYTES, open_bundle

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"




def redact(bundle: Path, out: Path) -> None:
    proc = subprocess.run([str(FLAMEDIAG), "redact", str(bundle), "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_unverified_marks_survive_a_source_manifest_near_the_size_limit(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["padding"] = "p" * (MAX_MANIFEST_BYTES - 50_000)      # under the limit in the source
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    hostile.resum(bundle)
    for n in range(3000):        # their names, carried as unverified, push the redacted one past it
        (bundle / "system" / f"unlisted-file-number-{n}.txt").write_text("x\n")
    with open(bundle / "system" / "sysctl.txt", "a") as handle:
        handle.write("# changed after capture\n")
    redact(bundle, tmp_path / "red.tar.gz")
    with open_bundle(tmp_path / "red.tar.gz") as red:
        assert "system/sysctl.txt" in red.unverified
        assert not any("unparseable" in p for p in red.problems), red.problems


def test_source_problems_are_capped_in_the_redacted_manifest(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    for n in range(3000):                        # 3000 files not listed in SHA256SUMS
        (bundle / "system" / f"extra-{n}.txt").write_text("x\n")
    redact(bundle, tmp_path / "red.tar.gz")
    with open_bundle(tmp_path / "red.tar.gz") as red:
        carried = red.manifest["redaction"]["source_problems"]
        assert len(carried) <= 101
        assert any(name.endswith("extra-2999.txt") for name in red.unverified)
