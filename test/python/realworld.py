"""The real-world corpus (test/fixtures/realworld/): cases, their labels, and how a diagnosis is judged.

A case file: `# ` header lines, a `# ---` line, the ticket paste (verbatim machine output), and
optionally a `# evidence:` line followed by supporting output. labels.tsv:
    case-prefix  accepted-ids  must-not-be-top-ids  note
The top finding is the first one at medium or high confidence, or `none`. A case is right when
that top is one of the accepted ids; a false alarm is a confident top on a case whose primary
(first) accepted id is `none`.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from flamediag.errors import UserError
from flamediag.diagnose import load_playbooks, run_diagnosis

CONFIDENT = ("medium", "high")
SEPARATOR = "# ---"
EVIDENCE = "# evidence:"


@dataclass(frozen=True)
class Case:
    prefix: str
    path: Path
    accepted: Tuple[str, ...]
    must_not: Tuple[str, ...]
    note: str

    def parts(self) -> Tuple[str, str]:
        """(ticket paste, evidence) as the source wrote them."""
        text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
        body = text.split("\n" + SEPARATOR + "\n", 1)[1] if ("\n" + SEPARATOR + "\n") in text else text
        ticket, _, evidence = body.partition("\n" + EVIDENCE)
        if body.startswith(EVIDENCE):
            ticket, evidence = "", body[len(EVIDENCE):]
        return ticket, evidence.split("\n", 1)[1] if "\n" in evidence else ""


@dataclass
class Row:
    case: Case
    fmt: str
    got: str
    confidence: str
    share: Optional[float]
    error: str = ""

    @property
    def right(self) -> bool:
        """Read (every case has frame-like lines, so exit 65 is wrong) and an accepted top."""
        return not self.error and self.got in self.case.accepted and self.got not in self.case.must_not

    @property
    def false_alarm(self) -> bool:
        return self.case.accepted[0] == "none" and self.got != "none"


def load_cases(directory: Path) -> List[Case]:
    labels = {}
    with open(directory / "labels.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            must_not = () if row["must-not-be-top-ids"].strip() == "-" else tuple(row["must-not-be-top-ids"].split(","))
            labels[row["case-prefix"]] = (tuple(row["accepted-ids"].split(",")), must_not, row["note"])
    cases = []
    for path in sorted(directory.glob("*.txt")):
        prefix = path.name.split("-", 1)[0]
        if prefix in labels:
            accepted, must_not, note = labels[prefix]
            cases.append(Case(prefix, path, accepted, must_not, note))
    return cases


_BOOKS: list = []


def _playbooks():
    if not _BOOKS:
        _BOOKS.extend(load_playbooks())
    return list(_BOOKS)


def judge(case: Case, tmp: Path, with_evidence: bool = False) -> Row:
    ticket, evidence = case.parts()
    text = ticket + ("\n" + evidence if with_evidence and evidence else "")
    paste = tmp / f"{case.path.stem}{'-evidence' if with_evidence else ''}.txt"
    paste.write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        diagnosis = run_diagnosis(str(paste), loaded=_playbooks())
    except UserError as err:
        return Row(case, "-", "none", "-", None, error=str(err))
    fmt = diagnosis.input.profile.source_format or diagnosis.input.kind
    top = next((f for f in diagnosis.findings if f.confidence in CONFIDENT), None)
    if top is None:
        return Row(case, fmt, "none", "-", None)
    return Row(case, fmt, top.playbook.id, top.confidence, top.match.share)


def table(rows: Sequence[Row]) -> str:
    lines = [f"{'case':<5} {'ok':<3} {'format read':<32} {'expected':<40} {'got':<24} {'conf':<7} share"]
    for row in rows:
        share = f"{row.share * 100:.0f} %" if row.share is not None else "-"
        got = row.got + (f" (ERROR: {row.error[:60]})" if row.error else "")
        lines.append(f"{row.case.prefix:<5} {'yes' if row.right else 'NO':<3} {row.fmt[:32]:<32} "
                     f"{','.join(row.case.accepted)[:40]:<40} {got:<24} {row.confidence:<7} {share}")
    right = sum(r.right for r in rows)
    alarms = sum(r.false_alarm for r in rows)
    unread = sum(bool(r.error) for r in rows)
    lines.append(f"right: {right}/{len(rows)}; false alarms: {alarms}; not read (exit 65): {unread}")
    return "\n".join(lines) + "\n"


def markdown_table(ticket: Sequence[Row], evidence: Sequence[Row]) -> str:
    """The doc's table: one row per case, the ticket part alone and with its evidence."""
    lines = ["| case | format read | expected (first = primary) | top finding (ticket) | confidence | share | with evidence |",
             "|---|---|---|---|---|---|---|"]
    for alone, more in zip(ticket, evidence):
        share = f"{alone.share * 100:.0f} %" if alone.share is not None else "-"
        got = alone.got + ("" if alone.right else " (wrong)") + (" (not read)" if alone.error else "")
        lines.append(f"| {alone.case.prefix} | {alone.fmt} | {', '.join(alone.case.accepted)} | {got} | "
                     f"{alone.confidence} | {share} | {'right' if more.right else 'wrong'} ({more.got}) |")
    for label, rows in (("ticket", ticket), ("with evidence", evidence)):
        lines.append(f"\n{label}: {table(rows).splitlines()[-1]}")
    return "\n".join(lines) + "\n"
