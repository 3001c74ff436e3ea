"""flamediag summary - one table for many captures: host x top finding x confidence x share x %sys.

Writes OUT/summary.md and OUT/summary.json (and OUT/diagnoses/ for the bundles it diagnosed);
prints summary.md (or summary.json) to stdout. See doc/summary.md.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .. import errors
from ..cli import make_parser, safe_for_terminal, warn
from ..errors import UserError
from ..playbooks import PlaybookError
from .diagnose import add_playbook_options, min_share_fraction

DESCRIPTION = """Summarise every capture under DIR: bundles (.tar.gz or extracted directories) are diagnosed
in parallel, diagnosis directories (findings.json, report.md, facts.json) and findings.json files are read.
One table: host x top finding x confidence x share of busy samples x %sys, the hosts grouped by finding,
and a headline ("zone-reclaim on 27/30 hosts; 3 healthy"). An input that cannot be diagnosed (a hostile
or broken tarball, no stacks) is refused and listed with its reason; the rest is still summarised.
Exit 0 when every input was summarised, 1 when some were refused, 65 when none could be."""

EXAMPLES = """\
    flamediag summary fleet-20261122T0315Z/                 # what the fleet playbook fetched
    flamediag summary incidents/INC-1234 -o /tmp/inc1234    # write summary.md/.json elsewhere
    flamediag summary fleet/ --format json | jq -r '.captures[] | [.host, .finding] | @tsv'
    flamediag summary fleet/ -j 1 --no-reports              # one process; no per-bundle reports
"""


def default_jobs() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:          # macOS
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))


def build_parser():
    parser = make_parser("summary", DESCRIPTION, EXAMPLES)
    parser.add_argument("directory", metavar="DIR", help="directory holding bundles, diagnoses or findings.json files")
    parser.add_argument("-o", "--output", metavar="OUT", help="where summary.md, summary.json and diagnoses/ go (default DIR)")
    parser.add_argument("-j", "--jobs", metavar="N", type=int, default=default_jobs(),
                        help=f"bundles diagnosed at once (default: usable CPUs, at most 4; here {default_jobs()})")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown",
                        help="what to print on stdout: summary.md (default) or summary.json")
    parser.add_argument("--no-reports", action="store_true",
                        help="do not write OUT/diagnoses/<bundle>/ (report.md, findings.json, flamegraph.svg)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_playbook_options(parser)
    return parser


def check_args(args) -> None:
    if args.jobs < 1:
        raise UserError("--jobs must be 1 or more", errors.USAGE)
    if not Path(args.directory).is_dir():
        raise UserError(f"{args.directory}: not a directory: give the directory the bundles were fetched into")


def progress_printer(quiet: bool):
    if quiet:
        return None

    def show(done: int, total: int, name: str, outcome: str) -> None:
        warn("summary", f"[{done}/{total}] {name}: {outcome}")
    return show


def write(summary, out_dir: Path):
    from ..summary import write_summary

    try:
        return write_summary(summary, out_dir)
    except PermissionError as err:
        raise UserError(f"{out_dir}: cannot write ({err.strerror}): choose another directory with -o", errors.NOPERM)
    except OSError as err:
        raise UserError(f"{out_dir}: cannot write ({err.strerror}): choose another directory with -o", errors.PARTIAL)


def exit_code(summary) -> int:
    if not summary.captures:
        return errors.DATAERR
    return errors.PARTIAL if summary.refused else errors.OK


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    check_args(args)
    min_share = min_share_fraction(args)
    from ..summary import DIAGNOSES_DIR, drop_duplicates, find_inputs, summarise, to_json

    root = Path(args.directory).resolve()
    out_dir = Path(args.output).resolve() if args.output else root
    candidates, skipped = find_inputs(root, skip=[out_dir / DIAGNOSES_DIR])
    if not candidates:
        raise UserError(f"{args.directory}: no bundle, diagnosis directory or findings.json found under it")
    try:
        summary = summarise(candidates, args.directory, out_dir, jobs=args.jobs,
                            write_reports=not args.no_reports, extra_dirs=args.playbooks,
                            min_share=min_share,
                            progress=progress_printer(args.quiet))
    except PlaybookError as err:
        raise UserError(f"{err}", errors.DATAERR)
    summary.skipped = skipped + summary.skipped
    drop_duplicates(summary)
    paths = write(summary, out_dir)
    if args.format == "json":
        sys.stdout.write(json.dumps(to_json(summary), indent=2) + "\n")
    else:
        sys.stdout.write(safe_for_terminal(paths["summary.md"].read_text(encoding="utf-8")))
    warn("summary", f"{summary.headline}; written: {paths['summary.md']}, {paths['summary.json']}")
    return exit_code(summary)
