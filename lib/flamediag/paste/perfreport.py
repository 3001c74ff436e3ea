"""`perf report --stdio` (call graphs in every layout since 2.6.32, flat) and `perf top` screens.

Entry lines, with or without a Children column, a comm column (perf top has none) or a
TUI fold marker (`-`/`+`, as in saved `perf report` TUI screens):

    -  33.01%             java  [kernel.kallsyms]                     [k] _spin_lock_irq
        39.40%     0.00%  stress-ng-sock   [unknown]                  [k] 0x00007f85323fde70
         7.46%  [kernel]          [k] clear_page_erms

Graph lines below an entry. Every layout is read by one rule: a branch opens at the column
of its marker (its "rail"), and a plain name belongs to the most recent branch whose rail
lies left of it:

    ---_raw_spin_unlock_irqrestore           (3.x+ root)      --- native_safe_halt (2.6.32)
       |--4.77%--tcp_write_xmit              (branch)         |--87.50%-- start_secondary
       |          __tcp_push_pending_frames  (continuation)
        --3.49%--handle_softirqs             (last branch)
       - 98.89% shrink_inactive_list         (TUI: open branch; `+` = folded, its subtree unseen)
            shrink_zone
          - __alloc_pages_nodemask           (TUI: same chain, has branches)

Branch percentages are absolute (`-g graph`, the default since 3.x) or relative to the
parent (`-g fractal`, the 2.6.32 default); a node whose branches sum past its own share
can only be relative.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from ..profile import Frame
from .common import Block, clean_name, kind_of_lone, plural, split_kernel_user

ENTRY = re.compile(
    r"^(?P<fold>[-+])?\s*(?P<p1>\d+(?:\.\d+)?)%(?:\s+(?P<p2>\d+(?:\.\d+)?)%)?(?:\s+(?P<num>\d+))?"
    r"\s+(?P<mid>\S.*?)??\s*\[(?P<mark>[k.gujH])\]\s+(?P<sym>\S.*)$"
)
PERFTOP = re.compile(r"^\s*PerfTop:\s+\d+\s+irqs/sec")
HEADER = re.compile(r"^#|^\s*-{20,}\s*$")
BRANCH = re.compile(r"--(\d+(?:\.\d+)?)%--\s?(\S.*)$")
ROOT = re.compile(r"^[\s|]*---\s?(\S.*)$")
TUI = re.compile(r"^(\s*)([-+])\s+(?:(\d+(?:\.\d+)?)%\s+)?(\S.*)$")
RAILS_ONLY = re.compile(r"^[\s|]*$")
SYMBOL = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")   # printable ASCII: prose in other scripts never passes


@dataclass
class Chain:
    rail: int
    pct: Optional[float]                  # as printed; None for the entry's own chain
    parent: Optional["Chain"] = None
    names: List[str] = field(default_factory=list)
    children: List["Chain"] = field(default_factory=list)
    abs: float = 0.0


@dataclass
class Entry:
    pct: float                            # Overhead, or Children when that column exists
    self_pct: Optional[float]
    comm: str
    dso: str
    mark: str
    sym: str
    cpu: Optional[int] = None
    root: Chain = field(default_factory=lambda: Chain(rail=-1, pct=None))

    def has_graph(self) -> bool:
        return bool(self.root.names or self.root.children)


def is_entry(line: str) -> bool:
    return bool(ENTRY.match(line))


def parse_entry(line: str, cpu_column: bool = False) -> Optional[Entry]:
    """An entry line; `cpu_column` when the header names a CPU sort key (else a number
    after the percentages is the -n Samples column)."""
    match = ENTRY.match(line)
    if not match:
        return None
    p1, p2 = float(match["p1"]), match["p2"]
    mid = (match["mid"] or "").split()
    dso = mid[-1] if mid else ""
    cpu = int(match["num"]) if cpu_column and match["num"] else None
    comm = " ".join(mid[:-1])
    sym = clean_name(match["sym"])
    return Entry(p1, float(p2) if p2 is not None else None, comm, dso, match["mark"], sym, cpu)


def read_report(lines: Sequence[str], start: int) -> Optional[Block]:
    """A perf report / perf top block starting at `start` (a header or an entry line)."""
    end, entries, perftop_screens, samples = _collect_entries(lines, start)
    if not entries:
        return None
    if perftop_screens and not any(e.has_graph() for e in entries):
        return _flat_block(entries, start, end, "perf-top", perftop_screens)
    graphs = [e for e in entries if e.has_graph()]
    if not graphs:
        return _flat_block(entries, start, end, "perf-report-flat")
    return _graph_block(entries, start, end, samples)


def _collect_entries(lines: Sequence[str], start: int):
    """Entries (grouped per perf top screen), the end index, and the sample count if printed."""
    screens: List[List[Entry]] = [[]]
    perftop = 0
    samples = None
    chain_stack: List[Chain] = []
    cpu_column = False
    index = start
    while index < len(lines):
        line = lines[index]
        if PERFTOP.match(line):
            perftop += 1
            if screens[-1]:
                screens.append([])
            chain_stack = []
        elif HEADER.match(line):
            if re.match(r"#\s+(?:Overhead|Children)\b", line):
                cpu_column = bool(re.search(r"\sCPU\s", line + " "))
            found = re.search(r"# Samples:\s+(\d+)([KMG]?)\s", line)
            if found:
                samples = int(found[1]) * {"": 1, "K": 1000, "M": 10 ** 6, "G": 10 ** 9}[found[2]]
        elif line.strip() in ("", "...", "[...]"):
            chain_stack = []
        else:
            entry = parse_entry(line, cpu_column)
            if entry:
                screens[-1].append(entry)
                chain_stack = [entry.root]
            elif not (chain_stack and _graph_line(line, chain_stack)):
                break
        index += 1
    if perftop:
        # Each screen replaces the previous one: the last complete screen is the snapshot.
        full = [s for s in screens if s]
        return index, (full[-1] if full else []), perftop, samples
    return index, [e for s in screens for e in s], 0, samples


def _graph_line(line: str, stack: List[Chain]) -> bool:
    """Fold one graph line into the open chains; False when it is not a graph line."""
    if RAILS_ONLY.match(line):
        return True
    branch = BRANCH.search(line)
    if branch:
        name = branch[2].strip()
        return _open_branch(stack, branch.start() - 1, float(branch[1]), name)
    root = ROOT.match(line)
    if root:
        del stack[1:]
        return _append(stack, root[1].strip())
    tui = TUI.match(line)
    if tui and len(tui[1]) > 0:
        rail, pct, name = len(tui[1]), tui[3], tui[4].strip()
        if pct is not None:
            return _open_branch(stack, rail, float(pct), name)
        _pop_to(stack, rail)
        return _append(stack, name)
    content = line.lstrip(" |")
    column = len(line) - len(content)
    if column == 0 or not SYMBOL.match(content):
        return False
    _pop_to(stack, column)
    return _append(stack, content.strip())


def _open_branch(stack: List[Chain], rail: int, pct: float, name: str) -> bool:
    if not SYMBOL.match(name):
        return False
    _pop_to(stack, rail)
    chain = Chain(rail=rail, pct=pct, parent=stack[-1])
    stack[-1].children.append(chain)
    stack.append(chain)
    return _append(stack, name)


def _pop_to(stack: List[Chain], column: int) -> None:
    while len(stack) > 1 and stack[-1].rail >= column:
        stack.pop()


def _append(stack: List[Chain], name: str) -> bool:
    if not SYMBOL.match(name) or not re.search(r"\w", name):
        return False
    stack[-1].names.append(clean_name(name))
    return True


# --- weights -----------------------------------------------------------------------

def _is_relative(root: Chain, entry_pct: float) -> bool:
    """Fractal (relative) percentages: some node's branches add up past the node itself."""
    todo = [(root, entry_pct)]
    while todo:
        chain, share = todo.pop()
        if chain.children and sum(c.pct or 0 for c in chain.children) > share + 0.5:
            return True
        todo.extend((c, c.pct or 0) for c in chain.children)
    return False


def _paths(entry: Entry, weight: float) -> List[Tuple[List[str], float]]:
    """(names in graph order, absolute weight) for every place a chain ends or thins out."""
    relative = _is_relative(entry.root, entry.pct)
    entry.root.abs = weight
    out: List[Tuple[List[str], float]] = []
    todo: List[Tuple[Chain, List[str]]] = [(entry.root, [])]
    while todo:
        chain, prefix = todo.pop()
        names = prefix + chain.names
        below = 0.0
        for child in chain.children:
            pct = child.pct or 0.0
            child.abs = chain.abs * pct / 100 if relative else weight * pct / entry.pct if entry.pct else 0
            below += child.abs
            todo.append((child, names))
        # What the branches leave is still known to run through this chain (below the
        # --percent-limit, or the chain's own samples): keep it as a shorter stack.
        rest = chain.abs - below
        if rest > chain.abs * 0.001 + 1e-9:
            out.append((names, rest))
    return out


def _orientation(entries: Sequence[Entry], children_mode: bool) -> str:
    """`callee` (graph runs leaf -> root) or `caller` (root -> leaf)."""
    if children_mode:
        return "caller"
    firsts = [e for e in entries if e.has_graph()]
    leaf_first = sum(1 for e in firsts if e.root.names[:1] == [e.sym] or
                     (not e.root.names and any(c.names[:1] == [e.sym] for c in e.root.children)))
    return "callee" if leaf_first * 2 >= len(firsts) else "caller"


def _to_self_chains(entry: Entry) -> None:
    """A --children graph holds X's callee tree (branches starting at X), then the caller
    chains of X's own samples (branches ending at X). Every sample is some entry's own
    sample exactly once, so keeping only the latter counts each sample once."""
    if entry.root.names[:1] == [entry.sym]:
        entry.root.names, entry.root.children = [], []
    elif entry.root.names:
        own = Chain(rail=-1, pct=None, names=entry.root.names, children=entry.root.children)
        entry.root.names, entry.root.children = [], [own]
        own.pct = entry.self_pct
    entry.root.children = [c for c in entry.root.children if c.names[:1] != [entry.sym]]
    entry.pct = entry.self_pct or 0.0


def _graph_block(entries: List[Entry], start: int, end: int, samples: Optional[int]) -> Block:
    children_mode = any(e.self_pct is not None for e in entries)
    if children_mode:
        for entry in entries:
            _to_self_chains(entry)
    orientation = _orientation(entries, children_mode)
    used = [e for e in entries if e.pct > 0]
    scale = samples / 100 if samples else 1.0
    block = Block("perf-report-callgraph", start, end)
    folded = 0
    for entry in used:
        if not entry.has_graph():
            folded += 1
            block.stacks.append(((_lone_frame(entry),), entry.pct * scale, entry.comm, entry.cpu, None))
            continue
        for names, weight in _paths(entry, entry.pct * scale):
            rooted = names[::-1] if orientation == "callee" else names
            if not rooted or (orientation == "caller" and rooted[-1:] != [entry.sym]):
                rooted = rooted + [entry.sym]   # a thinned-out branch: the leaf is still the entry
            frames = split_kernel_user(rooted, "kernel" if entry.mark == "k" else "user")
            block.stacks.append((frames, weight, entry.comm, entry.cpu, None))
    layout = "--children (self call chains)" if children_mode else f"{orientation} graph"
    block.notes.append(f"read perf report --stdio {layout} ({plural(len(used) - folded, 'call graph')})")
    if folded:
        entries_word = "entry" if folded == 1 else "entries"
        block.notes.append(f"{folded} perf report {entries_word} without a call graph (folded): counted by the symbol alone")
    if not samples:
        block.notes.append("perf report weights are percentages (the sample count was not pasted)")
    return block


def _flat_block(entries: List[Entry], start: int, end: int, fmt: str, screens: int = 0) -> Block:
    block = Block(fmt, start, end, flat=True)
    for entry in entries:
        share = entry.self_pct if entry.self_pct is not None else entry.pct
        if share:
            block.stacks.append(((_lone_frame(entry),), share, entry.comm, entry.cpu, None))
    what = f"perf top (last of {plural(screens, 'screen')})" if fmt == "perf-top" else "flat perf report"
    block.notes.append(f"read {what}: {plural(len(entries), 'symbol')}")
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block


def _lone_frame(entry: Entry) -> Frame:
    kind = "kernel" if entry.mark == "k" else "user" if entry.mark in ".u" else "unknown"
    return Frame(entry.sym, kind_of_lone(entry.sym, kind))
