"""flamediag diagnose - diagnose a bundle, perf script text, folded stacks or a ticket paste.

Writes DIR/report.md, DIR/report.txt, DIR/flamegraph.svg, DIR/findings.json and
DIR/profile.speedscope.json (and DIR/timeline.svg for inputs with sample times); prints the
headline to stderr.
See doc/diagnose.md.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import errors
from ..cli import json_for_terminal, make_parser, note_input, safe_for_terminal
from ..errors import UserError
from ..playbooks import PlaybookError

DESCRIPTION = """Diagnose a CPU-system spike offline (no root, no perf): match the stacks against the
playbooks, corroborate with the bundle's metrics, and write report.md, report.txt (plain text for
tickets without markdown), flamegraph.svg, findings.json (doc/findings-json.md) and
profile.speedscope.json. INPUT is detected by content: a bundle (.tar.gz or extracted directory),
`perf script` text (plain or .gz), folded stacks, or text pasted from a ticket.
Inputs with sample times (bundles, perf script) also get timeline.svg and a spike search:
seconds where the kernel, softirq or a signature's share rises well above the rest are
diagnosed on their own and reported first; --from/--to restrict the diagnosis by hand.
Exit 0 whether or not a problem is found; 65 when the input is unusable."""

EXAMPLES = """\
    flamediag diagnose flamediag-web1-20261122T031500Z.tar.gz   # -> ./flamediag-web1-...-diagnosis/
    flamediag diagnose samples/zone-reclaim-rhel6 -o /tmp/dx      # an extracted bundle directory
    flamediag diagnose perf.script.gz --format json | jq '.findings[0]'
    flamediag diagnose BUNDLE --format text | mail -s "INC-1234 diagnosis" oncall@example.com
    flamediag diagnose out.folded --min-share 2                   # report signatures from 2 % of busy samples
    flamediag diagnose ticket.txt --playbooks ./my-playbooks      # extra playbook directory
    flamediag diagnose - -o /tmp/ticket < ticket.txt               # - reads stdin (a pipe works too)
    flamediag diagnose BUNDLE --from 25 --to 35                   # seconds 25-35 of the samples only
    flamediag diagnose BUNDLE --from 03:15:25 --to 03:15:35       # the same by UTC clock time
"""


def build_parser():
    parser = make_parser("diagnose", DESCRIPTION, EXAMPLES)
    parser.add_argument("input", metavar="INPUT",
                        help="bundle (.tar.gz or directory), perf script, folded stacks or paste; - reads stdin")
    parser.add_argument("-o", "--output", metavar="DIR", help="output directory (default ./<input name>-diagnosis)")
    parser.add_argument("--format", choices=("markdown", "text", "json"),
                        help="also print report.md (markdown), report.txt (text) or findings.json (json) to stdout")
    add_playbook_options(parser)
    return parser


def add_playbook_options(parser) -> None:
    """--min-share and --playbooks, shared by every command that diagnoses."""
    parser.add_argument("--min-share", metavar="PCT", type=float,
                        help="override every playbook's min_share: percent of busy samples a signature needs")
    parser.add_argument("--from", dest="start", metavar="T",
                        help="diagnose from T: seconds from the first sample (25), a UTC time (03:15:25) "
                             "or an ISO time (2026-11-22T03:15:25Z)")
    parser.add_argument("--to", dest="end", metavar="T", help="diagnose up to T (same forms as --from)")
    parser.add_argument("--playbooks", metavar="DIR", action="append", default=[],
                        help="extra playbook directory (repeatable; also $FLAMEDIAG_PLAYBOOKS)")


def min_share_fraction(args):
    """--min-share as a fraction, None when not given; a usage error outside 0-100."""
    if args.min_share is None:
        return None
    if not 0 <= args.min_share <= 100:
        raise UserError("--min-share must be a percentage between 0 and 100", errors.USAGE)
    return args.min_share / 100


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    note_input(args.input)
    min_share = min_share_fraction(args)
    from ..diagnose import load_playbooks, run_diagnosis, write_outputs
    from ..inputs import input_name
    from ..outputs import check_target

    try:
        books = load_playbooks(args.playbooks, min_share)
    except PlaybookError as err:
        raise UserError(f"{err}", errors.DATAERR)
    out_dir = Path(args.output) if args.output else Path.cwd() / f"{input_name(args.input)}-diagnosis"
    check_target(out_dir)
    diagnosis = run_diagnosis(args.input, loaded=books, time_range=(args.start, args.end))
    paths = write_outputs(diagnosis, out_dir)
    sys.stderr.write(safe_for_terminal(str(diagnosis.headline)) + "\n")
    sys.stderr.write(safe_for_terminal(f"report: {paths['report.md']}") + "\n")
    if args.format == "json":
        sys.stdout.write(json_for_terminal(json.dumps(diagnosis.findings_json(), indent=2)) + "\n")
    elif args.format in ("markdown", "text"):
        report = paths["report.md" if args.format == "markdown" else "report.txt"]
        sys.stdout.write(safe_for_terminal(report.read_text(encoding="utf-8")))
    return errors.OK
