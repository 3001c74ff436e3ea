"""The same ticket, damaged the ways tickets damage pasted output, gets the same answer.

Every case of every real-world set (test/fixtures/realworld*/: the corpus, the held-out set and
the reconstructed probe sets) is diagnosed as written, then after each damage below: quoting by
a mail reply or a forum, a commit message's or a mail's indentation, a mail client wrapping words
at 72-78 columns after quoting, double spacing, HTML line breaks, Markdown and Jira fences,
no-break spaces from a web page, a perf report without its `#` header lines. The top finding (the first at medium or high confidence, or none) of every paste that
was read must not change (it must still be read). The cases' labels play no part: this holds for the
cases the diagnoser gets wrong too.

What no rule can undo is left out and listed in doc/accuracy.md ("Damaged pastes"): whitespace
runs collapsed to one space (a call graph loses its columns), words wrapped at 80 columns
inside a perf c2c row of 20 columns.
"""
from __future__ import annotations

import re
import tempfile
import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from diagnose_helpers import FIXTURES
from realworld import CONFIDENT, load_cases

from flamediag.diagnose import load_playbooks, run_diagnosis
from flamediag.errors import UserError


def _each_line(change: Callable[[str], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(change(line) for line in text.split("\n"))


def _mail_wrap(text: str, width: int = 72) -> str:
    """What a mail client does to long lines: words move to a new line at column 0, the spaces
    where it broke are dropped, a word longer than the width stays whole."""
    out: List[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""])
    return "\n".join(out)


def _commit_message(text: str) -> str:
    return ("mm: fix the slow path\n\nProfile of the bad kernel:\n\n" + _each_line(lambda l: "  " + l)(text)
            + "\n\nSigned-off-by: A Developer <dev@example.org>\n")


# perf report's comment lines: `#`, `# Overhead  Command ...`, `# ........`, `# Samples: 2K of event ...`.
PERF_HEADER = re.compile(r"^\s*#(?:\s*$|\s+(?:Overhead|Children|Samples|Event count|Events|Total Lost|To display|\.{3}))")

DAMAGES: Dict[str, Callable[[str], str]] = {
    "quoted with '> '": _each_line(lambda line: "> " + line),
    "quoted twice with '>> '": _each_line(lambda line: ">> " + line),
    "quoted with '| '": _each_line(lambda line: "| " + line),
    "indented by git log": _each_line(lambda line: "    " + line),
    "indented by a tab": _each_line(lambda line: "\t" + line if line.strip() else line),
    "in a commit message, indented by 2": _commit_message,
    "quoted with '> ', then wrapped at 72": lambda text: _mail_wrap(_each_line(lambda l: "> " + l)(text)),
    "quoted with '| ', then wrapped at 72": lambda text: _mail_wrap(_each_line(lambda l: "| " + l)(text)),
    "wrapped at 72": _mail_wrap,
    "wrapped at 76": lambda text: _mail_wrap(text, 76),
    "quoted with '> ', then wrapped at 78": lambda text: _mail_wrap(_each_line(lambda l: "> " + l)(text), 78),
    "CRLF line ends": lambda text: text.replace("\n", "\r\n"),
    "double-spaced (CR CR LF)": lambda text: text.replace("\n", "\r\r\n"),
    "perf report's # lines trimmed": lambda text: "\n".join(l for l in text.split("\n") if not PERF_HEADER.match(l)),
    "HTML line breaks": _each_line(lambda line: line + "<br>"),
    "Markdown fence and prose": lambda text: "We see high sys time. Output:\n\n```\n" + text + "\n```\n\nThanks.\n",
    "GitHub details block": lambda text: "<details><summary>perf</summary>\n\n```\n" + text + "\n```\n</details>\n",
    "Jira noformat block": lambda text: "h3. perf output\n{noformat}\n" + text + "\n{noformat}\n",
    "no-break spaces": lambda text: re.sub("  ", "\u00a0 ", text),
    "trailing blanks stripped": _each_line(str.rstrip),
}

CASES = [case for directory in sorted(FIXTURES.glob("realworld*")) if (directory / "labels.tsv").exists()
         for case in load_cases(directory)]


@lru_cache(maxsize=1)
def _playbooks():
    return load_playbooks()


def top_finding(text: str, tmp: Path) -> str:
    """The top finding's id, `none`, or `not read`."""
    paste = tmp / "ticket.txt"
    paste.write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        diagnosis = run_diagnosis(str(paste), loaded=_playbooks())
    except UserError:
        return "not read"
    top = next((f for f in diagnosis.findings if f.confidence in CONFIDENT), None)
    return top.playbook.id if top else "none"


@lru_cache(maxsize=None)
def undamaged() -> Dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        return {str(case.path): top_finding(case.parts()[0], Path(tmp)) for case in CASES}


def test_every_real_world_set_is_found():
    assert {case.path.parent.name for case in CASES} >= {"realworld", "realworld-heldout"}


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_paste_gets_the_same_answer(damage, tmp_path):
    changed = []
    for case in CASES:
        want = undamaged()[str(case.path)]
        if want == "not read":
            continue
        got = top_finding(DAMAGES[damage](case.parts()[0]), tmp_path)
        if got != want:
            changed.append(f"{case.path.parent.name}/{case.prefix}: {want} -> {got}")
    assert not changed, f"{damage}: {len(changed)} of {len(CASES)} cases changed:\n" + "\n".join(changed)
