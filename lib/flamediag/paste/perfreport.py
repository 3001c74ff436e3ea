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

The perf top of 2.6.31-2.6.35 (before the `--stdio` rewrite) prints a sample count before the
percentage, and the symbol's DSO after it (2.6.31: the RIP before a kernel-only symbol):

                 samples  pcnt function                      DSO
                 _______ _____ _____________________________ __________________
                61421.00 42.3% _spin_lock_irqsave            [kernel.kallsyms]
                 3950.00  2.7% SpinPause                     /usr/java/jdk1.6.0_31/jre/lib/amd64/server/libjvm.so
                 1286.00 - 11.1% - ffffffff8100c6f6 : native_safe_halt

and without `-v` the 2.6.31 tool prints no RIP, only the colon (`samples    pcnt   kernel function`):

                41201.00 - 27.1% : dst_destroy

Its forerunner kerneltop (the perfcounters announcements of 2008-2009, 2.6.30-2.6.31-rc trees)
has the same rows under `events    pcnt         RIP          kernel function` (rule AL2;
realworld-probe-al case 1687). Its first version, in the first announcements (December 2008 -
January 2009), had a `KernelTop:` banner and no `pcnt` column: each row is an event count, the
RIP and the kernel function (rule BA1; realworld-probe-ba case 1983), read as sample counts:

              21472 - ffffffff8034c6e0 : clear_user

Headers: `# Overhead ...` / `Overhead  CPU  Command ...` / `  Children      Self ...`
(a `CPU` column gives stacks their CPU; without a header, a zero-padded number such as `002`
is the CPU key and a lone word before `[k]` that is no DSO is the command), banners `# Samples: 2K of event`, `Samples: 621K of
event 'cycles', ... lost: 0/0 drop: 0/0`, old `# Events: 1K cycles`, `PerfTop: ... irqs/sec`.

Graph lines below an entry. Every layout is read by one rule: a branch opens at the column
of its marker (its "rail"), and a plain name belongs to the most recent branch whose rail
lies left of it:

    ---_raw_spin_unlock_irqrestore           (3.x+ root)      --- native_safe_halt (2.6.32)
       |--4.77%--tcp_write_xmit              (branch)         |--87.50%-- start_secondary
       |          __tcp_push_pending_frames  (continuation)    --0.07%-- [...]  (below the limit)
        --3.49%--handle_softirqs             (last branch)
       - 98.89% shrink_inactive_list         (TUI: open branch; `+` = folded, its subtree unseen)
    22.23% _raw_spin_unlock_irqrestore;try_to_wake_up;wake_up_q    (`-g folded`: a whole chain; also
                                                                    pasted alone, without its entry)
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
from typing import List, Optional, Sequence, Union

from .callgraph import Chain, Entry, flat_block, graph_block
from .common import ELISION, Block, Miss, clean_name, drop_remark

PCT = r"\d+(?:[.,]\d+)?"
# An entry is read in two steps (no regex backtracking over long whitespace runs): the
# percentages (and a number: CPU or -n samples), then the first ` [k] ` marker; what lies
# between is comm and dso, the symbol ends at a run of 2+ spaces (perf's column separator).
ENTRY_HEAD = re.compile(rf"^(?P<fold>[-+])?\s*(?P<p1>{PCT})%(?:\s+(?P<p2>{PCT})%)?(?:\s+(?P<num>\d+)(?=\s))?(?=\s)")
MARK = re.compile(r"(?:^|\s)\[(?P<mark>[k.gujH])\]\s")
COLUMN_GAP = re.compile(r"\s{2,}")
ZERO_PADDED = re.compile(r"^0\d{2,}$")
DSO_LIKE = re.compile(r"^(?:\[.*\]|/.*|.*\.(?:so(?:\.[\d.]+)?|ko(?:\.[gx]z|\.zst)?|debug)|vmlinux.*)$")
# An entry without a symbol column (`--sort comm`, a single-symbol report): only read with a graph.
LOOSE = re.compile(rf"^(?P<fold>[-+])?\s*(?P<p1>{PCT})%(?:\s+(?P<p2>{PCT})%)?\s{{2,}}(?P<rest>[^\s%][^%]*)$")
PERFTOP = re.compile(r"^\s*(?:PerfTop|KernelTop):\s+\d+\s+irqs/sec")   # KernelTop: its forerunner (rule BA1)
# The end of a PerfTop banner a mail client wrapped onto the next line (rule X3): its target in
# parentheses (`(all, 24 CPUs)`, `(target_pid: 47)`, `(all, CPU: 0)`), maybe after the event or `exact:`.
PERFTOP_TAIL = re.compile(r"^\s*(?:exact:\s*[\d.]+%\s*)?(?:\[[^\[\]]*\],?\s*)?\((?:all|target_\w+|cpu|CPU)\b[^()]*\)\s*$")
BANNER = re.compile(r"^\s*(?:#\s*)?(?:Samples|Events):\s+(?P<n>\d+)(?P<unit>[KMG]?)\b"
                    r"(?:\s+of\s+event\s+'(?P<event>[^']+)'|\s+(?P<old_event>[\w:-]+)\s*$)?")
# `perf report --header` (6.x): `# event : name = cpu-clock:ppp, , id = { 26322 }, ...` (also `dummy:HG`).
HEADER_EVENT = re.compile(r"^#\s*event\s*:\s*name\s*=\s*(?P<event>[\w:.-]+)")
TOP_EVENT = re.compile(r"\[(?:\d+Hz\s+)?(?P<event>[a-z][\w:-]*)\]")       # PerfTop: ... [1000Hz cycles]
COLUMNS = re.compile(r"^\s*(?:#\s*)?\[?(?:Overhead|Children)\]?\s")
HEADER = re.compile(r"^#|^\s*-{20,}\s*$")
# ...and the first kerneltop's, without the pcnt column (`events   RIP   kernel function`, rule BA1)
OLD_TOP_COLUMNS = re.compile(r"^\s*(?:samples|events)\s+(?:pcnt\s+(?:RIP\s+)?|(?P<counts>)RIP\s+)(?:kernel\s+)?"
                             r"function(?P<dso>\s+DSO)?\s*$")
OLD_TOP_RULE = re.compile(r"^\s*_+(?:\s+_+)+\s*$")
OLD_TOP_ROW = re.compile(rf"^\s*\d+(?:\.\d+)?\s+(?:-\s+)?(?P<pct>{PCT})%\s+(?:-\s+)?(?:[0-9a-f]{{8,16}}\s+:\s+|:\s+)?"
                         r"(?P<rest>\S.*?)\s*$")
OLD_TOP_COUNT_ROW = re.compile(r"^\s*(?P<count>\d+(?:\.\d+)?)\s+-\s+[0-9a-f]{8,16}\s+:\s+(?P<rest>\S.*?)\s*$")
USER_BRACKETS = ("[vdso]", "[vsyscall]", "[heap]", "[stack]", "[unknown]")
BRANCH = re.compile(rf"--({PCT})%--\s?(\S.*)$")
ROOT = re.compile(r"^[\s|]*---\s?(\S.*)$")
TUI = re.compile(rf"^(\s*)([-+])\s+(?:({PCT})%\s+)?(\S.*)$")
TUI_LEAF = re.compile(rf"^(\s+)({PCT})%\s(\S.*)$")
FOLDED_CHAIN = re.compile(rf"^({PCT})%\s+([^\s;]+(?:;[^\s;]+)*)$")   # `-g folded`: `22.23% a;b;c` under the entry
# ...also indented under its entry (a leading space, a code block, a quote's padding): then a chain of two
# frames or more, so that `   1.60% name` stays a TUI leaf branch (rule L4)
FOLDED_CHAIN_INDENTED = re.compile(rf"^\s+({PCT})%\s+([^\s;]+(?:;[^\s;]+)+)$")
RAILS_ONLY = re.compile(r"^[\s|]*$")
SYMBOL = re.compile(r"^[\x21-\x7e][\x20-\x7e]*$")   # printable ASCII: prose in other scripts never passes
NO_FRAME = ("(nil)",)
BELOW_LIMIT = ("[...]", "...")


# a perf report / perf top command typed at a prompt (`# perf report -C 0 --sort symbol`, `$ sudo perf top`):
# below a listing's entries it starts the next run, even when that run's `#` header lines were trimmed
RUN_COMMAND = re.compile(r"^\s*[#$%]\s*(?:sudo\s+)?\S*perf\s+(?:report|top)\b")


def number(text: str) -> float:
    """`12.34` or `12,34` (a comma-decimal locale) -> 12.34."""
    return float(text.replace(",", "."))


def _entry_parts(line: str):
    """(head match, text between percentages and marker, marker, symbol) or None."""
    head = ENTRY_HEAD.match(line)
    if not head:
        return None
    # the symbol ends at perf's column gap, or where the author's remark starts (rule W1)
    rest = drop_remark(line[head.end():])
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
                or OLD_TOP_COLUMNS.match(line)
                or line.startswith(("# To display the perf.data header", "# Total Lost Samples", "# ========",
                                    "# captured on"))
                or ("%--" in line and BRANCH.search(line)) or (LOOSE.match(line) is not None)
                or (";" in line and FOLDED_CHAIN.match(line) is not None))


def parse_entry(line: str, cpu_column: Optional[bool] = False, dso_column: Optional[bool] = True) -> Optional[Entry]:
    """An entry line; `cpu_column` when the header names a CPU sort key (else a number
    after the percentages is the -n Samples column), None when no header was pasted: perf
    prints the CPU key zero-padded to its column's width (`002`), a sample count never is; not
    `dso_column` when the header names a Command but no Shared Object (`--sort comm,sym`): the
    words before the marker are the command; None when no header was pasted: a lone word is
    the DSO only when it reads like one (`[kernel.kallsyms]`, a path, `libc.so.6`, `ext4.ko`).

    >>> parse_entry("    12.44%  ksoftirqd/5      [k] process_backlog", dso_column=False).comm
    'ksoftirqd/5'
    >>> parse_entry("    11.24%  002  [k] ixgbe_clean_rx_irq", cpu_column=None).cpu
    2
    >>> parse_entry("    12.44%  ksoftirqd/5      [k] process_backlog", dso_column=None).comm
    'ksoftirqd/5'
    """
    parts = _entry_parts(line)
    if parts is None:
        return None
    head, between, mark, symbol = parts
    p1, p2 = number(head["p1"]), head["p2"]
    mid = between.split()
    num = head["num"]
    cpu = int(num) if num and (cpu_column or (cpu_column is None and ZERO_PADDED.match(num))) else None
    if not dso_column and (dso_column is not None or (len(mid) == 1 and not DSO_LIKE.match(mid[0]))):
        return Entry(p1, number(p2) if p2 is not None else None, " ".join(mid), "", mark, clean_name(symbol), cpu)
    dso = mid[-1] if mid else ""
    comm = " ".join(mid[:-1])
    return Entry(p1, number(p2) if p2 is not None else None, comm, dso, mark, clean_name(symbol), cpu)


def parse_old_top_row(line: str, dso_column: bool) -> Optional[Entry]:
    """A row of the 2.6.3x perf top (see the module docstring): the symbol may hold spaces (C++),
    the DSO is the last column when the header has one (else every symbol is the kernel's)."""
    row = OLD_TOP_ROW.match(line) or OLD_TOP_COUNT_ROW.match(line)
    if not row:
        return None
    pct = row["pct"] if "pct" in row.re.groupindex else row["count"]
    symbol, dso = row["rest"], "[kernel]"
    if dso_column:
        parts = row["rest"].rsplit(None, 1)
        if len(parts) != 2:
            return None
        symbol, dso = parts
    kernel = dso.startswith("[") and dso not in USER_BRACKETS
    return Entry(number(pct), None, "", dso, "k" if kernel else ".", clean_name(symbol))


def _loose_entry(lines: Sequence[str], index: int) -> Optional[Entry]:
    """`100.00%  (ffffffff810cf070)` or `63.21%  futex_hammer`, when a stdio graph follows."""
    match = LOOSE.match(lines[index])
    if not match or not _graph_follows(lines, index):
        return None
    rest = match["rest"].strip()
    comm = rest if re.fullmatch(r"[^\s()\[\]]{1,32}", rest) else ""
    p2 = match["p2"]
    return Entry(number(match["p1"]), number(p2) if p2 is not None else None, comm, "", "", "")


def _key(entry: Entry):
    return (entry.pct, entry.self_pct, entry.comm, entry.dso, entry.mark, entry.sym, entry.cpu)


def _without_repeats(entries: List[Entry]):
    """Rule CB2: a listing whose top entry is printed again further down with its call graph (the
    flat rows, then `perf report -g` of the hottest in the same message) shows that entry twice, not
    twice its samples. An entry listed without a graph that a later entry repeats with every column
    equal (share to the hundredth, command, object, symbol) and a graph below it is dropped; two runs
    never print an entry at the same share in every column. The entries kept, and how many went.

    >>> flat = Entry(64.31, None, "netperf", "[kernel.kallsyms]", "k", "_raw_spin_lock_irqsave")
    >>> graph = Entry(64.31, None, "netperf", "[kernel.kallsyms]", "k", "_raw_spin_lock_irqsave")
    >>> graph.root.names.append("_raw_spin_lock_irqsave")
    >>> other = Entry(3.87, None, "netperf", "[kernel.kallsyms]", "k", "iommu_range_alloc")
    >>> kept, dropped = _without_repeats([flat, other, graph])
    >>> [e.sym for e in kept], dropped
    (['iommu_range_alloc', '_raw_spin_lock_irqsave'], 1)
    >>> _without_repeats([flat, other, Entry(60.02, None, "netperf", "[kernel.kallsyms]", "k", "_raw_spin_lock_irqsave")])[1]
    0
    """
    graphed = {}
    for index, entry in enumerate(entries):
        if entry.has_graph() and entry.sym:
            graphed.setdefault(_key(entry), index)
    kept = [entry for index, entry in enumerate(entries)
            if entry.has_graph() or not entry.sym or graphed.get(_key(entry), -1) <= index]
    return kept, len(entries) - len(kept)


def _graph_follows(lines: Sequence[str], index: int) -> bool:
    for line in lines[index + 1:index + 4]:
        if line.strip():
            return bool(re.match(r"^\s*(?:\||---|--" + PCT + "%--)", line))
    return False


def read_report(lines: Sequence[str], start: int) -> Union[Block, Miss, None]:
    """A perf report / perf top block starting at `start` (a header, an entry or a graph line)."""
    start = _head_above(lines, start)
    scan = _Scan(lines, start)
    scan.run()
    entries = scan.entries()
    if not entries:
        return Miss(max(scan.index, start + 1))
    entries, repeated = _without_repeats(entries)
    if (scan.perftop or scan.old_top is not None) and not any(e.has_graph() for e in entries):
        block = flat_block(entries, start, scan.index, "perf-top", max(1, scan.perftop))
    elif not any(e.has_graph() for e in entries):
        block = flat_block(entries, start, scan.index, "perf-report-flat")
    else:
        block = graph_block(entries, start, scan.index, scan.perftop)
    block.samples, block.header, block.unit, block.event = scan.samples, scan.header, "percent", scan.event
    if repeated:
        block.notes.append(f"{repeated} {'entry' if repeated == 1 else 'entries'} of the flat listing shown again below "
                           "with a call graph (same share, same columns): counted once, with the graph (rule CB2)")
    if scan.counts:
        # the first kerneltop prints event counts, no percentages (rule BA1): the weights are samples
        # of the listed rows, whose total the display does not give
        block.unit, block.whole = "samples", None
    return block


class _Scan:
    """One pass over a report: entries (grouped per perf top screen), headers, graph lines."""

    def __init__(self, lines: Sequence[str], start: int):
        self.lines, self.index = lines, start
        self.screens: List[List[Entry]] = [[]]
        self.perftop = 0
        self.samples: Optional[int] = None
        self.event: Optional[str] = None          # the sampled event, when a banner names it
        self.header = False
        self.cpu_column: Optional[bool] = None   # None: no column header pasted
        self.dso_column: Optional[bool] = None   # False: the header names a Command but no Shared Object
        self.old_top: Optional[bool] = None      # 2.6.3x perf top columns seen: whether they name the DSO
        self.counts = False                      # the first kerneltop's columns: event counts, no pcnt (rule BA1)
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
        if self.perftop and self.index and PERFTOP.match(self.lines[self.index - 1]) and PERFTOP_TAIL.match(line):
            return True                    # the banner's target, wrapped by a mail client (rule X3)
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
            self.dso_column = "Shared Object" in line or not re.search(r"\sCommand\s", line + " ")
            self.header = True
            return True
        old_columns = OLD_TOP_COLUMNS.match(line)
        if old_columns:
            self.old_top, self.header = bool(old_columns["dso"]), True
            self.counts = old_columns["counts"] is not None
            return True
        header_event = HEADER_EVENT.match(line)
        if header_event and not header_event["event"].startswith("dummy") and not seen_entries:
            self.event = self.event or header_event["event"]
        if seen_entries and RUN_COMMAND.match(line):
            return False                   # the author ran perf report / perf top again: another run (rule AT2)
        if HEADER.match(line) or (self.old_top is not None and OLD_TOP_RULE.match(line)):
            return True
        if not line.strip():
            self.chains = []
            return True
        if ELISION.match(line):
            return True                    # the author cut frames or entries here: keep reading
        return self._content(line)

    def _banner(self, line: str) -> None:
        banner = BANNER.match(line)
        named = (banner and (banner["event"] or banner["old_event"])) or \
            (PERFTOP.match(line) and TOP_EVENT.search(line) and TOP_EVENT.search(line)["event"])
        self.event = named or self.event
        if banner:
            self.samples = int(banner["n"]) * {"": 1, "K": 1000, "M": 10 ** 6, "G": 10 ** 9}[banner["unit"]]

    def _content(self, line: str) -> bool:
        if self.old_top is not None:
            entry = parse_old_top_row(line, self.old_top)
            if entry is not None:
                self.screens[-1].append(entry)
            return entry is not None
        entry = parse_entry(line, self.cpu_column, self.dso_column)
        if entry is None and self.chains and _graph_line(line, self.chains):
            return True
        entry = entry or _loose_entry(self.lines, self.index)
        head = 0 if entry is not None or self.chains else _fragment_head(self.lines, self.index)
        if head:
            # a callee fragment whose head was pasted as bare names, without perf's `---` (rule Q2)
            entry = Entry(0.0, None, "", "", "", "")
            self.screens[-1].append(entry)
            self.chains = [entry.root]
            for name in self.lines[self.index:self.index + head]:
                _append(self.chains, name.strip())
            self.index += head - 1
            return True
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


HEAD_LINES = 8                             # a fragment's head: at most this many bare names


def _fragment_head(lines: Sequence[str], index: int) -> int:
    """How many lines from `index` are the head of a call-graph fragment pasted without perf's
    `---` connector (rule Q2): one bare symbol a line, all at one indentation, right above the
    first `|--NN%--` branch, whose rail lies at or right of them (the leaf, then the callers
    every branch shares: `native_queued_spin_lock_slowpath` / `_raw_spin_lock_bh` /
    `|--52.1%-- xs_tcp_data_recv`). 0 when the lines are no such head.

    >>> _fragment_head(["  native_queued_spin_lock_slowpath", "  _raw_spin_lock_bh",
    ...                 "  |--52.1%-- xs_tcp_data_recv", "  |          tcp_read_sock"], 0)
    2
    >>> _fragment_head(["So the lock is hot:", "  |--52.1%-- xs_tcp_data_recv"], 0)
    0
    """
    indent = None
    for k in range(index, min(len(lines), index + HEAD_LINES + 1)):
        line = lines[k]
        content = line.lstrip(" ")
        branch = BRANCH.search(line)
        if branch:
            rails = line[:branch.start()]
            rail = rails.index("|") if "|" in rails else branch.start()
            return k - index if (k > index and RAILS_ONLY.match(rails) and indent is not None
                                 and rail >= indent) else 0
        column = len(line) - len(content)
        if (not content or " " in content.strip() or "|" in content or not SYMBOL.match(content.strip())
                or not re.search(r"[_.]|\w\(", content) or (indent is not None and column != indent)):
            return 0
        indent = column
    return 0


def _head_above(lines: Sequence[str], start: int) -> int:
    """Where a fragment starting with a branch at `start` really starts: at its bare-name head
    right above, if there is one (rule Q2)."""
    if not ("%--" in lines[start] and BRANCH.search(lines[start])):
        return start
    top = start
    while top > 0 and top > start - HEAD_LINES and _fragment_head(lines, top - 1) == start - top + 1:
        top -= 1
    return top


def _fragment_starts(lines: Sequence[str], index: int) -> bool:
    """A call graph pasted without its entry line: a branch, rails right above one, or the
    `-g folded` chains alone (`22.23% a;b;c`, e.g. grepped out of the report)."""
    line = lines[index]
    if ";" in line and (FOLDED_CHAIN.match(line) or FOLDED_CHAIN_INDENTED.match(line)):
        return True
    if "%--" in line and BRANCH.search(line) and RAILS_ONLY.match(line[:BRANCH.search(line).start()]):
        return True
    return bool(RAILS_ONLY.match(line) and "|" in line and index + 1 < len(lines)
                and "%--" in lines[index + 1] and BRANCH.search(lines[index + 1]))


def _graph_line(line: str, stack: List[Chain]) -> bool:
    """Fold one graph line into the open chains; False when it is not a graph line."""
    if RAILS_ONLY.match(line):
        return True
    bare = drop_remark(line)           # an author's remark after the frame is not part of it (rule W1)
    if bare != line:
        # ...when a frame stays: one name (prose mixing words and a remark is no frame line)
        content = re.sub(r"^[\s|]*(?:---|--" + PCT + r"%--|[-+]\s+(?:" + PCT + r"%\s+)?|" + PCT + r"%\s)?",
                         "", bare)
        if " " in content.strip():
            return False
        line = bare
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
    folded = FOLDED_CHAIN.match(line) or (";" in line and FOLDED_CHAIN_INDENTED.match(line))
    if folded:
        del stack[1:]
        chain = Chain(rail=0, pct=number(folded[1]), parent=stack[0])
        stack[0].children.append(chain)
        stack.append(chain)
        return all(_append(stack, name) for name in folded[2].split(";"))
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
