"""samples/: each sample gives its samples/<name>.expect.yaml, is described in samples/README.md, is
exactly what its spec generates, stays small, and is a well-formed bundle (manifest collectors,
SHA256SUMS, perf script)."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

import jsonschema
from markdown_it import MarkdownIt

import cases
from diagnose_helpers import ROOT, SAMPLES, build_bundle, load_spec
from expectations import describe, unmet
from flamediag import bundle as bundle_mod
from flamediag import perfscript
from flamediag.diagnose import load_playbooks, render_report, run_diagnosis

SCHEMA = json.loads((ROOT / "lib" / "flamediag" / "schemas" / "findings.schema.json").read_text())

ROW = re.compile(r"^\| `(?P<name>[^`]+)` \|")


def readme_names():
    """Sample names in the first column of samples/README.md's tables."""
    lines = (SAMPLES / "README.md").read_text(encoding="utf-8").splitlines()
    return [m.group("name") for m in map(ROW.match, lines) if m and "/" not in m.group("name")]


NAMES = [p.name for p in cases.sample_dirs()]
SPECS = sorted((SAMPLES / "specs").glob("*.yaml"))
GENERATED = {load_spec(p)["name"] for p in SPECS}   # the rest are real captures (live lab)


@pytest.fixture(scope="module")
def playbooks():
    return load_playbooks()


def test_readme_describes_every_sample_directory():
    assert sorted(readme_names()) == NAMES and len(NAMES) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_sample_gives_its_expectation(name, playbooks):
    expect = cases.case_expectation(SAMPLES / name)
    assert expect is not None, f"no samples/{name}{cases.EXPECT_SUFFIX}: say what diagnosing it must give"
    diagnosis = run_diagnosis(str(SAMPLES / name), loaded=playbooks)
    doc = diagnosis.findings_json()
    jsonschema.validate(doc, SCHEMA)
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(render_report(diagnosis))
    raw_html = [t for t in tokens if t.type == "html_block"]
    raw_html += [c for t in tokens for c in (t.children or []) if c.type == "html_inline"]
    assert raw_html == [], [t.content for t in raw_html]
    problems = unmet(doc, expect)
    assert not problems, f"{name}: {'; '.join(problems)} ({describe(doc)}; ruled out: {doc['ruled_out']})"


@pytest.mark.parametrize("spec_path", SPECS, ids=lambda p: p.stem)
def test_sample_is_exactly_what_its_spec_generates(spec_path, tmp_path):
    spec = load_spec(spec_path)
    fresh = build_bundle(spec, tmp_path / spec["name"])
    committed = SAMPLES / spec["name"]
    fresh_files = {str(p.relative_to(fresh)): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    committed_files = {str(p.relative_to(committed)): p.read_bytes() for p in committed.rglob("*") if p.is_file()}
    assert fresh_files.keys() == committed_files.keys()
    changed = [name for name in fresh_files if fresh_files[name] != committed_files[name]]
    assert not changed, f"regenerate with: .venv/bin/python samples/tools/make-sample {spec_path.relative_to(SAMPLES.parent)}"


@pytest.mark.parametrize("name", NAMES)
def test_sample_is_a_small_well_formed_bundle(name):
    root = SAMPLES / name
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert size < 1024 * 1024
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["schema"] == 1 and manifest["kernel"] and manifest["cpus"] >= 1
    with bundle_mod.open_bundle(root) as opened:
        assert opened.problems == []
        assert opened.collector("perf.script") is not None
        for entry in manifest["collectors"]:
            if entry.get("status") == "ok" and entry.get("outputs"):
                assert opened.read(entry["name"], entry["phase"], entry["instance"]) is not None, entry
    sums = dict(reversed(line.split("  ", 1)) for line in (root / "SHA256SUMS").read_text().splitlines())
    for rel, digest in sums.items():
        assert hashlib.sha256((root / rel).read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("name", NAMES)
def test_perf_script_is_real_syntax_consistent_with_the_manifest(name):
    root = SAMPLES / name
    manifest = json.loads((root / "manifest.json").read_text())
    text = gzip.decompress((root / "perf" / "perf.script.gz").read_bytes())
    first = text.split(b"\n", 1)[0]
    assert re.match(rb"^\S+ +\d+/\d+ +\[\d{3}\] +\d+\.\d{6}: +\d+ cpu-clock(:[a-z]+)?: $", first), first
    with open(root / "perf" / "perf.script.gz", "rb") as handle:
        profile = perfscript.read_profile(handle)
    assert profile.skipped_lines == 0
    if name not in GENERATED:
        return   # a real capture: its sample count is whatever perf recorded
    assert profile.data_quality == []
    assert profile.cpus() == list(range(manifest["cpus"]))
    expected = manifest["cpus"] * manifest["frequency"] * manifest["duration_actual"]
    assert profile.total() == pytest.approx(expected, rel=0.01)


def test_generator_is_deterministic_and_derives_collectors(tmp_path):
    spec = load_spec(SPECS[0])
    one = build_bundle(spec, tmp_path / "one")
    two = build_bundle(spec, tmp_path / "two")
    assert (one / "SHA256SUMS").read_bytes() == (two / "SHA256SUMS").read_bytes()
    names = {(c["name"], c["phase"]) for c in json.loads((one / "manifest.json").read_text())["collectors"]}
    assert ("perf.script", "once") in names and ("mpstat", "window") in names


def test_generator_refuses_more_samples_than_ticks(tmp_path):
    spec = {"name": "x", "kernel": "6.1.0", "cpus": 1, "duration": 1, "frequency": 10,
            "stacks": [{"comm": "a", "pid": 1, "samples": 11, "stack": "f"}]}
    with pytest.raises(SystemExit, match="only 10 ticks"):
        build_bundle(spec, tmp_path / "x")
