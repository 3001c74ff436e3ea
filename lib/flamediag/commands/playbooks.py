"""flamediag playbooks - list the known problems (the signature catalog), read from the playbook files."""
from __future__ import annotations

import json
import sys

from .. import errors
from ..cli import make_parser, safe_for_terminal
from ..errors import UserError
from ..playbooks import PlaybookError, catalog_entries, load_all

DESCRIPTION = """List the playbooks diagnose matches against: id, title, the kernel eras whose
function spellings the signature covers, and the evidence (collectors) it reads. Read from the
playbook files themselves (playbooks/*.md plus --playbooks DIR / $FLAMEDIAG_PLAYBOOKS)."""

EXAMPLES = """\
    flamediag playbooks                          # id, title, eras, evidence
    flamediag playbooks --format json | jq -r '.[].id'
    flamediag playbooks --playbooks ./my-playbooks   # include an extra directory (validated)
"""


def build_parser():
    parser = make_parser("playbooks", DESCRIPTION, EXAMPLES)
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--playbooks", metavar="DIR", action="append", default=[],
                        help="extra playbook directory (repeatable)")
    return parser


def render_text(entries) -> str:
    out = []
    for entry in entries:
        out.append(f"{entry['id']}  {entry['title']}")
        for era in entry["eras"]:
            out.append(f"    era:      {era}")
        out.append(f"    evidence: {', '.join(entry['evidence'])}")
        out.append(f"    file:     {entry['path']}")
        out.append("")
    out.append(f"{len(entries)} playbooks")
    return "\n".join(out) + "\n"


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    try:
        entries = catalog_entries(load_all(args.playbooks))
    except PlaybookError as err:
        raise UserError(str(err), errors.DATAERR)
    if args.format == "json":
        sys.stdout.write(json.dumps(entries, indent=2) + "\n")
    else:
        sys.stdout.write(safe_for_terminal(render_text(entries)))
    return errors.OK
