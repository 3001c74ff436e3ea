"""manifest.py: the capture's manifest interpreted once. Fields of the wrong type are dropped with
one sentence and never reach findings.json (strict JSON); the window, the cut-short sentence and
the failed tools have one answer each, used by facts, diagnose and the report."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diagnose_helpers import SAMPLES, read_findings, run_cli
from flamediag import bundlewriter
from flamediag.manifest import interpret

SAMPLE = SAMPLES / "zone-reclaim-rhel6"


def strict_json(text: str):
    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")
    return json.loads(text, parse_constant=refuse)


def bundle_with_manifest(tmp_path: Path, patch: str) -> Path:
    """The zone-reclaim sample with top-level manifest fields replaced by raw JSON text `patch`
    (NaN / Infinity allowed), SHA256SUMS rewritten so only the manifest is odd."""
    bundle = tmp_path / "bundle"
    shutil.copytree(SAMPLE, bundle)
    doc = json.loads((bundle / "manifest.json").read_text())
    patched = json.loads("{" + patch + "}", parse_constant=lambda c: f"@{c}@")
    doc.update(patched)
    text = json.dumps(doc).replace('"@NaN@"', "NaN").replace('"@Infinity@"', "Infinity")
    (bundle / "manifest.json").write_text(text)
    bundlewriter.write_sums(bundle)
    return bundle


HOSTILE = {
    "collectors-not-a-list": ('"collectors": 5', "collectors is a number, not a list"),
    "perf-warnings-not-a-list": ('"perf": {"warnings": 5, "lost_chunks": 0}', "perf.warnings is a number, not a list of strings"),
    "perf-not-an-object": ('"perf": "ok"', "perf is a string, not an object"),
    "nan-duration": ('"duration_actual": NaN', "duration_actual is NaN, not a finite number"),
    "infinite-requested": ('"duration_requested": Infinity, "duration_actual": null', "duration_requested is Infinity"),
    "string-duration": ('"duration_actual": "ten"', "duration_actual is a string, not a finite number"),
    "string-cpus": ('"cpus": "8"', "cpus is a string, not an integer"),
    "number-start": ('"start_utc": 5', "start_utc is a number, not a UTC time"),
    "list-host": ('"host": ["a"]', "host is a list, not a string"),
    "number-signal": ('"end_signal": 5, "complete": false', "end_signal is a number, not a signal name"),
    "nan-lost-chunks": ('"perf": {"lost_chunks": NaN, "warnings": [{"a": 1}]}', "perf.lost_chunks is NaN"),
    "nan-in-unknown-field": ('"extra": {"x": [NaN]}', None),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_malformed_field_is_dropped_and_findings_json_stays_strict(name, tmp_path):
    patch, sentence = HOSTILE[name]
    bundle = bundle_with_manifest(tmp_path, patch)
    proc = run_cli("diagnose", bundle, "-o", tmp_path / "dx")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    doc = strict_json((tmp_path / "dx" / "findings.json").read_text())
    assert doc["findings"][0]["id"] == "zone-reclaim"
    assert isinstance(doc["host"], str) and isinstance(doc["kernel"], str)
    assert doc["window"]["start"] is None or isinstance(doc["window"]["start"], str)
    assert doc["window"]["seconds"] is None or isinstance(doc["window"]["seconds"], (int, float))
    if sentence:
        assert any(sentence in line for line in doc["data_quality"]), doc["data_quality"]
    facts = run_cli("facts", bundle, "--format", "json")
    assert facts.returncode == 0 and "Traceback" not in facts.stderr, facts.stderr
    strict_json(facts.stdout)


def test_a_well_formed_manifest_has_no_problems():
    capture = interpret(json.loads((SAMPLE / "manifest.json").read_text()))
    assert capture.problems == [] and capture.quality() == []


def test_window_is_duration_actual_then_timestamps_then_samples():
    assert interpret({"duration_actual": 8.61, "duration_requested": 8}).window_seconds() == 8.61
    times = {"start_utc": "2026-11-22T07:00:00Z", "end_utc": "2026-11-22T07:00:31Z"}
    assert interpret({"duration_actual": None, "duration_requested": 60, **times}).window_seconds() == 31
    assert interpret({"duration_requested": 60}).window_seconds((100.0, 112.5)) == 12.5
    assert interpret({"duration_requested": 60}).window_seconds() is None


@pytest.mark.parametrize("manifest,sentence", [
    ({"complete": False, "end_signal": "SIGINT", "duration_actual": 12.0, "duration_requested": 30},
     "capture interrupted after 12 of 30 s by SIGINT: the window may miss the spike"),
    ({"complete": False, "end_signal": None, "state": "disk_full", "duration_actual": 3.0},
     "capture interrupted after 3 s because its output directory filled up (ENOSPC): the window may miss the spike"),
    ({"complete": False, "duration_requested": 30}, "capture interrupted: window length unknown"),
    ({"complete": True, "duration_actual": 10, "duration_requested": 30},
     "capture window 10 s is shorter than the requested 30 s"),
    ({"complete": True, "duration_actual": 29.5, "duration_requested": 30}, None),
])
def test_cut_short_is_one_sentence(manifest, sentence):
    capture = interpret(manifest)
    assert capture.cut_short() == sentence
    assert [line for line in capture.quality() if "capture" in line] == ([sentence] if sentence else [])


def test_failed_tools_are_named_once():
    capture = interpret({"duration_actual": 10, "collectors": [
        {"name": "mpstat", "status": "missing", "reason": "mpstat not found"},
        {"name": "tuned", "status": "missing", "reason": "tuned-adm not found"},
        {"name": "ss", "phase": "start", "status": "skipped", "reason": "modules not loaded"},
        {"name": "numastat", "phase": "start", "status": "timeout", "reason": None},
        {"name": "numastat", "phase": "end", "status": "timeout", "reason": None}]})
    # mpstat matters (its parser's LOST_WITHOUT): the facts say it once, with what is lost
    # (test_facts.py::test_missing_collectors_that_matter_are_reported_once) ...
    assert capture.tools_missing() == ["tuned: tuned-adm not found", "numastat: timeout"]
    assert capture.quality() == []
    # ... unless a fallback (/proc/stat) made up for it: then only here
    assert capture.tools_missing(read={"mpstat"})[0] == "mpstat: mpstat not found"


def test_restricted_symbols_and_lost_chunks():
    capture = interpret({"duration_actual": 5, "perf": {"kernel_symbols": "restricted", "lost_chunks": 2,
                                                        "warnings": ["perf has no --control"]}})
    assert capture.kernel_symbols() == "restricted" and capture.lost_chunks() == 2
    assert capture.quality() == ["perf lost 2 chunks: some samples are missing (raise -m or lower -F)",
                                 "perf: perf has no --control"]


def test_not_an_object_is_an_empty_capture():
    for raw in (None, [], "x", 5):
        capture = interpret(raw)
        assert not capture and capture.quality() == [] and capture.window_seconds() is None
