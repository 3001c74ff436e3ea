"""summary.md from the summary.json document, so the two never disagree.

Every data-derived string (host names, finding titles, paths, refusal reasons) goes through
report.md_escape / code_span: a host name or a tarball member cannot inject markdown.

    >>> finding_cell({"status": "unexplained", "finding": None, "hotspot": "clear_page_erms"})
    'no known problem (hotspot clear_page_erms)'
"""
from __future__ import annotations

from typing import List, Optional
from urllib.parse import quote

from .report import code_span, md_escape, pct

COLUMNS = ("host", "top finding", "confidence", "share", "%sys", "window start", "report")
STATUS_TEXT = {"healthy": "healthy", "inconclusive": "inconclusive (kernel symbols restricted)",
               "unexplained": "no known problem"}


def finding_cell(capture: dict) -> str:
    if capture["status"] == "finding":
        return md_escape(capture["finding"])
    text = STATUS_TEXT.get(capture["status"], capture["status"])
    if capture["status"] == "unexplained" and capture.get("hotspot"):
        return f"{text} (hotspot {md_escape(capture['hotspot'])})"
    return text


def number_cell(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:.1f}"


def share_cell(value: Optional[float]) -> str:
    return "–" if value is None else str(pct(value))


def report_cell(capture: dict) -> str:
    if capture.get("report"):
        return f"[report](<{quote(capture['report'])}>)"
    return code_span(capture["input"], in_table=True)


def table(captures: List[dict]) -> List[str]:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for c in captures:
        cells = [md_escape(c["host"]), finding_cell(c), md_escape(c["confidence"] or "–"),
                 share_cell(c["share"]), number_cell(c["sys_pct"]), md_escape(c["start"] or "–"),
                 report_cell(c)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def groups_list(groups: List[dict]) -> List[str]:
    lines = []
    for g in groups:
        title = f" — {md_escape(g['title'])}" if g.get("title") else ""
        hosts = ", ".join(md_escape(h) for h in g["hosts"])
        count = len(g["hosts"])
        lines.append(f"- **{md_escape(STATUS_TEXT.get(g['key'], g['key']))}**{title}: "
                     f"{count} host{'s' if count != 1 else ''}: {hosts}")
    return lines


def refused_table(refused: List[dict]) -> List[str]:
    lines = ["| input | reason |", "|---|---|"]
    lines += [f"| {code_span(r['input'], in_table=True)} | {md_escape(r['reason'])} |" for r in refused]
    return lines


def duration(seconds: float) -> str:
    """
    >>> duration(0.42), duration(95), duration(7200), duration(3 * 86400)
    ('0.4 s', '95 s', '2.0 h', '3.0 days')
    """
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 600:
        return f"{seconds:.0f} s"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def intro(doc: dict) -> str:
    count = len(doc["captures"])
    text = (f"{count} capture{'s' if count != 1 else ''} from {doc['hosts']} host{'s' if doc['hosts'] != 1 else ''}"
            f" under {code_span(doc['directory'])}")
    if doc.get("start_spread_seconds") is not None:
        text += f"; the windows started within {duration(doc['start_spread_seconds'])} of each other"
    return text + "."


def render_markdown(doc: dict) -> str:
    lines = ["# flamediag summary", "", f"**{md_escape(doc['headline'])}**", "", intro(doc), ""]
    if doc["captures"]:
        lines += table(doc["captures"]) + ["", "## Hosts by finding", ""] + groups_list(doc["groups"]) + [""]
    if doc["refused"]:
        lines += ["## Refused inputs", "", "Not summarised; the rest was.", ""] + refused_table(doc["refused"]) + [""]
    if doc["skipped"]:
        lines += ["## Skipped", ""]
        lines += [f"- {code_span(s['input'])}: {md_escape(s['reason'])}" for s in doc["skipped"]] + [""]
    lines += ["Share: the top finding's share of busy samples. %sys: all-CPU average over the window "
              "(`mpstat.sys_pct.avg`), – when the input did not carry it. Each host's report has the evidence.", ""]
    return "\n".join(lines)
