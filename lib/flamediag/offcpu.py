"""Recognise off-CPU data (time tasks spent blocked), which must never be diagnosed as CPU time.

    >>> offcpu_reason([("schedule", 8.0), ("schedule", 4000473.0), ("finish_task_switch.isra.0", 33.0)])[:34]
    'this is off-CPU time: every stack '
    >>> offcpu_reason([("schedule", 5.0), ("_raw_spin_lock", 95.0)]) is None
    True

The rule, for stacks carrying weights (folded lines, bcc / bpftrace maps, perf script):
1. The tool says so: a header or command line naming an off-CPU tool (`offcputime`,
   `offwaketime`, `wakeuptime`, bpftrace's `offcputime.bt`, bcc's "Tracing off-CPU time"),
   or offwaketime's `--` between the blocked stack and its waker's.
2. The frames say so: a CPU profile samples whatever a CPU runs, so only a small share of its
   stacks can end inside the context switch; off-CPU tools record each stack at the moment
   its task is switched out, so all of them end there. When 90 % or more of the weight of at
   least two stacks ends in the switch (`schedule`, `__schedule`, `finish_task_switch`,
   `schedule_timeout`, `io_schedule`, ...), the weights are blocked time (microseconds for
   bcc `offcputime`), or switch counts of a `sched:sched_switch` recording — not CPU samples.
3. System call time tables (sysdig `topscalls_time`, `perf trace -s`): a call's time runs from
   its entry to its return, wall time; for the calls that block (futex, epoll_wait, select, poll,
   nanosleep, wait4, read / recv on sockets and pipes) it is time spent asleep. Such a table is
   never CPU time (`syscall_time_reason`).
Kernel traces (oops, hung task, /proc/PID/stack) are not weighted samples and are not judged here;
the kernel-log reader leaves out the traces of switched-out tasks itself (paste/kstack.py).
"""
from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

from .kernelnames import normalize

SWITCH_LEAVES = frozenset(
    {"schedule", "__schedule", "finish_task_switch", "schedule_timeout", "io_schedule", "io_schedule_timeout",
     "schedule_hrtimeout", "schedule_hrtimeout_range", "schedule_hrtimeout_range_clock", "schedule_preempt_disabled",
     "preempt_schedule", "preempt_schedule_common", "preempt_schedule_irq", "schedule_idle", "context_switch",
     "__switch_to", "__switch_to_asm", "__traceiter_sched_switch", "trace_sched_switch", "__perf_event_task_sched_out",
     "perf_trace_sched_switch", "sched_switch"}
)
OFFCPU_TOOL = re.compile(r"\b(offcputime(?:\.bt|\.py)?|offwaketime|wakeuptime|off-?cpu ?time)\b", re.I)
SHARE = 0.9
WAKER_SEPARATOR = "--"


def has_waker_separator(stacks: Iterable[Iterable[str]]) -> bool:
    return any(WAKER_SEPARATOR in names for names in stacks)


def offcpu_reason(leaves: Iterable[Tuple[str, float]], head: str = "", waker_separator: bool = False) -> Optional[str]:
    """Why these (leaf frame name, weight) pairs are off-CPU data, or None for CPU samples.
    `head` is the text printed above the stacks (tool header, command line);
    `waker_separator` when a stack holds offwaketime's `--` frame."""
    if waker_separator:
        return ("this is off-CPU time: offwaketime output (`--` joins each blocked stack to its waker's), "
                "whose weights are time spent blocked, not CPU samples")
    tool = OFFCPU_TOOL.search(head)
    if tool:
        return (f"this is off-CPU time: {tool[1]} output, whose weights are time spent blocked "
                "(microseconds for bcc), not CPU samples")
    total = switched = 0.0
    stacks = 0
    for leaf, weight in leaves:
        stacks += 1
        total += weight
        if normalize(leaf) in SWITCH_LEAVES:
            switched += weight
    if stacks >= 2 and total > 0 and switched >= SHARE * total:
        return ("this is off-CPU time: every stack ends where its task was switched out (schedule, "
                "finish_task_switch), so the weights measure time spent blocked (offcputime's microseconds) "
                "or context switches (a sched_switch recording), not CPU samples")
    return None


# System calls that put their caller to sleep until something happens: their time is waiting.
BLOCKING_SYSCALLS = frozenset(
    {"futex", "epoll_wait", "epoll_pwait", "epoll_pwait2", "select", "pselect6", "_newselect", "poll", "ppoll",
     "nanosleep", "clock_nanosleep", "wait4", "waitid", "read", "readv", "recvfrom", "recvmsg", "recvmmsg",
     "accept", "accept4", "pause", "rt_sigtimedwait", "rt_sigsuspend", "sigsuspend", "io_getevents",
     "io_uring_enter", "msgrcv", "semop", "semtimedop", "mq_timedreceive", "flock", "fcntl", "fsync",
     "fdatasync", "sched_yield", "connect", "sendfile", "splice"}
)


def syscall_time_reason(rows: Iterable[Tuple[str, float]], tool: str) -> str:
    """Why a table of (system call, total time) is not CPU time, naming the blocking calls that lead it.

    >>> syscall_time_reason([("futex", 318.4), ("epoll_wait", 144.0), ("write", 0.2)], "sysdig topscalls_time")[:60]
    'this is time per system call (sysdig topscalls_time), from e'
    """
    rows = sorted(rows, key=lambda row: -row[1])
    total = sum(t for _, t in rows) or 1.0
    blocking = [name for name, _ in rows if name in BLOCKING_SYSCALLS]
    waited = sum(t for name, t in rows if name in BLOCKING_SYSCALLS)
    led = f"; {round(100 * waited / total)} % of it in calls that block ({', '.join(blocking[:4])})" if blocking else ""
    return (f"this is time per system call ({tool}), from each call's entry to its return: wall time, "
            f"including time asleep{led}; not CPU samples")


def headline(reason: str) -> str:
    """The report's headline for input whose weights are not CPU time (`Profile.not_cpu`)."""
    return (f"Not diagnosed, not a CPU profile: {reason}. To diagnose CPU time, capture CPU samples "
            "during the spike (flamediag capture, perf record -a -g, or bcc profile)")
