"""The seed signatures' fixtures (test/fixtures/signatures/{zone-reclaim,nic-softirq,thp-compaction}/)
give what they expect (the catalog's fixtures run in test_catalog.py with the same format).

A fixture is a make-sample spec plus an `expect` block; adding a case is adding a file:
    expect:
      top: zone-reclaim        # the first finding (null: nothing at medium or high)
      confidence: high         # of the top finding
      not: [direct-reclaim]    # never reported at medium or high
      also: [audit-overhead]   # also reported (any confidence)
      order: [a, b]            # these ids appear in this order among the findings
The bundle is built with samples/tools/make-sample and diagnosed by the full pipeline.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from diagnose_helpers import FIXTURES, build_bundle, load_spec
from flamediag.diagnose import load_playbooks, run_diagnosis

SEED_PLAYBOOKS = ("zone-reclaim", "nic-softirq", "thp-compaction")
CASES = sorted(p for seed in SEED_PLAYBOOKS for p in (FIXTURES / "signatures" / seed).glob("*.yaml"))


@pytest.fixture(scope="module")
def playbooks():
    return load_playbooks()


def diagnose_spec(path: Path, tmp_path: Path, playbooks) -> dict:
    spec = load_spec(path)
    bundle = build_bundle(spec, tmp_path / spec["name"])
    return run_diagnosis(str(bundle), loaded=playbooks).findings_json()


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_signature_fixture(case, tmp_path, playbooks):
    expect = load_spec(case).get("expect") or {}
    assert expect, f"{case}: no expect block"
    doc = diagnose_spec(case, tmp_path, playbooks)
    found = [f["id"] for f in doc["findings"]]
    reported = [f["id"] for f in doc["findings"] if f["confidence"] in ("medium", "high")]
    if "top" in expect:
        if expect["top"] is None:
            assert reported == [], doc["findings"]
        else:
            assert found and found[0] == expect["top"], (found, doc["ruled_out"])
            if "confidence" in expect:
                assert doc["findings"][0]["confidence"] == expect["confidence"], doc["findings"][0]
    for absent in expect.get("not") or []:
        assert absent not in reported, [f for f in doc["findings"] if f["id"] == absent]
    for present in expect.get("also") or []:
        assert present in found, (found, doc["ruled_out"])
    order = [i for i in found if i in (expect.get("order") or [])]
    assert order == list(expect.get("order") or order)


@pytest.mark.parametrize("playbook", SEED_PLAYBOOKS)
def test_seed_signatures_cover_two_eras_and_a_lookalike(playbook):
    cases = [load_spec(p) for p in (FIXTURES / "signatures" / playbook).glob("*.yaml")]
    positive_kernels = {c["kernel"].split(".")[0] for c in cases if (c.get("expect") or {}).get("top") == playbook}
    negatives = [c for c in cases if playbook in ((c.get("expect") or {}).get("not") or [])]
    assert len(positive_kernels) >= 2, "positive fixtures from at least two kernel eras"
    assert negatives, "at least one look-alike that must not match"
