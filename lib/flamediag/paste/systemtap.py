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

The classic SystemTap kernel profile of RHEL 5/6 and SLES 10/11 sites samples the timer and counts
the function it interrupted, `probe timer.profile { if (!user_mode()) s[probefunc()] <<< 1 }`, and
prints one `function  count` row per function. The command line is what says the counts are
samples (rule K4): below a `stap` command that probes `timer.profile` (or a `perf.*` counter), the
rows are a flat profile, kernel functions when the script keeps only `!user_mode()` samples; the
same two columns below any other script (call counts of `probe kernel.function(...)`, syscall
tallies) are not CPU time and are not read as a profile:

    # stap -e 'global s; probe timer.profile { if (!user_mode()) s[probefunc()] <<< 1 }
        probe timer.s(10) { foreach (f in s- limit 12) printf("%-28s %8d\\n", f, @count(s[f])); exit() }'
    read_hpet                       41872
    do_gettimeofday                  3391

futexes.stp (the Beginners Guide's "Identifying Contended User-Space Locks") prints one line per
contended futex, `comm[pid] lock 0xADDR contended N times, M avg us`: how often and how long threads
waited, which is time asleep, not CPU time. Read and drawn (each lock weighted by its wait, N x M
us), never diagnosed (rule K8):

    java[18822] lock 0x7f3c2c00a8d8 contended 1187213 times, 211 avg us
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


PROFILE_COMMAND = re.compile(r"^\s*(?:[$#]\s*)?(?:sudo\s+)?stap\b.*\b(?:timer\.profile|perf\.(?:hw|sw|type))\b")
PROFILE_ROW = re.compile(r"^\s*(?P<sym>\.?[A-Za-z_][\w.$]*)(?:\+0x[0-9a-f]+)?\s+(?P<count>\d+)\s*$")
MAX_COMMAND_LINES = 4            # a stap -e script wrapped over a few lines before its rows


def starts_systemtap(line: str) -> bool:
    return bool(FRAME.match(line))


FUTEX_ROW = re.compile(r"^\s*(?P<comm>\S+?)\[(?P<pid>\d+)\] lock (?P<addr>0x[0-9a-f]+) contended (?P<count>\d+) times?, "
                       r"(?P<avg>\d+) avg us\s*$")


def starts_futexes(line: str) -> bool:
    return bool(FUTEX_ROW.match(line))


def read_futexes(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """futexes.stp lines from `start`: per contended lock, its waits (rule K8)."""
    block = Block("systemtap-futexes", start, start, unit="us")
    index = start
    while index < len(lines) and (FUTEX_ROW.match(lines[index]) or ELISION.match(lines[index])):
        row = FUTEX_ROW.match(lines[index])
        if row and int(row["count"]) * int(row["avg"]) > 0:
            frames = (Frame("sys_futex", "kernel"), Frame("futex_wait", "kernel"))
            block.stacks.append((frames, float(int(row["count"]) * int(row["avg"])), row["comm"], None, None))
        index += 1
    block.not_cpu = ("these are contended user-space locks (SystemTap futexes.stp): how often and how long threads "
                     "waited on each futex, time asleep, not CPU samples")
    return finish(block, start, index, f"read SystemTap futexes.stp: {plural(len(block.stacks), 'contended lock')}, "
                  "each weighted by its wait (times contended x average wait)")


def starts_profile_counts(line: str) -> bool:
    return bool(PROFILE_COMMAND.match(line))


def read_profile_counts(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """`function  count` rows below a `stap` command sampling the timer or a perf counter (rule K4)."""
    command = lines[start]
    index = start + 1
    while index < len(lines) and index <= start + MAX_COMMAND_LINES and not PROFILE_ROW.match(lines[index]):
        if not lines[index].strip():
            return Miss(index)
        command += " " + lines[index]
        index += 1
    kernel_only = "!user_mode()" in command.replace(" ", "")
    block = Block("systemtap-profile", start, index, flat=True, unit="samples", header=True, event="timer")
    while index < len(lines) and PROFILE_ROW.match(lines[index]):
        row = PROFILE_ROW.match(lines[index])
        count = float(row["count"])
        if count > 0:
            name = normalize(row["sym"]) or row["sym"]
            block.stacks.append(((Frame(name, "kernel" if kernel_only else "unknown"),), count, "", None, None))
        index += 1
    if not block.stacks:
        return Miss(index)
    block.whole = sum(stack[1] for stack in block.stacks)
    return finish(block, start, index,
                  f"read a SystemTap timer profile (counts by probefunc()): {plural(len(block.stacks), 'function')}, "
                  "weighted by their sample counts", "flat profile: no ancestry, confidence capped at medium")


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
