"""From parsed perf report entries and their call graphs to weighted stacks.

`perfreport` reads the text into `Entry` objects, each with a tree of `Chain`s (a branch of
the graph: its printed share and the names under it). This module turns them into stacks:

- which way a graph runs (the entry's symbol, else what the frames are: `common.leaf_first`);
- absolute or relative percentages, whichever the sums under each node fit better; sums past
  their parent scaled down to it, so an entry never weighs more than its own percentage;
- `--children`: caller-ordered graphs give the caller chains of each entry's own samples
  (weighted by Self) plus, for leaves without an entry of their own, their callee trees;
  callee-ordered graphs are scaled by Self / Children.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from ..kernelnames import looks_kernel
from ..profile import Frame, StackRecord, command_of
from .common import Block, kind_of_lone, leaf_first, plural, split_kernel_user


@dataclass
class Chain:
    rail: int
    pct: Optional[float]                  # as printed; None for the entry's own chain
    parent: Optional["Chain"] = None
    names: List[str] = field(default_factory=list)
    children: List["Chain"] = field(default_factory=list)
    abs: float = 0.0
    fold: str = ""                        # TUI marker on its last name: `+` folded, `-` open

    def hidden_below(self) -> bool:
        """The TUI folded what lies below (`+`), or the screen ended before it (`-`, nothing under)."""
        return self.fold == "+" or (self.fold == "-" and not self.children)


@dataclass
class Entry:
    pct: float                            # Overhead, or Children when that column exists
    self_pct: Optional[float]
    comm: str
    dso: str
    mark: str                             # k . g u j H, or "" when no symbol column was printed
    sym: str                              # "" when unknown (a loose entry or a graph fragment)
    cpu: Optional[int] = None
    root: Chain = field(default_factory=lambda: Chain(rail=-1, pct=None))

    def has_graph(self) -> bool:
        return bool(self.root.names or self.root.children)


def is_relative(root: Chain, entry_pct: float) -> bool:
    """Fractal (relative) percentages: the branches under each node add up to about 100
    rather than to the node's own share."""
    absolute_misfit = relative_misfit = 0.0
    todo = [(root, entry_pct)]
    while todo:
        chain, share = todo.pop()
        below = sum(c.pct or 0 for c in chain.children)
        if chain.children and share > 0:
            absolute_misfit += abs(below - share) / max(share, 1.0)
            relative_misfit += abs(below - 100) / 100
        todo.extend((c, c.pct or 0) for c in chain.children)
    return relative_misfit < absolute_misfit


def _paths(entry: Entry, weight: float, seen_only: bool = False,
           hidden: Optional[List[Tuple[List[str], float]]] = None) -> List[Tuple[List[str], float]]:
    """(names in graph order, absolute weight) for every place a chain ends or thins out;
    `seen_only` leaves out what the TUI hid below a chain (its weight ends further down) and
    puts what a `+` fold hid in `hidden` when given."""
    relative = is_relative(entry.root, entry.pct)
    entry.root.abs = weight
    out: List[Tuple[List[str], float]] = []
    todo: List[Tuple[Chain, List[str]]] = [(entry.root, [])]
    while todo:
        chain, prefix = todo.pop()
        names = prefix + chain.names
        for child in chain.children:
            pct = child.pct or 0.0
            child.abs = chain.abs * pct / 100 if relative else weight * pct / entry.pct if entry.pct else 0
        below = sum(c.abs for c in chain.children)
        if below > chain.abs > 0:          # more below than the node holds: never count a sample twice
            for child in chain.children:
                child.abs *= chain.abs / below
            below = chain.abs
        todo.extend((child, names) for child in chain.children)
        # What the branches leave is still known to run through this chain (below the
        # --percent-limit, or the chain's own samples): keep it as a shorter stack.
        rest = chain.abs - below
        if rest > chain.abs * 0.001 + 1e-9:
            if not (seen_only and chain.hidden_below()):
                out.append((names, rest))
            elif hidden is not None and chain.fold == "+":   # folded, not cut by the screen's end
                hidden.append((names, rest))
    return out


def _same_symbol(entry_sym: str, frame: str) -> bool:
    """The entry's symbol, also when perf cut it at its column width (`_raw_spin_lock_irqsav`)."""
    return bool(entry_sym) and (frame == entry_sym or (len(entry_sym) >= 8 and frame.startswith(entry_sym)))


def _first_names(entry: Entry) -> List[str]:
    if entry.root.names:
        return entry.root.names[:1]
    return [c.names[0] for c in entry.root.children if c.names][:1]


def _chains(entries: Sequence[Entry]) -> List[List[str]]:
    return [names for e in entries for names, _ in _paths(e, e.pct or 100.0)]


def _orientation(entries: Sequence[Entry]) -> str:
    """`callee` (graph runs leaf -> root) or `caller` (root -> leaf)."""
    graphs = [e for e in entries if e.has_graph()]
    known = [e for e in graphs if e.sym]
    if known:
        leaf_first_count = sum(1 for e in known if any(_same_symbol(e.sym, n) for n in _first_names(e)))
        if leaf_first_count * 2 >= len(known):
            return "callee"
        if leaf_first_count == 0 and not any(e.sym == "" for e in graphs):
            return "caller"
    by_meaning = leaf_first(_chains(graphs))
    return "caller" if by_meaning is False else "callee"


def _to_self_chains(entry: Entry) -> None:
    """A caller-ordered --children graph holds X's callee tree (branches starting at X), then
    the caller chains of X's own samples (branches ending at X). Every sample is some entry's
    own sample exactly once, so keeping only the latter counts each sample once."""
    if entry.root.names[:1] == [entry.sym]:
        entry.root.names, entry.root.children = [], []
    elif entry.root.names:
        own = Chain(rail=-1, pct=None, names=entry.root.names, children=entry.root.children)
        entry.root.names, entry.root.children = [], [own]
        own.pct = entry.self_pct
    entry.root.children = [c for c in entry.root.children if c.names[:1] != [entry.sym]]
    entry.pct = entry.self_pct or 0.0


def _callee_tree(entry: Entry) -> Optional[Entry]:
    """The part of a caller-ordered --children graph that starts at the entry: its callees."""
    tree: List[Chain] = []
    if entry.root.names[:1] == [entry.sym]:
        tree.append(Chain(rail=-1, pct=entry.pct, names=entry.root.names, children=entry.root.children))
    tree += [c for c in entry.root.children if c.names[:1] == [entry.sym]]
    if not tree:
        return None
    return Entry(entry.pct, None, entry.comm, entry.dso, entry.mark, entry.sym,
                 root=Chain(rail=-1, pct=None, children=tree))


def _orphan_paths(entries: Sequence[Entry], graphless: bool = False,
                  folded: bool = False) -> List[Tuple[List[str], float, str]]:
    """Samples whose leaf has no entry in the paste are only seen in the callee trees of the
    entries above them: take them from the outermost such entry (each sample counted once).
    `graphless`: instead the paths ending at entries pasted without a graph of their own.
    `folded`: instead what the TUI folded (`+`) below a frame that has no entry of its own."""
    present = {e.sym for e in entries}
    wanted = {(e.sym, e.comm) for e in entries if e.sym and not e.has_graph()}
    best: dict = {}
    for entry in entries:
        tree = _callee_tree(entry)
        if tree is None:
            continue
        hidden: List[Tuple[List[str], float]] = []
        seen = _paths(tree, tree.pct, seen_only=True, hidden=hidden)
        for names, weight in hidden if folded else seen:
            if not names or ((names[-1], entry.comm) not in wanted if graphless else names[-1] in present):
                continue
            if graphless and len(names) < 2:
                continue
            leaf = (names[-1], entry.comm) if graphless else names[-1]
            held = best.get(leaf)
            if held is None or entry.pct > held[0]:
                best[leaf] = (entry.pct, id(entry), [(names, weight, entry.comm)])
            elif held[1] == id(entry):
                held[2].append((names, weight, entry.comm))
    return [path for _pct, _owner, paths in best.values() for path in paths]


def _folded_paths(entries: Sequence[Entry]) -> List[Tuple[List[str], float, str]]:
    """Rule BH1: samples under a folded (`+`) branch of a --children callee tree end at leaves
    further down, and those leaves' own entries (their Self) count them, when they were pasted.
    A reply that quotes only the top Children entries cuts those entries off: the folded branch
    is then the only record of where the samples went. Count it as a stack ending at the folded
    frame, less all the Self the pasted entries list (they may lie below it), so that no sample
    is counted twice."""
    paths = _orphan_paths(entries, folded=True)
    total = sum(w for _n, w, _c in paths)
    room = total - sum(e.self_pct or 0.0 for e in entries)
    if total <= 0 or room <= 0.001 * total:
        return []
    return [(names, weight * room / total, comm) for names, weight, comm in paths]


def _fill_fragment(entry: Entry) -> None:
    """A graph pasted without its entry weighs what its top branches add up to."""
    if not entry.mark and entry.pct == 0.0:
        entry.pct = min(100.0, sum(c.pct or 0 for c in entry.root.children)) or 100.0


def graph_block(entries: List[Entry], start: int, end: int, perftop: int = 0) -> Block:
    fragments = any(not e.mark and e.pct == 0.0 for e in entries)
    for entry in entries:
        _fill_fragment(entry)
    children_mode = any(e.self_pct is not None for e in entries)
    through = Block("", start, end)
    _through(through, entries)             # before the entries are cut to their Self chains
    listing = any(e.sym and not e.has_graph() for e in entries)
    # --children -g callee (and perf top -g of 3.x): X's graph holds the callers of every
    # sample through X; only X's own share (Self) ends at X.
    callers_of_children = children_mode and leaf_first(_chains([e for e in entries if e.has_graph()])) is True
    graphs = sum(1 for e in entries if e.has_graph())
    orphans: List[Tuple[List[str], float, str]] = []
    inherited: dict = {}
    folded_branches: List[Tuple[List[str], float, str]] = []
    if children_mode and not callers_of_children:
        orphans = _orphan_paths(entries)
        folded_branches = _folded_paths(entries)
        # An entry pasted without its graph (folded in the TUI, or -g none for it) still has its
        # caller chains in the callee trees of the entries above it: its Self share runs there.
        for names, weight, comm in _orphan_paths(entries, graphless=True):
            inherited.setdefault((names[-1], comm), []).append((names, weight, comm))
        for entry in entries:
            _to_self_chains(entry)
    orientation = "callee" if callers_of_children else "caller" if children_mode else _orientation(entries)
    used = [e for e in entries if (e.self_pct if callers_of_children else e.pct)]
    block = Block("perf-top-callgraph" if perftop else "perf-report-callgraph", start, end, through=through.through)
    # Overhead percentages are of all samples, and so are --children's Children and Self columns.
    # --children entries pasted with their lines but without graphs (folded by the TUI, or the
    # author's list) make a listing: the top of all samples, whose rest still happened. Only trees,
    # each chosen to show its shape, leave the whole unknown, as a fragment's share does.
    block.whole = None if fragments or (children_mode and not listing) else 100.0
    folded = borrowed = 0
    for entry in used:
        own = entry.self_pct if callers_of_children else entry.pct
        if not entry.has_graph():
            paths = inherited.pop((entry.sym, entry.comm), []) if own else []
            shown = sum(w for _n, w, _c in paths)
            if shown > 0:
                scale = min(1.0, own / shown)
                for names, weight, _comm in paths:
                    leaf_kind = "kernel" if entry.mark == "k" or looks_kernel(names[-1]) else "unknown"
                    block.stacks.append((split_kernel_user(names, leaf_kind), weight * scale, entry.comm, entry.cpu, None))
                own -= shown * scale
                borrowed += 1
                if own <= max(0.001 * shown, 1e-9):
                    continue
            folded += 1
            block.lone.add(len(block.stacks))
            block.stacks.append(((_lone_frame(entry),), own, entry.comm, entry.cpu, None))
            continue
        scale = own / entry.pct if entry.pct else 0.0
        for names, weight in _paths(entry, entry.pct):
            frames = _frames(entry, names, orientation)
            if frames:                     # an entry without a symbol has no frame for its own rest
                block.stacks.append((frames, weight * scale, entry.comm, entry.cpu, None))
    for names, weight, comm in orphans + folded_branches:
        leaf_kind = "kernel" if looks_kernel(names[-1]) else "unknown"
        block.stacks.append((split_kernel_user(names, leaf_kind), weight, comm, None, None))
    layout = ("--children, callee order (callers of each entry, weighted by Self)" if callers_of_children
              else "--children (self call chains)" if children_mode else f"{orientation} graph")
    tool = f"perf top -g (last of {plural(perftop, 'screen')})" if perftop else "perf report"
    block.notes.append(f"read {tool} {layout} ({plural(graphs, 'call graph')})")
    if orphans:
        block.notes.append(f"{plural(len(orphans), 'stack')} taken from --children callee trees: their leaves have "
                           "no entry of their own in the paste (cut, or below --percent-limit)")
    if folded_branches:
        block.notes.append(f"{plural(len(folded_branches), 'stack')} taken from folded ('+') branches of --children "
                           "callee trees: the entries of their leaves were not pasted (less the pasted Self)")
    if borrowed:
        block.notes.append(f"{borrowed} {'entry' if borrowed == 1 else 'entries'} without a graph of their own took "
                           "caller chains from the --children callee trees that end at them (weighted by Self)")
    if folded:
        entries_word = "entry" if folded == 1 else "entries"
        block.notes.append(f"{folded} perf report {entries_word} without a call graph (folded): counted by the symbol alone")
    return block


def _frames(entry: Entry, names: List[str], orientation: str) -> Tuple[Frame, ...]:
    rooted = names[::-1] if orientation == "callee" else list(names)
    if entry.sym and (not rooted or (orientation == "caller" and not _same_symbol(entry.sym, rooted[-1]))):
        rooted = rooted + [entry.sym]   # a thinned-out branch: the leaf is still the entry
    if entry.mark in ("k", ".", "u"):
        kind = "kernel" if entry.mark == "k" else "user"
    else:
        kind = "kernel" if rooted and looks_kernel(rooted[-1]) else "unknown"
    return split_kernel_user(rooted, kind)


def flat_block(entries: List[Entry], start: int, end: int, fmt: str, screens: int = 0) -> Block:
    block = Block(fmt, start, end, flat=True, whole=100.0)     # percentages of all samples
    _through(block, entries)
    for entry in entries:
        share = entry.self_pct if entry.self_pct is not None else entry.pct
        if share and entry.sym:
            block.stacks.append(((_lone_frame(entry),), share, entry.comm, entry.cpu, None))
    what = f"perf top (last of {plural(screens, 'screen')})" if fmt == "perf-top" else "flat perf report"
    block.notes.append(f"read {what}: {plural(len(entries), 'symbol')}")
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block


def _through(block: Block, entries: Sequence[Entry]) -> None:
    """--children: each entry's Children, the share of all samples that ran through its symbol
    (match.py reads a playbook's share from the Children of the frames only its path runs)."""
    listed = [entry for entry in entries if entry.self_pct is not None and entry.sym and entry.pct]
    for entry in listed:
        key = (entry.comm, entry.sym)
        block.through[key] = max(block.through.get(key, 0.0), entry.pct)
    floor = min((entry.pct for entry in listed), default=0.0)   # the listing's cut stays its last entry
    for entry in listed:
        _through_tree(block, entry, floor)


def _through_tree(block: Block, entry: Entry, floor: float = 0.0) -> None:
    """Rule BS2 of doc/accuracy.md: in a --children graph printed with absolute percentages, a
    node's percentage is the share of all samples that ran through its chain under this entry, so
    every frame of the chain ran at least that much (`- 88.12% balance_pgdat` under `kthread`:
    balance_pgdat's Children is at least 88.12 %, though its own entry was not pasted). Relative
    (fractal) graphs are left out, and so are nodes below `floor` (the listing's last entry: what
    is not listed counts as less than it, rule T5). An entry without a command column runs in the
    kernel thread whose function the path passes (`kthread` -> `kswapd`: profile.command_of), as
    its stacks do.

    >>> root = Chain(rail=-1, pct=None, names=["kthread"])
    >>> below = [Chain(rail=9, pct=88.1, names=["balance_pgdat"])]
    >>> root.children = [Chain(rail=6, pct=88.6, names=["kswapd"], children=below)]
    >>> block = Block("", 0, 0)
    >>> _through_tree(block, Entry(88.7, 0.0, "", "[kernel]", "k", "kthread", root=root))
    >>> sorted(block.through.items())
    [(('', 'kthread'), 88.7), (('kswapd', 'balance_pgdat'), 88.1), (('kswapd', 'kswapd'), 88.6)]
    """
    if not entry.has_graph() or is_relative(entry.root, entry.pct):
        return
    todo: List[Tuple[Chain, float, List[str]]] = [(entry.root, entry.pct, [])]
    while todo:
        chain, share, path = todo.pop()
        share = share if chain.pct is None else chain.pct
        for name in chain.names:
            path = path + [name]
            comm = entry.comm or command_of(StackRecord(tuple(Frame(n, "kernel") for n in path), share))
            key = (comm, name)
            if share and floor <= share <= entry.pct:
                block.through[key] = max(block.through.get(key, 0.0), share)
        todo.extend((child, share, path) for child in chain.children)


def _lone_frame(entry: Entry) -> Frame:
    kind = "kernel" if entry.mark == "k" else "user" if entry.mark in (".", "u") else "unknown"
    return Frame(entry.sym, kind_of_lone(entry.sym, kind))
