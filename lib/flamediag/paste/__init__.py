"""Diagnose what tickets already contain: pasted perf report / perf top / perf script / perf c2c /
perf lock contention / folded / bcc / bpftrace / ftrace / OProfile opreport / readprofile output, the perf-profile rows
of LKP regression reports, and kernel traces (oops,
NMI, lockup, hung task, crash bt, /proc/PID/stack, sysrq-l), with mpstat / vmstat / numactl /
sysctl / THP lines and turbostat tables as evidence.

    result = read_paste(open("ticket.txt").read())
    result.profile        # flamediag.profile.Profile, ancestry=False for flat profiles
    result.sections       # {"mpstat": text, "sysctl": text, ...} for facts.build_facts_from_sections
    result.formats, result.skipped_lines, result.notes

The paste is unwrapped first (markdown fences, quoting, HTML, CRLF, TUI glyphs, mail wrapping),
then read line by line: at each line the readers whose cheap trigger matches try to read a
block. Blocks form profiles; one profile is diagnosed (`paste.profiles`). When no layout
matched, the last-resort reader collects the kernel symbols found anywhere in the text.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from .. import errors
from ..errors import UserError
from ..flatclaims import WORKER
from ..offcpu import has_waker_separator, offcpu_reason
from ..profile import Profile
from . import (c2c, eventtables, ftrace, kstack, lastresort, lkp, lockcon, oprofile, perfdiff, perfreport, profiles, readprofile,
               stacktext, systemtap, tcpretrans)
from .common import Block, Miss, plural
from .irqtime import interrupt_cpus
from .sections import find_sections
from .unwrap import layouts, unwrap

UNDERSTOOD = (
    "perf report --stdio or TUI (call graph or flat), perf top, perf script, perf c2c, folded stacks, "
    "bcc profile (-f or multi-line), async-profiler traces and flat tables, bpftrace @[kstack] maps, ftrace stack traces, function_graph and workqueue events, the workqueue's hogged-CPU reports, "
    "crash bt, oops/NMI/soft-lockup/hung-task traces, /proc/PID/stack, sysrq-l dumps, OProfile opreport, readprofile, "
    "SystemTap print_stack backtraces, timer.profile counts, topsys.stp and futexes.stp tables, LKP perf-profile rows, perf diff tables, comparisons typed by hand, perf lock contention tables, /proc/lock_stat tables, bcc/bpftrace tcpretrans lines and tcp:tcp_retransmit_skb events, "
    "bcc softirqs / hardirqs tables, interrupt / softirq events (trace-cmd report), sysdig topscalls_time, perf trace -s, perf kvm stat report, kvm_stat, "
    "bcc/bpftrace tcpdrop, bcc criticalstat, drsnoop and compactsnoop, funccount and klockstat tables, bpftrace count maps and histograms, the ftrace function profile, "
    "counter tables of cachestat, llcstat, slabratetop, pidstat, cpuunclaimed, toplev and perf kmem stat"
)
WEIGHTED = frozenset({"folded", "bcc-profile-folded", "bcc-stacks", "bpftrace-kstack", "perf-script", "systemtap",
                      "async-profiler"})
# `perf record -C 0`, `perf report --cpu 3`: the samples shown are from that one CPU.
ONE_CPU = re.compile(r"\bperf\s+(?:record|report|top)\b.*?(?:\s-C\s*|\s--cpu[= ])(\d+)(?=\s|$)")
# `perf top -p $(pgrep kswapd0)`, `perf record -p `pidof mysqld``, `perf report --comms java`: the
# samples shown are of that one process, which the command line names (a listing restricted to
# one process often has no Command column).
ONE_TASK = re.compile(r"\bperf\s+(?:record|report|top)\b.*?\s(?:-p|--pid)[= ]?\s*(?:\$\(|`)\s*(?:pgrep|pidof)\s+(?:-\S+\s+)*"
                      r"(?P<proc>[\w./:-]+)\s*(?:\)|`)"
                      r"|\bperf\s+report\b.*?\s(?:--comms?|-c)[= ]?(?P<comm>[A-Za-z_][\w./:-]*)(?=\s|$)")   # -c: perf top/record's count
# `top`'s task table (procps: PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND) and its rows; a
# kernel thread has no user memory, so its VIRT, RES and SHR are all 0.
TOP_TABLE = re.compile(r"^\s*PID\s+USER\s+PR\s+NI\s+VIRT\s+RES\s+SHR\s+S\s+%CPU\s+%MEM\s+TIME\+?(?:\s+COMMAND)?\s*$")
TOP_ROW = re.compile(r"^\s*(?P<pid>\d+)\s+\S+\s+\S+\s+-?\d+\s+(?P<virt>\S+)\s+(?P<res>\S+)\s+(?P<shr>\S+)\s+[RSDIZTtXW]\s+"
                     r"(?P<cpu>\d+(?:[.,]\d+)?)\s+\d+(?:[.,]\d+)?\s+\S+(?:\s+(?P<comm>\S+))?")
# htop's task table (rule CW1), its default columns as htop 1.x-3.x print them (Process.c / Row.c):
#   PID USER PRI NI VIRT RES SHR S CPU% MEM% TIME+ Command
# htop 3 marks the sorted column's title with a triangle (ASCII `^`/`v`) in place of its trailing space
# (`CPU%▽MEM%`). A row: PRI is a number or `RT`; VIRT, RES and SHR are KiB, printed plain below 100000
# and with a unit above (`3881M`, `11.2G`, `12T`; a kernel thread's are 0); CPU% is `88.2` below 100,
# `350.` from 100 (and `1234` from 1000), `N/A` when unknown; TIME+ is `22:40.17` under an hour, then
# `1h02:11`, `10h12:33` (htop 2: `123h` from 100 hours; htop 3: `3d04h`, `12d03h`, `1y034d`); the
# Command column holds the whole command line (`/usr/sbin/mysqld --basedir=/usr`), or a kernel
# thread's name, behind the tree view's glyphs (`├─ `, `└─ `, `│  `, collapsed `├+ `; ASCII `|- `,
# `` `- ``) when the tree is shown.
_HTOP_GAP = r"(?:\s*[\u25b3\u25bd^v]\s*|\s+)"       # the space between two titles, or htop 3's sort mark
HTOP_TABLE = re.compile(r"^\s*" + _HTOP_GAP.join(["PID", "USER", "PRI", "NI", "VIRT", "RES", "SHR", "S", "CPU%", "MEM%", r"TIME\+"])
                        + rf"(?:{_HTOP_GAP}Command)?\s*[\u25b3\u25bd^v]?\s*$")
_HTOP_KIB = r"\d+(?:[.,]\d+)?[KMGTP]?"
_HTOP_PCT = r"(?:\d+(?:[.,]\d*)?|N/A)"
_HTOP_TREE = r"\s\u2502\u251c\u2514\u250c\u2500+|`,-"       # the tree view's glyphs, UTF-8 and ASCII
HTOP_ROW = re.compile(rf"^\s*(?P<pid>\d+)\s+\S+\s+(?:-?\d+|RT)\s+-?\d+\s+(?P<virt>{_HTOP_KIB})\s+(?P<res>{_HTOP_KIB})\s+"
                      rf"(?P<shr>{_HTOP_KIB})\s+[RSDIZTtXWP?]\s+(?P<cpu>{_HTOP_PCT})\s+{_HTOP_PCT}\s+\d[\d:.hdmy]*\s+"
                      rf"[{_HTOP_TREE}]*(?P<comm>[^{_HTOP_TREE}]\S*)")
# `top` rows cut out of their table by grep (`top -b -n1 | grep kswapd`, rule CC2): the command line
# stands where the header would, so the rows under it are the task table's rows
TOP_GREP = re.compile(r"^(?:[$#]\s*)?(?:sudo\s+)?top\s+(?:-\S+\s+)*-\S*b\S*(?:\s+-\S+)*(?:\s+\d+)?\s*\|\s*e?grep\b")
# perf top's header when it samples one process (`perf top -p 411`): `(target_pid: 411)`
TARGET_PID = re.compile(r"\(target_pid:\s*(?P<pid>\d+)\)")
# the main loops only one kernel thread runs: a one-process listing holding one is that thread's (rule AB3)
THREAD_LOOPS = {"kswapd": frozenset({"kswapd", "balance_pgdat", "kswapd_shrink_node", "kswapd_shrink_zone"})}
# `perf record -a`, `perf top --all-cpus`: a system-wide listing, whatever its rows (rule AM1)
ALL_CPUS = re.compile(r"\bperf\s+(?:record|top)\b.*?\s(?:-a|--all-cpus)(?=[\s,;)]|$)")
# `perf record -p 43` with a bare pid: the pid names a command only where the paste shows it, in a
# `top` row above (rule H4). perf record and perf top take `-p/--pid` and `-t/--tid`, perf report
# `--pid` and `--tid` (its `-p` is `--parent`): each a comma-separated list (perf-report(1)), and a list
# of several is no one process (rule CW2).
ONE_PID = re.compile(r"\bperf\s+(?:(?:record|top)\b.*?\s(?:-p|--pid|-t|--tid)|report\b.*?\s--[pt]id)[= ]?\s*"
                     r"(?P<pid>\d+)(?=[\s,;)]|$)(?!,\s*\d)")
# bcc profile's banner: `Sampling at 99 Hertz of all threads by kernel stack for 10 secs.` (without
# `for N secs` the run ended at Ctrl-C and its length is unknown): one CPU gives rate x seconds
# samples over the window (rule BR1)
SAMPLING_WINDOW = re.compile(r"\bSampling at (?P<hz>\d+(?:\.\d+)?) Hertz\b.*?\bfor (?P<secs>\d+(?:\.\d+)?) secs?\b")
# bpftrace's one-liner quoted above its map: `profile:hz:99 { @[kstack] = count(); } interval:s:10 { exit(); }`
# samples each CPU 99 times a second and ends after 10 s, so one CPU gives 990 samples (rule BZ2); a script
# with another probe (kprobe, tracepoint, ...) may count events, and one without the exiting interval was
# ended by hand, so neither gives a window
BPFTRACE_RATE = re.compile(r"\bprofile:hz:(?P<hz>\d+)\s*(?:/[^/{]*/\s*)?\{[^}]*\bcount\(\)")
BPFTRACE_EXIT = re.compile(r"\binterval:s:(?P<secs>\d+)\s*\{[^}]*\bexit\(\)")
BPFTRACE_OTHER_PROBE = re.compile(r"(?:^|[\s'\"},;])(?:k(?:ret)?probe|u(?:ret)?probe|k(?:ret)?func|fentry|fexit|"
                                  r"(?:raw)?tracepoint|usdt|software|hardware|(?:async)?watchpoint|iter|"
                                  r"kr?|ur?|fr?|t|rt|U|s|h|w|aw|it):")
# A tool's command line (`# ./profile -F 99`, `$ sudo perf script`) or banner above its output.
INTRO = re.compile(r"^\s*(?:[#$>%]\s*(?:sudo\s+)?\S*(?:perf|profile|offcputime|offwaketime|wakeuptime|stackcount|"
                   r"bpftrace|trace-cmd|funcgraph|stackcollapse\S*)\b|Sampling at \d+|Tracing |Attaching \d+ probe)")


@dataclass
class PasteResult:
    profile: Profile
    sections: Dict[str, str] = field(default_factory=dict)
    formats: List[str] = field(default_factory=list)
    skipped_lines: int = 0
    notes: List[str] = field(default_factory=list)


Reader = Callable[[Sequence[str], int], Union[Block, Miss, None]]


def _readers_for(line: str) -> List[Reader]:
    """The readers worth trying at this line (cheap triggers keep prose fast)."""
    text = kstack.PREFIX.sub("", line)
    readers: List[Reader] = []
    if kstack.CRASH_TASK.match(line):
        readers.append(kstack.read_crash_bt)
    if kstack._header(text) is not None or kstack.CALL_TRACE.match(text) or kstack.SYSRQ.search(text) \
            or (kstack.FRAME.match(text) and not kstack.PROC_STACK.match(line)) or kstack.OLD_FRAME.search(text):
        readers.append(kstack.read_kernel_log)
    if kstack.PROC_STACK.match(line) or kstack._comm_hint(line) is not None:
        readers.append(kstack.read_proc_stack)
    if line.startswith("@") or line.startswith("Attaching ") and "probe" in line:
        readers.append(stacktext.read_bpftrace)
    if stacktext.PERF_SCRIPT_HEADER.match(line[:256]):
        readers.append(stacktext.read_perf_script)
    if ";" in line and stacktext.FOLDED.match(line.strip()):
        readers.append(stacktext.read_folded)
    if stacktext.BCC_FRAME.match(line):
        readers.append(stacktext.read_bcc_stacks)
    if stacktext.starts_async_profiler(line):
        readers.append(stacktext.read_async_profiler)
    if lkp.starts_lkp(line):
        readers.append(lkp.read_lkp)
    if lockcon.starts_lock_contention(line):
        readers.append(lockcon.read_lock_contention)
    if lockcon.starts_lock_stat(line):
        readers.append(lockcon.read_lock_stat)
    if lockcon.starts_perf_lock_report(line):
        readers.append(lockcon.read_perf_lock_report)
    if c2c.starts_c2c(line):
        readers.append(c2c.read_c2c)
    if eventtables.starts_event_table(line):
        readers.append(eventtables.read_event_table)
    if eventtables.starts_wait_table(line):
        readers.append(eventtables.read_wait_table)
    if eventtables.starts_metric_table(line):
        readers.append(eventtables.read_metric_table)
    if tcpretrans.starts_tcpretrans(line):
        readers.append(tcpretrans.read_tcpretrans)
    if ftrace.starts_ftrace(line):
        readers.append(ftrace.read_ftrace)
    if perfdiff.starts_diff(line):
        readers.append(perfdiff.read_diff)
    if perfreport.starts_report(line):
        readers.append(perfreport.read_report)
    if oprofile.starts_oprofile(line):
        readers.append(oprofile.read_opreport)
    if readprofile.starts_readprofile(line):
        readers.append(readprofile.read_readprofile)
    if systemtap.starts_systemtap(line):
        readers.append(systemtap.read_systemtap)
    if systemtap.starts_profile_counts(line):
        readers.append(systemtap.read_profile_counts)
    if systemtap.starts_futexes(line):
        readers.append(systemtap.read_futexes)
    return readers


def _blocks(lines: Sequence[str]) -> List[Block]:
    """Every block the readers find, each paste line read once: a reader that saw no block of
    its kind up to line N (a `Miss`) is not tried again before N."""
    blocks: List[Block] = []
    not_before: Dict[Reader, int] = {}
    index = 0
    while index < len(lines):
        block = None
        for reader in _readers_for(lines[index]):
            if not_before.get(reader, 0) > index:
                continue
            got = reader(lines, index)
            if isinstance(got, Miss):
                not_before[reader] = got.resume
            elif got is not None and got.end > index:
                block = got
                break
        if block is None:
            index += 1
            continue
        blocks.append(block)
        index = block.end
    return blocks


def read_paste(text: str) -> PasteResult:
    """Read every stack and evidence section in a pasted ticket; see the module docstring."""
    lines, blocks, others = _read_lines(text)
    sections, section_lines = find_sections(lines)
    _complete_sections(sections, others)
    if not any(b.stacks for b in blocks):
        fallback = (lastresort.read_chains(lines, set(section_lines))
                    or lastresort.read_comparison(lines, set(section_lines))
                    or lastresort.read_symbols(lines, set(section_lines)))
        if fallback is None:
            raise UserError(f"no stacks found; understood formats: {UNDERSTOOD}", errors.DATAERR)
        blocks = [fallback]
        covered = {i for i, line in enumerate(lines) if line.strip()}
    else:
        covered = set(section_lines)
        for block in blocks:
            covered.update(range(block.start, block.end))
    # a mail client may have wrapped the task table's rows and not the listing: the table is read in
    # the layout that joins them back (as metric sections are, rule K6); each layout's task tables
    # are read once for every rule that judges them (tee keeps what one rule read for the others).
    # The rows of the layout read stand above or below its listings (rule CC1: their line numbers
    # are the listings'); the threads the pasted `top` shows (rule CI1) are those of the first
    # layout that reads rows, as for rules I2 and BY1.
    tables = TaskTables.read(lines)
    for_busy, for_share, for_shown = itertools.tee(itertools.chain([tables], map(TaskTables.read, others)), 3)
    thread = next((t for t in map(_busy_task_row, for_busy) if t), None)
    threads = next((t for t in map(kernel_thread_cpu, for_share) if t), {})
    shown = next((t.top for t in for_shown if t.top), [])
    for block in blocks:
        _look_above(block, lines, tables.top, shown)
        tcpretrans.rare_retransmits(block, lines, *others)
        if thread is not None:
            _kernel_entries_of(block, thread)
    skipped = sum(1 for i, line in enumerate(lines) if line.strip() and i not in covered)
    result = _result(blocks, sections, skipped)
    result.profile.thread_cpu = threads
    result.profile.interrupt_cpus = interrupt_cpus([lines, *others], sections)
    return result


def _read_lines(text: str):
    """(lines, blocks) of the layout of the paste its readers understand best (`unwrap.layouts`)."""
    candidates = layouts(text)
    _, best = next(candidates)
    blocks = _blocks(best)
    seen = [best]
    for name, undone in candidates:
        if undone == best:
            continue
        seen.append(undone)
        other = _blocks(undone)
        if _reads_better(name, (undone, other), (best, blocks)):
            best, blocks = undone, other
    return best, blocks, [lines for lines in seen if lines is not best]


def _complete_sections(sections: Dict[str, str], others: Sequence[Sequence[str]]) -> None:
    """The stacks choose the layout, and their listing may have survived a mail client that wrapped
    the metric tables beside it (a sysstat 7 mpstat row with its intr/s column is ~95 columns): a
    section that another layout of the paste reads with more of its text (its rows joined back to
    the header they belong to) is taken from that layout (rule K6).

    >>> sections = {"mpstat": "10:41:07     CPU   %user   %nice    %sys %iowait    %irq   %soft"}
    >>> joined = ["10:41:07  CPU  %user  %nice  %sys %iowait  %irq  %soft %steal  %idle  intr/s",
    ...           "10:41:08    0   0.00   0.00  2.00    0.00 11.00  87.00   0.00   0.00 60118.00"]
    >>> _complete_sections(sections, [joined]); sections["mpstat"].count("87.00")
    1
    """
    def weight(text: str) -> int:
        return len("".join(text.split()))
    for lines in others:
        found, _ = find_sections(lines)
        for name, text in found.items():
            if name in sections and weight(text) > weight(sections[name]):
                sections[name] = text


def _reads_better(layout: str, reading, than) -> bool:
    """Column 0 is where the tools print: a dedented layout is better when it reads as many
    stacks (read indented, a flat listing can pass for a call graph). Joining lines back is
    better only when it reads more frames (or as many in more stacks) and no less of the text: a
    prose line joined to a record adds no frame."""
    if layout == "dedented":
        return len(_stacks(reading[1])) >= max(1, len(_stacks(than[1])))
    return _understood(reading[1]) > _understood(than[1]) and _text_read(*reading) >= _text_read(*than)


def _understood(blocks: Sequence[Block]) -> Tuple[int, int]:
    """(frames, stacks) read: more frames, or as many split into more stacks (a trace whose
    header a mail client wrapped runs into the trace above it)."""
    stacks = _stacks(blocks)
    return sum(map(len, stacks)), len(stacks)


def _text_read(lines: Sequence[str], blocks: Sequence[Block]) -> int:
    """The non-blank characters of the lines the blocks took: joining lines does not change it."""
    return sum(len("".join(lines[i].split())) for block in blocks for i in range(block.start, block.end))


def _stacks(blocks: Sequence[Block]) -> List[tuple]:
    return [stack[0] for block in blocks for stack in block.stacks]


def read_evidence(text: str) -> Dict[str, str]:
    """Only the metric evidence of a paste (mpstat, vmstat, numactl, sysctl, THP, turbostat ... sections),
    unwrapped as read_paste() does: for `flamediag facts`, which needs no stacks."""
    return find_sections(unwrap(text))[0]


# A task table's thread does the work when it runs half a CPU or more and holds this much of the
# %CPU of the rows listed (rules I2 and R5: one threshold for `top` and `pidstat`).
BUSY_CPU = 50.0
BUSY_SHARE = 0.8


class TopRow(NamedTuple):
    comm: str
    cpu: float              # %CPU: the part of one CPU, times 100
    kernel: bool            # a kernel thread: no user memory (VIRT, RES and SHR 0)
    grepped: bool           # cut out of its table by `top ... | grep` (rule CC2)
    pid: str                # the PID column: the task a one-process listing samples (rule CC1)
    line: int               # the index of the row's (first) line in the paste: above or below a listing (CC1)


class TaskTables(NamedTuple):
    """The task tables of a paste: the rows of its `top` tables, and each `pidstat -u` table as
    pidstat's parsed rows. Read once; the busy-thread rules (I2, R5), the part of one CPU a
    kernel thread takes (BY1) and the task a listing beside them is of (CC1, CI1) judge the same
    rows."""
    top: List[TopRow]
    pidstat: List[List[dict]]

    @classmethod
    def read(cls, lines: Sequence[str]) -> "TaskTables":
        return cls(_top_rows(lines), list(_pidstat_cpu_tables(lines)))


def _busy_task_row(tables: TaskTables) -> Optional[str]:
    """The kernel thread a pasted `top` (rule I2) or, failing that, `pidstat` table (rule R5) shows
    doing nearly all of the CPU work."""
    return _busy_kernel_thread(tables.top) or _busy_pidstat_thread(tables.pidstat)


def _busy_kernel_thread(rows: Sequence[TopRow]) -> Optional[str]:
    """The kernel thread a pasted `top` task table shows doing nearly all of the CPU work: a row with
    VIRT, RES and SHR 0 (no user memory: a kernel thread) at half a CPU or more, holding at least
    80 % of the %CPU of the rows listed. None when there is no table or the work is shared.

    >>> _busy_kernel_thread(_top_rows([
    ...     "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND",
    ...     "     92 root      20   0       0      0      0 R 100.0   0.0 614:12.30 kswapd0",
    ...     "   3011 me        20   0 3871220 412300 133104 S   6.3   0.6  41:02.11 firefox"]))
    'kswapd0'
    >>> _busy_kernel_thread(_top_rows(["> PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+", "COMMAND",
    ...     ">     114 root 20 0 0 0 0 R 97.0 0.0 61:02.11", "kworker/0:2+events", "> 612 me 20 0 400m 40m 9m S 3.1 0.5 1:02.00 Xorg"]))
    'kworker/0:2+events'
    >>> _busy_kernel_thread(_top_rows(["  PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND",
    ...     " 2181 root  0 -20 0 0 0 S 38.9 0.0 61:12.44 z_rd_int_1", " 2180 root  0 -20 0 0 0 S 37.6 0.0 60:55.02 z_rd_int_0"]))

    Workqueue workers are one pool (rule AB2): the kworkers of the table together are the thread.

    >>> _busy_kernel_thread(_top_rows(["  PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND",
    ...     " 1834 root 20 0 0 0 0 R 100.0 0.0 902:11.43 kworker/u72:3+events_unbound",
    ...     " 2210 root 20 0 0 0 0 R 99.7 0.0 877:45.02 kworker/u72:1+events_unbound",
    ...     " 3001 me   20 0 4812300 91200 20100 S 9.0 0.1 3:02.11 java"]))
    'kworker/u72:3+events_unbound'

    So are the `events/N` threads that ran the work items of 2.6 kernels:

    >>> _busy_kernel_thread(_top_rows(["  PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND",
    ...     "   21 root 15 -5 0 0 0 R 58.2 0.0 301:02.11 events/3", "   19 root 15 -5 0 0 0 R 55.0 0.0 288:40.70 events/1",
    ...     " 4410 me   15  0 812m 91m 20m S 9.0 0.1 3:02.11 java"]))
    'events/3'
    """
    rows = [row for row in rows if not row.grepped]     # a pattern chose those: no table of busy tasks
    total = sum(row.cpu for row in rows)
    busiest = max(rows, key=lambda row: row.cpu, default=None)
    if busiest is None or not busiest.kernel or busiest.cpu < BUSY_CPU:
        return None
    # kworkers run whatever work items their pool is handed, the same items moving between them:
    # several busy kworkers are one pool doing the workqueue's work (rule AB2)
    pool = sum(row.cpu for row in rows if row.kernel and WORKER.match(row.comm)) if WORKER.match(busiest.comm) else 0.0
    if max(busiest.cpu, pool) < BUSY_SHARE * total:
        return None
    return busiest.comm


def _top_rows(lines: Sequence[str]) -> List[TopRow]:
    """(command, %CPU, kernel thread?, grepped?, PID, line index) of each row of the `top` task tables
    pasted: a kernel thread has no user memory (VIRT, RES and SHR 0); a row a mail client wrapped at 72
    columns gets its command back from the next line (rule CI2), and its line index is its first
    line's. Rows a `top ... | grep` command line cut out of their table are marked grepped (rule CC2):
    each gives its task's part of one CPU, but being chosen by a pattern they are no table of the host's
    busy tasks. Only rows under top's column header or such a command line are read: every rule that
    judges `top` rows (I2, R5, BY1, CC1, CI1) reads these, and a row-shaped line without either is not
    one of them.

    >>> _top_rows(["  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+",
    ...            "COMMAND",
    ...            "   86 root      20   0       0      0      0 S  17.6   0.0   1:52.83",
    ...            "kswapd0"])
    [TopRow(comm='kswapd0', cpu=17.6, kernel=True, grepped=False, pid='86', line=2)]

    A whole row keeps the next line apart, and a row without a header or a grep is not read:

    >>> [row.comm for row in _top_rows(["  PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND",
    ...     "   86 root      20   0       0      0      0 S  17.6   0.0   1:52.83 kswapd0", "kworker/u16:2"])]
    ['kswapd0']
    >>> _top_rows(["   86 root      20   0       0      0      0 S  17.6   0.0   1:52.83 kswapd0"])
    []

    htop's task table is read by its own grammar (rule CW1, see HTOP_ROW): sizes with units, a CPU%
    of 100 or more with a trailing dot, TIME+ with hours, the tree view's glyphs, and the whole command
    line, of which the row keeps the program's base name (`_program_name`); a kernel thread keeps its
    name and is known by VIRT, RES and SHR 0, as in top:

    >>> [(r.pid, r.comm, r.cpu, r.kernel) for r in _top_rows([
    ...     "  PID USER      PRI  NI  VIRT   RES   SHR S CPU%\u25bdMEM%   TIME+  Command",
    ...     "    2 root       20   0     0     0     0 S  0.0  0.0  0:00.02 kthreadd",
    ...     "  112 root       20   0     0     0     0 R 350.  0.0 10h12:33 \u251c\u2500 kswapd0",
    ...     " 4411 mysql      20   0 11.2G 3881M 21104 S 88.2 24.4  1h02:11 \u2502  \u2514\u2500 /usr/sbin/mysqld --basedir=/usr",
    ...     "   41 root       RT   0     0     0     0 S  N/A  0.0    123h |  `- migration/3"])]
    [('2', 'kthreadd', 0.0, True), ('112', 'kswapd0', 350.0, True), ('4411', 'mysqld', 88.2, False), ('41', 'migration/3', 0.0, True)]

    Its meter bars and header summary above the table are no rows, nor is its function-key bar below:

    >>> _top_rows(["  1  [|||||||||||||   45.2%]   Tasks: 112, 300 thr; 2 running",
    ...            "  2  [||||||||||||||||100.0%]   Load average: 1.02 0.88 0.70",
    ...            "  PID USER      PRI  NI  VIRT   RES   SHR S CPU% MEM%   TIME+  Command",
    ...            "F1Help  F2Setup F3SearchF4FilterF5Tree  F6SortByF7Nice -F8Nice +F9Kill  F10Quit"])
    []
    """
    rows: List[TopRow] = []
    row_of: Optional[re.Pattern] = None      # the grammar of the table being read: top's or htop's
    grepped = False
    texts = [line.strip().lstrip(">| ").strip() for line in lines]
    for index, text in enumerate(texts):
        if TOP_TABLE.match(text) or TOP_GREP.match(text) or HTOP_TABLE.match(text):
            row_of = HTOP_ROW if HTOP_TABLE.match(text) else TOP_ROW
            grepped = bool(TOP_GREP.match(text))
            continue
        if row_of is TOP_ROW and (text == "COMMAND" or (rows and " " not in text and text == rows[-1][0])):
            continue              # the tail of a row or header that a mail client wrapped (see below)
        match = row_of.match(text) if row_of is not None else None
        if match is None:
            row_of = None
            continue
        comm = match["comm"]
        if comm is None:          # wrapped at 72 columns: the command went to the next line, alone
            tail = texts[index + 1] if index + 1 < len(texts) else ""
            if not tail or " " in tail or TOP_ROW.match(tail):
                continue
            comm = tail
        kernel = match["virt"] == match["res"] == match["shr"] == "0"
        if row_of is HTOP_ROW and not kernel:
            comm = _program_name(comm)
        cpu = 0.0 if match["cpu"] == "N/A" else float(match["cpu"].replace(",", "."))
        rows.append(TopRow(comm, cpu, kernel, grepped, match["pid"], index))
    return rows


def _program_name(word: str) -> str:
    """Rule CW1: the name the rules compare of a process htop lists by its command line's first word:
    the program's base name, as top's COMMAND column and perf's comm give it (`/usr/sbin/mysqld` is
    mysqld; a login shell's `-bash` is bash, its dash read as a tree glyph; a process that retitles
    itself, `postgres:` or `sshd:`, loses the colon). A kernel thread has no command line, and htop
    shows its name as it is (`kworker/u16:2-flush-8:16`): it is not passed here.

    >>> _program_name("/usr/sbin/mysqld"), _program_name("postgres:"), _program_name("cc1plus")
    ('mysqld', 'postgres', 'cc1plus')
    """
    return word.rstrip(":").rsplit("/", 1)[-1] or word


PIDSTAT_CPU_HEADER = re.compile(r"\b(?:PID|TID)\b.*%(?:usr|user)\s+%system\b.*\bCommand\s*$")


def _pidstat_cpu_tables(lines: Sequence[str]) -> Iterator[List[dict]]:
    """Each pasted `pidstat -u` table (its header to the next blank line) as pidstat's parsed rows."""
    from ..parsers import pidstat
    texts = _joined_rows([line.strip().lstrip(">| ").strip() for line in lines])
    for index, text in enumerate(texts):
        if not PIDSTAT_CPU_HEADER.search(text):
            continue
        end = index + 1
        while end < len(texts) and texts[end]:
            end += 1
        yield pidstat.parse("\n".join(texts[index:end]))["cpu"]


def _busy_pidstat_thread(tables: Sequence[List[dict]]) -> Optional[str]:
    """The same from a pasted `pidstat -u` / `pidstat -t -u` table (read by parsers/pidstat.py): a
    task with no user time (%usr 0: a kernel thread runs no user code) at half a CPU or more of
    system time, holding at least 80 % of the %CPU of the rows listed (rule R5).

    >>> _busy_pidstat_thread(TaskTables.read([
    ...     "14:02:11  UID  TGID  TID  %usr %system  %guest  %wait  %CPU  CPU  Command",
    ...     "14:02:16    0    41    -  0.00   99.60    0.00   0.00  99.60    2  kswapd0",
    ...     "14:02:16    0     -   41  0.00   99.60    0.00   0.00  99.60    2  |__kswapd0",
    ...     "14:02:16 1000   612    -  12.40   6.20    0.00  41.80  18.60    0  node-red"]).pidstat)
    'kswapd0'
    >>> _busy_pidstat_thread(TaskTables.read(["14:02:11  UID  PID  %usr %system  %guest  %CPU  CPU  Command",
    ...     "14:02:16 1000  612  1.00  88.00  0.00  89.00  0  node"]).pidstat) is None      # it runs user code
    True
    """
    for table in tables:
        rows = [row for row in table if row.get("%CPU") is not None]
        total = sum(row["%CPU"] for row in rows)
        busiest = max(rows, key=lambda row: row["%CPU"], default=None)
        if busiest is None or busiest["%CPU"] < BUSY_CPU or busiest["%CPU"] < BUSY_SHARE * total:
            continue
        if (busiest.get("%usr", busiest.get("%user")) or 0) == 0 and (busiest.get("%system") or 0) >= BUSY_CPU:
            return busiest["command"]
    return None


def kernel_thread_cpu(tables: TaskTables) -> Dict[str, float]:
    """Rule BY1: the part of one CPU each kernel thread of a pasted `top` task table (VIRT, RES and
    SHR 0) or `pidstat -u` table (no user time) takes: its %CPU over 100. Both tools give a task's
    %CPU as a share of one CPU (top's default Irix mode, pidstat without -I), so 100 is one whole CPU
    whatever the host has, which is what a background thread's cost is measured in (rule BR1). A
    thread seen in several screens keeps its highest reading.

    >>> kernel_thread_cpu(TaskTables.read([
    ...     "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND",
    ...     "  272 root      25   5       0      0      0 R 100.0  0.0  89021:14 ksmd",
    ...     " 8812 libvirt+  20   0 4711208 2.012g  18404 S  98.3  0.8   9912:03 qemu-system-x86"]))
    {'ksmd': 1.0}
    >>> kernel_thread_cpu(TaskTables.read([
    ...     "14:02:11  UID  TGID  TID  %usr %system  %guest  %wait  %CPU  CPU  Command",
    ...     "14:02:16    0    41    -  0.00    8.00    0.00   0.00   8.00    2  kcompactd0",
    ...     "14:02:16    0     -   41  0.00    8.00    0.00   0.00   8.00    2  |__kcompactd0",
    ...     "14:02:16 1000   612    -  12.40   6.20    0.00  41.80  18.60    0  node-red"]))
    {'kcompactd0': 0.08}
    """
    taken: Dict[str, float] = {}

    def note(comm: str, cpu: float) -> None:
        comm = comm[3:] if comm.startswith("|__") else comm
        taken[comm] = max(taken.get(comm, 0.0), round(cpu / 100, 4))

    for row in tables.top:
        if row.kernel:
            note(row.comm, row.cpu)
    for table in tables.pidstat:
        for row in table:
            if row.get("%CPU") is None or not row.get("command"):
                continue
            if (row.get("%usr", row.get("%user")) or 0) == 0 and row.get("%usr", row.get("%user")) is not None:
                note(row["command"], row["%CPU"])
    return taken


SYSSTAT_TIME = re.compile(r"^(?:\d\d:\d\d:\d\d|Average:)")


def _joined_rows(texts: List[str]) -> List[str]:
    """sysstat rows (a time first) a mail client wrapped: the words it moved to the next line,
    which starts with no time of its own, joined back with a space (the `word-joined` layout
    leaves a line that starts with a number alone).

    >>> rows = _joined_rows(["14:02:11      UID      TGID       TID    %usr %system  %guest   %wait",
    ...     "%CPU   CPU  Command", "14:02:16        0        41         -    0.00   99.60    0.00    0.00",
    ...     "99.60     2  kswapd0", "14:02:16     1000       612         -   12.40    6.20  18.60  0  node"])
    >>> [row.split()[-1] for row in rows], rows[1].split()[-3:]
    (['Command', 'kswapd0', 'node'], ['99.60', '2', 'kswapd0'])
    """
    out: List[str] = []
    for text in texts:
        if (out and text and SYSSTAT_TIME.match(out[-1]) and not SYSSTAT_TIME.match(text)
                and not out[-1].endswith("Command") and len(out[-1]) >= 60):
            out[-1] = out[-1] + " " + text
        else:
            out.append(text)
    return out


def _kernel_entries_of(block: Block, thread: str) -> None:
    """A listing without a command column, beside a `top` table where one kernel thread does the
    work: the kernel entries are that thread's (user-space entries are some process's, never a
    kernel thread's), as a `perf top -p $(pgrep kswapd0)` command line would say."""
    kernel = [bool(frames) and frames[-1].kind == "kernel" for frames, *_ in block.stacks]
    if not any(kernel) or any(comm for (_, _, comm, _, _), k in zip(block.stacks, kernel) if k):
        return
    _name_commandless(block, thread, kernel_only=True)
    block.notes.append(f"kernel entries without a command are {thread}'s (the pasted top shows it doing "
                       f"the CPU work)")


def _name_commandless(block: Block, name: str, kernel_only: bool = False) -> None:
    """Give the block's commandless entries a command: their stacks and their `--children` totals
    (Block.through), so that a total and the samples it holds count for the same command. With
    kernel_only, user-space entries (a stack with a user leaf, a total of a symbol listed as user)
    keep no command."""
    user = {frames[-1].name for frames, *_ in block.stacks if frames and frames[-1].kind == "user"}

    def takes_stack(frames, comm) -> bool:
        return not comm and (not kernel_only or (bool(frames) and frames[-1].kind == "kernel"))

    block.stacks = [(f, w, name if takes_stack(f, comm) else comm, cpu, ctx)
                    for f, w, comm, cpu, ctx in block.stacks]
    through: Dict[Tuple[str, str], float] = {}
    for (comm, sym), weight in block.through.items():
        key = (name if not comm and not (kernel_only and sym in user) else comm, sym)
        through[key] = max(through.get(key, 0.0), weight)
    block.through = through


def _top_row_command(rows: Sequence[TopRow], block: Block, pid: str) -> Optional[str]:
    """Rule CC1: the command of the pasted `top` row (`_top_rows`) with the PID a one-process listing
    samples (`perf top -p 97`, `(target_pid: 97)`), the nearest above the listing first, else the
    first below it: a ticket gives the process table before or after the profile of one of its tasks,
    and a PID names one task on the host whichever comes first.

    >>> paste = ["perf top -p 97", "", "  20.0%  [kernel]  [k] shrink_page_list", "",
    ...          "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND",
    ...          "   97 root      20   0       0      0      0 S  12.6   0.0 12:11.31 kswapd0"]
    >>> b = Block("perf-top", 2, 4)
    >>> _top_row_command(_top_rows(paste), b, "97")
    'kswapd0'
    >>> _top_row_command(_top_rows(paste), b, "98") is None
    True
    """
    above = (row.comm for row in reversed(rows) if row.line < block.start and row.pid == pid)
    below = (row.comm for row in rows if row.line >= block.end and row.pid == pid)
    return next(above, None) or next(below, None)


def _one_pid(above: Sequence[str]) -> Optional[str]:
    """The one PID a perf command line above a listing restricts it to (rule H4; rule CW2 for perf
    report): perf record / perf top `-p N`, `--pid N`, `-t N`, `--tid N`, and perf report `--pid N`,
    `--pid=N`, `--tid N` (perf report's `-p` is `--parent`). Each option takes a comma-separated list,
    and a list of several PIDs is not one process.

    >>> _one_pid(["$ perf report --pid 97 --stdio --sort sym"]), _one_pid(["perf report --tid=4411 --stdio"])
    ('97', '4411')
    >>> _one_pid(["$ perf report --pid 97,98 --stdio"]), _one_pid(["perf report -p 97"]), _one_pid(["perf record -p 12,34 -g"])
    (None, None, None)
    """
    return next((m["pid"] for m in map(ONE_PID.search, above) if m), None)


def _kernel_thread_of(block: Block) -> Optional[str]:
    """The kernel thread a one-process listing (`perf top -p N`: `(target_pid: N)` in its header)
    is of, when it lists a function only that thread runs: its main loop (rule AB3).

    >>> from flamediag.profile import Frame
    >>> b = Block("perf-top", 0, 1, stacks=[((Frame("balance_pgdat", "kernel"),), 5.0, None, None, None)])
    >>> _kernel_thread_of(b)
    'kswapd'
    """
    names = {frame.name for frames, *_ in block.stacks for frame in frames}
    return next((thread for thread, loop in THREAD_LOOPS.items() if not loop.isdisjoint(names)), None)


def _top_thread_of_family(rows: Sequence[TopRow], family: str) -> Optional[str]:
    """Rule CI1: the pasted `top` row's thread of the family a one-thread listing's main loop names
    (rule AB3: `balance_pgdat` is kswapd's), when the rows show exactly one thread of it: kswapd runs
    one thread per NUMA node (kswapd0, kswapd1 ...), and the one the table shows is the one whose
    work the listing holds, as a PID would say (rule CC1). With several of them shown the listing
    could be any one's, and it keeps the loop's name; so does a listing whose PID no row has (its
    thread is another one than those shown).

    >>> table = ["  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND",
    ...          "   86 root      20   0       0      0      0 S  16.9   0.0   1:52.83 kswapd0",
    ...          " 9412 root      20   0    8392   2512   2128 D  31.2   0.0   5:41.27 cp"]
    >>> _top_thread_of_family(_top_rows(table), "kswapd")
    'kswapd0'
    >>> _top_thread_of_family(_top_rows(table + ["  412 root      20   0       0      0      0 R  99.3   0.0   1402:11 kswapd1"]),
    ...                       "kswapd") is None
    True
    >>> _top_thread_of_family(_top_rows(table[:1] + table[2:]), "kswapd") is None
    True
    """
    member = re.compile(rf"^{re.escape(family)}\d+$")
    found = {row.comm for row in rows if member.match(row.comm)}
    return found.pop() if len(found) == 1 else None


def _kernel_rows_only(block: Block) -> bool:
    """Rule AM1: a flat listing without a command column whose every row is kernel code is one
    kernel thread's (`perf top -p $(pgrep kswapd1)` with only its rows copied): a system-wide
    listing, or an application's, shows user-space rows too.

    >>> from flamediag.profile import Frame
    >>> rows = [((Frame("shrink_node", "kernel"),), 24.8, None, None, None),
    ...         ((Frame("balance_pgdat", "kernel"),), 17.4, None, None, None)]
    >>> _kernel_rows_only(Block("perf-report-flat", 0, 1, flat=True, stacks=rows))
    True
    >>> _kernel_rows_only(Block("perf-report-flat", 0, 1, flat=True,
    ...                         stacks=rows + [((Frame("main", "user"),), 3.0, None, None, None)]))
    False
    >>> _kernel_rows_only(Block("perf-report-flat", 0, 1, flat=True,
    ...                         stacks=[((Frame("balance_pgdat", "kernel"),), 17.4, "java", None, None)]))
    False
    """
    return (block.flat and bool(block.stacks)
            and all(not comm and frames and frames[-1].kind == "kernel" for frames, _w, comm, *_ in block.stacks))


def _bpftrace_window(line: str) -> Optional[float]:
    """Rule BZ2: the samples one CPU gives over a bpftrace one-liner's run, when the script quoted says
    both its sampling rate and its end: a `profile:hz:N` probe counting stacks, an `interval:s:S`
    probe calling exit(), and no other probe whose counts would be events.

    >>> _bpftrace_window("# bpftrace -e 'profile:hz:99 { @[kstack] = count(); } interval:s:10 { exit(); }'")
    990.0
    >>> _bpftrace_window("# bpftrace -e 'profile:hz:99 { @[kstack] = count(); }'") is None   # ended at Ctrl-C
    True
    >>> _bpftrace_window("bpftrace -e 'kprobe:tcp_sendmsg { @[kstack] = count(); } profile:hz:99 { @n = count(); } "
    ...                  "interval:s:5 { exit(); }'") is None
    True
    """
    rate, end = BPFTRACE_RATE.search(line), BPFTRACE_EXIT.search(line)
    if rate is None or end is None or BPFTRACE_OTHER_PROBE.search(line):
        return None
    return float(rate["hz"]) * float(end["secs"])


def _look_above(block: Block, lines: Sequence[str], top: Sequence[TopRow], shown: Sequence[TopRow]) -> None:
    """What the lines right above a block say: `perf record -C 3` recorded one CPU; a tool's
    command line or banner starts a run of its own (a before/after pair), and may say the
    weights are off-CPU time. A pasted `top` row may name the task a one-process listing samples:
    top holds the rows `_top_rows` read from lines (rule CC1), shown those of the first layout of the
    paste that reads any (rule CI1)."""
    above = [line for line in lines[max(0, block.start - 4):block.start] if line.strip()][-3:]
    one_cpu = next((int(m[1]) for m in map(ONE_CPU.search, above) if m), None)
    if one_cpu is not None:
        block.stacks = [(f, w, comm, one_cpu if cpu is None else cpu, ctx) for f, w, comm, cpu, ctx in block.stacks]
        block.notes.append(f"all samples are from CPU {one_cpu} (`-C {one_cpu}` on the pasted perf command line)")
    task = next((m["proc"] or m["comm"] for m in map(ONE_TASK.search, above) if m), None)
    pid = _one_pid(above)
    if pid is None:
        # rule CC1: perf top's own header names the process it samples
        pid = next((m["pid"] for m in map(TARGET_PID.search, [*above, *lines[block.start:block.start + 3]]) if m), None)
    if task is None and pid is not None:
        task = _top_row_command(top, block, pid)
    if task is None and (any(TARGET_PID.search(line) for line in [*above, *lines[block.start:block.start + 3]])
                         or (_kernel_rows_only(block) and not any(map(ALL_CPUS.search, above)))):
        task = _kernel_thread_of(block)
        if task is not None and pid is None:   # rule CI1: the node's thread the pasted top rows show
            task = _top_thread_of_family(shown, task) or task
    if task is not None and any(not comm for _, _, comm, _, _ in block.stacks):
        _name_commandless(block, task)
        block.notes.append(f"samples without a command are {task}'s (the pasted perf command line is restricted to it)")
    if block.fmt in profiles.REPORT_FORMATS and any(map(perfreport.RUN_COMMAND.match, above)):
        # a perf report / perf top command line right above a listing starts a run of its own even
        # when the listing's `#` header lines were trimmed (rule AT2): the author ran the tool again
        block.header = True
    if block.fmt not in WEIGHTED:
        return
    window = next((m for m in map(SAMPLING_WINDOW.search, above) if m), None)
    if window is not None and block.unit == "samples":
        block.cpu_window = float(window["hz"]) * float(window["secs"])
    elif block.unit == "samples":
        block.cpu_window = next(filter(None, map(_bpftrace_window, above)), None)
    block.header = block.header or any(INTRO.search(line) for line in above)
    if not block.not_cpu:
        leaves = [(frames[-1].name, weight) for frames, weight, *_ in block.stacks if frames]
        separated = has_waker_separator([f.name for f in frames] for frames, *_ in block.stacks)
        block.not_cpu = offcpu_reason(leaves, "\n".join(above), separated)


def _result(blocks: List[Block], sections: Dict[str, str], skipped: int) -> PasteResult:
    chosen, left_out = profiles.choose(profiles.group(blocks))
    notes: List[str] = list(dict.fromkeys(note for block in chosen.blocks for note in block.notes))
    notes += _weight_notes(chosen)
    notes += left_out
    formats = list(dict.fromkeys(b.fmt for b in blocks if b.stacks))
    profile = Profile(source_format=",".join(chosen.formats), ancestry=not chosen.flat)
    scale = chosen.samples / 100 if chosen.samples else 1.0
    for block in chosen.blocks:
        factor = scale if block.unit == "percent" else 1.0
        for index, (frames, weight, comm, cpu, context) in enumerate(block.stacks):
            profile.add(frames, weight * factor, comm=comm, cpu=cpu, context=context)
            if index in block.lone and not chosen.flat:
                profile.mark_listed(frames, comm=comm, cpu=cpu, context=context)
        for key, weight in block.through.items():
            profile.through[key] = max(profile.through.get(key, 0.0), weight * factor)
    profile.percent_of = _percent_of(chosen, scale)
    windows = {block.cpu_window for block in chosen.blocks}
    if len(windows) == 1:
        profile.cpu_window = windows.pop()
    for block in chosen.blocks:
        if block.event:
            profile.events[block.event] += block.samples or 1
    if chosen.not_cpu:
        profile.not_cpu = chosen.not_cpu
        notes.append(f"not a CPU profile, not diagnosed: {chosen.not_cpu}")
    if skipped:
        notes.append(f"skipped {plural(skipped, 'line')} of prose or unrecognised output")
    if sections:
        # a collector read twice (`NAME@start` and `NAME`, rule O3) is one piece of evidence, a window
        notes.append("used pasted evidence: " + ", ".join(sorted({name.split("@")[0] for name in sections})))
    profile.skipped_lines = skipped
    profile.data_quality.extend(notes)
    return PasteResult(profile, sections, formats, skipped, notes)


def _percent_of(chosen: profiles.PasteProfile, scale: float) -> Optional[float]:
    """The weight that stands for every sample, when each block of the profile says it (a perf
    report / perf top listing: 100 %, scaled to the pasted sample count like the weights; an
    opreport or readprofile listing: the samples its percentages or `total` are of; event time
    tables: the CPU time of their window in microseconds, the larger when two tables of one window
    list different CPUs)."""
    wholes = {b.whole for b in chosen.blocks}
    units = {b.unit for b in chosen.blocks}
    if units == {"us"} and wholes and None not in wholes:
        return max(wholes)       # event time tables of one window: its CPU time (eventtables.py)
    if len(wholes) != 1 or None in wholes or len(units) != 1 or not units <= {"percent", "samples"}:
        return None
    return wholes.pop() * (scale if units == {"percent"} else 1.0)


def _weight_notes(chosen: profiles.PasteProfile) -> List[str]:
    if any(b.unit == "percent" for b in chosen.blocks):
        if chosen.samples:
            return [f"perf weights are percentages of {chosen.samples} samples (the pasted sample count)"]
        return ["perf report weights are percentages (the sample count was not pasted)"]
    return []
