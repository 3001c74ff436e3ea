"""`readprofile` (util-linux): the kernel's own tick profiler (`profile=2` on the kernel command
line, /proc/profile), read through System.map. Every row is a kernel function: its clock ticks,
its name and its "normalized load" (ticks per byte of the function); `total` sums them all.
Usually pasted sorted (`readprofile -m /boot/System.map-$(uname -r) | sort -nr | head`):

      8386 total                                      0.0046
      2432 default_idle                              38.0000
       543 .text.lock.spinlock                       11.3125
        94 shrink_zone                                0.0545

`readprofile -v` puts the address first and the ticks after the name:

    c0104f40 default_idle                               2432  38.0000

Weights are the ticks; `total` is what they are of. The profile samples on the timer tick, so a
halted CPU is sampled where it halted (in the idle loop), like perf's cpu-clock.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence, Union

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, Miss, plural

SYMBOL = r"(?P<sym>\.?[A-Za-z_][\w.$]*)"
ROW = re.compile(r"^\s*(?P<ticks>\d+)\s+" + SYMBOL + r"\s+(?P<load>\d+\.\d{4})\s*$")
VERBOSE_ROW = re.compile(r"^\s*[0-9a-f]{8,16}\s+" + SYMBOL + r"\s+(?P<ticks>\d+)\s+(?P<load>\d+\.\d{4})\s*$")
COMMAND = re.compile(r"\breadprofile\b")
MIN_ROWS = 2


def _row(line: str) -> Optional[re.Match]:
    return ROW.match(line) or VERBOSE_ROW.match(line)


def starts_readprofile(line: str) -> bool:
    return _row(line) is not None


def read_readprofile(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """A run of readprofile rows (at least two, or one under a `readprofile` command line)."""
    index = start
    rows = []
    while index < len(lines) and _row(lines[index]):
        rows.append(_row(lines[index]))
        index += 1
    commanded = start > 0 and bool(COMMAND.search(lines[start - 1]))
    if len(rows) < (1 if commanded else MIN_ROWS):
        return Miss(index if index > start else start + 1)
    block = Block("readprofile", start - int(commanded), index, flat=True, unit="samples", header=commanded,
                  event="timer")
    total = None
    for row in rows:
        ticks = int(row["ticks"])
        if row["sym"] == "total":
            total = float(ticks)
        elif ticks > 0:
            block.stacks.append(((Frame(normalize(row["sym"]) or row["sym"], "kernel"),), float(ticks), "", None, None))
    if not block.stacks:
        return Miss(index)
    block.whole = total
    block.notes.append(f"read readprofile: {plural(len(block.stacks), 'kernel function')}, weighted by timer ticks"
                       + (f" of {int(total)} in total" if total else " (the `total` row was not pasted)"))
    block.notes.append("flat profile: no ancestry, confidence capped at medium")
    return block
