"""`perf lock contention` (perf 6.0+, BPF mode `-b` or from `perf lock record` trace data): one row
per contended lock site, the caller that waited, with the wait it suffered:

     contended   total wait     max wait     avg wait         type   caller

       1843211      8.97 s      3.12 ms      4.87 us     spinlock   futex_q_lock+0x2a
         10772    104.95 ms      1.01 ms      9.74 us     rwsem:R    do_user_addr_fault+0x3a1
             6      1.88 ms    401.40 us    313.33 us     mutex      pipe_read+0x5a
                             0xffffffff81a2b1d0  __mutex_lock+0x90
                             0xffffffff8139a61a  pipe_read+0x5a

The weight is the total wait, which is what a waiter spends between contention_begin and
contention_end. A spin lock's (and an rwlock's) waiter spins the whole time: its wait is CPU
time in the lock's slow path under the caller, so a spinning row becomes the stack
`caller -> <the lock's entry>`, the entry named by the type column (the caller is printed; the
slow path is what the type says it ran). `-v` / `--stack` prints the waiter's call chain under
its row, innermost first: then that chain is the stack. A sleeping lock's waiter (mutex, rwsem,
semaphore, percpu rwsem, rt-mutex) spins briefly, then sleeps: its wait is mostly time blocked,
so those rows are left out of a CPU profile; a listing of only sleeping waits is read and marked
not CPU time. Other modes (`-l` lock addresses, `-t` tasks, `-o` owners) name no caller and are
not read.

    >>> lines = ["$ perf lock contention -ab -- sleep 5",
    ...          " contended   total wait     max wait     avg wait         type   caller", "",
    ...          "      1200      6.00 ms     40.00 us      5.00 us     spinlock   futex_q_lock+0x2a",
    ...          "        10      2.00 ms    400.00 us    200.00 us     mutex      pipe_read+0x5a"]
    >>> block = read_lock_contention(lines, 1)
    >>> [([f.name for f in s[0]], s[1]) for s in block.stacks]
    [(['futex_q_lock', '_raw_spin_lock'], 6000.0)]
    >>> block.not_cpu is None, block.end
    (True, 5)
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, Miss, finish, plural

HEADER = re.compile(r"^\s*contended\s+total wait\s+max wait\s+avg wait\s+type\s+caller\s*$")
DURATION = r"[\d.]+\s+(?:ns|us|ms|s|m|h)"
ROW = re.compile(rf"^\s*(?P<count>\d+)\s+(?P<total>{DURATION})\s+{DURATION}\s+{DURATION}\s+"
                 r"(?P<type>[a-z][\w-]*(?::[RW])?)\s+(?P<caller>\S+)\s*$")
STACK = re.compile(r"^\s+0x[0-9a-f]{6,16}\s+(?P<sym>\S+)\s*$")
TOOL = re.compile(r"^\s*(?:[$#]\s*(?:sudo\s+)?perf\s+lock\b|Looking at the vmlinux_path|"
                  r"=== output for debug purpose ===|bad:|total:|\s*bad rate:)")
UNIT_US = {"ns": 0.001, "us": 1.0, "ms": 1000.0, "s": 1e6, "m": 6e7, "h": 3.6e9}
# the lock entry a spinning waiter runs, by the type column
SPINNING = {"spinlock": "_raw_spin_lock", "rwlock:R": "_raw_read_lock", "rwlock:W": "_raw_write_lock",
            "rwlock": "_raw_read_lock"}


def starts_lock_contention(line: str) -> bool:
    return bool(HEADER.match(line))


def _microseconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * UNIT_US[unit]


def read_lock_contention(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The listing under the column header at `start` (a row's `-v` call chain follows it)."""
    block = Block("perf-lock-contention", start, start, flat=False, unit="us", header=True)
    rows: List[Tuple[str, str, float, List[str]]] = []     # type, caller, total wait (us), chain
    index = start + 1
    while index < len(lines):
        line = lines[index]
        row = ROW.match(line)
        frame = STACK.match(line) if not row else None
        if row:
            rows.append((row["type"], row["caller"], _microseconds(row["total"]), []))
        elif frame and rows:
            rows[-1][3].append(frame["sym"])
        elif not (not line.strip() or TOOL.match(line)):
            break
        index += 1
    sleeping = 0
    for kind, caller, wait, chain in rows:
        if kind not in SPINNING:
            sleeping += 1
            continue
        if chain:
            names = [normalize(sym) for sym in reversed(chain)]
        else:
            names = [normalize(caller), SPINNING[kind]]
        if wait > 0:
            block.stacks.append((tuple(Frame(name, "kernel") for name in names), wait, "", None, None))
    if rows and not block.stacks:
        block.not_cpu = ("perf lock contention waits of sleeping locks only (mutex, rwsem ...): "
                         "time blocked, not CPU time")
        for kind, caller, wait, chain in rows:
            names = [normalize(sym) for sym in reversed(chain)] if chain else [normalize(caller)]
            if wait > 0:
                block.stacks.append((tuple(Frame(name, "kernel") for name in names), wait, "", None, None))
    return finish(block, start, index,
                  f"read perf lock contention: {plural(len(rows), 'row')}; weights are wait times (us), "
                  f"spin-lock waits read as CPU time spinning under their caller"
                  + (f"; {plural(sleeping, 'sleeping-lock row')} left out (a sleeping waiter is off CPU)"
                     if sleeping and block.not_cpu is None else ""))
