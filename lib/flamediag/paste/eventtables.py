"""Event time / count tables: time (or counts) per softirq, per interrupt line, per system call,
and traces of the interrupt events themselves. They hold no stacks; each row stands for the
kernel function that runs the event, so a row reads as a short stack weighted by its time.

bcc `softirqs` and `hardirqs` (tools/softirqs_example.txt, hardirqs_example.txt), totals per
interval, per CPU with `-C` (newer bcc), nanoseconds with `-N`, counts with `-c` (hardirqs):

    # ./softirqs -C 10 1
    Tracing soft irq event time... Hit Ctrl-C to end.

    SOFTIRQ          CPU    TOTAL_usecs
    net_rx             0        9311247
    timer              3           3241

    HARDIRQ                    CPU    TOTAL_usecs
    mlx5_comp0@pci:0000:3b:00.0   0         388102

and with `-d` one latency histogram per softirq / interrupt:

    softirq = net_rx
         usecs               : count     distribution
             0 -> 1          : 2        |                                        |
             2 -> 3          : 1215     |****************************************|

Softirq and hardirq handler time is CPU time. A softirq row reads as `__do_softirq -> <its
action>` (net_rx_action, run_timer_softirq, rcu_core ...), an interrupt row as
`handle_irq_event -> __handle_irq_event_percpu -> [irq NAME]`, or `hrtimer_interrupt` for timer
and IPI lines, which are no device. The weights are microseconds; what they are a share of is
the CPU time of the window: the interval on the pasted command line (times the count of tables)
times the CPUs whose handlers took at least 1 % of it (`Block.whole`, see `_whole`), so a NIC that took 20 ms of CPU 0's ten seconds
is a small share, not a concentrated one. A table without a known window (no interval on the
command line), a count table (`-c`), or histograms without per-CPU rows cannot show what share
of a CPU a softirq took: read, not diagnosed (Data quality says why).

    >>> block = read_bcc_table(["SOFTIRQ          CPU    TOTAL_usecs", "net_rx             0        900000",
    ...                         "timer              1          2000"], 0, interval=1.0)
    >>> [(s[0][-1].name, s[1], s[3]) for s in block.stacks], block.whole
    ([('net_rx_action', 900000.0, 0), ('run_timer_softirq', 2000.0, 1)], 1000000.0)

(CPU 1's 2 ms are its timer tick: its second is not part of the whole.)

Interrupt and softirq events (`trace-cmd report`, trace_pipe, or `perf script` of
`-e irq:irq_handler_entry -e irq:irq_handler_exit`, `irq:softirq_entry/exit`; trace-cmd(1)):

              <idle>-0     [000]   412.118201: irq_handler_entry:    irq=47 name=tsc2007
              <idle>-0     [000]   412.118206: irq_handler_exit:     irq=47 ret=handled
         swapper     0 [002]  8761.104220: irq:softirq_entry: vec=3 [action=NET_RX]

Each entry is paired with the next exit on its CPU: the time between is handler time on that
CPU, read as the same stacks. Softirq events count only in a trace of 10 ms or more: one pass of
`__do_softirq` may run 2 ms (MAX_SOFTIRQ_TIME, and NET_RX its netdev_budget_usecs) before it yields,
so a shorter excerpt cannot tell a saturated CPU from one pass; a hardirq handler runs microseconds,
so a line re-entering it back to back shows even in a short excerpt. The window is the traced span (first to last event) times the
CPUs whose handlers took at least 1 % of it: a line whose handler runs
back to back on one CPU is a large share of that window, a busy NIC's or disk's interrupts a
small one.

System call time tables (sysdig `-c topscalls_time`, `perf trace -s` / `--summary`):

    Syscall             Time
    --------------------------------------------------------------------------------
    futex               318.42s
    epoll_wait          144.07s

       syscall            calls  errors  total       min       avg       max       stddev
                                         (msec)    (msec)    (msec)    (msec)        (%)
       --------------- --------  ------ -------- --------- --------- ---------     ------
       futex                412      0  9873.122     0.002    23.964   500.104      9.54%

The time of a system call is measured from its entry to its return: wall time, which for the
calls that block (futex, epoll_wait, select, poll, nanosleep, read on a socket) is time spent
asleep. Such a table is read and drawn, and never diagnosed as CPU time (`Block.not_cpu`, as for
off-CPU stacks: offcpu.syscall_time_reason says why).

System call count tables (SystemTap's topsys.stp, RHEL 5/6 "SystemTap Beginners Guide": the most
frequent calls, refreshed every 5 s between dashed rules) hold no time at all: how often a call
ran says nothing of what it cost. Read and drawn, never diagnosed (rule K8):

    --------------------------------------------------------------
                      SYSCALL      COUNT
                         read     412033
                        lseek     388120
    --------------------------------------------------------------

Function call count tables (perf-tools' and bcc's `funccount`, `FUNC  COUNT`, ascending, printed at
Ctrl-C or every `-i` interval under a time stamp) are the same kind of table for any kernel function
(rule V4): a spin lock function is among the most called functions of every kernel, and its count
says how often it was called, not that anyone waited.

    >>> block = read_event_table(["FUNC                              COUNT", "_raw_spin_lock_irqsave     7409",
    ...                           "_raw_spin_lock                    32158"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.fmt, bool(block.not_cpu)
    ([('_raw_spin_lock_irqsave', 7409.0), ('_raw_spin_lock', 32158.0)], 'funccount', True)

ftrace's function profiler (`function_profile_enabled`, `trace_stat/function<cpu>`: `Function  Hit
Time  Avg  s^2`) times each call from entry to return, the functions it calls included and, with the
default `sleep-time` option, the time it slept: `schedule` and the poll / select / futex calls lead
it by design. Wall time per call like a system call table (rule T3): read, drawn, never diagnosed.

bcc `drsnoop` and `compactsnoop` print one row per direct-reclaim run and per compaction run, with
its latency (rule V5): the tools trace `mm_vmscan_direct_reclaim_begin/end` and
`mm_compaction_begin/end`, so a drsnoop row is an allocation that stalled reclaiming by construction,
read as `__alloc_pages_slowpath -> __alloc_pages_direct_reclaim -> try_to_free_pages ->
do_try_to_free_pages -> shrink_node` of its task, weighted by its latency in microseconds. A
compactsnoop row says who compacted: `kcompactd*` in the background (`kcompactd -> compact_zone`),
order -1 a compaction asked for through `/proc/sys/vm/compact_memory` or a node's `compact` file
(`compact_node -> compact_zone`, no allocation waited), any other task an allocation's direct
compaction (`__alloc_pages_direct_compact -> try_to_compact_pages -> compact_zone`). With `-T` the
rows span a window: their latencies are a share of it (of their own sum when that is larger, many
tasks stalling at once), so a few short stalls over seconds are a small share.

    >>> block = read_event_table(["TIME(s)       COMM           PID     LAT(ms) PAGES",
    ...     "0.000000000   java           4122      27.40   128",
    ...     "9.000000000   summond        17678      0.06     3"], 0)
    >>> [(s[0][-1].name, s[1], s[2]) for s in block.stacks], block.whole
    ([('shrink_node', 27400.0, 'java'), ('shrink_node', 60.0, 'summond')], 9000060.0)
    >>> block = read_event_table(["COMM    PID    NODE ZONE         ORDER MODE      LAT(ms)           STATUS",
    ...     "zsh     23685  0    ZONE_NORMAL  -1    SYNC      113.975         complete"], 0)
    >>> [tuple(f.name for f in s[0]) for s in block.stacks]
    [('compact_node', 'compact_zone')]

`perf kvm stat report` (perf-kvm(1), 3.9+) on a KVM host: per VM-exit reason (or I/O port, MMIO
address) the exits counted and the time from each exit to the guest's next entry (rule P2):

                 VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time
                     HLT      38204    51.73%    99.12%      1.86us  100212.37us   2463.71us ( +-   1.02% )

`kvm_stat` (tools/kvm/kvm_stat) counts the same exits and other KVM events, from tracepoints
(`kvm_exit(HLT)`, `kvm_page_fault`) or the older debugfs counters (`halt_exits`, `pf_fixed`), with
or without its `Event  Total  %Total  CurAvg/s` header (`kvm_stat -1` / `--once`): counts, no time.

That time is wall time per event: the exit's handling and, for HLT, the vCPU asleep until its next
interrupt, so an idle guest's HLT exits hold most of it by design. Read and drawn, never diagnosed
as CPU time: where the vCPU threads spend CPU needs a profile of the host.

    >>> block = read_event_table(["  VM-EXIT  Samples  Samples%  Time%  Min Time  Max Time  Avg time",
    ...     "      HLT    100    50.00%  99.00%  1.00us  900.00us  500.00us ( +-   1.00% )"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.fmt, bool(block.not_cpu)
    ([('[vm-exit HLT]', 50000.0)], 'perf-kvm-stat', True)
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..offcpu import syscall_time_reason
from ..profile import Frame
from .common import ELISION, Block, Miss, finish, plural, rows_of

# --- bcc softirqs / hardirqs ------------------------------------------------------------------

BCC_HEADER = re.compile(r"^\s*(?P<kind>SOFTIRQ|HARDIRQ)\s+(?P<cpu>CPU\s+)?TOTAL_(?P<unit>usecs|nsecs|count)\s*$")
BCC_ROW = re.compile(r"^\s*(?P<name>[^\s#$>%]\S*)\s+(?:(?P<cpu>\d{1,4})\s+)?(?P<value>\d+)\s*$")
BCC_HIST_HEAD = re.compile(r"^\s*(?P<kind>softirq|hardirq)\s*=\s*(?:b?'(?P<quoted>[^']+)'|(?P<name>\S+?))\s*(?:,\s*cpu\s*=\s*(?P<cpu>\d+))?\s*$")
BCC_HIST_UNIT = re.compile(r"^\s*(?P<unit>usecs|nsecs)\s*:\s*count\s+distribution\s*$")
BCC_HIST_ROW = re.compile(r"^\s*(?P<low>\d+)\s*->\s*(?P<high>\d+)\s*:\s*(?P<count>\d+)\s*\|")
TIMESTAMP = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2}\s*$")
BCC_BANNER = re.compile(r"^\s*Tracing (?:soft|hard) irq event (?:time|count)")
# `softirqs -C 10 1`, `/usr/share/bcc/tools/hardirqs -d 5`, `softirqs-bpfcc 1 10`: interval, count
BCC_COMMAND = re.compile(r"\b(?:soft|hard)irqs(?:\.py|-bpfcc)?\b(?P<args>(?:\s+-{1,2}[\w-]+)*(?:\s+(?P<interval>\d+(?:\.\d+)?)"
                         r"(?:\s+(?P<count>\d+))?)?)")

# Each softirq vector's action (kernel/softirq.c softirq_to_name[] and the handler open_softirq() sets).
SOFTIRQ_ACTIONS = {
    "hi": "tasklet_hi_action", "timer": "run_timer_softirq", "net_tx": "net_tx_action", "net_rx": "net_rx_action",
    "block": "blk_done_softirq", "irq_poll": "irq_poll_softirq", "block_iopoll": "irq_poll_softirq",
    "tasklet": "tasklet_action", "sched": "run_rebalance_domains", "hrtimer": "hrtimer_run_softirq",
    "rcu": "rcu_core",
}
# Interrupt lines of the CPU's own timers and of inter-processor calls: no device (irq-storm's not_device).
TIMER_LINE = re.compile(r"^(?:arch_timer|timer\d*|hrtimer|LOC|CAL|RES|TLB|IPI\d*|ipi\w*|.*clockevent.*|"
                        r"riscv-timer|arm-.*timer|lapic|local[-_]timer|MCP|THR|NMI|PIW|PMI|SPU|IWI|RTR)$", re.I)


# A log2 histogram of any other bcc / bpftrace latency tool (runqlat, cpudist, biolatency, funclatency ...),
# started by its unit line; `-m` prints milliseconds (rule AM3).
LATENCY_HIST_UNIT = re.compile(r"^\s*(?P<unit>usecs|nsecs|msecs)\s*:\s*count\s+distribution\s*$")
LATENCY_BANNER = re.compile(r"^\s*Tracing (?P<what>[\w -]+?)(?:\.\.\.|\s+Hit Ctrl-C)")
# bpftrace prints a hist() or lhist() map as its name (`@usecs:`, `@ns[sshd]:`) over bucket rows
# `[4, 8)   2 |@@   |`, `[0]`, `[1K, 2K)`, `[100, ...)` (rule BN1, the twins rule AM3 meant)
BPF_HIST_HEAD = re.compile(r"^@(?P<name>\w*(?:\[[^\]]*\])?):\s*$")
BPF_HIST_ROW = re.compile(r"^\s*\[(?:-?\d+[KMGTP]?(?:,\s*(?:-?\d+[KMGTP]?|\.\.\.)\)|\])|\.\.\.,\s*-?\d+[KMGTP]?\))"
                          r"\s+(?P<count>\d+)(?:\s*\|.*)?\s*$")
# a bar a mail client wrapped onto a line of its own (`|@@@@|`, `|`): the rows are 70-odd columns wide
BPF_HIST_BAR = re.compile(r"^\s*\|?@*\s*\|\s*$|^\s*\|?@+\|?\s*$")


def starts_event_table(line: str) -> bool:
    return bool(BCC_HEADER.match(line) or BCC_HIST_HEAD.match(line) or LATENCY_HIST_UNIT.match(line)
                or BPF_HIST_HEAD.match(line)
                or SYSDIG_HEADER.match(line)
                or PERF_TRACE_HEADER.match(line) or TOPSYS_HEADER.match(line) or KVM_STAT_HEADER.match(line)
                or FUNCCOUNT_HEADER.match(line) or PROFILER_HEADER.match(line) or DRSNOOP_HEADER.match(line)
                or COMPACT_HEADER.match(line)
                or KVM_EVENTS_HEADER.match(line) or bool(KVM_EVENT_ROW.match(line) and line.lstrip().startswith("kvm_"))
                or (("irq_handler_e" in line or "softirq_e" in line) and IRQ_EVENT.match(line)))


def read_event_table(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    line = lines[start]
    if BCC_HEADER.match(line) or BCC_HIST_HEAD.match(line):
        return read_bcc_table(lines, start, *_bcc_window(lines, start))
    if LATENCY_HIST_UNIT.match(line):
        return _read_latency_histogram(lines, start)
    if BPF_HIST_HEAD.match(line):
        return _read_bpftrace_histograms(lines, start)
    if SYSDIG_HEADER.match(line) or PERF_TRACE_HEADER.match(line):
        return _read_syscalls(lines, start)
    if TOPSYS_HEADER.match(line):
        return _read_syscall_counts(lines, start)
    if FUNCCOUNT_HEADER.match(line):
        return _read_function_counts(lines, start)
    if PROFILER_HEADER.match(line):
        return _read_function_profile(lines, start)
    if DRSNOOP_HEADER.match(line) or COMPACT_HEADER.match(line):
        return _read_mm_stalls(lines, start)
    if KVM_STAT_HEADER.match(line):
        return _read_kvm_stat(lines, start)
    if KVM_EVENTS_HEADER.match(line) or KVM_EVENT_ROW.match(line):
        return _read_kvm_events(lines, start)
    return _read_irq_events(lines, start)


def _bcc_window(lines: Sequence[str], start: int) -> Tuple[Optional[float], str]:
    """The interval of the command line pasted above the table (seconds; None when it runs until
    Ctrl-C or no command line was pasted) and the tool's name."""
    for line in reversed(lines[max(0, start - 6):start]):
        found = BCC_COMMAND.search(line)
        if found:
            return (float(found["interval"]) if found["interval"] else None), line
    return None, ""


def _softirq_frames(name: str) -> Tuple[Frame, ...]:
    action = SOFTIRQ_ACTIONS.get(name.lower(), f"[softirq {name}]")
    return (Frame("__do_softirq", "kernel"), Frame(action, "kernel"))


def _irq_frames(name: str, number: Optional[str] = None) -> Tuple[Frame, ...]:
    if TIMER_LINE.match(name):
        return (Frame("hrtimer_interrupt", "kernel"),)
    label = f"[irq {number}: {name}]" if number else f"[irq {name}]"
    return (Frame("handle_irq_event", "kernel"), Frame("__handle_irq_event_percpu", "kernel"), Frame(label, "kernel"))


def read_bcc_table(lines: Sequence[str], start: int, interval: Optional[float] = None,
                   command: str = "") -> Union[Block, Miss]:
    """Consecutive softirqs / hardirqs tables (one per interval, `-T` timestamps between them)."""
    block = Block("bcc-irq-time", start, start, unit="us")
    rows: Dict[Tuple[str, str, Optional[int]], float] = defaultdict(float)
    tables: Counter = Counter()           # tables of each kind: one per interval
    unit, per_cpu, kind = "usecs", False, ""
    hist: Optional[Tuple[str, str, Optional[int]]] = None
    index = start
    while index < len(lines):
        line = lines[index]
        header, hist_head = BCC_HEADER.match(line), BCC_HIST_HEAD.match(line)
        row = BCC_ROW.match(line) if kind and not hist else None
        if header:
            tables[header["kind"]] += 1
            kind, unit, per_cpu, hist = header["kind"].lower(), header["unit"], bool(header["cpu"]), None
        elif hist_head:
            tables["hist"] = 1
            kind, per_cpu = hist_head["kind"], bool(hist_head["cpu"])
            hist = (kind, hist_head["quoted"] or hist_head["name"], int(hist_head["cpu"]) if hist_head["cpu"] else None)
        elif hist and BCC_HIST_UNIT.match(line):
            unit = BCC_HIST_UNIT.match(line)["unit"]
        elif hist and BCC_HIST_ROW.match(line):
            found = BCC_HIST_ROW.match(line)
            rows[hist] += int(found["count"]) * (int(found["low"]) + int(found["high"])) / 2
        elif row and (row["cpu"] is not None) == per_cpu:
            rows[(kind, row["name"], int(row["cpu"]) if row["cpu"] is not None else None)] += float(row["value"])
        elif not (not line.strip() or TIMESTAMP.match(line) or BCC_BANNER.match(line) or ELISION.match(line)) \
                or BCC_COMMAND.search(line):
            break
        index += 1
    intervals = max(tables.values(), default=1)
    scale = 1e-3 if unit == "nsecs" else 1.0
    for (what, name, cpu), value in rows.items():
        if value <= 0:
            continue
        frames = _softirq_frames(name) if what == "softirq" else _irq_frames(name)
        block.stacks.append((frames, value * scale, "", cpu, "softirq" if what == "softirq" else "hardirq"))
    cpus = {cpu for (_, _, cpu) in rows if cpu is not None}
    window = interval * 1e6 * intervals if interval else 0.0
    tool = "bcc softirqs/hardirqs"
    if unit == "count":
        block.unit = "events"
        block.not_cpu = (f"this {tool} table counts events (-c), it holds no time: how much of a CPU the "
                         "handlers took cannot be told")
    elif interval is None:
        block.not_cpu = (f"this {tool} table gives the time per softirq / interrupt without the length of the "
                         "window (no interval on the pasted command line): what share of a CPU each took cannot be told")
    elif not cpus:
        block.whole = window
        block.notes.append(f"{tool}: totals over all CPUs (no -C): which CPU the time was spent on is unknown")
    else:
        block.whole = _whole(block, window)
    return finish(block, start, index, f"read {tool}: {plural(len(block.stacks), 'row')} of handler time "
                  + (f"over {plural(intervals, 'interval')} of {interval:g} s "
                     + (f"on {plural(len(cpus), 'CPU')} listed" if cpus else "summed over all CPUs")
                     if interval is not None else "(window unknown)"))


def _read_latency_histogram(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Rule AM3: a latency histogram (bcc runqlat, cpudist, biolatency, funclatency, their bpftrace
    twins) from its unit line: how many waits, slices or calls took how long. It says nothing of
    where CPU time went, so it is read and drawn as one row per histogram and never diagnosed as
    CPU time; a ticket holding only such histograms names no problem.

    >>> rows = ["     usecs               : count     distribution",
    ...         "         0 -> 1          : 2071     |***                                     |",
    ...         "         2 -> 3          : 18542    |****************************************|"]
    >>> block = _read_latency_histogram(["Tracing run queue latency... Hit Ctrl-C to end.", ""] + rows, 2)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], bool(block.not_cpu)
    ([('[histogram: run queue latency]', 20613.0)], True)
    """
    banner = next((m["what"] for m in map(LATENCY_BANNER.match, reversed(lines[max(0, start - 4):start])) if m), "")
    count, index = 0, start + 1
    while index < len(lines):
        found = BCC_HIST_ROW.match(lines[index])
        if found:
            count += int(found["count"])
        elif not ELISION.match(lines[index]):
            break
        index += 1
    if index == start + 1:
        return Miss(start + 1)
    name = f"[histogram: {banner.strip()}]" if banner else f"[histogram of {LATENCY_HIST_UNIT.match(lines[start])['unit']}]"
    block = Block("latency-histogram", start, start, unit="events")
    if count:
        block.stacks = [((Frame(name, "unknown"),), float(count), "", None, None)]
    block.not_cpu = ("a latency histogram counts how long waits, on-CPU slices or calls took, not where CPU time "
                     "went: it holds no CPU samples")
    return finish(block, start, index, f"read a latency histogram: {count} events in log2 buckets")


def _read_bpftrace_histograms(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Rule BN1: bpftrace's hist() and lhist() maps (runqlat.bt, runqlen.bt, biolatency.bt, one-liners'
    `@us = hist(...)`) from the first map's name line, every map that follows with its bucket rows:
    how many waits, lengths or values fell in each bucket, read like rule AM3's histograms as one row
    per map and never diagnosed as CPU time.

    >>> block = _read_bpftrace_histograms(["@runqlen:", "[0, 1)     15832 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|",
    ...                                    "[1, 2)       602 |@                               |", "",
    ...                                    "@usecs[sshd]:", "[1]          3 |@@@@|", "[2, 4)       1 |@|", "", "prose"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.fmt, bool(block.not_cpu), block.end
    ([('[histogram: @runqlen]', 16434.0), ('[histogram: @usecs[sshd]]', 4.0)], 'latency-histogram', True, 7)

    A mail client wrapping at 72 columns moves each 52-column bar, or its closing `|`, to a line of its own:

    >>> block = _read_bpftrace_histograms(["@runqlen:", "[0, 1)             15832", "|@@@@@@@@@@@@@@@@@@@@|",
    ...                                    "[1, 2)               602 |@", "|"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.end
    ([('[histogram: @runqlen]', 16434.0)], 5)
    """
    counts: Dict[str, int] = {}
    name, index, end = "", start, start
    while index < len(lines):
        line = lines[index]
        head, row = BPF_HIST_HEAD.match(line), BPF_HIST_ROW.match(line)
        if head:
            name = f"@{head['name']}"
        elif row and name:
            counts[name] = counts.get(name, 0) + int(row["count"])
            end = index + 1
        elif name and BPF_HIST_BAR.match(line):
            end = index + 1
        elif not (not line.strip() or ELISION.match(line)):
            break
        index += 1
    block = Block("latency-histogram", start, start, unit="events")
    block.stacks = [((Frame(f"[histogram: {key}]", "unknown"),), float(count), "", None, None)
                    for key, count in counts.items() if count]
    block.not_cpu = ("a bpftrace histogram counts how many waits, lengths or values fell in each bucket, not where "
                     "CPU time went: it holds no CPU samples")
    return finish(block, start, end, f"read {plural(len(counts), 'bpftrace histogram')}: "
                  f"{sum(counts.values())} events in buckets")


# A CPU whose handlers took less than this share of the window shows only its timer tick.
ACTIVE_CPU = 0.01


def _whole(block: Block, window: float) -> float:
    """The CPU time the rows are a share of: the window on each CPU whose handlers took at least
    1 % of it. A CPU with less shows its timer tick and nothing else: like the idle samples a
    profile leaves out of its busy time, its window is left out, so NET_RX saturating one CPU of
    sixty-four is most of the interrupt-active time, and NET_RX spread over them all is not
    concentrated (nic-softirq's concentration rule)."""
    per_cpu: Counter = Counter()
    for _frames, weight, _comm, cpu, _ctx in block.stacks:
        per_cpu[cpu] += weight
    active = sum(1 for spent in per_cpu.values() if spent >= ACTIVE_CPU * window)
    return window * max(1, active)


# --- interrupt / softirq events ---------------------------------------------------------------

IRQ_EVENT = re.compile(
    r"^\s*(?P<comm>\S.*?)[-\s]+(?P<pid>\d+)\s+(?:\(\s*\d+\)\s+)?\[(?P<cpu>\d{1,4})\]\s+(?:[\w.]{4,6}\s+)?"
    r"(?P<ts>\d+\.\d+):\s+(?:irq:)?(?P<event>irq_handler_entry|irq_handler_exit|softirq_entry|softirq_exit):\s+"
    r"(?:irq=(?P<irq>\d+)(?:\s+name=(?P<name>\S+))?|vec=(?P<vec>\d+)\s+\[action=(?P<action>\w+)\])")
CPUS_LINE = re.compile(r"^\s*cpus=(?P<cpus>\d+)\s*$")
# One pass of __do_softirq may run up to MAX_SOFTIRQ_TIME (2 ms) and NET_RX up to netdev_budget_usecs
# (2 ms) before yielding: a trace shorter than a few passes cannot tell a saturated CPU from one pass.
SOFTIRQ_SPAN_US = 10000.0


def _read_irq_events(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("irq-events", start, start, unit="us")
    open_at: Dict[Tuple[int, str], float] = {}
    names: Dict[str, str] = {}
    time: Counter = Counter()
    first = last = None
    cpus_seen = set()
    events = 0
    index = start
    while index < len(lines):
        found = IRQ_EVENT.match(lines[index])
        if found:
            events += 1
            cpu, ts = int(found["cpu"]), float(found["ts"]) * 1e6
            first = ts if first is None else min(first, ts)
            last = ts if last is None else max(last, ts)
            cpus_seen.add(cpu)
            key = ("irq", found["irq"]) if found["irq"] else ("softirq", found["action"].lower())
            if found["name"]:
                names[found["irq"]] = found["name"]
            if found["event"].endswith("entry"):
                open_at[(cpu, key)] = ts
            elif (cpu, key) in open_at:
                time[(cpu, key)] += ts - open_at.pop((cpu, key))
        elif not (not lines[index].strip() or ELISION.match(lines[index])):
            break
        index += 1
    span = (last - first) if first is not None and last is not None else 0.0
    short = span < SOFTIRQ_SPAN_US and any(what == "softirq" for (_, (what, _w)) in time)
    for (cpu, (what, which)), spent in sorted(time.items()):
        if spent <= 0 or (short and what == "softirq"):
            continue
        frames = _softirq_frames(which) if what == "softirq" else _irq_frames(names.get(which, which), which)
        block.stacks.append((frames, spent, "", cpu, what if what == "softirq" else "hardirq"))
    above = next((int(m["cpus"]) for m in map(CPUS_LINE.match, lines[max(0, start - 3):start]) if m), None)
    if short:
        block.notes.append(f"left out the softirq events: the trace spans {span:.0f} us, and one softirq pass may "
                           "run 2 ms, so a trace this short cannot show a CPU saturated by softirqs")
    block.events = events
    if span > 0:
        block.whole = _whole(block, span)
    else:
        block.not_cpu = "these interrupt events span no time: what share of a CPU their handlers took cannot be told"
    return finish(block, start, index, f"read interrupt / softirq events: {plural(events, 'event')} over "
                  f"{span:.0f} us on {plural(len(cpus_seen), 'CPU')}"
                  + (f" (of {above} traced)" if above else "") + ", handler time from each entry to its exit")


# --- system call time tables --------------------------------------------------------------------

SYSDIG_HEADER = re.compile(r"^\s*Syscall\s+Time\s*$")
SYSDIG_ROW = re.compile(r"^\s*(?P<name>[a-z_][\w]*)\s+(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ns|us|ms|s|m)\s*$")
PERF_TRACE_HEADER = re.compile(r"^\s*syscall\s+calls\s+(?:errors\s+)?total\s+min\s+avg\s+max\s+stddev\s*$")
PERF_TRACE_ROW = re.compile(r"^\s*(?P<name>[a-z_][\w]*)\s+(?P<calls>\d+)\s+(?:\d+\s+)?(?P<total>\d+\.\d+)\s+\d+\.\d+"
                            r"\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+%?\s*$")
PERF_TRACE_OTHER = re.compile(r"^\s*(?:\(msec\).*|-{3,}[\s-]*|Summary of events:|(?:\S.*)?\(\d+\), \d+ events, [\d.]+%)\s*$")
TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6, "m": 6e7}


def _read_syscalls(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    sysdig = bool(SYSDIG_HEADER.match(lines[start]))
    block = Block("sysdig-syscall-time" if sysdig else "perf-trace-summary", start, start, unit="us")
    rows: Dict[str, float] = defaultdict(float)
    index = start + 1
    while index < len(lines):
        line = lines[index]
        found = SYSDIG_ROW.match(line) if sysdig else PERF_TRACE_ROW.match(line)
        if found:
            rows[found["name"]] += (float(found["value"]) * TO_US[found["unit"]] if sysdig
                                    else float(found["total"]) * 1e3)
        elif sysdig and re.match(r"^\s*-{10,}\s*$", line):
            pass
        elif not sysdig and (PERF_TRACE_OTHER.match(line) or PERF_TRACE_HEADER.match(line)):
            pass
        elif line.strip() and not ELISION.match(line):
            break
        elif not line.strip() and sysdig and rows:
            break
        index += 1
    for name, spent in rows.items():
        if spent > 0:
            block.stacks.append(((Frame("do_syscall_64", "kernel"), Frame(f"sys_{name}", "kernel")), spent, "", None, None))
    block.not_cpu = syscall_time_reason(rows.items(), "sysdig topscalls_time" if sysdig else "perf trace -s")
    return finish(block, start, index, f"read {'sysdig topscalls_time' if sysdig else 'perf trace -s'}: "
                  f"{plural(len(block.stacks), 'system call')} with their total time from entry to return")


# --- system call count tables (SystemTap topsys.stp) -------------------------------------------------

TOPSYS_HEADER = re.compile(r"^\s*SYSCALL\s+COUNT\s*$")
TOPSYS_ROW = re.compile(r"^\s*(?P<name>[a-z_][\w]*)\s+(?P<count>\d+)\s*$")
FUNCCOUNT_HEADER = re.compile(r"^\s*(?:ADDR\s+)?FUNC\s+COUNT\s*$")
FUNCCOUNT_ROW = re.compile(r"^\s*(?:(?:0x)?[0-9a-f]{8,16}\s+)?(?:b')?(?P<name>[A-Za-z_.][\w.$:]*)'?\s+(?P<count>\d+)\s*$")
FUNCCOUNT_STAMP = re.compile(r"^\s*(?:\d{1,2}:\d{2}:\d{2}|Ending tracing\.*|Detaching\.*)\s*$")
DRSNOOP_HEADER = re.compile(r"^\s*(?:TIME\(s\)\s+)?COMM\s+PID\s+LAT\(ms\)\s+PAGES(?:\s+FREE\(KB\))?\s*$")
DRSNOOP_ROW = re.compile(r"^\s*(?:(?P<time>\d+\.\d+)\s+)?(?P<comm>\S+)\s+(?P<pid>\d+)\s+(?P<lat>\d+(?:\.\d+)?)\s+"
                         r"(?P<pages>\d+)(?:\s+\d+)?\s*$")
COMPACT_HEADER = re.compile(r"^\s*(?:TIME\(s\)\s+)?COMM\s+PID\s+NODE\s+ZONE\s+ORDER\s+MODE\s+(?:.*\s)?LAT\(ms\)\s+STATUS\s*$")
COMPACT_ROW = re.compile(r"^\s*(?:(?P<time>\d+\.\d+)\s+)?(?P<comm>\S+)\s+(?P<pid>\d+)\s+\d+\s+ZONE_\w+\s+(?P<order>-?\d+)\s+"
                         r"(?P<mode>\w+)\s+(?:-?[\d.]+\s+)*?(?P<lat>\d+(?:\.\d+)?)\s+(?P<status>\w+)\s*$")
DIRECT_RECLAIM = ("__alloc_pages_slowpath", "__alloc_pages_direct_reclaim", "try_to_free_pages",
                  "do_try_to_free_pages", "shrink_node")
PROFILER_HEADER = re.compile(r"^\s*Function\s+Hit\s+Time\s+Avg(?:\s+s\^2)?\s*$")
PROFILER_ROW = re.compile(r"^\s*(?P<name>[A-Za-z_.][\w.$]*)\s+(?P<hit>\d+)\s+(?P<time>\d+(?:\.\d+)?)\s*us"
                          r"(?:\s+\d+(?:\.\d+)?(?:\s*us)?(?:\s+\d+(?:\.\d+)?(?:\s*us)?)?)?\s*$")
# the last columns of a row wrapped onto a line of their own (a mail wrapped at 72 columns)
PROFILER_TAIL = re.compile(r"^\s*(?=\S)(?:s\^2|-{3,}|(?:us\b\s*)?(?:\d+(?:\.\d+)?\s*us\s*){0,2})\s*$")
PROFILER_RULE = re.compile(r"^\s*-{4,}\s+-{3}\s+-{4}\s+-{3}(?:\s+-{3})?\s*$")
TOPSYS_RULE = re.compile(r"^\s*-{10,}\s*$")


def _read_syscall_counts(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """topsys.stp's tables from `start` (a header), each refresh summed: call counts, no time."""
    return _read_counts(
        lines, start, Block("systemtap-topsys", start, start, unit="events"), TOPSYS_ROW,
        lambda line: bool(TOPSYS_HEADER.match(line) or TOPSYS_RULE.match(line)),
        lambda name: (Frame("do_syscall_64", "kernel"), Frame(f"sys_{name}", "kernel")),
        "this table counts system calls (SystemTap topsys.stp): how often each call ran, not how long, so it holds "
        "no CPU time; not CPU samples",
        "SystemTap topsys.stp", "system call")


def _read_function_counts(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """funccount's tables from `start` (a header), every interval summed: call counts, no time (rule V4)."""
    return _read_counts(
        lines, start, Block("funccount", start, start, unit="events"), FUNCCOUNT_ROW,
        lambda line: not line.strip() or bool(FUNCCOUNT_HEADER.match(line) or FUNCCOUNT_STAMP.match(line)),
        lambda name: (Frame(name, "kernel"),),
        "this table counts calls of traced functions (funccount): how often each ran, not how long, so it holds "
        "no CPU time; not CPU samples",
        "funccount", "function")


def _read_counts(lines: Sequence[str], start: int, block: Block, row: re.Pattern, passes, frames_of,
                 not_cpu: str, tool: str, noun: str) -> Union[Block, Miss]:
    """A table of call counts from `start` (its header) to the first line that is neither a row nor
    one `passes` lets by, the counts of every refresh summed per name: how often, never how long."""
    counts: Counter = Counter()
    index = start + 1
    while index < len(lines):
        line = lines[index]
        found = row.match(line)
        if found:
            counts[found["name"]] += int(found["count"])
        elif not (passes(line) or ELISION.match(line)):
            break
        index += 1
    block.stacks = [(frames_of(name), float(count), "", None, None) for name, count in counts.items() if count > 0]
    block.not_cpu = not_cpu
    return finish(block, start, index, f"read {tool}: {plural(len(block.stacks), noun)} with their call counts")


def _compaction_frames(comm: str, order: int) -> Tuple[str, ...]:
    if comm.startswith("kcompactd"):
        return ("kcompactd", "kcompactd_do_work", "compact_zone")
    if order < 0:                 # /proc/sys/vm/compact_memory, /sys/devices/system/node/nodeN/compact
        return ("compact_node", "compact_zone")
    return ("__alloc_pages_slowpath", "__alloc_pages_direct_compact", "try_to_compact_pages", "compact_zone")


def _read_mm_stalls(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """drsnoop / compactsnoop rows from `start` (a header): each run weighted by its latency (rule V5)."""
    compaction = bool(COMPACT_HEADER.match(lines[start]))
    row_re = COMPACT_ROW if compaction else DRSNOOP_ROW
    block = Block("bcc-compactsnoop" if compaction else "bcc-drsnoop", start, start, unit="us", header=True)
    times: List[float] = []
    last_lat = 0.0
    rows, index = rows_of(lines, start + 1, row_re.match, lambda line: line.strip() == "^C")
    for found in rows:
        lat = float(found["lat"]) * 1e3
        names = _compaction_frames(found["comm"], int(found["order"])) if compaction else DIRECT_RECLAIM
        if lat > 0:
            block.stacks.append((tuple(Frame(n, "kernel") for n in names), lat, found["comm"], None, None))
        if found["time"]:
            times.append(float(found["time"]))
            last_lat = lat
    if block.stacks and len(times) == len(block.stacks) and len(times) > 1:
        span = (max(times) - min(times)) * 1e6 + last_lat
        block.whole = max(span, sum(stack[1] for stack in block.stacks))
    what = "compaction runs (compactsnoop)" if compaction else "direct-reclaim stalls (drsnoop)"
    return finish(block, start, index, f"read {plural(len(block.stacks), 'row')} of {what}, each weighted by "
                  "its latency")


def _read_function_profile(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """trace_stat/function<cpu>: time per function from entry to return (children and sleep included)."""
    block = Block("ftrace-function-profile", start, start, unit="us")
    rows, index = rows_of(lines, start + 1, PROFILER_ROW.match,
                          lambda line: PROFILER_RULE.match(line) or PROFILER_TAIL.match(line))
    block.stacks = [((Frame(found["name"], "kernel"),), float(found["time"]), "", None, None)
                    for found in rows if float(found["time"]) > 0]
    block.not_cpu = ("this is ftrace's function profiler (trace_stat): each call timed from entry to return, the "
                     "functions it calls and (with the sleep-time option, the default) its time asleep included, "
                     "so schedule and the blocking calls lead it; wall time, not CPU samples")
    return finish(block, start, index, f"read the ftrace function profile: {plural(len(block.stacks), 'function')}")


# --- perf kvm stat report (rule P2) ----------------------------------------------------------------

KVM_STAT_HEADER = re.compile(r"^\s*(?P<kind>VM-EXIT|IO Port Access|MMIO Access|HCALL|Hcall)\s+Samples\s+Samples%\s+"
                             r"Time%\s+Min\s?Time\s+Max\s?Time\s+Avg\s?time\s*$")
KVM_STAT_ROW = re.compile(r"^\s*(?P<name>\S+)\s+(?P<samples>\d+)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+us\s+[\d.]+us\s+"
                          r"(?P<avg>[\d.]+)us\s*(?:\(\s*\+-\s*[\d.]+%\s*\))?\s*$")
KVM_STAT_OTHER = re.compile(r"^\s*(?:Analyze events for .*|Total Samples:\s*\d+.*)$")
KVM_STAT_FRAMES = {"VM-EXIT": "vm-exit", "IO Port Access": "kvm ioport", "MMIO Access": "kvm mmio",
                   "HCALL": "kvm hcall", "Hcall": "kvm hcall"}


def _read_kvm_stat(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """`perf kvm stat report` tables from `start` (a header), the next ones of the same report too:
    exits x average time per reason, wall time from exit to re-entry, not CPU samples."""
    block = Block("perf-kvm-stat", start, start, unit="us")
    rows: Counter = Counter()
    kind = KVM_STAT_FRAMES[KVM_STAT_HEADER.match(lines[start])["kind"]]
    index = start + 1
    while index < len(lines):
        line = lines[index]
        header, found = KVM_STAT_HEADER.match(line), KVM_STAT_ROW.match(line)
        if header:
            kind = KVM_STAT_FRAMES[header["kind"]]
        elif found:
            rows[f"[{kind} {found['name']}]"] += int(found["samples"]) * float(found["avg"])
        elif line.strip() and not (KVM_STAT_OTHER.match(line) or ELISION.match(line)):
            break
        index += 1
    for name, spent in rows.items():
        if spent > 0:
            block.stacks.append(((Frame("kvm_arch_vcpu_ioctl_run", "kernel"), Frame(name, "kernel")), spent,
                                 "", None, None))
    block.not_cpu = ("perf kvm stat times each VM exit from the exit to the guest's next entry: wall time per "
                     "event (for HLT the vCPU asleep until its next interrupt), not CPU samples; where the vCPU "
                     "threads spend CPU needs a profile of the host")
    return finish(block, start, index, f"read perf kvm stat report: {plural(len(block.stacks), 'exit reason')} "
                  "with their count and average time")


# kvm_stat: `Event  Total %Total CurAvg/s` (--once, 4.x+), or `name  total  delta` rows (-1, older)
KVM_EVENTS_HEADER = re.compile(r"^\s*Event\s+Total\s+%Total(?:\s+CurAvg/s)?\s*$")
KVM_DEBUGFS = frozenset({
    "exits", "halt_exits", "halt_wakeup", "halt_successful_poll", "halt_attempted_poll", "halt_poll_invalid",
    "halt_poll_success_ns", "halt_poll_fail_ns", "host_state_reload", "hypercalls", "insn_emulation",
    "insn_emulation_fail", "invlpg", "io_exits", "irq_exits", "irq_injections", "irq_window", "largepages",
    "mmio_exits", "mmu_cache_miss", "mmu_flooded", "mmu_pde_zapped", "mmu_pte_updated", "mmu_pte_write",
    "mmu_recycled", "mmu_shadow_zapped", "mmu_unsync", "nmi_injections", "nmi_window", "pf_fixed", "pf_guest",
    "remote_tlb_flush", "request_irq", "signal_exits", "tlb_flush", "efer_reload", "fpu_reload"})
KVM_EVENT_ROW = re.compile(r"^\s*(?P<name>kvm_\w+(?:\([\w -]+\))?|[a-z_]+)\s+(?P<total>\d+)"
                           r"(?:\s+\d+(?:\.\d+)?){0,2}\s*$")


def _kvm_event(line: str) -> "Optional[Tuple[str, int]]":
    found = KVM_EVENT_ROW.match(line)
    if found and (found["name"].startswith("kvm_") or found["name"] in KVM_DEBUGFS):
        return found["name"], int(found["total"])
    return None


def _read_kvm_events(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """kvm_stat's counters from `start`: how often each KVM event happened, no time (rule P2)."""
    block = Block("kvm-stat", start, start, unit="events")
    rows: Counter = Counter()
    index = start + 1 if KVM_EVENTS_HEADER.match(lines[start]) else start
    while index < len(lines):
        line = lines[index]
        event = _kvm_event(line)
        if event:
            rows[event[0]] += event[1]
        elif not (re.match(r"^\s*Total\s+\d+", line) or ELISION.match(line)) and (line.strip() or rows):
            break
        index += 1
    if len(rows) < 3:
        return Miss(max(index, start + 1))
    for name, count in rows.items():
        if count > 0:
            block.stacks.append(((Frame("kvm_arch_vcpu_ioctl_run", "kernel"), Frame(f"[kvm event {name}]", "kernel")),
                                 float(count), "", None, None))
    block.not_cpu = ("kvm_stat counts KVM events (exits per reason, page faults, halts): how often each happened, "
                     "not how long, so it holds no CPU time; not CPU samples")
    return finish(block, start, index, f"read kvm_stat: {plural(len(block.stacks), 'KVM event')} with their counts")


# --- tools that say where tasks wait or how the scheduler queued them: never CPU time (rule AS1) -----------
#
# A task's wait channel (`ps -o wchan`, /proc/PID/wchan, counted with `sort | uniq -c`) is the kernel
# function it sleeps in: a running task has none (`0` or `-`), so every named row is a sleeping task.
# `perf sched latency` gives each task's run time and its wakeup-to-run delays, latencytop the time tasks
# spent blocked per cause, /proc/sched_debug the run queues' state: none says which kernel functions
# used CPU time. Each is read and drawn, never diagnosed.

WCHAN_COMMAND = re.compile(r"^\s*(?:[$#%]\s*)?(?:sudo\s+)?(?:ps\b.*\bwchan\b|(?:\S.*)?/proc/\S+/wchan\b)")
WCHAN_ROW = re.compile(r"^\s*(?P<count>\d+)\s+(?P<name>[A-Za-z_][\w.]*|-|0)\s*$")
WCHAN_OTHER = re.compile(WCHAN_COMMAND.pattern + r"|^\s*\d+\s+WCHAN\s*$")
# the columns after the average delay may be on a line of their own (a mail client wrapped the row at 72)
SCHED_LATENCY_HEADER = re.compile(r"^\s*Task\s*\|\s*Runtime ms\s*\|\s*Switches\s*\|\s*Av(?:era)?ge? delay ms\b")
SCHED_LATENCY_ROW = re.compile(r"^\s*(?P<task>\S.*?)\s*\|\s*(?P<run>\d+(?:\.\d+)?)\s*ms\s*\|\s*\d+\s*\|"
                               r"\s*avg:\s*[\d.]+\s*ms\b")
SCHED_LATENCY_OTHER = re.compile(r"^\s*(?:-{10,}|TOTAL:\s*\|.*|\|\s*(?:max:|Maximum delay).*)\s*$")
LATENCYTOP_HEADER = re.compile(r"^\s*Cause\s+Maximum\s+Percentage\s*$")
LATENCYTOP_ROW = re.compile(r"^\s*(?P<cause>\S.*?)\s+(?P<max>\d+(?:\.\d+)?)\s*msec\s+(?P<pct>\d+(?:\.\d+)?)\s*%\s*$")
LATENCYTOP_PROCESS = re.compile(r"^\s*Process\s+\S.*\(\d+\)\s+Total:\s*[\d.]+\s*msec\s*$")
LATENCYTOP_OTHER = re.compile(LATENCYTOP_PROCESS.pattern + "|" + LATENCYTOP_HEADER.pattern)
SCHED_DEBUG_HEADER = re.compile(r"^\s*Sched Debug Version:\s*v\d")
SCHED_DEBUG_LINE = re.compile(r"^\s*(?:\.?[\w.()\[\]>-]+\s*:.*|cpu#\d+.*|(?:cfs|rt|dl)_rq\[\d+\]:.*|sysctl_sched|"
                              r"runnable tasks:|-{10,}|task\s+PID\s+tree-key.*|"
                              r"(?:[RS>]\s*)?\S+\s+\d+\s+-?\d+\.\d+\s+\d+\s+\d+\s.*)\s*$")
SCHED_DEBUG_TASK = re.compile(r"^\s*(?:[RS>]\s*)?(?P<comm>\S+)\s+(?P<pid>\d+)\s+-?\d+\.\d+\s+\d+\s+\d+\s+-?\d+\.\d+\s+"
                              r"(?P<sum>\d+\.\d+)")
# `perf sched timehist` (perf 4.10+): one line per context switch, the task switched out with how long it
# waited before it ran, its scheduling delay and how long it ran (msec); `-s` / `-S` add a per-task summary
# (`Runtime summary`: comm, parent, sched-in count, run-time ...) and idle stats (rule BM2)
SCHED_TIMEHIST_HEADER = re.compile(r"^\s*time\s+cpu\s+(?:\S+\s+)?task name\s+wait time\s+sch delay\s+run time\b")
SCHED_TIMEHIST_ROW = re.compile(r"^\s*\d+\.\d+\s+\[(?P<cpu>\d+)\]\s+(?:[ .s]*\s)?(?P<task>\S.*?)\s+\d+\.\d+\s+"
                                r"\d+\.\d+\s+(?P<run>\d+\.\d+)(?:\s+\S+)?\s*$")
SCHED_TIMEHIST_SUMMARY = re.compile(r"^\s*Runtime summary\s*$")
SCHED_TIMEHIST_TASK = re.compile(r"^\s*(?P<task>\S.*?)\s+-?\d+\s+\d+\s+(?P<run>\d+\.\d+)\s+\d+\.\d+\s+\d+\.\d+\s+"
                                 r"\d+\.\d+\s+\d+\.\d+(?:\s+\d+)?\s*$")
SCHED_TIMEHIST_OTHER = re.compile(r"^\s*(?:\[tid/pid\].*|\(count\).*|-[-\s]{9,}$|comm\s+parent\s+sched-in.*|Runtime summary|"
                                  r"\d+\.\d+\s+\[\d+\]\s+.*\b(?:awakened|migrated):.*|Idle stats:|"
                                  r"CPU\s+\d+ idle.*|Total number of .*|Total run time.*|Total scheduling delay.*|"
                                  r"\(msec\).*|Terminated tasks:|Wait stats:|(?:\S.*)?\(count\)\s+\(msec\).*)\s*$")


def starts_wait_table(line: str) -> bool:
    return bool(WCHAN_COMMAND.match(line) or SCHED_LATENCY_HEADER.match(line) or LATENCYTOP_HEADER.match(line)
                or SCHED_DEBUG_HEADER.match(line) or SCHED_TIMEHIST_HEADER.match(line)
                or SCHED_TIMEHIST_SUMMARY.match(line))


def read_wait_table(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Wait channels, perf sched latency, latencytop or /proc/sched_debug from `start` (rule AS1).

    >>> block = read_wait_table(["$ ps -L -o wchan:32 -p 4411 | sort | uniq -c", "    512 futex_wait_queue_me",
    ...                          "     61 ep_poll", "      1 -"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.fmt, bool(block.not_cpu)
    ([('futex_wait_queue_me', 512.0), ('ep_poll', 61.0)], 'wait-channels', True)
    >>> block = read_wait_table(["  Task   |   Runtime ms  | Switches | Average delay ms | Maximum delay ms |",
    ...     "  mysqld:(41)  |   1214.331 ms |    18221 | avg:    0.041 ms | max:    4.812 ms | max at: 1.0 s"], 0)
    >>> [(s[0][-1].name, s[1], s[2]) for s in block.stacks], block.fmt, bool(block.not_cpu)
    ([('[run time]', 1214331.0, 'mysqld')], 'perf-sched-latency', True)
    """
    line = lines[start]
    if SCHED_LATENCY_HEADER.match(line):
        return _read_sched_latency(lines, start)
    if LATENCYTOP_HEADER.match(line):
        return _read_latencytop(lines, start)
    if SCHED_DEBUG_HEADER.match(line):
        return _read_sched_debug(lines, start)
    if SCHED_TIMEHIST_HEADER.match(line) or SCHED_TIMEHIST_SUMMARY.match(line):
        return _read_sched_timehist(lines, start)
    return _read_wchan(lines, start)


def _read_wchan(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("wait-channels", start, start, unit="tasks")
    counts: Counter = Counter()
    rows, index = rows_of(lines, start + 1, WCHAN_ROW.match, WCHAN_OTHER.match)
    for row in rows:
        if row["name"] not in ("-", "0", "WCHAN"):
            counts[row["name"]] += int(row["count"])
    block.stacks = [((Frame(name, "kernel"),), float(count), "", None, None) for name, count in counts.items()]
    block.not_cpu = ("these are wait channels (ps -o wchan, /proc/PID/wchan): the kernel function each sleeping task "
                     "waits in; a running task has none, so the counts are of tasks asleep, not CPU time")
    return finish(block, start, index, f"read wait channels: {plural(len(block.stacks), 'function')} "
                  "with the count of sleeping tasks (or reads) in each")


def _read_sched_latency(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("perf-sched-latency", start, start, unit="us")
    rows, index = rows_of(lines, start + 1, SCHED_LATENCY_ROW.match, SCHED_LATENCY_OTHER.match)
    for row in rows:
        task = re.sub(r":\(?\d*\)?$", "", row["task"].strip()) or row["task"].strip()
        spent = float(row["run"]) * 1e3
        if spent > 0:
            block.stacks.append(((Frame("[run time]", "unknown"),), spent, task, None, None))
    block.not_cpu = ("perf sched latency gives each task's run time and how long its wakeups waited for a CPU: "
                     "scheduling delays, with no kernel function behind the run time, not CPU samples")
    return finish(block, start, index, f"read perf sched latency: {plural(len(block.stacks), 'task')} "
                  "with their run time")


def _read_sched_timehist(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """perf sched timehist's switch lines and per-task summary from `start` (rule BM2): each task's run
    time (the summary's when it is there, else the switch lines' added up), the idle task left out;
    scheduling history with no kernel function behind the run time, never CPU samples.

    >>> block = _read_sched_timehist(["           time    cpu  task name       wait time  sch delay   run time",
    ...     "                        [tid/pid]          (msec)     (msec)     (msec)",
    ...     "--------------- ------  --------------  ---------  ---------  ---------",
    ...     "  201411.501208 [0002]  <idle>              0.000      0.000      1.021",
    ...     "  201411.501246 [0002]  nginx[2213]         1.054      0.006      0.038",
    ...     "  201411.501388 [0002]  nginx[2213]         0.142      0.003      0.048"], 0)
    >>> [(s[0][-1].name, round(s[1]), s[2]) for s in block.stacks], block.fmt, bool(block.not_cpu)
    ([('[run time]', 86, 'nginx')], 'perf-sched-timehist', True)
    """
    block = Block("perf-sched-timehist", start, start, unit="us")
    switched, index = rows_of(lines, start + 1, lambda line: SCHED_TIMEHIST_ROW.match(line) or
                              SCHED_TIMEHIST_TASK.match(line), SCHED_TIMEHIST_OTHER.match)
    per_switch: Counter = Counter()
    summary: Counter = Counter()
    for row in switched:
        task = re.sub(r"\[\d+(?:/\d+)?\]$", "", row["task"].strip()) or row["task"].strip()
        if task == "<idle>" or task.startswith("swapper"):
            continue
        (per_switch if "cpu" in row.groupdict() else summary)[task] += float(row["run"]) * 1e3
    runs = summary or per_switch
    block.stacks = [((Frame("[run time]", "unknown"),), spent, task, None, None)
                    for task, spent in runs.items() if spent > 0]
    block.not_cpu = ("perf sched timehist gives, per context switch, how long a task waited, its scheduling delay "
                     "and how long it ran: scheduling history with no kernel function behind the run time, not "
                     "CPU samples")
    return finish(block, start, index, f"read perf sched timehist: {plural(len(block.stacks), 'task')} "
                  "with their run time")


def _read_latencytop(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("latencytop", start, start, unit="percent")
    rows, index = rows_of(lines, start + 1, LATENCYTOP_ROW.match, LATENCYTOP_OTHER.match)
    block.stacks = [((Frame(f"[{row['cause'].strip()}]", "unknown"),), float(row["pct"]), "", None, None)
                    for row in rows if float(row["pct"]) > 0]
    block.not_cpu = ("latencytop shows how long tasks were blocked, per cause (disk, fsync, locks, poll): time "
                     "asleep, not CPU time")
    return finish(block, start, index, f"read latencytop: {plural(len(block.stacks), 'cause')} of blocking")


def _read_sched_debug(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("sched-debug", start, start, unit="us")
    tasks, index = rows_of(lines, start + 1, SCHED_DEBUG_TASK.match, SCHED_DEBUG_LINE.match)
    block.stacks = [((Frame("[run time]", "unknown"),), float(task["sum"]) * 1e3, task["comm"], None, None)
                    for task in tasks]
    if not block.stacks:
        block.stacks.append(((Frame("[run queues]", "unknown"),), 1.0, "", None, None))
    block.not_cpu = ("/proc/sched_debug is the scheduler's state at one moment (run queues, runnable tasks and their "
                     "accumulated run time): no kernel function's CPU time, not CPU samples")
    return finish(block, start, index, "read /proc/sched_debug: the runnable tasks with their run time")


# --- tools that count, rate or take ratios, and name no kernel function: never CPU time (rule BN2) --------
#
# Observability tools whose examples and manual pages fill tickets print tables of counters: page-cache
# hits and misses (bcc / perf-tools `cachestat`), last-level-cache references and misses per process
# (bcc `llcstat`), kernel allocations per slab cache (bcc `slabratetop`), context switches or CPU use per
# task (sysstat `pidstat`), idle CPUs while others queue (bcc `cpuunclaimed`), top-down pipeline-slot
# shares (pmu-tools `toplev`), page and slab allocations per call site (`perf kmem stat`). None has a
# stack or a sampled kernel function: how often, how much or what fraction, never where a CPU spent its
# time. Each is read from its own header and drawn as one row per table, never diagnosed; beside a
# profile, the profile is diagnosed (the table is not CPU samples, key 1 of `profiles`).

METRIC_TOOLS = (
    # (tool, header, what its rows count)
    ("cachestat", re.compile(r"^\s*(?:TIME\s+)?HITS\s+MISSES\s+(?:DIRTIES\s+)?(?:READ_HIT%|HITRATIO|RATIO)(?=\s|$)"),
     "page-cache hits, misses and dirtied pages per interval"),
    ("llcstat", re.compile(r"^\s*PID\s+(?:TID\s+)?NAME\s+CPU\s+REFERENCE\s+MISS\s+HIT%\s*$"),
     "last-level-cache references and misses per process"),
    ("slabratetop", re.compile(r"^\s*CACHE\s+ALLOCS\s+BYTES\s*$"),
     "kernel allocations per slab cache"),
    ("pidstat", re.compile(r"^\s*(?:\d{1,2}:\d{2}:\d{2}(?:\s*[AP]M)?\s+|Average:\s+)?UID\s+(?:TGID\s+|TID\s+)*PID\s+"
                           r"(?=.*(?:%usr|cswch/s|kB_rd/s|minflt/s|StkSize|%MEM|threads))\S.*\s(?:Command|COMMAND)\s*$"),
     "CPU use, context switches, faults or I/O per task"),
    ("cpuunclaimed", re.compile(r"^\s*%CPU\s+\d+(?:\.\d+)?%,\s*unclaimed idle\s+\d+(?:\.\d+)?%\s*$"),
     "CPU utilisation and idle CPUs left unclaimed while tasks queued"),
    ("toplev", re.compile(r"^\s*(?:(?:S\d+-)?C\d+(?:-T\d+)?\s+|CPU\d+\s+)?(?:FE|BE|RET|BAD)(?:/\w+)?\s+"
                          r"(?:Frontend_Bound|Backend_Bound|Retiring|Bad_Speculation)(?:\.\w+)*\s+%\s*\w+"),
     "shares of pipeline slots per top-down category"),
    ("perf kmem stat", re.compile(r"^\s*(?:SUMMARY \((?:page|SLAB) allocator\)|(?:Total alloc \(KB\)|Callsite|Alloc Ptr)"
                                  r"\s*\|.*|Order\s+Unmovable\s+Reclaimable\s+Movable\b.*)\s*$"),
     "page or slab allocations per call site, order and migrate type"),
)
# cpuunclaimed and toplev print no header line: what starts their table is its first row
HEADER_IS_ROW = frozenset({"cpuunclaimed", "toplev"})
# a row holds a number; a command line, a comment or a profile's row (`[k]`) starts what follows the table
METRIC_ROW = re.compile(r"^(?!\s*[#$@>%])(?!.*\[[k.]\]).*\d")
METRIC_OTHER = re.compile(r"^\s*(?:[-=|+\s]{3,}|\^C|\.\.\.[\s.|]*|[=]+)\s*$")


def starts_metric_table(line: str) -> bool:
    return any(header.match(line) for _tool, header, _what in METRIC_TOOLS)


def read_metric_table(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """A counter table of `cachestat`, `llcstat`, `slabratetop`, `pidstat`, `cpuunclaimed`, `toplev` or
    `perf kmem stat` from its header at `start`, to the first line that is neither a row (a line with a
    number), its tool's header again, a rule nor a blank line before that header (rule BN2): read as one row, never diagnosed.

    >>> block = read_metric_table(["CACHE                            ALLOCS      BYTES",
    ...                            "dentry                             1871     359232",
    ...                            "kmalloc-64                          214      13696"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.fmt, bool(block.not_cpu), block.end
    ([('[slabratetop table]', 2.0)], 'tool-metrics', True, 3)
    >>> block = read_metric_table(["%CPU  83.00%, unclaimed idle 0.12%", "%CPU  87.25%, unclaimed idle 0.38%",
    ...                            "", "$ perf top"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], block.end
    ([('[cpuunclaimed table]', 2.0)], 2)
    """
    tool, header, what = next(t for t in METRIC_TOOLS if t[1].match(lines[start]))
    rows, index = 0, start
    while index < len(lines):
        line = lines[index]
        is_row, is_header = bool(METRIC_ROW.search(line)), bool(header.match(line))
        if is_row or is_header:
            rows += 1 if (is_row and not is_header) or tool in HEADER_IS_ROW else 0
        elif not (METRIC_OTHER.match(line) or ELISION.match(line)
                  or (not line.strip() and _metric_continues(lines, index + 1, header))):
            break
        index += 1
    while index > start and not lines[index - 1].strip():
        index -= 1
    block = Block("tool-metrics", start, start, unit="events")
    if rows:
        block.stacks = [((Frame(f"[{tool} table]", "unknown"),), float(rows), "", None, None)]
    block.not_cpu = (f"this {tool} table counts {what}: no stack and no sampled kernel function, so it says "
                     "how often or how much, not where CPU time went")
    return finish(block, start, index, f"read a {tool} table: {plural(rows, 'row')} of counters, not CPU samples")


def _metric_continues(lines: Sequence[str], index: int, header: re.Pattern) -> bool:
    """Whether the table goes on after a blank line: its next non-blank line is its tool's header (the
    next interval's table, the next part of a report), not whatever the author pasted after it."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index < len(lines) and bool(header.match(lines[index]))
