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
from .common import ELISION, Block, Miss, finish, plural, rows_of

HEADER = re.compile(r"^\s*contended\s+total wait\s+max wait\s+avg wait\s+type\s+(?P<last>caller|pid\s+comm|"
                    r"address\s+symbol|owner|lock\s+name|.+)\s*$")
TIME = r"(?P<{0}>\d+(?:\.\d+)?)\s*(?P<{0}_unit>ns|us|ms|s|m|h)"
ROW = re.compile(r"^\s*(?P<count>\d+)\s+" + TIME.format("total") + r"\s+" + TIME.format("max") + r"\s+"
                 + TIME.format("avg") + r"\s+(?P<type>[\w:-]+(?: [\w:-]+)?)\s+(?P<what>\S.*?)\s*$")
STACK = re.compile(r"^\s+(?:0x)?[0-9a-f]{8,16}\s+(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?(?:\s.*)?$")
SYM = re.compile(r"^(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+)?$")
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7, "h": 3.6e9}
# The traced window on a pasted command line: `perf lock con[tention] ... -- sleep N`.
WINDOW = re.compile(r"\bperf\s+lock\s+con\w*\b.*?\s--\s+sleep\s+(?P<seconds>\d+(?:\.\d+)?)\b")
# Locks whose waiters spin on the CPU; the frame that stands for that spinning under the caller.
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


def starts_lock_contention(line: str) -> bool:
    return bool(HEADER.match(line) or ("Caller" in line and KLOCK_HEADER.match(line)))


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


# -- /proc/lock_stat (CONFIG_LOCK_STAT, 2.6.23+; rule X4) -------------------------------------------
LOCK_STAT_VERSION = re.compile(r"^\s*lock_stat version \d+\.\d+\s*$")
LOCK_STAT_HEADER = re.compile(r"^\s*class name\s+con-bounces\b")
# A class row: `class: con-bounces contentions waittime-min -max -total [-avg] acq-bounces
# acquisitions holdtime-min -max -total [-avg]` (10 numbers before 3.x's averages, 12 after), each class's
# contention points `class  count  [<addr>] caller+0x57/0x280` below it, `lock_stat version` and the header
_NUM = r"\d+(?:\.\d+)?"
LOCKSTAT_ROW = re.compile(r"^\s*(?P<cls>\S.*?):\s+(?P<nums>(?:" + _NUM + r"\s+){9}(?:" + _NUM + r"\s+" + _NUM
                          + r"\s+)?" + _NUM + r")\s*$")
_LS_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_LS_CLASS = re.compile(r"^(?P<name>\S+?)(?P<side>-[RW])?:$")
_LS_ADDRESS = re.compile(r"^\[<[0-9a-f]+>\]$")
_LS_SITE = re.compile(r"^(?P<sym>[A-Za-z_.][\w.$]*)\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?$")
_LS_RULE = re.compile(r"^\s*(?:-{3,}|\.{3,})\s*$")
_LS_HEADER_WORDS = frozenset({"class", "name", "con-bounces", "contentions", "waittime-min", "waittime-max",
                              "waittime-total", "waittime-avg", "acq-bounces", "acquisitions", "holdtime-min",
                              "holdtime-max", "holdtime-total", "holdtime-avg"})
# The last part of a lockdep class name that says the lock sleeps: a mutex, a (rw) semaphore,
# mmap_lock (5.8+ rwsem), s_umount; everything else (spinlock_t `...->rlock`, rwlock_t, raw spin
# locks, a mutex's own `wait_lock`) spins.
_LS_SLEEPING = re.compile(r"mutex|sem(?:aphore)?(?:_key)?(?:#\d+)?$|rwsem|mmap_lock|s_umount", re.I)


def starts_lock_stat(line: str) -> bool:
    """The table's banner or header, or a class row pasted without them (`grep : /proc/lock_stat`)."""
    return bool(LOCK_STAT_VERSION.match(line) or LOCK_STAT_HEADER.match(line)
                or (":" in line and LOCKSTAT_ROW.match(line)))


# A spinning class whose waiters contended in fewer of its acquisitions than this is not contended
# (unix_table_lock: 112 of 66,312, 164 µs in all), whatever its share of the table's small wait:
# the ratio needs no window, which lock_stat lacks.
QUIET_CONTENTION = 0.01


def _contended(numbers: List[float]) -> bool:
    """contentions / acquisitions of a class row of 10 numbers (version 0.3) or 12 (0.4, with the
    averages after each time total) is at least QUIET_CONTENTION; True when acquisitions are cut off.

    >>> _contended([110, 112, 0.21, 49.24, 163.91, 1.46, 21094, 66312, 0.12, 624.42, 31589.81, 0.48])
    False
    >>> _contended([21930211, 22004121, 0.09, 2411.30, 211930441.12, 29101223, 41022913, 0.05, 40.21, 12203911.44])
    True
    """
    at = 7 if len(numbers) >= 12 else 6
    return _often_contended(numbers[1], numbers[at] if len(numbers) > at else 0.0)


def _often_contended(contentions: float, acquisitions: float) -> bool:
    """At least QUIET_CONTENTION of the acquisitions contended; True when acquisitions are unknown (0)."""
    return acquisitions <= 0 or contentions / acquisitions >= QUIET_CONTENTION


def _sleeping_class(name: str) -> bool:
    """A class named as a mutex, semaphore or rwsem by its last component (`&(&zone->lock)->rlock`: rlock)."""
    return bool(_LS_SLEEPING.search(_class_tail(name)))


def _class_tail(name: str) -> str:
    return re.split(r"->|\.", name.strip("&()"))[-1].strip("()-")


def _lock_stat_line(tokens: List[str]) -> bool:
    """A line of the table, whole or a piece a mail client wrapped: header words, a class row
    (`name:` and numbers), a call site (`name count [<addr>] sym+0x../0x..`), numbers alone."""
    if all(t in _LS_HEADER_WORDS for t in tokens):
        return True
    words = [t for t in tokens if not (_LS_NUMBER.match(t) or _LS_ADDRESS.match(t) or _LS_SITE.match(t))]
    return len(words) <= 1 and (not words or _LS_CLASS.match(words[0]) is not None
                                or tokens.index(words[0]) == 0)


def read_lock_stat(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """`/proc/lock_stat`: per lock class, a row of counts and times (µs) per side (`-W`, `-R` for
    rwlocks and rwsems), then the call sites where waiters contended (first group under `----`)
    and where the holders took it (second group). The first five columns are the same in every
    version (0.3: ten columns, 0.4: twelve): con-bounces, contentions, waittime-min, -max, -total.
    A class's total wait is spread over its contention points by their counts; a spinning lock's
    wait is CPU time, a sleeping lock's (class named as a mutex or semaphore) is not (as for
    `perf lock contention`). Tolerant of rows a mail client wrapped: the table is read as words.

    >>> block = read_lock_stat([
    ...     "lock_stat version 0.4",
    ...     "  class name  con-bounces  contentions  waittime-min  waittime-max  waittime-total",
    ...     "   &(&zone->lock)->rlock:   100   120   0.10   50.00   3000.00   1.00   500   900",
    ...     "   ---------",
    ...     "   &(&zone->lock)->rlock   90   [<ffffffff81164d2a>] free_pcppages_bulk+0x3a/0x3c0",
    ...     "   &(&zone->lock)->rlock   30   [<ffffffff81165f51>] get_page_from_freelist+0x3b1/0x8a0",
    ...     "   .........",
    ...     "   &mm->mmap_sem-W:   10   12   1.00   900.00   5000.00   1.00   40   80"], 0)
    >>> [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks]
    [(('free_pcppages_bulk', '_raw_spin_lock'), 2250.0), (('get_page_from_freelist', '_raw_spin_lock'), 750.0)]
    """
    index = start if LOCKSTAT_ROW.match(lines[start]) else start + 1     # `grep : /proc/lock_stat`
    classes: List[Dict] = []
    group = 0
    while index < len(lines):
        tokens = lines[index].split()
        if not tokens:
            index += 1
            continue
        if _LS_RULE.match(lines[index]):
            group += 1 if classes and lines[index].strip().startswith("-") else 0
            index += 1
            continue
        if LOCK_STAT_HEADER.match(lines[index]) or not _lock_stat_line(tokens):
            if LOCK_STAT_HEADER.match(lines[index]) and not classes:
                index += 1
                continue
            break
        for token in tokens:
            cls = _LS_CLASS.match(token)
            if cls and token not in _LS_HEADER_WORDS:
                classes.append({"name": cls["name"], "side": cls["side"] or "", "numbers": [], "sites": []})
                group = 0
            elif not classes or token in _LS_HEADER_WORDS:
                continue
            elif _LS_NUMBER.match(token) and len(classes[-1]["numbers"]) < 12 and group == 0 \
                    and not classes[-1]["sites"]:
                classes[-1]["numbers"].append(float(token))
            elif _LS_NUMBER.match(token) and "." not in token and group == 1:
                classes[-1]["sites"].append([int(token), None])
            elif _LS_SITE.match(token) and group == 1 and classes[-1]["sites"] and classes[-1]["sites"][-1][1] is None:
                classes[-1]["sites"][-1][1] = normalize(_LS_SITE.match(token)["sym"])
        index += 1
    rows = [c for c in classes if len(c["numbers"]) >= 5]
    if not rows:
        return Miss(index)
    # the call sites are printed once per class, after its -W and -R rows: share them
    by_name: Dict[str, List] = {}
    for row in rows:
        by_name.setdefault(row["name"], []).extend(s for s in row["sites"] if s[1])
    block = Block("lock-stat", start, index, unit="us", header=True)
    sleeping, sleeping_wait = [], 0.0
    for row in rows:
        wait = row["numbers"][4]
        if wait <= 0:
            continue
        spins = not _sleeping_class(row["name"]) and _contended(row["numbers"])
        lock = {"-R": "_raw_read_lock", "-W": "_raw_write_lock"}.get(row["side"], "_raw_spin_lock") if spins else None
        sites = by_name.get(row["name"]) or [[1, None]]
        total = sum(count for count, _ in sites) or 1
        for count, sym in sites:
            names = [n for n in (sym, lock) if n]
            if not names:
                continue
            entry = (tuple(Frame(n, "kernel") for n in names), wait * count / total, "", None, None)
            if spins:
                block.stacks.append(entry)
            else:
                sleeping.append(entry)
                sleeping_wait += wait * count / total
    if not block.stacks:
        if not sleeping:
            return Miss(index)
        block.stacks = sleeping
        block.not_cpu = (f"this lock_stat table lists only sleeping or uncontended locks "
                         f"({plural(len(sleeping), 'contention point')}: a mutex / rwsem / semaphore waiter sleeps, "
                         f"and a spinning lock waited on in under {QUIET_CONTENTION:.0%} of its acquisitions is "
                         "not contended): no lock here costs CPU time")
        block.notes.append("read /proc/lock_stat: sleeping or uncontended locks only")
        return block
    named = len({r["name"] for r in rows})
    block.notes.append(f"read /proc/lock_stat: {named} lock class{'' if named == 1 else 'es'}, "
                       "each spinning class's total wait spread over its contention points (a spinning "
                       "waiter's wait is CPU time); the totals run since the statistics were last cleared, so "
                       "shares are of the table's own wait, not of a window's CPU time")
    if sleeping:
        block.notes.append(f"left out the sleeping and uncontended lock classes ({sleeping_wait / 1e6:.2f} s of "
                           "wait): a mutex / rwsem waiter sleeps, and a spinning lock waited on in under "
                           f"{QUIET_CONTENTION:.0%} of its acquisitions is not contended")
    return block


# -- `perf lock report` of perf 2.6.33-5.x (rule AS2) ---------------------------------------------------
# The lockdep-based report (`perf lock record` then `perf lock report`): a row per lock class, its name
# cut to 16 columns, then acquired / contended / [avg wait] / total wait / max wait / min wait, all waits
# in nanoseconds, no call sites. Each row is a lock_stat class row in another layout: read the same way
# (a spinning class's total wait is CPU time, a sleeping or uncontended class is left out); the totals
# run over the recording, whose length the report does not print, so shares are of the table's wait.
PERF_LOCK_REPORT_HEADER = re.compile(r"^\s*Name\s+acquired\s+contended\s+(?P<avg>avg wait \(ns\)\s+)?total wait \(ns\)"
                                     r"\s+max wait \(ns\)\s+min wait \(ns\)\s*$")
PERF_LOCK_REPORT_ROW = re.compile(r"^\s*(?P<name>\S.*?)\s+(?P<acquired>\d+)\s+(?P<contended>\d+)\s+(?:(?P<avg>\d+)\s+)?"
                                  r"(?P<total>\d+)\s+\d+\s+\d+\s*$")


# the end of a class name the report cut at its column width that can only be a mutex or semaphore's
_CUT_SLEEPING = re.compile(r"(?:_mut|_mute|_sem|_rwse|_rws)$|mut$", re.I)


def starts_perf_lock_report(line: str) -> bool:
    return bool(PERF_LOCK_REPORT_HEADER.match(line))


def read_perf_lock_report(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """`perf lock report` rows from `start` (its header) as lock classes (rule AS2).

    >>> block = read_perf_lock_report([
    ...     "               Name   acquired  contended total wait (ns)   max wait (ns)   min wait (ns)", "",
    ...     "        dcache_lock   11290543    4211380     48312490233        1390222             512",
    ...     "   &inode->i_mutex     410221      41203      9019227000         10023             380",
    ...     "         &rq->lock    1104221        302          701322          7013             350"], 0)
    >>> [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks], bool(block.not_cpu)
    ([(('_raw_spin_lock',), 48312490.233)], False)
    """
    has_avg = bool(PERF_LOCK_REPORT_HEADER.match(lines[start])["avg"])

    def row_of(line: str) -> Optional["re.Match[str]"]:
        row = PERF_LOCK_REPORT_ROW.match(line)
        return row if row and bool(row["avg"]) == has_avg else None    # the avg column the header names, or none

    rows, index = rows_of(lines, start + 1, row_of)
    block = Block("perf-lock-report", start, index, unit="us", header=True)
    sleeping = []
    for row in rows:
        name, acquired, contended = row["name"].strip(), float(row["acquired"]), float(row["contended"])
        wait = float(row["total"]) / 1e3
        if wait <= 0:
            continue
        entry = ((Frame("_raw_spin_lock", "kernel"),), wait, "", None, None)
        # `&sb->s_type->i_mut`: i_mutex_key cut at the report's column width
        cut = len(name) >= 16 and bool(_CUT_SLEEPING.search(_class_tail(name)))
        if _sleeping_class(name) or cut or not _often_contended(contended, acquired):
            sleeping.append(entry)
        else:
            block.stacks.append(entry)
    if not block.stacks:
        if not sleeping:
            return Miss(index)
        block.stacks = [((Frame("mutex_lock", "kernel"),), entry[1], "", None, None) for entry in sleeping]
        block.not_cpu = ("this perf lock report lists only sleeping or uncontended locks (a mutex / rwsem / semaphore "
                         f"waiter sleeps, and a lock waited on in under {QUIET_CONTENTION:.0%} of its acquisitions is "
                         "not contended): no lock here costs CPU time")
    return finish(block, start, index, f"read perf lock report: {plural(len(rows), 'lock row')}, "
                  "each spinning class's total wait as its spinning (the report has no call sites and no window: "
                  "shares are of the table's own wait)")
