"""The signature catalog (issue 6): every playbook against every sample and every signature fixture.

- Every required playbook id exists, validates, covers >= 2 kernel eras and carries checks whose
  facts are documented names (doc/facts.md), a runbook whose Mitigate names risk and rollback.
- Confusion matrix: `run_diagnosis` (the real pipeline: bundle -> perf script reader -> facts ->
  matcher -> scoring) on every bundle in samples/; a sample named `<id>-<variant>` must have `<id>`
  as its top finding with high confidence, and no sample's top confident finding may be another
  playbook's id.
- Fixtures: every `test/fixtures/signatures/<dir>/<name>.yaml` is a make-sample spec with an
  `expect:` block; it is built into a bundle and diagnosed:
      top: <id> | null      the top confident (medium/high) finding, or none at all
      confidence: high      minimum confidence of that top finding (medium accepts high)
      not: [ids]            look-alikes: never reported with medium/high confidence (a low
                            "weak match only" line is allowed: it is not a diagnosis)
      also: [ids]           must be reported too (medium/high)
      order: [ids]          these findings rank in this order (share x score)
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from diagnose_helpers import FIXTURES, ROOT, SAMPLES, build_bundle, load_spec

from flamediag import playbooks as playbook_loader
from flamediag.diagnose import load_playbooks, run_diagnosis

CATALOG = (
    "direct-reclaim", "memcg-reclaim", "numa-balancing", "tlb-shootdown", "mmap-lock", "mutex-spinning",
    "futex-contention", "slow-clocksource", "audit-overhead", "sched-overhead", "tcp-retransmit",
    "cpu-power-saving", "xen-netfront", "spinlock-contention",
    # beyond the required ids, same rigour (issue 6 "add more where you know real incidents")
    "rcu-callback-flood", "lru-lock-contention", "dentry-lock-contention", "kworker-storm", "ksm-scanning",
    # problems real-world tickets showed (issue 12: IOMMU mapping, interrupt storms, memcg counters)
    "iommu-map", "irq-storm", "memcg-charge", "kswapd-spin",
)
SIGNATURES = FIXTURES / "signatures"
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
@pytest.mark.parametrize("playbook_id", CATALOG)
def test_required_playbook_exists_and_validates(playbook_id):
    path = ROOT / "playbooks" / f"{playbook_id}.md"
    assert path.is_file(), f"{path} missing"
    playbook = playbook_loader.load_file(path)
    assert playbook.id == playbook_id
    assert len(playbook.eras) >= 2, "a signature must cover at least two kernel eras"
    assert playbook.evidence and playbook.checks, "evidence must be listed and corroborated by checks"
    assert playbook.mitigation_summary


@pytest.mark.parametrize("playbook_id", CATALOG)
def test_pattern_elements_are_declared_frame_sets(playbook_id):
    """A typo in a frame-set name would silently become a literal frame that never matches."""
    playbook = by_id(playbook_id)
    sig = playbook.signature
    for pattern in sig["patterns"] + sig["exclude"]:
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
            names += re.findall(r"`([^`]+)`", line.split("|")[1])
    return names


@lru_cache(maxsize=None)
def documented_facts():
    """doc/facts.md, plus the facts this catalog asked for (doc/catalog.md "Facts wanted")."""
    names = names_in_first_column(FACTS_DOC) + names_in_first_column(ROOT / "doc" / "catalog.md", "## Facts wanted")
    return tuple(fact_regex(n) for n in names)


def documented_fact(name: str) -> bool:
    return any(re.fullmatch(regex, name) for regex in documented_facts())


@pytest.mark.parametrize("playbook_id", CATALOG)
def test_checks_read_documented_facts(playbook_id):
    for check in by_id(playbook_id).checks:
        assert documented_fact(check["fact"]), f"{playbook_id}: fact {check['fact']} is in neither doc/facts.md nor doc/catalog.md"


@pytest.mark.parametrize("playbook_id", CATALOG)
def test_runbook_mitigation_names_risk_and_rollback(playbook_id):
    mitigate = by_id(playbook_id).section("Mitigate")
    assert re.search(r"\brisk\b", mitigate, re.I), "Mitigate must state the risk"
    assert re.search(r"\brollback\b", mitigate, re.I), "Mitigate must give the rollback"
    assert "```" in by_id(playbook_id).section("Confirm by hand"), "Confirm by hand needs exact commands"


# -- samples: the confusion matrix ------------------------------------------------------------
def sample_dirs():
    return sorted(p.parent for p in SAMPLES.glob("*/manifest.json"))


README_ROW = re.compile(r"^\| `(?P<name>[^`]+)` \| [^|]+ \| (?P<expect>.+?) \|$")


@lru_cache(maxsize=None)
def readme_expectations():
    """samples/README.md rows: sample name -> expected top id (None for "none")."""
    rows = {}
    for line in (SAMPLES / "README.md").read_text(encoding="utf-8").splitlines():
        match = README_ROW.match(line)
        if match:
            top = re.match(r"`([a-z0-9-]+)`", match.group("expect"))
            rows[match.group("name")] = top.group(1) if top else None
    return rows


def owner_of(sample: Path):
    """The playbook a sample belongs to: its samples/README.md row, else the id in its name
    (`<id>-<era>`, `live-<id>-<era>`), else None (healthy, user-bound...)."""
    if sample.name in readme_expectations():
        return readme_expectations()[sample.name]
    ids = sorted(playbook_ids(), key=len, reverse=True)
    return next((i for i in ids if re.search(rf"(^|-){re.escape(i)}(-|$)", sample.name)), None)


@pytest.mark.parametrize("playbook_id", CATALOG)
def test_every_catalog_playbook_has_a_sample(playbook_id):
    assert any(owner_of(s) == playbook_id for s in sample_dirs()), f"no samples/{playbook_id}-*/ bundle"


@pytest.mark.parametrize("sample", sample_dirs(), ids=lambda p: p.name)
def test_confusion_matrix_row(sample):
    """One row of the matrix: this sample against every playbook."""
    diagnosis = diagnose(str(sample))
    owner = owner_of(sample)
    top = confident(diagnosis)[0].playbook.id if confident(diagnosis) else None
    if owner is None:
        assert top is None, f"{sample.name} belongs to no playbook but reads as {top}: {describe(diagnosis)}"
        return
    assert top == owner, f"{sample.name}: top finding {top}, expected {owner}: {describe(diagnosis)}"
    if owner in CATALOG:
        assert confident(diagnosis)[0].confidence == "high", describe(diagnosis)
    others = [f.playbook.id for f in confident(diagnosis)[1:]]
    assert owner not in others


def test_confusion_matrix_is_diagonal():
    """The whole matrix at once, printed on failure: rows samples, cells the confident findings."""
    off_diagonal = []
    for sample in sample_dirs():
        owner = owner_of(sample)
        for finding in confident(diagnose(str(sample))):
            if finding.playbook.id != owner:
                off_diagonal.append(f"{sample.name} -> {finding.playbook.id} ({finding.confidence})")
    assert not off_diagonal, "off-diagonal confident findings:\n" + "\n".join(off_diagonal)


# -- fixtures: positives per era, named look-alikes, two problems ---------------------------------
def fixture_specs():
    """The catalog's fixtures (the seed playbooks' own are tested in test_match_signatures.py)."""
    return sorted(p for p in SIGNATURES.glob("*/*.yaml") if p.parent.name in CATALOG + ("combined",))


@pytest.mark.parametrize("spec_path", fixture_specs(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_signature_fixture(spec_path, tmp_path):
    spec = load_spec(spec_path)
    expect = spec.get("expect") or {}
    assert expect, f"{spec_path}: a fixture needs an expect: block"
    diagnosis = run_diagnosis(str(build_bundle(spec, tmp_path / "bundle")), loaded=list(all_playbooks()))
    sure = confident(diagnosis)
    ids = [f.playbook.id for f in sure]
    top = ids[0] if ids else None
    context = f"{spec_path.name}: {describe(diagnosis)}"
    if "top" in expect:
        assert top == expect["top"], context
    if expect.get("confidence") == "high":
        assert sure and sure[0].confidence == "high", context
    for lookalike in expect.get("not", []):
        assert lookalike not in ids, f"look-alike misread as {lookalike}: {context}"
    for also in expect.get("also", []):
        assert also in ids, f"{also} not reported: {context}"
    order = [i for i in ids if i in expect.get("order", [])]
    assert order == list(expect.get("order", [])), f"ranking: {context}"


def test_two_problems_rank_by_share_times_score(tmp_path):
    spec = load_spec(SIGNATURES / "combined" / "audit-and-tlb-both-reported.yaml")
    diagnosis = run_diagnosis(str(build_bundle(spec, tmp_path / "b")), loaded=list(all_playbooks()))
    sure = confident(diagnosis)
    assert len(sure) >= 2
    keys = [f.match.share * f.score for f in sure]
    assert keys == sorted(keys, reverse=True), describe(diagnosis)


@pytest.mark.parametrize("playbook_id", CATALOG)
def test_fixtures_cover_two_eras_and_a_lookalike(playbook_id):
    specs = [(p, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in fixture_specs()]
    positives = {spec["kernel"].split(".")[0] + "." + spec["kernel"].split(".")[1].split("-")[0]
                 for _, spec in specs if (spec.get("expect") or {}).get("top") == playbook_id}
    assert len(positives) >= 2, f"{playbook_id}: positive fixtures for >= 2 kernel eras needed, have {positives}"
    lookalikes = [p for p, spec in specs if playbook_id in (spec.get("expect") or {}).get("not", [])]
    assert lookalikes, f"{playbook_id}: no named look-alike fixture"


def test_fallback_never_beside_a_specific_playbook():
    """spinlock-contention is the fallback: wherever a specific playbook is confident, it is absent."""
    for sample in sample_dirs():
        ids = [f.playbook.id for f in confident(diagnose(str(sample)))]
        if any(i != "spinlock-contention" for i in ids):
            assert "spinlock-contention" not in ids, f"{sample.name}: {ids}"
