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

The spinning waits are a share of the window the command line pasted above the table traced
(`perf lock contention -ab -- sleep 5`: at least five CPU-seconds), or of their own sum when that
is larger (many CPUs spinning at once): an idle second's few microseconds of waiting on workqueue
locks are a tiny share, not contention (rule V1 of doc/accuracy.md).

    >>> read_lock_contention(["$ perf lock contention -a -b -- sleep 1",
    ...     " contended   total wait     max wait     avg wait         type   caller",
    ...     "        42    192.67 us     13.64 us      4.59 us     spinlock   queue_work_on+0x20"], 1).whole
    1000000.0

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
from .common import ELISION, Block, Miss, finish, plural

HEADER = re.compile(r"^\s*contended\s+total wait\s+max wait\s+avg wait\s+type\s+(?P<last>caller|pid\s+comm|"
                    r"address\s+symbol|owner|lock\s+name|.+)\s*$")
TIME = r"(?P<{0}>\d+(?:\.\d+)?)\s*(?P<{0}_unit>ns|us|ms|s|m|h)"
ROW = re.compile(r"^\s*(?P<count>\d+)\s+" + TIME.format("total") + r"\s+" + TIME.format("max") + r"\s+"
                 + TIME.format("avg") + r"\s+(?P<type>[\w:-]+(?: [\w:-]+)?)\s+(?P<what>\S.*?)\s*$")
STACK = re.compile(r"^\s+(?:0x)?[0-9a-f]{8,16}\s+(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?(?:\s.*)?$")
SYM = re.compile(r"^(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?$")
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7, "h": 3.6e9}
# Locks whose waiters spin on the CPU; the frame that stands for that spinning under the caller.
# The traced window on a pasted command line: `perf lock con[tention] ... -- sleep N`.
WINDOW = re.compile(r"\bperf\s+lock\s+con\w*\b.*?\s--\s+sleep\s+(?P<seconds>\d+(?:\.\d+)?)\b")
SPINNING = {"spinlock": "_raw_spin_lock", "rwlock": "_raw_read_lock", "rwlock:r": "_raw_read_lock",
            "rwlock:w": "_raw_write_lock", "spinlock:r": "_raw_spin_lock", "raw_spinlock": "_raw_spin_lock"}


# bcc / libbpf-tools klockstat: `Caller  Avg Spin  Count  Max spin  Total spin` (bcc), `Avg Wait ... Total Wait`
# (libbpf-tools), then the hold table `Caller  Avg Hold  Count  Max hold  Total hold`; nanoseconds
KLOCK_HEADER = re.compile(r"^\s*Caller\s+Avg\s+(?P<kind>Spin|Wait|Hold)\s+Count\s+Max\s+(?:Spin|Wait|Hold)\s+"
                          r"Total\s+(?:Spin|Wait|Hold)\s*$", re.I)
KLOCK_ROW = re.compile(r"^\s*(?P<caller>[A-Za-z_.][\w.$]*(?:\+0x[0-9a-f]+)?)\s+(?P<avg>\d+(?:\.\d+)?)\s*\w*\s+"
                       r"(?P<count>\d+)\s+(?P<max>\d+(?:\.\d+)?)\s*\w*\s+(?P<total>\d+(?:\.\d+)?)\s*(?P<unit>ns|us|ms|s)?\s*$")
KLOCK_NOT_CPU = ("this is klockstat: kernel mutexes timed from mutex_lock to owning the lock (a waiter spins "
                 "briefly on a running owner, then sleeps) and how long each was held; lock waits and hold "
                 "times, not CPU samples")


# /proc/lock_stat (CONFIG_LOCK_STAT): `class: con-bounces contentions waittime-min -max -total [-avg] acq-bounces
# acquisitions holdtime-min -max -total [-avg]` (10 numbers before 3.x's averages, 12 after), each class's
# contention points `class  count  [<addr>] caller+0x57/0x280` below it, `lock_stat version` and the header
_NUM = r"\d+(?:\.\d+)?"
LOCKSTAT_ROW = re.compile(r"^\s*(?P<cls>\S.*?):\s+(?P<nums>(?:" + _NUM + r"\s+){9}(?:" + _NUM + r"\s+" + _NUM
                          + r"\s+)?" + _NUM + r")\s*$")
LOCKSTAT_POINT = re.compile(r"^\s*\S.*?\s+\d+\s+\[<(?:0x)?[0-9a-f]+>\]\s+\S+\s*$")
LOCKSTAT_OTHER = re.compile(r"^\s*(?:lock_stat version [\d.]+|class name\s+con-bounces\s.*|[-.]{10,})\s*$")
LOCKSTAT_NOT_CPU = ("this is /proc/lock_stat (a kernel built with CONFIG_LOCK_STAT): contentions and wait times "
                    "summed since the statistics were last cleared, with no window: which lock classes waited "
                    "most, not what share of CPU time the waiting took")


def starts_lock_contention(line: str) -> bool:
    if ":" in line and LOCKSTAT_ROW.match(line) or "lock_stat version" in line or "con-bounces" in line:
        return True
    return bool(HEADER.match(line) or ("Caller" in line and KLOCK_HEADER.match(line)))


def read_lock_stat(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """/proc/lock_stat rows from `start`: each lock class weighted by its total wait, never diagnosed
    (rule V6 of doc/accuracy.md).

    >>> block = read_lock_stat(["  clockevents_lock:  2926159  2947636  0.15  46882.81  1784540466.34  605.41"
    ...                         "  3381345  3879161  0.00  2260.97  53178395.68  13.71"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], bool(block.not_cpu)
    ([('[lock clockevents_lock]', 1784540466.34)], True)
    """
    block = Block("lock-stat", start, start, unit="us", header=True, not_cpu=LOCKSTAT_NOT_CPU)
    index = start
    while index < len(lines):
        line = lines[index]
        row = LOCKSTAT_ROW.match(line)
        if row:
            wait = float(row["nums"].split()[4])           # waittime-total, microseconds
            if wait > 0:
                block.stacks.append(((Frame(f"[lock {row['cls'].strip()}]", "kernel"),), wait, "", None, None))
        elif not (not line.strip() or LOCKSTAT_POINT.match(line) or LOCKSTAT_OTHER.match(line)
                  or ELISION.match(line)):
            break
        index += 1
    return finish(block, start, index, f"read /proc/lock_stat: {plural(len(block.stacks), 'lock-class row')} with "
                  "their total wait (since the statistics were cleared: no window, not CPU time)")


def read_klockstat(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """klockstat's wait and hold tables from `start`: the waits as caller -> mutex_lock, not CPU time
    (rule V4 of doc/accuracy.md; like the sleeping-lock rows of a perf lock contention table).

    >>> block = read_klockstat(["      Caller   Avg Spin  Count   Max spin Total spin",
    ...     "  psi_avgs_work+0x2e       3675      5       5468      18379", "",
    ...     "      Caller   Avg Hold  Count   Max hold Total hold",
    ...     "  psi_avgs_work+0x2e      14821      5      20446      74106"], 0)
    >>> [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks], bool(block.not_cpu), block.end
    ([(('psi_avgs_work', 'mutex_lock'), 18.379)], True, 5)
    """
    block = Block("klockstat", start, start, unit="us", header=True, not_cpu=KLOCK_NOT_CPU)
    waits = True
    index = start
    while index < len(lines):
        line = lines[index]
        header = KLOCK_HEADER.match(line)
        row = KLOCK_ROW.match(line)
        if header:
            waits = header["kind"].lower() != "hold"
        elif row:
            caller = SYM.match(row["caller"])
            scale = TO_US[row["unit"]] if row["unit"] else 1e-3      # klockstat prints nanoseconds
            if waits and caller and float(row["total"]) > 0:
                block.stacks.append(((Frame(normalize(caller["sym"]) or caller["sym"], "kernel"),
                                      Frame("mutex_lock", "kernel")), float(row["total"]) * scale, "", None, None))
        elif line.strip() and not ELISION.match(line):
            break
        index += 1
    return finish(block, start, index, f"read klockstat: {plural(len(block.stacks), 'mutex caller')} with their "
                  "total wait (lock waits, not CPU time)")


def _us(row: re.Match, name: str) -> float:
    return float(row[name]) * TO_US[row[name + "_unit"]]


def read_lock_contention(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The table under its header; rows of sleeping locks are counted, not read as CPU time."""
    if KLOCK_HEADER.match(lines[start]):
        return read_klockstat(lines, start)
    if LOCKSTAT_ROW.match(lines[start]) or LOCKSTAT_OTHER.match(lines[start]):
        return read_lock_stat(lines, start)
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
    window = _window(lines, start)
    if window:
        spun = sum(entry[1] for entry in block.stacks)
        block.whole = max(window, spun)
        if window > spun:
            block.notes.append(f"the spinning waits ({spun / 1e3:.2f} ms) are a share of the traced window "
                               f"({window / 1e6:g} s of at least one CPU)")
    if sleeping:
        block.notes.append(f"left out {plural(len(sleeping), 'sleeping-lock row')} ({sleeping_wait / 1e6:.2f} s of wait): "
                           "a mutex / rwsem waiter sleeps, its wait is not CPU time")
    return block


def _window(lines: Sequence[str], start: int) -> Optional[float]:
    """The traced window in microseconds, from the command line pasted just above the table."""
    for line in reversed(lines[max(0, start - 4):start]):
        found = WINDOW.search(line)
        if found:
            return float(found["seconds"]) * 1e6
    return None


def _frames(row: re.Match, stack: List[str], lock_frame: Optional[str], by_caller: bool) -> Optional[List[str]]:
    """Root first: the printed call stack (`-v`), else the caller with the lock's spinning under it
    (a sleeping lock: the caller alone)."""
    if stack:
        return list(reversed(stack))
    caller = SYM.match(row["what"]) if by_caller else None
    names = [normalize(caller["sym"]) or caller["sym"]] if caller else []
    names += [lock_frame] if lock_frame else []
    return names or None
