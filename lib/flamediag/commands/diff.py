"""flamediag diff - what changed between two inputs (before and after a fix). See doc/diff.md."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import errors
from ..cli import json_for_terminal, make_parser, safe_for_terminal
from ..outputs import check_target
from ..errors import UserError
from ..playbooks import PlaybookError

DESCRIPTION = """Compare two inputs that `flamediag diagnose` accepts (bundles, perf script, folded
stacks, pastes): typically a capture before a fix and one after it. Writes DIR/diff.md,
DIR/diff.txt, DIR/diff.json and DIR/diff.svg (a differential flame graph: red grew, blue
shrank). Every signature found on either side gets a status: gone, new, reduced, grew or
unchanged (tolerance: 5 points or 20 % of the larger share); evidence facts that moved
(%sys, vmstat rates, settings) are listed. The headline goes to stderr, e.g.
"zone-reclaim gone (77 % -> 0 %); %sys 38 % -> 6 %". Exit 0 whatever changed; 65 when an
input is unusable."""

EXAMPLES = """\
    flamediag diff before.tar.gz after.tar.gz                 # -> ./before-vs-after-diff/
    flamediag diff samples/zone-reclaim-rhel6 samples/healthy-6.1 -o /tmp/dd
    flamediag diff before.tar.gz after.tar.gz --format json | jq '.signatures[] | [.id, .status]'
    flamediag diff old.perf.script.gz new.perf.script.gz --format text
"""


def build_parser():
    parser = make_parser("diff", DESCRIPTION, EXAMPLES)
    parser.add_argument("before", metavar="BEFORE", help="the input before the change (anything diagnose reads)")
    parser.add_argument("after", metavar="AFTER", help="the input after the change")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="output directory (default ./<before>-vs-<after>-diff)")
    parser.add_argument("--format", choices=("markdown", "text", "json"),
                        help="also print diff.md, diff.txt or diff.json to stdout")
    parser.add_argument("--playbooks", metavar="DIR", action="append", default=[],
                        help="extra playbook directory (repeatable; also $FLAMEDIAG_PLAYBOOKS)")
    return parser


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    from ..diagnose import load_playbooks, run_diagnosis
    from ..diff import compare
    from ..diffreport import write_outputs
    from ..inputs import display_name

    try:
        books = load_playbooks(args.playbooks)
    except PlaybookError as err:
        raise UserError(f"{err}", errors.DATAERR)
    before = run_diagnosis(args.before, loaded=books)
    after = run_diagnosis(args.after, loaded=books)
    result = compare(before, after)
    default = f"{display_name(Path(args.before))}-vs-{display_name(Path(args.after))}-diff"
    out_dir = Path(args.output) if args.output else Path.cwd() / default
    check_target(out_dir)
    paths = write_outputs(result, out_dir)
    sys.stderr.write(safe_for_terminal(result.headline) + "\n")
    sys.stderr.write(safe_for_terminal(f"diff: {paths['diff.md']}") + "\n")
    if args.format == "json":
        sys.stdout.write(json_for_terminal(json.dumps(result.to_json(), indent=2)) + "\n")
    elif args.format in ("markdown", "text"):
        name = "diff.md" if args.format == "markdown" else "diff.txt"
        sys.stdout.write(safe_for_terminal(paths[name].read_text(encoding="utf-8")))
    return errors.OK
