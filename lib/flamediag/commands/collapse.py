"""flamediag collapse — perf script text -> folded stacks (stackcollapse-perf.pl compatible)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Optional

from .. import errors
from ..cli import make_parser, note_input, run, warn
from ..collapse import CollapseOptions, CollapseResult, collapse_file, collapse_stream, write_folded
from ..errors import UserError
from ..progress import Counted, Progress

DESCRIPTION = """\
Fold `perf script` output (plain `perf script` or any -F field set; plain text or gzip,
detected by content) into one line per distinct stack, `comm;root;...;leaf count`, sorted:
byte for byte what stackcollapse-perf.pl prints, plus what it gets wrong on modern perf
(single-line stacks, versioned vmlinux paths, jitdump, PERF_RECORD_* lines). Counts are the
event period when perf printed one (as the Perl script does), else samples. Only the first
event type is kept unless --event-filter names one. A last sample with no closing blank line
is kept (Perl drops it: --perl-compat). Progress goes to stderr for large files on a terminal."""

EXAMPLES = """
    perf script > out.perf                               # or -F comm,pid,tid,cpu,time,period,event,ip,sym,dso
    flamediag collapse out.perf > out.folded             # as stackcollapse-perf.pl
    flamediag collapse --perl-compat --all out.perf      # byte for byte, even for a file cut short
    flamediag collapse --all --context-frames out.perf   # _[k]/_[j] suffixes, [softirq] markers
    flamediag collapse --event-filter page-faults perf.script.gz
    perf script | flamediag collapse - | flamediag flamegraph - > cpu.svg
"""


def build_parser():
    parser = make_parser("collapse", DESCRIPTION, EXAMPLES)
    parser.add_argument("input", nargs="?", default="-", metavar="FILE|-",
                        help="perf script output, plain or gzip (default: stdin)")
    parser.add_argument("--pid", action="store_true", help="root frame comm-PID")
    parser.add_argument("--tid", action="store_true", help="root frame comm-PID/TID")
    parser.add_argument("--kernel", action="store_true", help="suffix kernel frames with _[k]")
    parser.add_argument("--jit", action="store_true", help="suffix JIT frames (perf maps, jitdump) with _[j]")
    parser.add_argument("--all", action="store_true", help="both --kernel and --jit")
    parser.add_argument("--addrs", action="store_true", help="keep addresses of unresolved frames: [unknown <addr>]")
    parser.add_argument("--context-frames", dest="context", action="store_true",
                        help="add a [softirq]/[hardirq]/[nmi] frame above the frame entering that context "
                             "and a [task] frame where the return to user mode leaves it")
    parser.add_argument("--context", dest="old_context", action="store_true",
                        help="deprecated spelling of --context-frames (stackcollapse-perf.pl's --context means "
                             "source context for --inline)")
    parser.add_argument("--event-filter", metavar="EVENT", help="keep only samples of this event (e.g. cpu-clock)")
    parser.add_argument("--perl-compat", action="store_true",
                        help="drop a last sample with no closing blank line, as stackcollapse-perf.pl does "
                             "(default: keep it and say so on stderr)")
    parser.add_argument("--jobs", type=int, default=0, metavar="N",
                        help="processes for large plain files (default: one per CPU)")
    parser.add_argument("--engine", choices=("builtin", "inferno"), default="builtin",
                        help="inferno: delegate to inferno-collapse-perf on PATH (no --context-frames)")
    return parser


def deprecated_context(args) -> None:
    """`--context` still works, with a warning: the name means something else in stackcollapse-perf.pl."""
    if args.old_context:
        warn("collapse", "warning: --context is deprecated: use --context-frames (in stackcollapse-perf.pl, "
                         "--context adds source context to --inline; this flag adds [softirq]/[hardirq]/[nmi] frames)")
        args.context = True


def options_from(args) -> CollapseOptions:
    return CollapseOptions(pid=args.pid, tid=args.tid, kernel=args.kernel or args.all, jit=args.jit or args.all,
                           addrs=args.addrs, context=args.context,
                           event_filter=args.event_filter.encode() if args.event_filter else None,
                           keep_unterminated=not args.perl_compat)


def collapse_input(path: str, options: CollapseOptions, jobs: int) -> CollapseResult:
    if path == "-":
        progress = Progress(None, "reading stdin")
        try:
            return collapse_stream(Counted(sys.stdin.buffer, progress), options)
        finally:
            progress.done()
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory: give the perf script file (e.g. perf/perf.script.gz in a bundle)")
    progress = Progress.for_input(path, f"reading {os.path.basename(path)}")
    try:
        return collapse_file(path, options, jobs or None, progress)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file: give a perf script file or - for stdin")
    except PermissionError:
        raise UserError(f"{path}: permission denied: check the file mode", errors.NOPERM)
    finally:
        progress.done()


def report_problems(result: CollapseResult) -> None:
    events = sorted(result.events)
    if len(events) > 1 and result.event_filter is not None:
        names = ", ".join(e.decode("utf-8", "replace") for e in events)
        warn("collapse", f"warning: several event types ({names}); kept {result.event_filter.decode('utf-8', 'replace')} "
                         "only (choose with --event-filter)")
    sentences = [result.problems.sentence()] if result.problems.total() else []
    if result.unterminated is not None:
        sentences.append(f"the input ended without a blank line after its last sample (line {result.unterminated}); "
                         "that sample was kept (--perl-compat drops it)")
    if sentences:
        warn("collapse", "warning: " + "; ".join(sentences))


def run_inferno(args) -> int:
    binary = shutil.which("inferno-collapse-perf")
    if binary is None:
        raise UserError("--engine inferno: inferno-collapse-perf not on PATH (cargo install inferno)", errors.USAGE)
    if args.context:
        raise UserError("--engine inferno cannot add --context-frames markers: use the builtin engine", errors.USAGE)
    argv = [binary] + [f"--{flag}" for flag in ("pid", "tid", "kernel", "jit", "all", "addrs") if getattr(args, flag)]
    if args.event_filter:
        argv += ["--event-filter", args.event_filter]
    if args.input != "-":
        argv.append(args.input)
    return subprocess.call(argv)


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    note_input(args.input)
    deprecated_context(args)
    if args.engine == "inferno":
        return run_inferno(args)
    result = collapse_input(args.input, options_from(args), args.jobs)
    report_problems(result)
    if not result.counts:
        source = "stdin" if args.input == "-" else args.input
        raise UserError(f"no stacks found in {source}: give `perf script` output "
                        "(perf record -a -g, then perf script)")
    write_folded(result.counts, sys.stdout.buffer)
    sys.stdout.buffer.flush()
    return errors.OK


if __name__ == "__main__":
    sys.exit(run("collapse", main, sys.argv[1:]))
