"""`perf report --stdio` (call graphs in every layout since 2.6.32, flat), `perf top` screens
(`--stdio`, `-g`, saved TUI screens), and call-graph fragments cut out of them.

Entry lines, with or without a Children column, a comm column (perf top has none), extra
sort columns before the symbol (`--sort cpu,...`, `-n`) or after it (`srcline`, `-`), comma
decimals, or a TUI fold marker (`-`/`+`):

    -  33.01%             java  [kernel.kallsyms]                     [k] _spin_lock_irq
        39.40%     0.00%  stress-ng-sock   [unknown]                  [k] 0x00007f85323fde70
         7.46%  [kernel]          [k] clear_page_erms
      31,98%  000  kpktgend_0     [kernel]                  [k] xas_find
       100.00%  (ffffffff810cf070)          (no symbol column: only read with a graph below)

Headers: `# Overhead ...` / `Overhead  CPU  Command ...` / `  Children      Self ...`
(a `CPU` column gives stacks their CPU), banners `# Samples: 2K of event`, `Samples: 621K of
event 'cycles', ... lost: 0/0 drop: 0/0`, old `# Events: 1K cycles`, `PerfTop: ... irqs/sec`.

Graph lines below an entry. Every layout is read by one rule: a branch opens at the column
of its marker (its "rail"), and a plain name belongs to the most recent branch whose rail
lies left of it:

    ---_raw_spin_unlock_irqrestore           (3.x+ root)      --- native_safe_halt (2.6.32)
       |--4.77%--tcp_write_xmit              (branch)         |--87.50%-- start_secondary
       |          __tcp_push_pending_frames  (continuation)    --0.07%-- [...]  (below the limit)
        --3.49%--handle_softirqs             (last branch)
       - 98.89% shrink_inactive_list         (TUI: open branch; `+` = folded, its subtree unseen)
            shrink_zone
          - __alloc_pages_nodemask           (TUI: same chain, has branches)
              1.60% __rcu_read_unlock        (TUI: a leaf branch, no marker)

Branch percentages are absolute (`-g graph`, the default since 3.x) or relative to the
parent (`-g fractal`, the 2.6.32 default): whichever reading the sums of the branches fit
better. Sums past their parent (perf top's decaying counts, a perf 3.17 bug printing 114 %)
are scaled down to it, so an entry never weighs more than its own percentage. Which way a
graph runs comes from the entry's symbol, else from what the frames are (`leaf_first`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

from ..kernelnames import looks_kernel
from ..profile import Frame
from .common import ELISION, Block, Miss, clean_name, kind_of_lone, leaf_first, plural, split_kernel_user

PCT = r"\d+(?:[.,]\d+)?"
# An entry is read in two steps (no regex backtracking over long whitespace runs): the
# percentages (and a number: CPU or -n samples), then the first ` [k] ` marker; what lies
# between is comm and dso, the symbol ends at a run of 2+ spaces (perf's column separator).
ENTRY_HEAD = re.compile(rf"^(?P<fold>[-+])?\s*(?P<p1>{PCT})%(?:\s+(?P<p2>{PCT})%)?(?:\s+(?P<num>\d+)(?=\s))?(?=\s)")
MARK = re.compile(r"(?:^|\s)\[(?P<mark>[k.gujH])\]\s")
COLUMN_GAP = re.compile(r"\s{2,}")
# An entry without a symbol column (`--sort comm`, a single-symbol report): only read with a graph.
LOOSE = re.compile(rf"^(?P<fold>[-+])?\s*(?P<p1>{PCT})%(?:\s+(?P<p2>{PCT})%)?\s{{2,}}(?P<rest>[^\s%][^%]*)$")
PERFTOP = re.compile(r"^\s*PerfTop:\s+\d+\s+irqs/sec")
BANNER = re.compile(r"^\s*(?:#\s*)?(?:Samples|Events):\s+(?P<n>\d+)(?P<unit>[KMG]?)\b")
COLUMNS = re.compile(r"^\s*(?:#\s*)?\[?(?:Overhead|Children)\]?\s")
HEADER = re.compile(r"^#|^\s*-{20,}\s*$")
BRANCH = re.compile(rf"--({PCT})%--\s?(\S.*)$")
ROOT = re.compile(r"^[\s|]*---\s?(\S.*)$")
TUI = re.compile(rf"^(\s*)([-+])\s+(?:({PCT})%\s+)?(\S.*)$")
TUI_LEAF = re.compile(rf"^(\s+)({PCT})%\s(\S.*)$")
RAILS_ONLY = re.compile(r"^[\s|]*$")
SYMBOL = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")   # printable ASCII: prose in other scripts never passes
NO_FRAME = ("(nil)",)
BELOW_LIMIT = ("[...]", "...")


def number(text: str) -> float:
    """`12.34` or `12,34` (a comma-decimal locale) -> 12.34."""
    return float(text.replace(",", "."))


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


def _entry_parts(line: str):
    """(head match, text between percentages and marker, marker, symbol) or None."""
    head = ENTRY_HEAD.match(line)
    if not head:
        return None
    rest = line[head.end():]
    mark = MARK.search(rest)
    if not mark or "%" in rest:
        return None
    symbol = COLUMN_GAP.split(rest[mark.end():].strip(), 1)[0]
    return (head, rest[:mark.start()], mark["mark"], symbol) if symbol else None


def is_entry(line: str) -> bool:
    return _entry_parts(line) is not None


def starts_report(line: str) -> bool:
    """The cheap trigger: an entry, a header or banner, or a call-graph branch."""
    return bool(is_entry(line) or PERFTOP.match(line) or BANNER.match(line) or COLUMNS.match(line)
                or line.startswith(("# To display the perf.data header", "# Total Lost Samples"))
                or ("%--" in line and BRANCH.search(line)) or (LOOSE.match(line) is not None))


def parse_entry(line: str, cpu_column: bool = False) -> Optional[Entry]:
    """An entry line; `cpu_column` when the header names a CPU sort key (else a number
    after the percentages is the -n Samples column)."""
    parts = _entry_parts(line)
    if parts is None:
        return None
    head, between, mark, symbol = parts
    p1, p2 = number(head["p1"]), head["p2"]
    mid = between.split()
    dso = mid[-1] if mid else ""
    cpu = int(head["num"]) if cpu_column and head["num"] else None
    comm = " ".join(mid[:-1])
    return Entry(p1, number(p2) if p2 is not None else None, comm, dso, mark, clean_name(symbol), cpu)


def _loose_entry(lines: Sequence[str], index: int) -> Optional[Entry]:
    """`100.00%  (ffffffff810cf070)` or `63.21%  futex_hammer`, when a stdio graph follows."""
    match = LOOSE.match(lines[index])
    if not match or not _graph_follows(lines, index):
        return None
    rest = match["rest"].strip()
    comm = rest if re.fullmatch(r"[^\s()\[\]]{1,32}", rest) else ""
    p2 = match["p2"]
    return Entry(number(match["p1"]), number(p2) if p2 is not None else None, comm, "", "", "")


def _graph_follows(lines: Sequence[str], index: int) -> bool:
    for line in lines[index + 1:index + 4]:
        if line.strip():
            return bool(re.match(r"^\s*(?:\||---|--" + PCT + "%--)", line))
    return False


def read_report(lines: Sequence[str], start: int) -> Union[Block, Miss, None]:
    """A perf report / perf top block starting at `start` (a header, an entry or a graph line)."""
    scan = _Scan(lines, start)
    scan.run()
    entries = scan.entries()
    if not entries:
        return Miss(max(scan.index, start + 1))
    if scan.perftop and not any(e.has_graph() for e in entries):
        block = _flat_block(entries, start, scan.index, "perf-top", scan.perftop)
    elif not any(e.has_graph() for e in entries):
        block = _flat_block(entries, start, scan.index, "perf-report-flat")
    else:
        block = _graph_block(entries, start, scan.index, scan.perftop)
    block.samples, block.header, block.unit = scan.samples, scan.header, "percent"
    return block


class _Scan:
    """One pass over a report: entries (grouped per perf top screen), headers, graph lines."""

    def __init__(self, lines: Sequence[str], start: int):
        self.lines, self.index = lines, start
        self.screens: List[List[Entry]] = [[]]
        self.perftop = 0
        self.samples: Optional[int] = None
        self.header = False
        self.cpu_column = False
        self.chains: List[Chain] = []

    def entries(self) -> List[Entry]:
        if self.perftop:
            # Each screen replaces the previous one: the last complete screen is the snapshot.
            full = [s for s in self.screens if s]
            return full[-1] if full else []
        return [e for s in self.screens for e in s]

    def run(self) -> None:
        while self.index < len(self.lines):
            if not self._line(self.lines[self.index]):
                break
            self.index += 1

    def _line(self, line: str) -> bool:
        seen_entries = any(self.screens)
        if PERFTOP.match(line) or (BANNER.match(line) and " drop: " in line):   # perf top --stdio / TUI
            self._banner(line)
            self.perftop += 1
            if self.screens[-1]:
                self.screens.append([])
            self.chains, self.header = [], self.header or not seen_entries
            return True
        if (BANNER.match(line) or COLUMNS.match(line)) and seen_entries:
            return False                   # the next report's own header: another profile
        if BANNER.match(line):
            self._banner(line)
            self.header = True
            return True
        if COLUMNS.match(line):
            self.cpu_column = bool(re.search(r"\sCPU\s", line + " "))
            self.header = True
            return True
        if HEADER.match(line):
            return True
        if not line.strip():
            self.chains = []
            return True
        if ELISION.match(line):
            return True                    # the author cut frames or entries here: keep reading
        return self._content(line)

    def _banner(self, line: str) -> None:
        banner = BANNER.match(line)
        if banner:
            self.samples = int(banner["n"]) * {"": 1, "K": 1000, "M": 10 ** 6, "G": 10 ** 9}[banner["unit"]]

    def _content(self, line: str) -> bool:
        entry = parse_entry(line, self.cpu_column)
        if entry is None and self.chains and _graph_line(line, self.chains):
            return True
        entry = entry or _loose_entry(self.lines, self.index)
        if entry is None and not self.chains and _fragment_starts(self.lines, self.index):
            entry = Entry(0.0, None, "", "", "", "")
            self.screens[-1].append(entry)
            self.chains = [entry.root]
            return _graph_line(line, self.chains)
        if entry is None:
            return False
        self.screens[-1].append(entry)
        self.chains = [entry.root]
        return True


def _fragment_starts(lines: Sequence[str], index: int) -> bool:
    """A call graph pasted without its entry line: a branch, or rails right above one."""
    line = lines[index]
    if "%--" in line and BRANCH.search(line) and RAILS_ONLY.match(line[:BRANCH.search(line).start()]):
        return True
    return bool(RAILS_ONLY.match(line) and "|" in line and index + 1 < len(lines)
                and "%--" in lines[index + 1] and BRANCH.search(lines[index + 1]))


def _graph_line(line: str, stack: List[Chain]) -> bool:
    """Fold one graph line into the open chains; False when it is not a graph line."""
    if RAILS_ONLY.match(line):
        return True
    branch = BRANCH.search(line)
    if branch:
        name = branch[2].strip()
        if name in BELOW_LIMIT:
            return True                    # below --percent-limit: its weight stays on the parent
        return _open_branch(stack, branch.start() - 1, number(branch[1]), name)
    root = ROOT.match(line)
    if root:
        del stack[1:]
        return _append(stack, root[1].strip())
    tui = TUI.match(line)
    if tui and len(tui[1]) > 0:
        rail, pct, name = len(tui[1]), tui[3], tui[4].strip()
        if pct is not None:
            return _open_branch(stack, rail, number(pct), name, fold=tui[2])
        _pop_to(stack, rail)
        return _append(stack, name, fold=tui[2])
    leaf = TUI_LEAF.match(line)
    if leaf:
        return _open_branch(stack, len(leaf[1]) - 2, number(leaf[2]), leaf[3].strip())
    content = line.lstrip(" |")
    column = len(line) - len(content)
    if column == 0 or not SYMBOL.match(content):
        return False
    _pop_to(stack, column)
    return _append(stack, content.strip())


def _open_branch(stack: List[Chain], rail: int, pct: float, name: str, fold: str = "") -> bool:
    if not SYMBOL.match(name):
        return False
    _pop_to(stack, rail)
    chain = Chain(rail=rail, pct=pct, parent=stack[-1])
    stack[-1].children.append(chain)
    stack.append(chain)
    return _append(stack, name, fold)


def _pop_to(stack: List[Chain], column: int) -> None:
    while len(stack) > 1 and stack[-1].rail >= column:
        stack.pop()


def _append(stack: List[Chain], name: str, fold: str = "") -> bool:
    if not SYMBOL.match(name) or not re.search(r"\w", name):
        return False
    if name not in NO_FRAME:
        stack[-1].names.append(clean_name(name))
        stack[-1].fold = fold
    return True


# --- weights -----------------------------------------------------------------------

def _is_relative(root: Chain, entry_pct: float) -> bool:
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


def _paths(entry: Entry, weight: float, seen_only: bool = False) -> List[Tuple[List[str], float]]:
    """(names in graph order, absolute weight) for every place a chain ends or thins out;
    `seen_only` leaves out what the TUI hid below a chain (its weight ends further down)."""
    relative = _is_relative(entry.root, entry.pct)
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
        if rest > chain.abs * 0.001 + 1e-9 and names and not (seen_only and chain.hidden_below()):
            out.append((names, rest))
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


def _orphan_paths(entries: Sequence[Entry]) -> List[Tuple[List[str], float, str]]:
    """Samples whose leaf has no entry in the paste are only seen in the callee trees of the
    entries above them: take them from the outermost such entry (each sample counted once)."""
    present = {e.sym for e in entries}
    best: dict = {}
    for entry in entries:
        tree = _callee_tree(entry)
        if tree is None:
            continue
        for names, weight in _paths(tree, tree.pct, seen_only=True):
            leaf = names[-1]
            if leaf in present:
                continue
            held = best.get(leaf)
            if held is None or entry.pct > held[0]:
                best[leaf] = (entry.pct, id(entry), [(names, weight, entry.comm)])
            elif held[1] == id(entry):
                held[2].append((names, weight, entry.comm))
    return [path for _pct, _owner, paths in best.values() for path in paths]


def _fill_fragment(entry: Entry) -> None:
    """A graph pasted without its entry weighs what its top branches add up to."""
    if not entry.mark and entry.pct == 0.0:
        entry.pct = min(100.0, sum(c.pct or 0 for c in entry.root.children)) or 100.0


def _graph_block(entries: List[Entry], start: int, end: int, perftop: int = 0) -> Block:
    for entry in entries:
        _fill_fragment(entry)
    children_mode = any(e.self_pct is not None for e in entries)
    # --children -g callee (and perf top -g of 3.x): X's graph holds the callers of every
    # sample through X; only X's own share (Self) ends at X.
    callers_of_children = children_mode and leaf_first(_chains([e for e in entries if e.has_graph()])) is True
    graphs = sum(1 for e in entries if e.has_graph())
    orphans: List[Tuple[List[str], float, str]] = []
    if children_mode and not callers_of_children:
        orphans = _orphan_paths(entries)
        for entry in entries:
            _to_self_chains(entry)
    orientation = "callee" if callers_of_children else "caller" if children_mode else _orientation(entries)
    used = [e for e in entries if (e.self_pct if callers_of_children else e.pct)]
    block = Block("perf-top-callgraph" if perftop else "perf-report-callgraph", start, end)
    folded = 0
    for entry in used:
        own = entry.self_pct if callers_of_children else entry.pct
        if not entry.has_graph():
            folded += 1
            block.stacks.append(((_lone_frame(entry),), own, entry.comm, entry.cpu, None))
            continue
        scale = own / entry.pct if entry.pct else 0.0
        for names, weight in _paths(entry, entry.pct):
            block.stacks.append((_frames(entry, names, orientation), weight * scale, entry.comm, entry.cpu, None))
    for names, weight, comm in orphans:
        leaf_kind = "kernel" if looks_kernel(names[-1]) else "unknown"
        block.stacks.append((split_kernel_user(names, leaf_kind), weight, comm, None, None))
    layout = ("--children, callee order (callers of each entry, weighted by Self)" if callers_of_children
              else "--children (self call chains)" if children_mode else f"{orientation} graph")
    tool = f"perf top -g (last of {plural(perftop, 'screen')})" if perftop else "perf report"
    block.notes.append(f"read {tool} {layout} ({plural(graphs, 'call graph')})")
    if orphans:
        block.notes.append(f"{plural(len(orphans), 'stack')} taken from --children callee trees: their leaves have "
                           "no entry of their own in the paste (cut, or below --percent-limit)")
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


def _flat_block(entries: List[Entry], start: int, end: int, fmt: str, screens: int = 0) -> Block:
    block = Block(fmt, start, end, flat=True)
    for entry in entries:
        share = entry.self_pct if entry.self_pct is not None else entry.pct
        if share and entry.sym:
            block.stacks.append(((_lone_frame(entry),), share, entry.comm, entry.cpu, None))
    what = f"perf top (last of {plural(screens, 'screen')})" if fmt == "perf-top" else "flat perf report"
    block.notes.append(f"read {what}: {plural(len(entries), 'symbol')}")
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block


def _lone_frame(entry: Entry) -> Frame:
    kind = "kernel" if entry.mark == "k" else "user" if entry.mark in (".", "u") else "unknown"
    return Frame(entry.sym, kind_of_lone(entry.sym, kind))
