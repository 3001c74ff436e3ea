"""flamediag facts - show the facts diagnose reads from a bundle (or a ticket paste), with their sources."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import List, Tuple

from .. import errors, inputs
from ..cli import json_for_terminal, make_parser, note_input, safe_for_terminal
from ..errors import UserError
from ..facts import Facts

DESCRIPTION = """Print the facts the diagnosis reads (doc/facts.md): one `name = value` line each, with
the bundle file it came from (UNVERIFIED when that file failed SHA256SUMS), then the bundle's
integrity problems and the data-quality sentences. INPUT is a bundle (.tar.gz or extracted directory) or a text file with pasted ticket
evidence (mpstat, vmstat, numactl --hardware, sysctl, THP lines). No root needed."""

EXAMPLES = """\
    flamediag facts flamediag-web1-20261122T031500Z.tar.gz        # every fact, with its source
    flamediag facts bundle.tar.gz --match '^(sysctl.vm|numa)\\.'   # only some facts
    flamediag facts ticket-1234.txt                               # facts from a pasted ticket
    flamediag facts bundle.tar.gz --format json | jq '.facts["mpstat.soft_pct.max"]'
"""


def build_parser():
    parser = make_parser("facts", DESCRIPTION, EXAMPLES)
    parser.add_argument("input", metavar="INPUT", help="bundle (.tar.gz or directory) or pasted ticket text")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--match", metavar="REGEX", help="only facts whose name matches (Python regex)")
    return parser


def load_facts(path: Path) -> Tuple[Facts, List[str], List[str]]:
    """The facts, the bundle's own integrity problems (SHA256SUMS mismatches ...) and the data-quality
    sentences (the capture's, then the facts'), read by the loader diagnose uses."""
    inp = inputs.load(str(path), stacks=False)
    if not isinstance(inp.facts, Facts):
        raise UserError(f"{path}: no bundle and no pasted evidence (mpstat, vmstat, numactl, sysctl, THP lines) found")
    return inp.facts, list(inp.problems), inp.capture.quality() + list(inp.facts.data_quality)


def selected(facts: Facts, pattern):
    return [(name, value) for name, value in facts.items() if pattern is None or pattern.search(name)]


def render_text(facts: Facts, rows, problems: List[str], quality: List[str]) -> str:
    out = []
    for name, value in rows:
        shown = json.dumps(value) if isinstance(value, (list, bool)) or value is None else str(value)
        flag = "  UNVERIFIED" if facts.unverified(name) else ""
        out.append(f"{name} = {shown}    ({facts.source(name) or '?'}){flag}")
    out.append(f"{len(rows)} facts")
    out.extend(f"bundle: {sentence}" for sentence in problems)
    out.extend(f"data_quality: {sentence}" for sentence in quality)
    return "\n".join(out) + "\n"


def render_json(facts: Facts, rows, problems: List[str], quality: List[str], with_series: bool) -> str:
    doc = {"facts": {name: value for name, value in rows}, "bundle_problems": problems,
           "sources": {name: facts.source(name) for name, _ in rows},
           "unverified": sorted(name for name, _ in rows if facts.unverified(name)),
           "data_quality": quality}
    if with_series:  # per-CPU tables; left out when --match narrows the output
        doc["series"] = facts.series
    return json_for_terminal(json.dumps(doc, indent=1, sort_keys=True, default=str, ensure_ascii=False)) + "\n"


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    note_input(args.input)
    try:
        pattern = re.compile(args.match) if args.match else None
    except re.error as err:
        raise UserError(f"--match {args.match!r} is not a valid regex ({err}); e.g. --match '^sysctl\\.'",
                        errors.USAGE)
    facts, problems, quality = load_facts(Path(args.input))
    rows = selected(facts, pattern)
    if args.format == "json":
        sys.stdout.write(render_json(facts, rows, problems, quality, with_series=pattern is None))
    else:
        sys.stdout.write(safe_for_terminal(render_text(facts, rows, problems, quality)))
    return errors.OK
