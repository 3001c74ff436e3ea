"""The held-out real-world set (test/fixtures/realworld-heldout/): pastes in the layouts of public
sources (mail-wrapped, quoted, TUI, the perf top of 2.6.32 ...), labelled from each source's
conclusion, that no rule was written for. It measures whether the rules made for the corpus
generalise, so this test only reports the score: a case that is wrong here is a finding about a
rule, never a reason to write one for that case (see the set's README.md).

What it does assert holds for any paste: every case is labelled, and every case is read (a paste
with frame-like lines never ends in "no stacks found").
"""
from __future__ import annotations

import pytest

from diagnose_helpers import FIXTURES
from realworld import judge, load_cases, table

HELDOUT = FIXTURES / "realworld-heldout"


def test_every_held_out_case_is_labelled():
    files = sorted(p.name.split("-", 1)[0] for p in HELDOUT.glob("*.txt"))
    assert sorted(c.prefix for c in load_cases(HELDOUT)) == files, "a case file without a labels.tsv row"


@pytest.mark.parametrize("with_evidence", [False, True], ids=["ticket", "evidence"])
def test_held_out_score_is_reported(with_evidence, tmp_path, capsys):
    rows = [judge(case, tmp_path, with_evidence=with_evidence) for case in load_cases(HELDOUT)]
    with capsys.disabled():
        print(f"\nheld-out real-world set ({'ticket + evidence' if with_evidence else 'ticket'}):\n" + table(rows))
    unread = [r.case.path.name for r in rows if r.error]
    assert not unread, f"not read (exit 65): {unread}"
