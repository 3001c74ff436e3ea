"""SystemTap's printed backtraces (the kernel profiler of RHEL 5/6/7 sites before perf and bcc):
`print_stack(backtrace())`, `print_backtrace()`, `print_ustack(ubacktrace())`. One frame per
line, innermost first, address, ` : `, symbol with offset/size, and the module in brackets
(`[kernel]`, a module's name, a library's path for user frames), and ` (inexact)` when the
unwinder guessed the frame from the stack contents (kept, as a trace's `?` frames are when every
entry is one):

     0xffffffff8150e3e1 : _spin_lock_irq+0x21/0x40 [kernel]
     0xffffffff8113f2e0 : shrink_inactive_list+0x2f0/0x740 [kernel]
     0xffffffffa01c4f3a : ext4_da_write_begin+0x1ea/0x2f0 [ext4]
     0x00000039c8a0e4e4 : __lll_lock_wait+0x24/0x40 [/lib64/libpthread-2.12.so]
    	8123

A profiling script aggregates the stacks (`s[backtrace()] <<< 1`) and prints each with its count
on a line of its own, after the stack (`print_stack(bt); printf("\\t%d\\n", @count(s[bt]))`) or
before it: when the first line is a count, counts precede their stacks; otherwise they follow.
A stack without a count weighs 1. `Pass N:` lines of `stap -v` and the command line above belong
to the output.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

from ..kernelnames import normalize
from ..profile import Frame
from .common import ELISION, Block, Miss, finish, plural

FRAME = re.compile(r"^\s*0x(?P<addr>[0-9a-f]{6,16})\s+:\s+(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?)?"
                   r"\s+\[(?P<module>[^\]]+)\](?:\s+\(inexact\))?\s*$")
COUNT = re.compile(r"^\s*(?:(?:count|samples|hits)\s*[:=]?\s*)?(?P<count>\d+)\s*$", re.I)
STAP_LINE = re.compile(r"^\s*(?:Pass \d+: |WARNING: Number of errors|[$#]\s*(?:sudo\s+)?stap\b)")


def starts_systemtap(line: str) -> bool:
    return bool(FRAME.match(line))


def _kind(module: str) -> str:
    """`[kernel]` and modules (`[ext4]`) are kernel code; a path (`[/lib64/libc-2.12.so]`) is user code."""
    return "user" if "/" in module or module.endswith((".so", ".so.6")) else "kernel"


def read_systemtap(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Consecutive printed backtraces and their count lines, from `start` (a frame line)."""
    items: List[Tuple[str, object]] = []        # ("stack", [(name, kind)...] innermost first) | ("count", n)
    run: List[Tuple[str, str]] = []
    index = start
    # a count printed before the first stack belongs to it: look one line above
    if start > 0 and COUNT.match(lines[start - 1]):
        items.append(("count", float(COUNT.match(lines[start - 1])["count"])))
    while index < len(lines):
        line = lines[index]
        frame = FRAME.match(line)
        if frame:
            run.append((normalize(frame["sym"]), _kind(frame["module"])))
        else:
            if run:
                items.append(("stack", run))
                run = []
            count = COUNT.match(line)
            if count:
                items.append(("count", float(count["count"])))
            elif not (not line.strip() or ELISION.match(line) or STAP_LINE.match(line)):
                break
        index += 1
    if run:
        items.append(("stack", run))
    block = Block("systemtap", start, index)
    counts_first = bool(items) and items[0][0] == "count"
    pending: Optional[float] = None
    stacks = 0
    for position, (what, value) in enumerate(items):
        if what == "count":
            pending = value if counts_first else pending
            continue
        if counts_first:
            weight, pending = (pending if pending is not None else 1.0), None
        else:
            following = items[position + 1] if position + 1 < len(items) else None
            weight = following[1] if following and following[0] == "count" else 1.0
        frames = tuple(Frame(name, kind) for name, kind in reversed(value))
        block.stacks.append((frames, float(weight), "", None, None))
        stacks += 1
    end = index
    while end > start and not lines[end - 1].strip():
        end -= 1
    return finish(block, start, max(end, start + 1),
                  f"read SystemTap backtraces: {plural(stacks, 'stack')}, each weighted by the count printed "
                  f"{'before' if counts_first else 'after'} it (1 without one)")
