"""`make accuracy`, run as a user runs it: the corpus, then every set listed in the Makefile's
ACCURACY_SETS, alone and with evidence. The Makefile promises that the sets listed are the ones at
100 %, so each line must say every case right, no false alarm and nothing unread; and the recipe
must survive any label (it echoes the list in single quotes, and a label such as "the catalog's
rarer problems" once ended it with a shell syntax error).

Sample output line:
    probe set CM (twenty-sixth twin ...): right: 20/20; false alarms: 0; not read (exit 65): 0
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOTALS = re.compile(r"right: (\d+)/(\d+); false alarms: (\d+); not read \(exit 65\): (\d+)$")


def listed_sets() -> list:
    """(directory, label) of each entry of ACCURACY_SETS, read from the Makefile's text."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", "")
    value = re.search(r"^ACCURACY_SETS\s*:=\s*(.*)$", text, re.M).group(1)
    return [tuple(entry.strip().split("|", 1)) for entry in value.split(";") if entry.strip()]


def test_every_listed_set_exists_and_is_named_once():
    sets = listed_sets()
    assert sets, "ACCURACY_SETS is empty"
    directories = [directory for directory, _label in sets]
    assert len(directories) == len(set(directories)), "a set is listed twice"
    for directory, label in sets:
        assert (ROOT / "test" / "fixtures" / directory / "labels.tsv").is_file(), directory
        assert label, f"{directory} has no label"


def test_make_accuracy_reports_every_listed_set_at_100_percent():
    run = subprocess.run(["make", "-s", "--no-print-directory", "accuracy", f"VPY={sys.executable}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-2000:]
    totals = [line for line in run.stdout.splitlines() if TOTALS.search(line)]
    sets = listed_sets()
    assert len(totals) == 2 + 2 * len(sets), "\n".join(totals)
    for (_directory, label), alone, evidence in zip(sets, totals[2::2], totals[3::2]):
        assert alone.startswith(f"{label}: "), alone
        assert evidence.startswith(f"{label.split(' (')[0]} with evidence: "), evidence
    for line in totals:
        right, cases, false_alarms, not_read = map(int, TOTALS.search(line).groups())
        assert (right, false_alarms, not_read) == (cases, 0, 0), line
