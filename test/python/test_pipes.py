"""Inputs that can be read only once (`-`, /dev/stdin, `<(...)`) give the same diagnosis as the file;
binary and non-gzip compressed inputs are refused from their first bytes (doc/safety.md "Inputs")."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
from pathlib import Path

import pytest

import hostile

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"


@pytest.fixture(scope="module")
def perf_script(tmp_path_factory) -> Path:
    """The sample's perf script, unzipped: several MB, far beyond the 64 KiB sniffed head."""
    path = tmp_path_factory.mktemp("pipes") / "perf.script"
    path.write_bytes(gzip.decompress((SAMPLE / "perf" / "perf.script.gz").read_bytes()))
    assert path.stat().st_size > 1 << 20
    return path


def findings(shell: str, cwd: Path) -> dict:
    proc = subprocess.run(["bash", "-c", shell], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"FLAMEDIAG": str(FLAMEDIAG), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def comparable(doc: dict) -> dict:
    """What the answer is, without the names (the stacks come from `stdin` instead of the file)."""
    return {"samples": doc["samples"], "hotspots": doc["hotspots"], "headline": doc["headline"],
            "findings": [(f["id"], f["confidence"], f["score"], f["share"]) for f in doc["findings"]]}


@pytest.mark.parametrize("shell", [
    'cat "$IN" | "$FLAMEDIAG" diagnose /dev/stdin -o out --format json',
    'cat "$IN" | "$FLAMEDIAG" diagnose - -o out --format json',
    '"$FLAMEDIAG" diagnose <(cat "$IN") -o out --format json',
], ids=["dev-stdin", "dash", "process-substitution"])
def test_a_pipe_gives_the_same_answer_as_the_file(tmp_path, perf_script, shell):
    from_file = findings(f'"$FLAMEDIAG" diagnose {perf_script} -o file --format json', tmp_path)
    from_pipe = findings(shell.replace('"$IN"', str(perf_script)), tmp_path)
    assert comparable(from_pipe) == comparable(from_file)
    assert from_pipe["input_digest"] is None


def test_a_bundle_through_a_pipe(tmp_path):
    bundle = hostile.write_bundle(tmp_path / "b.tar.gz")
    doc = findings(f'cat {bundle} | "$FLAMEDIAG" diagnose - --format json', tmp_path)
    assert doc["input"] == "-"
    assert (tmp_path / "stdin-diagnosis" / "report.md").is_file()


def test_facts_reads_stdin(tmp_path):
    bundle = hostile.write_bundle(tmp_path / "b.tar.gz")
    proc = subprocess.run(f'cat {bundle} | {FLAMEDIAG} facts - --format json', shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["facts"]


def _zstd_frame(data: bytes) -> bytes:
    return b"\x28\xb5\x2f\xfd" + data       # the magic is all the refusal looks at


@pytest.mark.parametrize("name,compress", [("bzip2", bz2.compress), ("xz", lzma.compress), ("zstd", _zstd_frame)])
def test_a_bundle_compressed_with_another_tool_is_named(tmp_path, name, compress):
    tarball = hostile.write_bundle(tmp_path / "b.tar.gz")
    plain = gzip.decompress(tarball.read_bytes())
    target = tmp_path / "bundle.tar.gz"
    target.write_bytes(compress(plain))
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(target), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 65, proc.stderr
    assert f"compressed with {name}, not gzip" in proc.stderr and proc.stderr.count("ERROR") == 1


@pytest.mark.parametrize("source", ["/dev/zero", "file-of-zeros"])
def test_binary_input_is_refused_from_its_head(tmp_path, source):
    if source == "file-of-zeros":
        source = tmp_path / "zeros"
        with open(source, "wb") as handle:
            handle.truncate(1 << 30)          # sparse: 1 GiB that costs no disk
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", str(source), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 65, proc.stderr
    assert "binary data" in proc.stderr and proc.stderr.count("ERROR") == 1
