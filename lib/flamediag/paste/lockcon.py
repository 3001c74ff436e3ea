"""`perf lock contention` (perf 6.x; `perf lock con -ab` with BPF, or from `perf lock record`): one
row per contended lock site, the time waiters spent on it, the lock's type and the function that
took it (the first caller outside the lock code):

     contended   total wait     max wait     avg wait         type   caller

       2870311     38.91 s      2.31 ms     13.56 us     spinlock   __skb_recv_udp+0x74
          2207     18.33 ms     60.19 us      8.31 us      rwsem:R   do_user_addr_fault+0x13d

With `-v` / `--stack` each row is followed by its call stack, innermost first:

                            0xffffffff81a5c1e4  _raw_spin_lock_bh+0x34
                            0xffffffff81a5b474  __skb_recv_udp+0x74

Weights are the total wait in microseconds. A waiter on a spin lock or an rwlock spins: that
wait is CPU time, spent in the lock's slow path under the caller. A waiter on a sleeping lock
(mutex, rwsem, semaphore, rt-mutex) mostly sleeps: that wait is not CPU time and is left out
(the rows say which lock sites sleep; rule 9 of doc/accuracy.md). When every row is a sleeping
lock the table holds no CPU time at all.

    >>> block = read_lock_contention([
    ...     " contended   total wait     max wait     avg wait         type   caller",
    ...     "",
    ...     "       120      3.00 ms     80.00 us     25.00 us     spinlock   __nf_conntrack_confirm+0x1d2",
    ...     "        10      1.00 ms    100.00 us    100.00 us        mutex   rtnl_lock+0x15"], 0)
    >>> [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks]
    [(('__nf_conntrack_confirm', '_raw_spin_lock'), 3000.0)]
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, Miss, plural

HEADER = re.compile(r"^\s*contended\s+total wait\s+max wait\s+avg wait\s+type\s+(?P<last>caller|pid\s+comm|"
                    r"address\s+symbol|owner|lock\s+name|.+)\s*$")
TIME = r"(?P<{0}>\d+(?:\.\d+)?)\s*(?P<{0}_unit>ns|us|ms|s|m|h)"
ROW = re.compile(r"^\s*(?P<count>\d+)\s+" + TIME.format("total") + r"\s+" + TIME.format("max") + r"\s+"
                 + TIME.format("avg") + r"\s+(?P<type>[\w:-]+(?: [\w:-]+)?)\s+(?P<what>\S.*?)\s*$")
STACK = re.compile(r"^\s+(?:0x)?[0-9a-f]{8,16}\s+(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?(?:\s.*)?$")
SYM = re.compile(r"^(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?$")
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7, "h": 3.6e9}
# Locks whose waiters spin on the CPU; the frame that stands for that spinning under the caller.
SPINNING = {"spinlock": "_raw_spin_lock", "rwlock": "_raw_read_lock", "rwlock:r": "_raw_read_lock",
            "rwlock:w": "_raw_write_lock", "spinlock:r": "_raw_spin_lock", "raw_spinlock": "_raw_spin_lock"}


def starts_lock_contention(line: str) -> bool:
    return bool(HEADER.match(line))


def _us(row: re.Match, name: str) -> float:
    return float(row[name]) * TO_US[row[name + "_unit"]]


def read_lock_contention(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The table under its header; rows of sleeping locks are counted, not read as CPU time."""
    header = HEADER.match(lines[start])
    if not header:
        return Miss(start + 1)
    by_caller = header["last"] == "caller"
    rows: List[Tuple[re.Match, List[str]]] = []
    index = start + 1
    while index < len(lines):
        line = lines[index]
        row = ROW.match(line)
        stack = STACK.match(line) if rows and not row else None
        if row:
            rows.append((row, []))
        elif stack:
            rows[-1][1].append(normalize(stack["sym"]) or stack["sym"])
        elif line.strip() and rows:
            break
        elif line.strip():
            return Miss(index)
        index += 1
    if not rows:
        return Miss(index)
    block = Block("perf-lock-contention", start, index, unit="us", header=True)
    sleeping, sleeping_wait = [], 0.0
    for row, stack in rows:
        kind = row["type"].lower()
        wait = _us(row, "total")
        frames = _frames(row, stack, SPINNING.get(kind), by_caller)
        if not frames or wait <= 0:
            continue
        entry = (tuple(Frame(name, "kernel") for name in frames), wait, "", None, None)
        if kind in SPINNING:
            block.stacks.append(entry)
        else:
            sleeping.append(entry)
            sleeping_wait += wait
    if not block.stacks:
        if not sleeping:
            return Miss(index)
        block.stacks = sleeping
        block.not_cpu = (f"this perf lock contention table lists only sleeping locks ({plural(len(sleeping), 'row')}: "
                         "mutex, rwsem, semaphore): their waiters sleep, the wait is not CPU time")
        block.notes.append("read perf lock contention: sleeping locks only")
        return block
    block.notes.append(f"read perf lock contention: {plural(len(block.stacks), 'spinning lock site')}, weighted by "
                       "their total wait (a spinning waiter's wait is CPU time)")
    if sleeping:
        block.notes.append(f"left out {plural(len(sleeping), 'sleeping-lock row')} ({sleeping_wait / 1e6:.2f} s of wait): "
                           "a mutex / rwsem waiter sleeps, its wait is not CPU time")
    return block


def _frames(row: re.Match, stack: List[str], lock_frame: Optional[str], by_caller: bool) -> Optional[List[str]]:
    """Root first: the printed call stack (`-v`), else the caller with the lock's spinning under it
    (a sleeping lock: the caller alone)."""
    if stack:
        return list(reversed(stack))
    caller = SYM.match(row["what"]) if by_caller else None
    names = [normalize(caller["sym"]) or caller["sym"]] if caller else []
    names += [lock_frame] if lock_frame else []
    return names or None
