"""flamediag flamegraph — folded stacks (or perf script) -> interactive SVG flame graph, or a
speedscope file with --format speedscope."""
from __future__ import annotations

import io
import re
import sys
from typing import BinaryIO, List, Tuple

from .. import errors
from ..cli import make_parser, note_input, warn
from ..text import from_os
from ..errors import UserError
from ..flamegraph import COLOR_SCHEMES, Highlight, Options, count_frames, folded_lines, render_svg
from ..folded import iter_stacks
from ..perfscript import Problems, is_perf_script, open_binary
from ..perfscript import read_profile as read_perf_script

DESCRIPTION = """\
Draw folded stacks (`comm;root;...;leaf count`, from `flamediag collapse`, stackcollapse-*.pl,
inferno or bcc profile -f) as an interactive SVG: click a frame to zoom, Reset Zoom, Search
(regexp; Ctrl-F) shows the matched percentage, hover shows frame, samples and percent.
Kernel (_[k]), user, JIT (_[j]) and context ([softirq]/[hardirq]/[nmi]/[task]) frames get distinct
palettes; frames matched by --highlight get one colour per ID (far from every palette hue) and
an outline, with a legend. Runs of [unknown] frames merge into one and thin towers deeper than
99 % of the samples are cut in the middle, so the graph starts in the first screen.
flamegraph.pl's flags work where it has them: --colors, --inverted, --reverse, --hash,
--height, --fontsize, --notes, --title, --subtitle, --width, --minwidth, --countname; the zoom,
search (?s=) and ignore-case (ic) state are kept in the URL.
perf script input is accepted too (collapsed with --all --context-frames first).
--format speedscope writes a speedscope file (https://www.speedscope.app) instead: busy samples
of all CPUs, and for perf script one time-ordered profile per CPU (doc/flamegraph.md)."""

EXAMPLES = """
    flamediag collapse --all --context-frames perf.script.gz | flamediag flamegraph - > cpu.svg
    flamediag flamegraph out.folded --title "web1 03:15 CPU" > cpu.svg
    flamediag flamegraph out.folded --highlight zone-reclaim='(__)?(zone|node)_reclaim' \\
        --highlight spinlock='native_queued_spin_lock_slowpath' -o cpu.svg
    flamediag flamegraph big.folded --minwidth 0.5 -o big.svg     # elide more for huge inputs
    flamediag flamegraph out.folded --inverted --colors blue -o icicle.svg
    flamediag flamegraph perf.script.gz --format speedscope -o cpu.speedscope.json   # open in speedscope
"""


def build_parser():
    parser = make_parser("flamegraph", DESCRIPTION, EXAMPLES)
    parser.add_argument("input", nargs="?", default="-", metavar="FOLDED|-", help="folded stacks (default: stdin)")
    parser.add_argument("--title", default="Flame Graph", metavar="T")
    parser.add_argument("--subtitle", default=None, metavar="S")
    parser.add_argument("--highlight", action="append", default=[], metavar="ID=REGEX",
                        help="colour frames whose whole name matches REGEX (repeatable, one colour per ID)")
    parser.add_argument("--width", type=int, default=1200, metavar="PX")
    parser.add_argument("--minwidth", type=float, default=0.1, metavar="PX",
                        help="elide frames narrower than this (default 0.1, as flamegraph.pl)")
    parser.add_argument("--countname", default="samples", metavar="NAME", help="unit in hover details")
    parser.add_argument("--colors", default="java", choices=COLOR_SCHEMES, metavar="PALETTE",
                        help="java (default: kernel orange, user red, JIT green, context violet) or one of "
                             "flamegraph.pl's hot, mem, io, red, green, blue, yellow, purple, aqua, orange")
    parser.add_argument("--inverted", action="store_true", help="icicle graph: root at the top")
    parser.add_argument("--reverse", action="store_true", help="reverse each stack (leaf first), as flamegraph.pl")
    parser.add_argument("--hash", action="store_true",
                        help="colours by function name (always on here; kept for flamegraph.pl command lines)")
    parser.add_argument("--height", type=int, default=16, metavar="PX", help="frame height (default 16)")
    parser.add_argument("--fontsize", type=float, default=12, metavar="PT", help="font size (default 12)")
    parser.add_argument("--notes", metavar="TEXT", help="a note kept as a comment in the SVG")
    parser.add_argument("--no-merge-unknown", dest="merge_unknown", action="store_false",
                        help="keep runs of [unknown] frames as they are")
    parser.add_argument("--no-cap", dest="cap_towers", action="store_false",
                        help="never cut thin deep towers")
    parser.add_argument("--format", choices=("svg", "speedscope"), default="svg",
                        help="svg (default) or speedscope (JSON for https://www.speedscope.app)")
    parser.add_argument("-o", "--output", default="-", metavar="FILE", help="write here (default: stdout)")
    return parser


def parse_highlight(spec: str, index: int) -> Highlight:
    ident, sep, pattern = spec.partition("=")
    if not sep or not ident or not pattern:
        raise UserError(f"--highlight {spec!r}: write ID=REGEX, e.g. --highlight reclaim='node_reclaim|zone_reclaim'",
                        errors.USAGE)
    try:
        return Highlight(ident, re.compile(pattern))
    except re.error as err:
        raise UserError(f"--highlight {ident}: bad regular expression ({err}): fix the pattern", errors.USAGE)


def read_any_profile(stream: BinaryIO):
    """perf script or folded stacks as a Profile (speedscope output needs frames and times)."""
    from ..folded import read_profile as read_folded

    stream = open_binary(stream)
    head = stream.peek(1 << 16)[: 1 << 16] if hasattr(stream, "peek") else b""
    return read_perf_script(stream) if head and is_perf_script(head) else read_folded(stream)


def write_speedscope(args) -> int:
    import json
    from pathlib import Path

    from ..speedscope import document

    with open_input(args.input) as stream:
        profile = read_any_profile(stream)
    if not profile.records:
        raise UserError("no stacks found: give folded stacks (`a;b;c 12` lines) or perf script text")
    name = args.title if args.title != "Flame Graph" else ("stdin" if args.input == "-" else Path(args.input).name)
    data = json.dumps(document(profile, name), separators=(",", ":")) + "\n"
    size = write_output(args.output, data)
    where = "stdout" if args.output == "-" else args.output
    timed = " with sample times (time-order view per CPU)" if profile.seconds() else " (no sample times)"
    warn("flamegraph", f"wrote {where}: {size:,} bytes, speedscope file{timed}")
    return errors.OK


def read_stacks(stream: BinaryIO, problems: Problems) -> List[Tuple[str, float]]:
    stream = open_binary(stream)
    head = stream.peek(1 << 16)[: 1 << 16] if hasattr(stream, "peek") else b""
    if head and is_perf_script(head):
        profile = read_perf_script(stream)
        return list(folded_lines(profile, annotate=True, context=True))
    return [(stack.decode("utf-8", errors="replace"), count) for stack, count in iter_stacks(stream, problems)]


def open_input(path: str) -> BinaryIO:
    if path == "-":
        return io.BufferedReader(sys.stdin.buffer.raw) if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file: give folded stacks (flamediag collapse output) or - for stdin")
    except IsADirectoryError:
        raise UserError(f"{path} is a directory: give a folded stacks file")
    except PermissionError:
        raise UserError(f"{path}: permission denied: check the file mode", errors.NOPERM)


def write_output(path: str, svg: str) -> int:
    data = svg.encode("utf-8")
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        try:
            with open(path, "wb") as out:
                out.write(data)
        except OSError as err:
            raise UserError(f"{path}: cannot write ({err.strerror}): choose another -o path")
    return len(data)


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    note_input(args.input)
    for option in ("title", "subtitle", "notes", "countname"):
        if getattr(args, option) is not None:
            setattr(args, option, from_os(getattr(args, option)))
    if args.width < 100 or args.minwidth < 0:
        raise UserError("--width must be >= 100 and --minwidth >= 0", errors.USAGE)
    if not 4 <= args.height <= 200 or not 4 <= args.fontsize <= 100:
        raise UserError("--height must be 4..200 px and --fontsize 4..100", errors.USAGE)
    highlights = [parse_highlight(spec, i) for i, spec in enumerate(args.highlight)]
    if args.format == "speedscope":
        return write_speedscope(args)
    problems = Problems()
    with open_input(args.input) as stream:
        stacks = read_stacks(stream, problems)
    if problems.total():
        warn("flamegraph", f"warning: {problems.sentence()}")
    if not stacks:
        raise UserError("no stacks found: give folded stacks (`a;b;c 12` lines), e.g. from flamediag collapse")
    options = Options(width=args.width, minwidth=args.minwidth, frame_height=args.height, font_size=args.fontsize,
                      colors=args.colors, inverted=args.inverted, reverse=args.reverse, notes=args.notes,
                      count_name=args.countname, merge_unknown=args.merge_unknown, cap_towers=args.cap_towers)
    svg = render_svg(stacks, title=args.title, subtitle=args.subtitle, highlights=highlights, options=options)
    size = write_output(args.output, svg)
    elided = re.search(r"<!-- frames: (\d+), elided: (\d+) -->", svg)
    frames, dropped = (int(elided.group(1)), int(elided.group(2))) if elided else (count_frames(svg), 0)
    where = "stdout" if args.output == "-" else args.output
    warn("flamegraph", f"wrote {where}: {size:,} bytes, {frames:,} frames, {dropped:,} narrower than "
                       f"{args.minwidth:g} px elided, {len(stacks):,} input stacks")
    return errors.OK
