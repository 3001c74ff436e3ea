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
"""
from __future__ import annotations

import re
from typing import Optional, Sequence, Set, Tuple

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, plural

_MARKED = re.compile(r"\[k\]\s+(?P<sym>[A-Za-z_][\w.$]*)")
_OFFSET = re.compile(r"(?<![\w.$])(?P<sym>[A-Za-z_][\w.$]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_CRASH = re.compile(r"#\d+\s+\[[0-9a-f]+\]\s+(?P<sym>[A-Za-z_][\w.$]*)\s+at\s+[0-9a-f]+")
_NUMBER = r"\d+(?:[.,]\d+)?%?"
_BARE = re.compile(r"^\s+(?:" + _NUMBER + r"\s+){0,2}(?P<sym>[A-Za-z_][A-Za-z0-9]*_[\w.$]*)(?:\s+" + _NUMBER + r"){0,2}\s*$")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)%")
_TABLE_SYMBOL = re.compile(r"^(?:\.text\.[\w.]+|[A-Za-z_][A-Za-z0-9]*_[\w.$]*)$")
_TABLE_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?(?:e[-+]?\d+)?%?$")
_COUNTED = re.compile(r"^\s*(?:(?P<a>\d+)\s+[A-Za-z_]\S*|[A-Za-z_]\S*\s+(?P<b>\d+))\s*$")
MAX_LINE = 2000


def read_symbols(lines: Sequence[str], taken: Set[int]) -> Optional[Block]:
    """A flat block of every kernel symbol in lines not `taken` by evidence sections."""
    block = Block("unrecognised-layout", 0, len(lines), flat=True, unit="mixed")
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
    if not block.stacks:
        return None
    block.notes.append(f"layout not recognised: read {plural(len(block.stacks), 'kernel symbol')} found in the "
                       "text (last resort), each weighted by the percentage or count on its line, else 1; "
                       "no ancestry")
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block


def _symbol(line: str) -> Optional[str]:
    for pattern in (_MARKED, _CRASH, _OFFSET, _BARE):
        found = pattern.search(line)
        if found:
            return normalize(found["sym"])
    return None


def _table_row(line: str) -> Optional[Tuple[str, float]]:
    """A row whose last column is a kernel symbol and which has a number column: columns apart
    by two or more spaces (a table), or only numbers before the symbol (`543 11.3 sym`)."""
    tokens = line.split()
    if len(tokens) < 2 or len(tokens) > 10 or not _TABLE_SYMBOL.match(tokens[-1]):
        return None
    numbers = [t for t in tokens[:-1] if _TABLE_NUMBER.match(t)]
    table = len(re.split(r"\s{2,}", line.strip())) >= 3
    if not numbers or not (table or len(numbers) == len(tokens) - 1):
        return None
    name = normalize(tokens[-1]) or tokens[-1]
    percent = _PERCENT.search(line)
    if percent:
        return name, float(percent[1].replace(",", "."))
    whole = next((t for t in numbers if t.isdigit()), numbers[0])
    return name, float(whole.rstrip("%").replace(",", "."))


def _weight(line: str) -> float:
    percent = _PERCENT.search(line)
    if percent:
        return float(percent[1].replace(",", "."))
    counted = _COUNTED.match(line)
    if counted:
        return float(counted["a"] or counted["b"])
    return 1.0
