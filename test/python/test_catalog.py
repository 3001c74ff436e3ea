"""The catalog: every playbook against every sample and every signature fixture, all found by
directory (cases.py): a new playbooks/<id>.md is tested without touching this file, and fails the
suite until its fixtures and sample exist.

- Every playbook validates, covers >= 2 kernel eras and carries checks whose facts are documented
  names (doc/facts.md), a runbook whose Mitigate names risk and rollback; it has its cases
  (test_cases.py: fixtures per era, a look-alike, a sample).
- Confusion matrix: `run_diagnosis` (the real pipeline: bundle -> perf script reader -> facts ->
  matcher -> scoring) on every bundle in samples/; each gives its samples/<name>.expect.yaml, and
  no sample's confident finding is another playbook's id unless its expectation says `also`.
- Fixtures: every `test/fixtures/signatures/<dir>/<name>.yaml` is a make-sample spec with an
  `expect:` block (format: expectations.py); it is built into a bundle and diagnosed.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

import cases
from diagnose_helpers import ROOT, build_bundle, load_spec
from expectations import describe as describe_doc, unmet

from flamediag import playbooks as playbook_loader
from flamediag.diagnose import load_playbooks, run_diagnosis

PLAYBOOK_IDS = cases.playbook_ids()
SIGNATURES = cases.SIGNATURES
CONFIDENT = ("medium", "high")
FACTS_DOC = ROOT / "doc" / "facts.md"


@lru_cache(maxsize=None)
def all_playbooks():
    return tuple(load_playbooks())


def playbook_ids():
    return {p.id for p in all_playbooks()}


def by_id(playbook_id):
    return next(p for p in all_playbooks() if p.id == playbook_id)


@lru_cache(maxsize=None)
def diagnose(path: str):
    return run_diagnosis(path, loaded=list(all_playbooks()))


def confident(diagnosis):
    return [f for f in diagnosis.findings if f.confidence in CONFIDENT]


def describe(diagnosis) -> str:
    rows = [f"{f.playbook.id} {f.confidence} score={f.score:.2f} share={f.match.share:.2f}" for f in diagnosis.findings]
    return "; ".join(rows) or "no findings"


# -- the playbooks themselves -------------------------------------------------------------
@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
def test_playbook_validates(playbook_id):
    path = ROOT / "playbooks" / f"{playbook_id}.md"
    assert path.is_file(), f"{path} missing"
    playbook = playbook_loader.load_file(path)
    assert playbook.id == playbook_id
    assert len(playbook.eras) >= 2, "a signature must cover at least two kernel eras"
    assert playbook.evidence and playbook.checks, "evidence must be listed and corroborated by checks"
    assert playbook.mitigation_summary


@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
def test_pattern_elements_are_declared_frame_sets(playbook_id):
    """A typo in a frame-set name would silently become a literal frame that never matches."""
    playbook = by_id(playbook_id)
    sig = playbook.signature
    for pattern in sig["patterns"] + sig["exclude"] + [sig["foreign_lockers"], sig["own_lockers"], sig["own_leaves"]]:
        for element in pattern:
            assert element in playbook.frames, f"{playbook_id}: pattern element {element!r} is not a frame set"
    for name, frames in playbook.frames.items():
        for frame in frames:
            # a C identifier, or 2.6.18's out-of-line lock section symbol (.text.lock.spinlock)
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\.text\.lock\.[A-Za-z0-9_]+", frame), \
                f"{playbook_id}: {name}: bad frame {frame!r}"


def fact_regex(documented: str) -> str:
    """`vmstat.delta.<counter>` -> a regex where each <placeholder> is one or more name parts."""
    parts = re.split(r"(<[^>]+>)", documented)
    return "".join(r"[A-Za-z0-9_.]+" if p.startswith("<") else re.escape(p) for p in parts)


def names_in_first_column(path: Path, heading: str = ""):
    """Backticked names in the first column of the markdown tables of `path` (after `heading`)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if heading:
        text = text.split(heading, 1)[1] if heading in text else ""
    names = []
    for line in text.splitlines():
        if line.startswith("| `"):
            for name in re.findall(r"`([^`]+)`", line.split("|")[1]):
                # "`a.b.top_cpu`, `.top_share`": a leading dot swaps the last part of the name before
                names.append(names[-1].rsplit(".", 1)[0] + name if name.startswith(".") and names else name)
    return names


@lru_cache(maxsize=None)
def documented_facts():
    """doc/facts.md, plus the facts this catalog asked for (doc/catalog.md "Facts wanted")."""
    names = names_in_first_column(FACTS_DOC) + names_in_first_column(ROOT / "doc" / "catalog.md", "## Facts wanted")
    return tuple(fact_regex(n) for n in names)


def documented_fact(name: str) -> bool:
    return any(re.fullmatch(regex, name) for regex in documented_facts())


@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
def test_checks_read_documented_facts(playbook_id):
    for check in by_id(playbook_id).checks:
        assert documented_fact(check["fact"]), f"{playbook_id}: fact {check['fact']} is in neither doc/facts.md nor doc/catalog.md"


@pytest.mark.parametrize("playbook_id", PLAYBOOK_IDS)
def test_runbook_mitigation_names_risk_and_rollback(playbook_id):
    mitigate = by_id(playbook_id).section("Mitigate")
    assert re.search(r"\brisk\b", mitigate, re.I), "Mitigate must state the risk"
    assert re.search(r"\brollback\b", mitigate, re.I), "Mitigate must give the rollback"
    assert "```" in by_id(playbook_id).section("Confirm by hand"), "Confirm by hand needs exact commands"


# -- samples: the confusion matrix ------------------------------------------------------------
def sample_dirs():
    return cases.sample_dirs()


def owner_of(sample: Path):
    """The playbook a sample belongs to: the top of its samples/<name>.expect.yaml (None: healthy)."""
    return (cases.case_expectation(sample) or {}).get("top")


@pytest.mark.parametrize("sample", sample_dirs(), ids=lambda p: p.name)
def test_confusion_matrix_row(sample):
    """One row of the matrix: this sample against every playbook gives its expectation."""
    expect = cases.case_expectation(sample)
    assert expect is not None, f"no {cases.expectation_path(sample).name} beside samples/{sample.name}"
    doc = diagnose(str(sample)).findings_json()
    problems = unmet(doc, expect)
    assert not problems, f"{sample.name}: {'; '.join(problems)} ({describe_doc(doc)})"


def test_confusion_matrix_is_diagonal():
    """The whole matrix at once, printed on failure: rows samples, cells the confident findings
    other than the sample's own (and those its expectation lists under `also`)."""
    off_diagonal = []
    for sample in sample_dirs():
        expect = cases.case_expectation(sample) or {}
        allowed = {expect.get("top")} | set(expect.get("also") or [])
        for finding in confident(diagnose(str(sample))):
            if finding.playbook.id not in allowed:
                off_diagonal.append(f"{sample.name} -> {finding.playbook.id} ({finding.confidence})")
    assert not off_diagonal, "off-diagonal confident findings:\n" + "\n".join(off_diagonal)


# -- fixtures: positives per era, named look-alikes, two problems ---------------------------------
@pytest.mark.parametrize("spec_path", cases.signature_fixtures(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_signature_fixture(spec_path, tmp_path):
    spec = load_spec(spec_path)
    expect = spec.get("expect") or {}
    assert expect, f"{spec_path}: a fixture needs an expect: block"
    diagnosis = run_diagnosis(str(build_bundle(spec, tmp_path / "bundle")), loaded=list(all_playbooks()))
    doc = diagnosis.findings_json()
    problems = unmet(doc, expect)
    assert not problems, f"{spec_path.name}: {'; '.join(problems)} ({describe_doc(doc)})"


def test_two_problems_rank_by_share_times_score(tmp_path):
    spec = load_spec(SIGNATURES / "combined" / "audit-and-tlb-both-reported.yaml")
    diagnosis = run_diagnosis(str(build_bundle(spec, tmp_path / "b")), loaded=list(all_playbooks()))
    sure = confident(diagnosis)
    assert len(sure) >= 2
    keys = [f.match.share * f.score for f in sure]
    assert keys == sorted(keys, reverse=True), describe(diagnosis)


def test_fallback_never_beside_a_specific_playbook():
    """spinlock-contention is the fallback: wherever a specific playbook is confident, it is absent."""
    for sample in sample_dirs():
        ids = [f.playbook.id for f in confident(diagnose(str(sample)))]
        if any(i != "spinlock-contention" for i in ids):
            assert "spinlock-contention" not in ids, f"{sample.name}: {ids}"
