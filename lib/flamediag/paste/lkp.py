"""The perf-profile rows of a 0-day / LKP regression report (the kernel test robot's mails to
LKML since 4.x): one metric per row, the parent commit's value, the change, the tested commit's
value, each value optionally followed by `± N%` (its standard deviation):

          0.00           +20.3       20.31 ±  4%  perf-profile.calltrace.cycles-pp.page_counter_try_charge.try_charge_memcg.mem_cgroup_charge_skmem
          0.00           +20.9       20.91 ±  4%  perf-profile.children.cycles-pp.page_counter_try_charge
          0.00           +20.2       20.22 ±  4%  perf-profile.self.cycles-pp.page_counter_try_charge

- `self.<event>.<sym>`: the percentage of all samples whose leaf is `sym` (a flat profile);
- `children.<event>.<sym>`: the percentage through `sym` (inclusive; not additive);
- `calltrace.<event>.<sym>.<caller>.<caller>...`: the percentage through `sym` reached by that
  chain of callers, printed callee first, a few callers deep.

The profile read is one column's: the tested commit's (the last value column: a regression report
is about it), or the parent's (the first) when it shows more busy kernel time, as a fix's commit
message quoting an improvement report does (the old kernel's cost is the problem). Each
`self` row is a leaf; its share runs along the calltrace chains that start at it (scaled down to
the share; stitched further towards the root while the calltrace rows that continue a chain agree,
by every frame they add), otherwise it stays a lone frame. Without `self` rows the leaves are the
rows whose first frame no other row calls, and each inclusive row also keeps what it holds beyond
the rows directly below it (rule AX3). Symbol names keep GCC's suffixes (`.isra.0`, `.constprop.0`,
`.part.0`, `.cold`), which the dotted metric path would otherwise split. Other metric rows
(throughput, vmstat, perf-stat) are not stacks and end nothing: the block spans the
perf-profile rows among them.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..kernelnames import looks_kernel, normalize
from ..profile import Frame
from .common import Block, Miss, plural, split_kernel_user
from .profiles import busiest_run

# The standard deviation's sign: `±`, as the robot prints it; `+-` or `+/-` where a commit message or an
# ASCII-only mail client retyped it, `Â±` where an archive decoded the UTF-8 sign as Latin-1 (rule AM2).
PLUS_MINUS = r"(?:±|Â±|\+/?-)"
VALUE = r"[\d.]+(?:\s*" + PLUS_MINUS + r"\s*\d+%)?"
ROW = re.compile(r"^\s*(?:(?P<values>(?:[+-]?[\d.]+%?(?:\s*" + PLUS_MINUS + r"\s*\d+%)?\s+){1,4}))"
                 r"perf-profile\.(?P<kind>self|children|calltrace)\.(?P<event>[\w-]+?-pp|[\w-]+)\.(?P<path>[\w.$]+)\s*$")
NUMBER = re.compile(r"[+-]?[\d.]+%?")
# Any other LKP metric row (`netperf.Throughput_Mbps`, `vmstat.cpu.sy`, `perf-stat.ps.cycles`): kept
# inside a block of perf-profile rows, never a block of its own.
OTHER_ROW = re.compile(r"^\s*(?:[+-]?[\d.]+%?(?:\s*" + PLUS_MINUS + r"\s*\d+%)?\s+){1,4}[A-Za-z][\w.:/-]*\s*$")
SUFFIX = re.compile(r"^(?:isra|constprop|part|cold|lto_priv|llvm|\d+)$")
MAX_STITCH = 12
# percentage points: LKP rounds each row to two decimals, a smaller remainder is rounding (rule AX3)
RESIDUAL_MIN = 0.5


def starts_lkp(line: str) -> bool:
    return "perf-profile." in line and ROW.match(line) is not None


def _symbols(path: str) -> List[str]:
    names: List[str] = []
    for token in path.split("."):
        if names and SUFFIX.match(token):
            names[-1] += "." + token
        elif token:
            names.append(token)
    return [normalize(n) or n for n in names]


def _column_values(values: str) -> Tuple[Optional[float], Optional[float]]:
    """The parent's and the tested commit's value: the first and the last plain value (not the
    `%change`, not a `± N%` deviation); one value alone is both."""
    cleaned = re.sub(PLUS_MINUS + r"\s*\d+%", " ", values)
    plain = [v for v in NUMBER.findall(cleaned) if not v.endswith("%") and not v.startswith(("+", "-"))]
    return (float(plain[0]), float(plain[-1])) if plain else (None, None)


class _Column:
    """One value column's rows: `self` leaves, `children` totals, `calltrace` chains."""

    def __init__(self) -> None:
        self.selfs: Dict[str, float] = {}
        self.children: Dict[str, float] = {}
        self.traces: List[Tuple[Tuple[str, ...], float]] = []

    def add(self, kind: str, names: List[str], value: float) -> None:
        if kind == "self":
            self.selfs[names[0]] = value
        elif kind == "children":
            self.children[names[0]] = value
        else:
            self.traces.append((tuple(names), value))

    def leaves(self) -> Dict[str, float]:
        return self.selfs or _leaves_from(self.traces, self.children)


def read_lkp(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The perf-profile rows of an LKP comparison, as a profile of one of its two kernels.

    The comparison is a before/after pair in one table: like two pasted runs (doc/paste.md), the
    column read is the one with the more busy kernel time, the tested commit's on a tie. A
    regression report's tested commit shows the new kernel cost; an improvement report quoted in
    a fix's commit message shows the old cost in the parent's column.
    """
    index = start
    columns = (_Column(), _Column())          # the parent's, the tested commit's
    end = start
    while index < len(lines):
        line = lines[index]
        row = ROW.match(line) if "perf-profile." in line else None
        if row:
            values = _column_values(row["values"])
            names = _symbols(row["path"])
            if values[1] is not None and names:
                for column, value in zip(columns, values):
                    column.add(row["kind"], names, value)
            end = index + 1
        elif not (OTHER_ROW.match(line) or not line.strip()):
            break
        index += 1
    blocks = [_column_block(column, start, end) for column in columns]
    readable = [block for block in (blocks[1], blocks[0]) if block]    # busiest_run keeps the first on a tie
    if not readable:
        return Miss(max(index, start + 1))
    block = readable[busiest_run(readable)]
    column = columns[0] if block is blocks[0] else columns[1]
    which = ("the parent's column: it shows more busy kernel time than the tested commit's, as an improvement "
             "report shows the old kernel's cost" if column is columns[0] else "the tested commit's column")
    what = "self" if column.selfs else "calltrace"
    block.notes.insert(0, f"read LKP perf-profile rows: {plural(len(column.leaves()), 'leaf function')} from the "
                          f"{what} rows ({which}, percentages of all samples)")
    return block


def _column_block(column: _Column, start: int, end: int) -> Optional[Block]:
    """One column's rows as a profile: each leaf's share, split over its calltrace chains."""
    if not column.selfs and not column.traces:
        return None
    block = Block("lkp-perf-profile", start, end, unit="percent", whole=100.0)
    chained = 0
    leaves = column.leaves()
    for leaf, share in leaves.items():
        if share <= 0:
            continue
        paths = _chains_from(leaf, column.traces)
        shown = sum(w for _n, w in paths)
        rest = share
        if shown > 0:
            chained += 1
            scale = min(1.0, share / shown)
            for names, weight in paths:
                block.stacks.append((_frames(names), weight * scale, "", None, None))
            rest = share - shown * scale
        if rest > 0.001 * share:
            block.stacks.append(((Frame(leaf, "kernel" if looks_kernel(leaf) else "unknown"),), rest, "", None, None))
    if not column.selfs:
        for names, weight in _residuals(column.traces):
            block.stacks.append((_frames(_stitched(list(names), column.traces)), weight, "", None, None))
            chained += 1
    unlisted: List[Tuple[Tuple[str, ...], float]] = []
    if column.selfs:
        unlisted = _unlisted(column)
        for names, weight in unlisted:
            block.stacks.append((_frames(_stitched(list(names), column.traces)), weight, "", None, None))
    if not block.stacks:
        return None
    block.flat = chained == 0 and not unlisted
    if chained:
        block.notes.append(f"{chained} of them with callers from the perf-profile.calltrace rows (a few frames deep)")
    elif not unlisted:
        block.notes.append("flat profile: no ancestry, confidence capped at medium")
    if unlisted:
        block.notes.append(f"{plural(len(unlisted), 'calltrace row')} of leaves the self rows do not list, each "
                           "with its time beyond the rows below it, within the share the self rows leave (rule BT1)")
    return block


def _unlisted(column: _Column) -> List[Tuple[Tuple[str, ...], float]]:
    """With self rows (rule BT1): the robot lists only the rows that moved, so the self rows cover
    part of the samples, and a calltrace row whose first frame is no listed leaf says where some
    of the rest ran (in functions below the listing's cut: do_numa_page's callees, the shootdown
    loop of smp_call_function_many_cond). Each such row keeps what the rows directly below it do
    not hold (rule AX3's residual; all of it when nothing is listed below), and together they
    fill at most the share the self rows leave unlisted (scaled down to fit), so no sample is
    counted twice.

    >>> c = _Column()
    >>> for kind, names, w in (("self", ["leaf"], 60.0), ("calltrace", ["leaf", "a", "b"], 60.0),
    ...                        ("calltrace", ["x", "y", "z"], 30.0), ("calltrace", ["w", "x", "y"], 10.0)):
    ...     c.add(kind, names, w)
    >>> _unlisted(c)
    [(('x', 'y', 'z'), 20.0), (('w', 'x', 'y'), 10.0)]
    >>> c.add("calltrace", ["v"], 50.0)
    >>> [(n, round(w, 2)) for n, w in _unlisted(c)]
    [(('x', 'y', 'z'), 10.0), (('w', 'x', 'y'), 5.0), (('v',), 25.0)]
    """
    traces = column.traces
    out = []
    for names, weight in traces:
        if names[0] in column.selfs:
            continue
        below = [(o, w) for o, w in traces if o != names and _under(names, o)]
        direct = [w for o, w in below if not any(p != o and _under(p, o) for p, _ in below)]
        rest = weight - sum(direct)
        if rest > RESIDUAL_MIN:
            out.append((names, rest))
    room = 100.0 - sum(share for share in column.selfs.values() if share > 0)
    total = sum(w for _n, w in out)
    if room <= RESIDUAL_MIN or total <= 0:
        return []
    scale = min(1.0, room / total)
    return [(names, round(w * scale, 6)) for names, w in out]


def _leaves_from(traces, children) -> Dict[str, float]:
    """Without self rows: the chains whose first frame calls nothing else listed are leaves."""
    callers = {name for names, _w in traces for name in names[1:]}
    leaves: Dict[str, float] = {}
    for names, weight in traces:
        if names[0] not in callers:
            leaves[names[0]] = leaves.get(names[0], 0.0) + weight
    return leaves


def _under(row: Tuple[str, ...], other: Tuple[str, ...]) -> bool:
    """`other` runs below `row`'s first frame: a tail of `other` (past its own first frame) is where
    `row` starts, and the two agree where they overlap."""
    for at in range(1, len(other)):
        if other[at] == row[0]:
            overlap = min(len(other) - at, len(row))
            return other[at:at + overlap] == row[:overlap]
    return False


def _residuals(traces) -> List[Tuple[Tuple[str, ...], float]]:
    """Without self rows (rule AX3): a calltrace row is inclusive, the time through its chain. What it
    holds beyond the rows directly below it (those not below another row below it) ran in its first
    frame or in callees no row lists: a row of its own, so a report that lists only the inner rows of
    a path (reclaim's shrink_page_list -> __remove_mapping -> the lock) keeps the path's weight.
    Negative or rounding-size remainders are dropped.

    >>> rows = [(("a", "b", "c"), 50.0), (("x", "a", "b"), 20.0), (("leaf", "x", "a"), 15.0)]
    >>> _residuals(rows)
    [(('a', 'b', 'c'), 30.0), (('x', 'a', 'b'), 5.0)]
    """
    out = []
    for names, weight in traces:
        below = [(o, w) for o, w in traces if o != names and _under(names, o)]
        direct = [w for o, w in below if not any(p != o and _under(p, o) for p, _ in below)]
        rest = weight - sum(direct)
        if below and rest > RESIDUAL_MIN:
            out.append((names, round(rest, 6)))
    return out


def _stitched(chain: List[str], traces) -> Tuple[str, ...]:
    for _ in range(MAX_STITCH):
        nexts = {_extension(chain, o) for o, _w in traces
                 if len(o) >= 2 and o[0] in chain[1:] and _continues(chain, o)}
        longest = max(nexts, key=len, default=())
        # rows that agree (each a prefix of the longest) continue the chain one way; two that part
        # ways leave the chain where it is
        if not nexts or any(longest[:len(n)] != n for n in nexts):
            break
        chain.extend(longest)
    return tuple(chain)


def _chains_from(leaf: str, traces) -> List[Tuple[Tuple[str, ...], float]]:
    """Caller chains (callee first) starting at the leaf, a chain that is a prefix of another
    left out, each stitched towards the root while exactly one row continues it."""
    own = [(names, w) for names, w in traces if names[0] == leaf and len(names) > 1]
    own = [(n, w) for n, w in own if not any(len(o) > len(n) and o[:len(n)] == n for o, _ in own)]
    out = []
    for names, weight in own:
        out.append((_stitched(list(names), traces), weight))
    return out


def _continues(chain: List[str], other: Tuple[str, ...]) -> bool:
    """`other` starts inside `chain`, agrees with it to its end, and reaches further towards the
    root (one frame or more: a row starting nearer the chain's root reaches further, rule AX3)."""
    at = chain.index(other[0])
    overlap = chain[at:]
    return len(other) > len(overlap) and tuple(overlap) == other[:len(overlap)]


def _extension(chain: List[str], other: Tuple[str, ...]) -> Tuple[str, ...]:
    """The frames `other` adds beyond the end of `chain` (see _continues)."""
    return other[len(chain) - chain.index(other[0]):]


def _frames(callee_first: Tuple[str, ...]) -> Tuple[Frame, ...]:
    names = list(callee_first)[::-1]
    return split_kernel_user(names, "kernel" if looks_kernel(names[-1]) else "unknown")
