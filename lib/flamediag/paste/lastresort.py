"""The last-resort reader: when no layout matched, the kernel symbols found anywhere in the text.

    >>> block = read_symbols(["12.5% in [k] _raw_spin_lock", "  shrink_node+0x1a/0x30", "just prose"], set())
    >>> sorted((s[0][0].name, s[1]) for s in block.stacks)
    [('_raw_spin_lock', 12.5), ('shrink_node', 1.0)]

A symbol is: perf's `[k] sym`, a kernel frame `sym+0x1a/0x30`, crash's `#6 [addr] sym at addr`,
an indented `snake_case` name alone on its line (numbers around it allowed: a rank, a
share, a count), or the last column of a table row that has a count or percentage column
(profilers print the symbol last: OProfile, readprofile, a dashboard's export):

    2345678  41.2345  vmlinux                  vmlinux                  .text.lock.spinlock

Its weight is the percentage on its line, else the count when the line is just `sym count` /
`count sym` or a table row's first whole number (its samples), else 1. Each symbol is a
one-frame stack: the layout (and so the ancestry) is unknown, Data quality says so.

    >>> [(s[0][0].name, s[1]) for s in read_symbols(["2345678  41.2345  vmlinux  .text.lock.spinlock"], set()).stacks]
    [('.text.lock.spinlock', 2345678.0)]

A symbol may also come first, as people type a summary or a tool they knew exports it (rule R1):
the symbol then a share and nothing else (`smp_call_function_many_cond   38.9%`, at any
indentation, `~30%` for "about 30 %"), or the first column of a table row whose other columns
are numbers (with a unit: `412.580s`, `12ms`), shares and a module (`vmlinux`, `[kernel]`): an
Intel VTune Hotspots grid, a retyped screenshot. Such a row needs a share: without one, a
`name  number` line is a counter (/proc/vmstat), not a profile row.

    >>> rows = ["smp_call_function_many_cond   38.9%", "  shrink_page_list  ~30%",
    ...         "audit_filter_rules            vmlinux      412.580s       23.1%",
    ...         "pgscan_kswapd 12345", "nr_free_pages   4096"]
    >>> [(s[0][0].name, s[1]) for s in read_symbols(rows, set()).stacks]
    [('smp_call_function_many_cond', 38.9), ('shrink_page_list', 30.0), ('audit_filter_rules', 23.1)]

A call chain written with arrows, root first, as people describe a flame graph's towers or a
stack in prose (`page_fault -> do_page_fault -> ... -> rwsem_down_read_failed  (~45%)`), is one
stack, wrapped lines that start or end with an arrow joined back to it (rule R4). Its weight is the
share on it, else 1; frames above the kernel entry (`entry_SYSCALL_64`, `do_syscall_64`,
`page_fault`, `el0_svc`...) are user space, and of `a / b` alternatives the first is taken.

These chains are read first (`read_chains`, layout `arrow-chains`): they keep their ancestry, so
a leaf counts for the path written above it, as in a call graph; the symbols of other lines are
then left out, as a flat listing beside call stacks is.

    >>> chain = ["1. page_fault -> do_page_fault -> call_rwsem_down_read_failed",
    ...          "   -> rwsem_down_read_failed -> rwsem_spin_on_owner / osq_lock   (~45% of the width)",
    ...          "- __libc_pread64 -> entry_SYSCALL_64 -> do_syscall_64 -> vfs_read  ~27%"]
    >>> block = read_chains(chain, set())
    >>> [([(f.name, f.kind) for f in s[0]][-2:], s[1]) for s in block.stacks]
    [([('rwsem_down_read_failed', 'kernel'), ('rwsem_spin_on_owner', 'kernel')], 45.0), ([('do_syscall_64', 'kernel'), ('vfs_read', 'kernel')], 27.0)]
    >>> [f.kind for f in block.stacks[1][0]][:2], block.flat
    (['user', 'kernel'], False)
    >>> read_chains(["sys_read -> vfs_read", "as seen in the profile"], set()) is None   # two names: prose
    True
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Set, Tuple

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, first_entry, plural

_MARKED = re.compile(r"\[k\]\s+(?P<sym>[A-Za-z_][\w.$]*)")
_OFFSET = re.compile(r"(?<![\w.$])(?P<sym>[A-Za-z_][\w.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_CRASH = re.compile(r"#\d+\s+\[[0-9a-f]+\]\s+(?P<sym>[A-Za-z_][\w.$]*)\s+at\s+[0-9a-f]+")
_NUMBER = r"[~≈]?\d+(?:[.,]\d+)?%?"
_BARE = re.compile(r"^\s+(?:" + _NUMBER + r"\s+){0,2}(?P<sym>[A-Za-z_][A-Za-z0-9]*_[\w.$]*)(?:\s+" + _NUMBER + r"){0,2}\s*$")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)%")
_TABLE_SYMBOL = re.compile(r"^(?:\.text\.[\w.]+|[A-Za-z_][A-Za-z0-9]*_[\w.$]*)$")
_TABLE_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?(?:e[-+]?\d+)?%?$")
_SHARE_AFTER = re.compile(r"^\s*(?P<sym>[A-Za-z_][A-Za-z0-9]*_[\w.$]*)\s+[~≈]?\d+(?:[.,]\d+)?%\s*$")
_ROW_NUMBER = re.compile(r"^[~≈]?\d+(?:[.,]\d+)?(?:%|s|ms|us|k|K|M)?$")
_ROW_MODULE = re.compile(r"^(?:vmlinux|kernel|\[kernel(?:\.kallsyms)?\]|\[k\]|[\w-]+\.ko)$")
_COUNTED = re.compile(r"^\s*(?:(?P<a>\d+)\s+[A-Za-z_]\S*|[A-Za-z_]\S*\s+(?P<b>\d+))\s*$")
MAX_LINE = 2000


# A typed comparison's header: the symbol column, then a name per run (`function  baseline  per-vma`,
# `symbol | v6.1 | v6.2`), and its rows: the symbol, then one share per run (rule S4).
_COMPARE_HEAD = re.compile(r"^\s*\|?\s*(?:function|symbol|func|frame|sym)s?\s*(?:\||\s{2,})(?P<runs>.+?)\s*\|?\s*$", re.I)
_COMPARE_ROW = re.compile(r"^\s*\|?\s*(?P<sym>[A-Za-z_][\w.$]*)\s*(?:\||\s{2,})(?P<values>.+?)\s*\|?\s*$")
_SHARE = re.compile(r"^\d+(?:[.,]\d+)?%?$")


def read_comparison(lines: Sequence[str], taken: Set[int]) -> Optional[Block]:
    """A comparison typed by hand (rule S4): a header naming the symbol column and two runs or more,
    then rows of a symbol and one share per run, as people retype two profiles side by side or an
    LKP table without its metric names. Each column is a run; like an LKP comparison (rule E6) and
    perf diff (rule S1), the run with the most busy kernel time is read. Without a header, `name
    number number` is a counter table (/proc/vmstat, /proc/softirqs), so the header is required;
    shares above 100 are counts, not a profile.

    >>> rows = ["function            baseline   patched", "rwsem_down_read_slowpath  27.3  0.4",
    ...         "_raw_spin_lock_irq   9.8    0.6", "clear_page_erms      6.6    24.1", "nr_free_pages  12"]
    >>> block = read_comparison(rows, set())
    >>> [(s[0][0].name, s[1]) for s in block.stacks], block.notes[0][:60]
    ([('rwsem_down_read_slowpath', 27.3), ('_raw_spin_lock_irq', 9.8), ('clear_page_erms', 6.6)], 'typed comparison of 2 runs (baseline, patched): read baselin')
    >>> read_comparison(["pgscan_kswapd  12345  23456", "pgscan_direct  1  2"], set()) is None
    True
    """
    from .profiles import busiest_run          # profiles imports nothing of the readers' modules
    for index, line in enumerate(lines):
        head = None if index in taken or len(line) > MAX_LINE else _COMPARE_HEAD.match(line)
        if not head:
            continue
        names = [n.strip() for n in re.split(r"\s*\|\s*|\s{2,}", head["runs"]) if n.strip()]
        rows = []
        for row_line in lines[index + 1:]:
            if not row_line.strip() or set(row_line.strip()) <= set("-|=+: "):
                if rows:
                    break
                continue
            row = _COMPARE_ROW.match(row_line)
            values = re.split(r"\s*\|\s*|\s+", row["values"].strip()) if row else []
            if not row or len(values) != len(names) or not all(_SHARE.match(v) for v in values):
                break
            shares = [float(v.rstrip("%").replace(",", ".")) for v in values]
            if max(shares) > 100:
                break
            rows.append((normalize(row["sym"]) or row["sym"], shares))
        if len(names) < 2 or len(rows) < 3:
            continue
        runs = []
        for column in range(len(names)):
            run = Block("typed-comparison", index, index + 1 + len(rows), flat=True, unit="percent")
            run.stacks = [((Frame(sym, "kernel"),), shares[column], "", None, None)
                          for sym, shares in rows if shares[column] > 0]
            runs.append(run)
        chosen = busiest_run(runs)
        block = runs[chosen]
        block.notes.append(f"typed comparison of {len(names)} runs ({', '.join(names)}): read {names[chosen]}, "
                           f"the run with the most busy kernel time; {plural(len(rows), 'symbol')}, no ancestry")
        block.notes.append("flat profile: no ancestry, confidence capped at medium")
        return block
    return None


def read_symbols(lines: Sequence[str], taken: Set[int]) -> Optional[Block]:
    """A flat block of every kernel symbol in lines not `taken` by evidence sections."""
    block = Block("unrecognised-layout", 0, len(lines), flat=True, unit="mixed")
    shapes, others = set(), []
    for index, line in enumerate(lines):
        if index in taken or len(line) > MAX_LINE:
            continue
        name = _symbol(line)
        if name:
            block.stacks.append(((Frame(name, "kernel"),), _weight(line), "", None, None))
            continue
        row = _table_row(line)
        if row:
            block.stacks.append(((Frame(row[0], "kernel"),), row[1], "", None, None))
            shape = _module_shape(line)
            if shape:
                shapes.add(shape)
        else:
            others.append(line)
    if not block.stacks:
        return None
    users = [row for row in (_user_row(line, shapes) for line in others) if row]
    block.stacks += [((Frame(name, "user"),), share, "", None, None) for name, share in users]
    if users:
        block.notes.append(f"read {plural(len(users), 'row')} of the same table whose object is a user library or "
                           "program as user space")
    block.notes.append(f"layout not recognised: read {plural(len(block.stacks), 'kernel symbol')} found in the "
                       "text (last resort), each weighted by the percentage or count on its line, else 1; "
                       "no ancestry")
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block


_ARROW = re.compile(r"\s*(?:->|→)\s*")
_CHAIN_NAME = re.compile(r"^(?:\d+[.)]|[-*•])?\s*(?P<sym>[A-Za-z_][\w.$:]*)")


def read_chains(lines: Sequence[str], taken: Set[int]) -> Optional[Block]:
    """A block of the call chains written with arrows, when one has three frames or more."""
    chains = list(_chains(lines, taken))
    if not any(len(frames) >= 3 for _, frames, _ in chains):
        return None
    block = Block("arrow-chains", 0, len(lines), unit="mixed")
    for _, frames, weight in chains:
        block.stacks.append((frames, weight, "", None, None))
    block.notes.append(f"layout not recognised: read {plural(len(chains), 'call chain')} written with arrows "
                       "(root first), each weighted by the percentage on it, else 1; other lines not read")
    return block


def _chains(lines: Sequence[str], taken: Set[int]):
    """(line indexes, frames root first, weight) of each arrow-written call chain (rule R4)."""
    joined = []            # [(indexes, text)]
    for index, line in enumerate(lines):
        if index in taken or len(line) > MAX_LINE:
            continue
        text = line.strip().lstrip("> ").strip()
        continues = joined and joined[-1][0][-1] == index - 1 and (
            re.match(r"^(?:->|→)", text) or re.search(r"(?:->|→)\s*$", joined[-1][1]))
        if continues:
            joined[-1] = (joined[-1][0] + [index], joined[-1][1] + " " + text)
        elif "->" in text or "→" in text:
            joined.append(([index], text))
    for indexes, text in joined:
        parts = [part for part in _ARROW.split(text) if part.strip()]
        names = []
        for part in parts:
            found = _CHAIN_NAME.match(part.strip())
            if not found or found["sym"].endswith(":"):
                names = []
                break
            names.append(normalize(found["sym"]) or found["sym"])
        if len(names) < 2:
            continue
        entry = first_entry(names) or 0
        frames = tuple(Frame(name, "user" if i < entry else "kernel") for i, name in enumerate(names))
        share = _share(text)
        yield indexes, frames, 1.0 if share is None else share


def _symbol(line: str) -> Optional[str]:
    for pattern in (_MARKED, _CRASH, _OFFSET, _BARE, _SHARE_AFTER):
        found = pattern.search(line)
        if found:
            return normalize(found["sym"])
    return None


def _table_row(line: str) -> Optional[Tuple[str, float]]:
    """A row whose last column is a kernel symbol and which has a number column: columns apart
    by two or more spaces (a table), or only numbers before the symbol (`543 11.3 sym`)."""
    tokens = line.split()
    after_module = _after_module(line)
    if after_module:
        return after_module
    before_module = _before_module(line)
    if before_module:
        return before_module
    if 2 < len(tokens) <= 10 and _TABLE_SYMBOL.match(tokens[0]) and not _TABLE_SYMBOL.match(tokens[-1]):
        return _name_first_row(line, tokens)
    if len(tokens) < 2 or len(tokens) > 10 or not _TABLE_SYMBOL.match(tokens[-1]):
        return None
    numbers = [t for t in tokens[:-1] if _TABLE_NUMBER.match(t)]
    table = len(_columns(line)) >= 3
    if not numbers or not (table or len(numbers) == len(tokens) - 1):
        return None
    name = normalize(tokens[-1]) or tokens[-1]
    share = _share(line)
    if share is not None:
        return name, share
    whole = next((t for t in numbers if t.isdigit()), numbers[0])
    return name, float(whole.rstrip("%").replace(",", "."))


def _after_module(line: str) -> Optional[Tuple[str, float]]:
    """A retyped listing's row `share  module  symbol  notes...` (rule W2): perf and OProfile print
    the symbol right after the kernel's module (`[kernel]`, `vmlinux`, `[kernel.kallsyms]`, a `.ko`),
    so the column after the last module column is the symbol and columns after it are the author's
    notes (a `说明` / `comment` column). Columns apart by two or more spaces, a share before the
    module; weighted by it.

    >>> _after_module("24.6%  [kernel]  osq_lock  rwsem \u4e50\u89c2\u81ea\u65cb")
    ('osq_lock', 24.6)
    >>> _after_module("6.1%  [kernel]  down_read_trylock  do_user_addr_fault")
    ('down_read_trylock', 6.1)
    >>> _after_module("osq_lock  [kernel]  24.6%") is None      # the symbol first: rule R1's row
    True
    """
    columns = _columns(line)
    if not 3 <= len(columns) <= 10:
        return None
    modules = [i for i, column in enumerate(columns[:-1]) if _ROW_MODULE.match(column)
               and not _ROW_MODULE.match(columns[i + 1])]
    if not modules:
        return None
    at = modules[0]
    symbol = columns[at + 1]
    share = _share(" ".join(columns[:at]))
    if not _TABLE_SYMBOL.match(symbol) or share is None:
        return None
    return normalize(symbol) or symbol, share


def _before_module(line: str) -> Optional[Tuple[str, float]]:
    """A row `share  symbol  module`, as `perf report --sort sym,dso` orders its columns and a README
    table retypes them without perf's `[k]` marker (rule BM1): the column right before a kernel module
    column (`[kernel.kallsyms]`, `vmlinux`, a `.ko`) is the symbol when a share stands before it. A
    row whose object is a user library or program is user space, and not read as a kernel symbol.
    Columns apart by two or more spaces; weighted by the share.

    >>> _before_module("21.40%  native_queued_spin_lock_slowpath  [kernel.kallsyms]")
    ('native_queued_spin_lock_slowpath', 21.4)
    >>> _before_module("9.87%  futex_wait_setup  vmlinux  futex.c:2662")
    ('futex_wait_setup', 9.87)
    >>> _before_module("4.40%  __lll_lock_wait  libpthread-2.31.so") is None     # a user library's row
    True
    >>> _before_module("futex_wake  [kernel.kallsyms]  8.12%") is None           # no share before the symbol
    True
    """
    found = _symbol_before_module(_columns(line))
    return found[:2] if found else None


def _symbol_before_module(columns: Sequence[str]) -> Optional[Tuple[str, float, int]]:
    """`_before_module` on a row's columns: (symbol, share, the object column's index)."""
    if not 3 <= len(columns) <= 10:
        return None
    at = next((i for i in range(2, len(columns)) if _ROW_MODULE.match(columns[i])), None)
    if at is None or not _TABLE_SYMBOL.match(columns[at - 1]):
        return None
    share = _share(" ".join(columns[:at - 1]))
    if share is None:
        return None
    return normalize(columns[at - 1]) or columns[at - 1], share, at


def _module_shape(line: str) -> Optional[Tuple[int, int]]:
    """(columns, the object column's index) of a row `_before_module` reads, else None."""
    columns = _columns(line)
    found = _symbol_before_module(columns)
    return (len(columns), found[2]) if found else None


def _columns(line: str) -> List[str]:
    """A table row's columns: apart by two or more spaces."""
    return re.split(r"\s{2,}", line.strip())


def _user_row(line: str, shapes: Set[Tuple[int, int]]) -> Optional[Tuple[str, float]]:
    """A row of a `share  symbol  object` table (rule BM1) whose object column, where the kernel rows
    have `[kernel.kallsyms]`, names a user library or program: (symbol, share), user space.

    >>> _user_row("41.20%  Queue::push  bench", {(3, 2)}), _user_row("2.1%  a  b  c", {(3, 2)})
    (('Queue::push', 41.2), None)
    """
    columns = _columns(line)
    for count, at in shapes:
        if len(columns) != count or _ROW_MODULE.match(columns[at]) or _ROW_NUMBER.match(columns[at]):
            continue
        share = _share(" ".join(columns[:at - 1]))
        if share is not None and not _ROW_NUMBER.match(columns[at - 1]) and " " not in columns[at - 1]:
            return columns[at - 1], share
    return None


def _share(text: str) -> Optional[float]:
    """The first percentage in the text (`23.1%`, `23,1%`), None without one."""
    percent = _PERCENT.search(text)
    return float(percent[1].replace(",", ".")) if percent else None


def _weight(line: str) -> float:
    share = _share(line)
    if share is not None:
        return share
    counted = _COUNTED.match(line)
    if counted:
        return float(counted["a"] or counted["b"])
    return 1.0


def _name_first_row(line: str, tokens: Sequence[str]) -> Optional[Tuple[str, float]]:
    """`sym  module  412.580s  23.1%`: the symbol first, then only numbers, shares and a module,
    columns apart by two or more spaces; weighted by its share (rule R1)."""
    rest = tokens[1:]
    if len(_columns(line)) < 3:
        return None
    if not all(_ROW_NUMBER.match(t) or _ROW_MODULE.match(t) for t in rest):
        return None
    share = _share(line)
    if share is None:
        return None
    return normalize(tokens[0]) or tokens[0], share
