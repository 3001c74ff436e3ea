"""Every sample's findings.json equals its golden (test/fixtures/goldens/<sample>.findings.json):
refactors change no diagnosis. On an intended change, the failure says how to re-record."""
from __future__ import annotations

import difflib
from functools import lru_cache

import pytest

from goldens import GOLDENS, RERECORD, findings_text, golden_path, sample_names
from flamediag.diagnose import load_playbooks


@lru_cache(maxsize=None)
def playbooks():
    return tuple(load_playbooks())


def test_every_sample_has_a_golden_and_every_golden_a_sample():
    samples = set(sample_names())
    goldens = {p.name[: -len(".findings.json")] for p in GOLDENS.glob("*.findings.json")}
    assert samples, "no samples/*/manifest.json"
    missing, stale = sorted(samples - goldens), sorted(goldens - samples)
    assert not missing and not stale, (f"goldens missing for {missing}, stale for {stale}: "
                                       f"re-record with `{RERECORD}`")


@pytest.mark.parametrize("name", sample_names())
def test_findings_equal_the_golden(name):
    path = golden_path(name)
    if not path.is_file():
        pytest.fail(f"no golden {path.name}: record it with `{RERECORD}`")
    expected = path.read_text(encoding="utf-8")
    actual = findings_text(name, list(playbooks()))
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{path.name}", f"now/{path.name}", n=2))
        pytest.fail(f"findings.json of samples/{name} differs from its golden.\n{diff}\n"
                    f"If this change is intended, re-record with `{RERECORD}` and review "
                    f"`git diff test/fixtures/goldens`.", pytrace=False)
