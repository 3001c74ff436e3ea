"""flamediag summary: a directory mixing bundles, diagnoses, findings.json and hostile tarballs.

Bundles are real-shaped (tarred samples/ and the hostile module's well-formed bundle); diagnosis
directories are written by the real `flamediag diagnose` and `flamediag facts`; hostile tarballs come
from test/python/hostile. The expected findings are what the ordinary pipeline gives each input.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

import hostile
from diagnose_helpers import FLAMEDIAG, ROOT, SAMPLES
from flamediag.diagnose import run_diagnosis
from flamediag.summary import classify, find_inputs, headline

SCHEMA = json.loads((ROOT / "lib/flamediag/schemas/summary.schema.json").read_text())


def flamediag(*args, cwd=None):
    return subprocess.run([str(FLAMEDIAG), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


def tar_sample(name: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(SAMPLES / name, arcname=name)
    return dest


def diagnosis_dir(sample: str, dest: Path) -> Path:
    """What the fleet role fetches from a host that diagnosed its own bundle."""
    assert flamediag("diagnose", SAMPLES / sample, "-o", dest).returncode == 0
    facts = flamediag("facts", SAMPLES / sample, "--format", "json", "--match", r"^mpstat\.")
    assert facts.returncode == 0, facts.stderr
    (dest / "facts.json").write_text(facts.stdout)
    (dest / "flamegraph.svg").unlink()
    return dest


def expected_top(sample: str):
    doc = run_diagnosis(str(SAMPLES / sample)).findings_json()
    status, top = classify(doc)
    return doc["host"], (top["id"] if top else status)


def facts_of(sample: str) -> dict:
    out = flamediag("facts", SAMPLES / sample, "--format", "json", "--match", r"^mpstat\.(sys|soft)_pct\.avg$")
    return json.loads(out.stdout)["facts"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """fleet/{web1: bundle, web2: diagnosis dir, web3.findings.json, web4: bundle dir, evil: 2 hostile}."""
    base = tmp_path_factory.mktemp("fleet")
    fleet, canary = base / "fleet", base / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("canary\n")
    tar_sample("zone-reclaim-rhel6", fleet / "web1" / "flamediag-hadoop-dn17-20150925T031500Z.tar.gz")
    diagnosis_dir("memcg-reclaim-6.18", fleet / "web2" / "diagnosis")
    findings = flamediag("diagnose", SAMPLES / "direct-reclaim-5.15", "-o", base / "dx", "--format", "json")
    (fleet / "web3.findings.json").write_text(findings.stdout)
    shutil.copytree(SAMPLES / "healthy-6.1", fleet / "web4" / "healthy-6.1")
    (fleet / "evil").mkdir()
    reasons = {"evil/dotdot.tar.gz": hostile.dotdot(fleet / "evil" / "dotdot.tar.gz", canary),
               "evil/escape.tar.gz": hostile.symlink_out(fleet / "evil" / "escape.tar.gz", canary)}
    out = flamediag("summary", fleet, "-j", "2")
    return {"dir": fleet, "canary": canary, "reasons": reasons, "run": out,
            "doc": json.loads((fleet / "summary.json").read_text()),
            "md": (fleet / "summary.md").read_text()}


EXPECTED = {"web1/flamediag-hadoop-dn17-20150925T031500Z.tar.gz": "zone-reclaim-rhel6",
            "web2/diagnosis": "memcg-reclaim-6.18", "web3.findings.json": "direct-reclaim-5.15",
            "web4/healthy-6.1": "healthy-6.1"}


def test_mixed_directory_is_summarised_and_hostile_refused(fleet):
    run = fleet["run"]
    assert run.returncode == 1, run.stderr          # partial: two inputs refused
    doc = fleet["doc"]
    jsonschema.validate(doc, SCHEMA)
    got = {c["input"]: (c["host"], c["finding"] or c["status"]) for c in doc["captures"]}
    assert got == {name: expected_top(sample) for name, sample in EXPECTED.items()}
    refused = {r["input"]: r for r in doc["refused"]}
    assert set(refused) == set(fleet["reasons"])
    for name, fragment in fleet["reasons"].items():
        assert fragment in refused[name]["reason"] and refused[name]["code"] == 65
    assert (fleet["canary"] / "keep.txt").read_text() == "canary\n"
    assert sorted(p.name for p in fleet["canary"].iterdir()) == ["keep.txt"]


def test_headline_counts_hosts_and_refusals(fleet):
    doc = fleet["doc"]
    assert doc["hosts"] == 4
    assert doc["headline"].endswith("; 2 inputs refused")
    assert "zone-reclaim on 1/4 hosts" in doc["headline"]
    assert doc["headline"] in fleet["run"].stderr
    assert "[6/6]" in fleet["run"].stderr           # progress: one line per input


def test_sys_pct_comes_from_the_facts(fleet):
    rows = {c["input"]: c for c in fleet["doc"]["captures"]}
    for name in ("web1/flamediag-hadoop-dn17-20150925T031500Z.tar.gz", "web2/diagnosis"):
        facts = facts_of(EXPECTED[name])
        assert rows[name]["sys_pct"] == round(facts["mpstat.sys_pct.avg"], 2)
        assert rows[name]["soft_pct"] == round(facts["mpstat.soft_pct.avg"], 2)
    bare = json.loads((fleet["dir"] / "web3.findings.json").read_text())   # schema 2: cpu.system, a fraction
    assert rows["web3.findings.json"]["sys_pct"] == (round(bare["cpu"]["system"] * 100, 2) if bare.get("cpu") else None)


def test_reports_are_linked_and_written(fleet):
    rows = {c["input"]: c for c in fleet["doc"]["captures"]}
    assert rows["web2/diagnosis"]["report"] == "web2/diagnosis/report.md"
    bundle_report = rows["web1/flamediag-hadoop-dn17-20150925T031500Z.tar.gz"]["report"]
    assert bundle_report == "diagnoses/web1/flamediag-hadoop-dn17-20150925T031500Z/report.md"
    assert (fleet["dir"] / bundle_report).is_file()
    assert rows["web3.findings.json"]["report"] is None


def test_markdown_has_one_row_per_capture_and_lists_refusals(fleet):
    tokens = MarkdownIt("commonmark").enable("table").parse(fleet["md"])
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len([t for t in tokens if t.type == "table_open"]) == 2     # captures, refused
    assert len(rows) == (1 + 4) + (1 + 2)
    for name, fragment in fleet["reasons"].items():
        assert name in fleet["md"]
    assert fleet["run"].stdout == fleet["md"]


def test_rerun_does_not_read_its_own_outputs(fleet, tmp_path):
    again = flamediag("summary", fleet["dir"], "-j", "1", "--format", "json", "-q")
    doc = json.loads(again.stdout)
    assert [c["input"] for c in doc["captures"]] == [c["input"] for c in fleet["doc"]["captures"]]
    assert doc["captures"] == fleet["doc"]["captures"]               # -j 1 and -j 2 agree
    assert again.stderr.count("\n") == 1                             # -q: only the closing line


def test_bundle_with_its_diagnosis_beside_is_read_once(tmp_path):
    tar_sample("zone-reclaim-rhel6", tmp_path / "h1" / "cap.tar.gz")
    assert flamediag("diagnose", tmp_path / "h1" / "cap.tar.gz", "-o", tmp_path / "h1" / "cap-diagnosis").returncode == 0
    found, skipped = find_inputs(tmp_path)
    assert [c.rel for c in found] == ["h1/cap-diagnosis"]
    assert skipped == [{"input": "h1/cap.tar.gz", "reason": "already diagnosed in cap-diagnosis/"}]


def test_symlinks_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    tar_sample("healthy-6.1", outside / "b.tar.gz")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "link.tar.gz").symlink_to(outside / "b.tar.gz")
    (tmp_path / "fleet" / "linkdir").symlink_to(outside)
    out = flamediag("summary", tmp_path / "fleet")
    assert out.returncode == 65
    assert "no bundle, diagnosis directory or findings.json" in out.stderr


def test_only_refused_inputs_exit_65_with_the_summary_written(tmp_path):
    hostile.dotdot(tmp_path / "bad.tar.gz", tmp_path)
    (tmp_path / "web9.findings.json").write_text('{"not": "findings"}')
    out = flamediag("summary", tmp_path, "-q")
    assert out.returncode == 65, out.stderr
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["captures"] == [] and len(doc["refused"]) == 2
    assert doc["headline"] == "no capture could be summarised; 2 inputs refused"


@pytest.mark.parametrize("args, code, message", [
    (["/nonexistent-dir"], 65, "not a directory"),
    (["-j", "0", "."], 2, "--jobs must be 1 or more"),
    (["--bogus", "."], 2, "unrecognized arguments"),
])
def test_usage_errors(args, code, message):
    out = flamediag("summary", *args)
    assert out.returncode == code and message in out.stderr


def test_empty_directory_names_what_it_looks_for(tmp_path):
    out = flamediag("summary", tmp_path)
    assert out.returncode == 65
    assert out.stderr.count("\n") == 1 and "no bundle, diagnosis directory or findings.json" in out.stderr


def test_hostile_strings_do_not_become_markdown(tmp_path):
    doc = json.loads(flamediag("diagnose", SAMPLES / "zone-reclaim-rhel6", "-o", tmp_path / "d",
                               "--format", "json").stdout)
    doc["host"] = "evil|host ![x](http://example.invalid/x.png) <b>\x1b[2J"
    (tmp_path / "d" / "findings.json").write_text(json.dumps(doc))
    out = flamediag("summary", tmp_path, "-q")
    html = MarkdownIt("commonmark").enable("table").render((tmp_path / "summary.md").read_text())
    assert "<img" not in html and "<b>" not in html and "\x1b" not in out.stdout
    row = [t for t in MarkdownIt("commonmark").enable("table").parse((tmp_path / "summary.md").read_text())
           if t.type == "td_open"]
    assert len(row) == 7                                              # the | in the host split nothing


def test_help_ends_with_examples_and_top_level_usage_lists_summary():
    out = flamediag("summary", "--help")
    assert out.returncode == 0 and out.stdout.rstrip().splitlines()[-1].strip().startswith("flamediag summary")
    assert "examples:" in out.stdout
    assert "summary " in flamediag("--help").stdout


def test_headline_wording():
    groups = [{"key": "zone-reclaim", "status": "finding", "hosts": [f"h{i}" for i in range(27)]},
              {"key": "healthy", "status": "healthy", "hosts": ["a", "b", "c"]}]
    assert headline(groups, 30, 0) == "zone-reclaim on 27/30 hosts; 3 healthy"


@pytest.mark.parametrize("doc, status", [
    ({"findings": [], "samples": {"total": 100, "kernel": 50}, "data_quality": []}, "unexplained"),
    ({"findings": [], "samples": {"total": 100, "kernel": 5}, "data_quality": []}, "healthy"),
    ({"findings": [], "samples": {"total": 100, "kernel": 50},
      "data_quality": ["kernel symbols restricted: kernel signatures are inconclusive (x)"]}, "inconclusive"),
    ({"findings": [{"id": "a", "confidence": "low"}, {"id": "b", "confidence": "medium"}],
      "samples": {}, "data_quality": []}, "finding"),
])
def test_classify(doc, status):
    assert classify(doc)[0] == status


def test_dir_that_is_itself_one_bundle(tmp_path):
    out = flamediag("summary", SAMPLES / "zone-reclaim-rhel6", "-o", tmp_path, "-q", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [(c["input"], c["finding"]) for c in doc["captures"]] == [("zone-reclaim-rhel6", "zone-reclaim")]
    assert not (SAMPLES / "zone-reclaim-rhel6" / "summary.json").exists()
