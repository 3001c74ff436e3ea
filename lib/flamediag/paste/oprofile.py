"""OProfile's `opreport` (the profiler of the 2.6.9-2.6.3x era: RHEL 4/5/6, before perf): the
symbol summary `opreport -l` and the call graph `opreport -c` / `--callgraph`.

`opreport -l` (oprofile 0.8-1.x; `--symbols`): a banner, a header naming the columns, one row
per symbol. The columns are a `samples  %` pair per event (or per CPU after `Samples on CPU N`
lines, `--separate=cpu`), then `linenr info` (`-g`), `image name` and `app name` (when the
session was separated by library or kernel; `--merge` removes them), and the symbol, always last:

    CPU: Core 2, speed 2394 MHz (estimated)
    Counted CPU_CLK_UNHALTED events (Clock cycles when not halted) with a unit mask of 0x00 (Unhalted core cycles) count 100000
    samples  %        image name               app name                 symbol name
    2345678  41.2345  vmlinux                  vmlinux                  .text.lock.spinlock
    301234    5.2955  ext3.ko                  oracle                   ext3_get_acl
    98765     1.7362  oracle                   oracle                   kcbgtcr
    12        2.1e-04 libc-2.5.so              oracle                   memcpy

`opreport -c`: blocks between dashed lines; in each, the left-justified row is a function with
its own samples, the indented rows above it its callers (their arc counts), the rows below it
its callees (`[self]`: the function itself):

    -------------------------------------------------------------------------------
      1234     62.4000  vmlinux                  shrink_zone
      744      37.6000  vmlinux                  refill_inactive_zone
    2345678  41.2345  vmlinux                  .text.lock.spinlock
      2345678  100.000  vmlinux                  .text.lock.spinlock [self]
    -------------------------------------------------------------------------------

Weights are the sample counts; the percentages say what they are of (count * 100 / %: every
sample of the event, or of the image a `opreport -l vmlinux` was restricted to). The call graph
holds one level of callers, not whole chains: each function's samples are split over its
callers by their arc counts, and the profile stays flat. `opcontrol` / `operf` lines above the
report (`Daemon started.`, `operf: Profiler started`, `Profiling done.`) belong to it.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

from ..kernelnames import looks_kernel, normalize
from ..profile import Frame
from .common import ELISION, Block, Miss, plural

CPU_BANNER = re.compile(r"^\s*CPU: .+, speed [\d.e+]+ MHz \(estimated\)\s*$")
COUNTED = re.compile(r"^\s*Counted (?P<event>\w+) events\b")
TIMER = re.compile(r"^\s*Profiling through timer interrupt\s*$")
PER_CPU = re.compile(r"^\s*Samples on CPU (?P<cpu>\d+)\s*$")
TOOL_LINE = re.compile(
    r"^\s*(?:operf: |opcontrol\b|[$#]\s*(?:sudo\s+)?(?:opcontrol|operf|opreport|ocount)\b|Using .*(?:OProfile|samples directory|"
    r"default event|log file)|Reading module info|Daemon started|Profiler running|Stopping profiling|Killing daemon|"
    r"Signalling daemon|Profiling done|\* \* \* |WARNING: Lost samples|WARNING! Some of the events were throttled|"
    r"Lowering the sampling rate|\^C\s*$|the initial sample rate is too high|interrupts\.\s+Decrease the sampling|"
    r"\S*/stats/throttled\s*$|for the throttled event names|"
    r"warning: \S+ (?:\(.*\) )?could not be found|error: no sample files found)")
HEADER = re.compile(r"^\s*(?P<vma>vma\s+)?(?P<pairs>samples\s+%(?:\s+samples\s+%)*)\s+(?P<rest>.*symbol name)\s*$")
NUMBER_PAIR = r"\d+\s+\d+(?:\.\d+)?(?:e[-+]?\d+)?"
ROW = re.compile(rf"^(?P<indent>\s*)(?:[0-9a-f]{{8,16}}\s+)?(?P<pairs>{NUMBER_PAIR}(?:\s+{NUMBER_PAIR})*)\s+(?P<rest>\S.*)$")
# After the rows: the end of an opcontrol session.
TRAILER = re.compile(r"^\s*(?:[$#]\s*(?:sudo\s+)?opcontrol\s+--(?:shutdown|stop|dump|deinit)|Stopping profiling|Killing daemon|"
                     r"Signalling daemon|Daemon terminated|Unloading oprofile module)")
RULE = re.compile(r"^\s*-{20,}\s*$")
# `opreport -l --details` (`-d`): each instruction's samples under its symbol: `  c0110f31 12  0.5124`
DETAIL = re.compile(r"^\s+[0-9a-f]{8,16}\s+\d+\s+\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:\s+\d+\s+\S+)*\s*$")
NO_LOCATION = "(no location information)"
NO_SYMBOLS = ("(no symbols)", "(no symbol)")
SELF = " [self]"


def starts_oprofile(line: str) -> bool:
    """The cheap trigger: opreport's banner or column header, or an opcontrol/operf line."""
    return bool(HEADER.match(line) or CPU_BANNER.match(line) or COUNTED.match(line) or TIMER.match(line)
                or TOOL_LINE.match(line))


def is_kernel_image(image: str) -> bool:
    """vmlinux (`vmlinux-2.6.18-194.el5`, a debuginfo path), `no-vmlinux`, `[kernel]`, a module (`ext3.ko`)."""
    base = image.rsplit("/", 1)[-1]
    return (base.startswith(("vmlinux", "vmlinuz", "no-vmlinux")) or base in ("[kernel]", "[kernel.kallsyms]")
            or base.endswith((".ko", ".ko.debug")) or "/lib/modules/" in image)


class _Layout:
    """What the column header and the banner say about the rows."""

    def __init__(self, header: re.Match, cpus: List[int], events: List[str]):
        self.pairs = header["pairs"].count("samples")
        rest = header["rest"]
        self.linenr = "linenr info" in rest
        self.image = "image name" in rest
        self.app = "app name" in rest
        self.cpus = cpus if len(cpus) == self.pairs else []
        self.events = events
        self.event: Optional[str] = None        # the first counted event, or `timer` (timer-interrupt mode)
        self.kernel_only = False                # the report was restricted to the vmlinux image


def read_opreport(lines: Sequence[str], start: int) -> Union[Block, Miss, None]:
    """An opreport -l / -c listing starting at `start` (its banner, a tool line or the header)."""
    banner = _banner(lines, start)
    if isinstance(banner, Miss):
        return banner
    index, layout = banner
    rows, end, callgraph = _rows(lines, index + 1, layout)
    block = Block("oprofile", start, end, flat=True, unit="samples", header=True, event=layout.event)
    chains = _callgraph(rows) if callgraph else [([row], row.counts) for row in _aligned(rows)]
    no_symbols = 0
    for chain, counts in chains:
        if chain[-1].symbol in NO_SYMBOLS:
            no_symbols += 1
            continue
        frames = tuple(Frame(normalize(row.symbol) or row.symbol, _kind(row, layout)) for row in chain)
        for column, count in enumerate(counts if layout.cpus else counts[:1]):
            if count > 0:
                cpu = layout.cpus[column] if layout.cpus else None
                block.stacks.append((frames, float(count), chain[-1].comm, cpu, None))
    if not block.stacks:
        return Miss(max(end, start + 1))
    block.whole = _whole(rows, layout)
    block.notes.extend(_notes(layout, callgraph, len(chains) - no_symbols, no_symbols))
    return block


def _banner(lines: Sequence[str], start: int) -> Union[Tuple[int, "_Layout"], Miss]:
    """The header's index and the layout, from the banner and tool lines above the header."""
    index, cpus, events, timer, kernel_only = start, [], [], False, False
    while index < len(lines) and not HEADER.match(lines[index]):
        line = lines[index]
        if PER_CPU.match(line):
            cpus.append(int(PER_CPU.match(line)["cpu"]))
        elif COUNTED.match(line):
            events.append(COUNTED.match(line)["event"])
        elif TIMER.match(line):
            timer = True
        elif not (CPU_BANNER.match(line) or TOOL_LINE.match(line) or not line.strip()):
            return Miss(max(index, start + 1))
        kernel_only = kernel_only or ("opreport" in line and "vmlinux" in line)   # `opreport -l .../vmlinux`
        index += 1
    if index >= len(lines):
        return Miss(index)
    layout = _Layout(HEADER.match(lines[index]), cpus, events)
    layout.event = "timer" if timer else (events[0] if events else None)
    layout.kernel_only = kernel_only
    return index, layout


class _Row:
    def __init__(self, indent: bool, counts: List[float], pcts: List[float], image: str, app: str, symbol: str):
        self.indent, self.counts, self.pcts, self.image, self.symbol = indent, counts, pcts, image, symbol
        self.is_self = symbol.endswith(SELF)
        if self.is_self:
            self.symbol = symbol[:-len(SELF)].strip()
        self.comm = "" if not app or app == image else app.rsplit("/", 1)[-1]
        self.group = 0                    # the dashed-rule block of a call graph it sits in
        self.pct_end = 0                  # the column where the first percentage ends


def _aligned(rows: List[_Row]) -> List[_Row]:
    """The symbol rows of an `opreport -l` listing (no dashed rules): the left-justified ones, and
    indented ones whose first percentage ends in the same column as a left-justified row's -- the
    sample counts right-aligned (a reformatted or retyped paste), not a nested call-graph row,
    which shifts the whole row right.

    >>> rows = [_parse_row(l, _Layout(HEADER.match("samples  %  symbol name"), [], [])) for l in
    ...         ["2214408  31.0877  .text.lock.futex", " 801733  11.2554  futex_wake", "    12  0.0001  x"]]
    >>> [r.symbol for r in _aligned(rows)]
    ['.text.lock.futex', 'futex_wake']
    """
    ends = {r.pct_end for r in rows if not r.indent}
    return [r for r in rows if not r.indent or r.pct_end in ends]


def _parse_row(line: str, layout: _Layout) -> Optional[_Row]:
    """`2345678  41.2345  vmlinux  vmlinux  .text.lock.spinlock`, as the header's columns say."""
    match = ROW.match(line)
    if not match:
        return None
    numbers = match["pairs"].split()
    if len(numbers) != 2 * layout.pairs:
        return None
    rest = match["rest"].rstrip()
    if layout.linenr:
        if rest.startswith(NO_LOCATION):
            rest = rest[len(NO_LOCATION):].strip()
        else:
            parts = rest.split(None, 1)
            if len(parts) != 2:
                return None
            rest = parts[1]
    fields = rest.split(None, int(layout.image) + int(layout.app))
    if len(fields) != int(layout.image) + int(layout.app) + 1:
        return None
    image = fields[0] if layout.image else ""
    app = fields[1] if layout.image and layout.app else fields[0] if layout.app else ""
    row = _Row(bool(match["indent"]), [int(n) for n in numbers[0::2]], [float(n) for n in numbers[1::2]],
               image, app, fields[-1])
    row.pct_end = match.start("pairs") + re.match(r"\S+\s+\S+", match["pairs"]).end()
    return row


def _rows(lines: Sequence[str], index: int, layout: _Layout) -> Tuple[List[_Row], int, bool]:
    rows: List[_Row] = []
    callgraph = False
    group = 0
    while index < len(lines):
        line = lines[index]
        if RULE.match(line):
            callgraph = callgraph or bool(rows) or _row_follows(lines, index, layout)
            group += 1
        elif ELISION.match(line) or DETAIL.match(line) or (rows and TRAILER.match(line)):
            pass
        elif not line.strip():
            # a blank line before a dashed rule is the quote marker of a `> -----...` line that a
            # mail client wrapped (the rule is wider than the mail): the call graph goes on (rule K7)
            if rows and not (index + 1 < len(lines) and RULE.match(lines[index + 1])):
                break
        else:
            row = _parse_row(line, layout)
            if row is None:
                break
            row.group = group
            rows.append(row)
        index += 1
    return rows, index, callgraph


def _row_follows(lines: Sequence[str], index: int, layout: _Layout) -> bool:
    return index + 1 < len(lines) and _parse_row(lines[index + 1], layout) is not None


def _callgraph(rows: List[_Row]) -> List[Tuple[List[_Row], List[float]]]:
    """Each function (the left-justified row of a block) with its own samples split over the
    callers above it in its block, by their arc counts; the rows below it are its callees."""
    out: List[Tuple[List[_Row], List[float]]] = []
    for group in sorted({r.group for r in rows}):
        members = [r for r in rows if r.group == group]
        at = next((i for i, r in enumerate(members) if not r.indent), None)
        if at is None:
            at = _right_aligned_function(members)
        if at is None:
            continue
        function = members[at]
        arcs = [c for c in members[:at] if c.symbol != function.symbol and c.counts[0] > 0]
        total = sum(c.counts[0] for c in arcs)
        if not total:
            out.append(([function], function.counts))
        for caller in arcs:
            out.append(([caller, function], [c * caller.counts[0] / total for c in function.counts]))
    return out


def _right_aligned_function(members: List[_Row]) -> Optional[int]:
    """The function row of a call-graph block whose sample counts were right-aligned (a retyped or
    reformatted `opreport -c`, as rule F1 reads `opreport -l`): every row is then indented, but the
    callers and callees are still shifted right of their function as a whole, so the function is
    the one row whose first percentage ends leftmost (rule K3).

    >>> layout = _Layout(HEADER.match("samples  %  symbol name"), [], [])
    >>> rows = [_parse_row(l, layout) for l in ["  1034418  100.000  page_referenced",
    ...         " 803112  16.6664  page_referenced_anon", "  803112  100.000  page_referenced_anon [self]"]]
    >>> _right_aligned_function(rows)
    1
    """
    ends = sorted(r.pct_end for r in members)
    if not ends or (len(ends) > 1 and ends[0] == ends[1]):
        return None
    return next(i for i, r in enumerate(members) if r.pct_end == ends[0])


def _kind(row: _Row, layout: _Layout) -> str:
    if layout.image:
        return "kernel" if is_kernel_image(row.image) else "user"
    if layout.kernel_only or looks_kernel(row.symbol) or row.symbol.startswith(".text."):
        return "kernel"
    return "unknown"


def _whole(rows: List[_Row], layout: _Layout) -> Optional[float]:
    """All samples the percentages are of: count * 100 / % of the largest row, per column."""
    primary = [r for r in rows if not r.indent and not r.is_self]
    if not primary:
        return None
    columns = range(layout.pairs) if layout.cpus else range(1)
    whole = 0.0
    for column in columns:
        best = max(primary, key=lambda r: r.counts[column])
        if best.pcts[column] <= 0:
            return None
        whole += best.counts[column] * 100.0 / best.pcts[column]
    return whole


def _notes(layout: _Layout, callgraph: bool, symbols: int, no_symbols: int) -> List[str]:
    what = "opreport -c call graph (one level of callers per function, not whole chains)" if callgraph \
        else "opreport -l symbol summary"
    notes = [f"read OProfile {what}: {plural(symbols, 'symbol')}, weighted by their sample counts"]
    if layout.cpus:
        notes.append(f"one samples column per CPU ({plural(len(layout.cpus), 'CPU')}): each row counted on its CPU")
    elif layout.pairs > 1:
        named = ", ".join(layout.events) if layout.events else f"{layout.pairs} events"
        notes.append(f"{layout.pairs} event columns ({named}): weighted by the first ({layout.event or 'unnamed'})")
    if no_symbols:
        notes.append(f"{plural(no_symbols, 'row')} without symbols (`(no symbols)`, e.g. opcontrol --no-vmlinux): "
                     "left out of the stacks, still part of the whole")
    notes.append("flat profile: no ancestry, confidence capped at medium")
    return notes
