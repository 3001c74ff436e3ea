"""The stack profile every input format is reduced to, and the diagnosis engine reads.

A `Profile` is a bag of aggregated stacks. Each `StackRecord` is one distinct
(frames, comm, cpu, context) with its weight (sample count, or period sum when the
input is period-weighted). Frames run root first, leaf last, and carry their kind so
the matcher and the flame graph need not guess:

    Frame("__alloc_pages_nodemask", "kernel")

Readers (perf script, folded, pasted perf report, crash bt, ...) build a Profile with
`Profile.add(...)`; they never decide what is busy or idle — `is_idle()` does, once.

Who fills what:
- perf script / bundle: all fields; `ancestry=True`.
- folded stacks: frames (kind from `_[k]`/`_[j]` suffixes or a kernel-name heuristic),
  comm = first frame when it is not a function, cpu None.
- flat profiles (perf top, perf report without call graph): one-frame stacks with
  `ancestry=False` — signatures only count frames declared distinctive alone.

Time (inputs with timestamps: perf script, bundles). Every record keeps its weight per second of
the capture, so a timeline or a spike search needs no second pass over the input:

- `profile.time_span`: (first, last) sample timestamp as perf printed it (seconds), else None;
- `profile.origin`: the timestamp of second 0 (the first sample read), else None;
- `record.seconds`: {second index: weight}, index = floor(timestamp - origin); empty without
  timestamps; its values sum to `record.weight`;
- `profile.seconds()`: how many seconds the samples span (0 without timestamps);
- `profile.per_second(records=None)`: total weight per second index, a list of that length;
- `profile.between(start, end)`: a new Profile of the seconds start <= index < end (indexes
  as above; fractions are floored), each record's weight restricted to them; records outside
  are left out. Everything else (format, ancestry, events, data quality) is carried over; its
  `time_span` is the window clipped to the whole profile's span.

    spike = profile.between(30, 31)         # the samples of second 30 only

Memory follows the number of distinct records (stack, comm, cpu, context), never the number of
samples: a record holds at most one entry per second.
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from .kernelnames import normalize

KINDS = ("kernel", "user", "jit", "context", "unknown")
CONTEXTS = ("task", "softirq", "hardirq", "nmi")

# Leaf frames of the idle loop across kernel eras. A sample is idle only when its
# leaf is one of these AND no softirq/hardirq/nmi context sits above it: softirq
# work taken on an idle CPU is busy (FlameScope and bcc profile get this wrong).
IDLE_LEAVES = frozenset(
    {
        "cpu_idle", "cpu_idle_loop", "do_idle", "default_idle", "default_idle_call",
        "arch_cpu_idle", "native_safe_halt", "pv_native_safe_halt", "safe_halt",
        "intel_idle", "intel_idle_irq", "intel_idle_ibrs", "mwait_idle", "mwait_idle_with_hints",
        "acpi_idle_enter", "acpi_processor_ffh_cstate_enter",
        "xen_hypercall_sched_op", "xen_safe_halt", "poll_idle", "cpuidle_enter_state",
        "cpu_startup_entry", "amd_e400_idle", "default_enter_idle", "hv_idle",
        "acpi_safe_halt", "io_idle", "cpuidle_idle_call", "tick_nohz_idle_enter",
        "native_halt", "halt",
    }
)
# A paravirt spin lock's waiter halts its vCPU until the holder kicks it (rule AO1): KVM's pv qspinlock
# (4.2+) in kvm_wait, which halts itself or through safe_halt / pv_native_safe_halt, Xen's in
# xen_qlock_wait, the pv ticket locks of 3.12-4.1 in kvm_lock_spinning / xen_lock_spinning. A halt
# below one of them is a task waiting for a contended lock, not an idle CPU.
PV_LOCK_WAIT = frozenset(
    {"kvm_wait", "kvm_lock_spinning", "xen_qlock_wait", "xen_lock_spinning", "xen_spin_lock_slow",
     "__pv_queued_spin_lock_slowpath", "pv_wait_head_or_lock", "pv_wait_node"}
)
# Idle-path functions whose own time is not a halted CPU: acpi_idle_do_entry enters an ACPI C-state
# through an I/O-port read (the FFH path ends in acpi_processor_ffh_cstate_enter / mwait, HLT in
# safe_halt) and then, before 6.1, a "dummy wait" inl() of the ACPI PM timer; a cycle-counting
# event only samples it while it executes those slow port reads. Time there is the C-state policy's
# cost (cpu-power-saving), not idle -- unless the event samples on a timer (cpu-clock, task-clock):
# that samples a halted CPU too, where it halted, so there the same leaf is plain idle time.
IDLE_ENTRY_COST = frozenset({"acpi_idle_do_entry"})
# `timer`: OProfile's timer-interrupt mode and readprofile's ticks sample on the timer tick too.
TIMER_EVENT = re.compile(r"^(?:(?:cpu|task)-clock\b|timer$)")
IDLE_COMMS = frozenset({"swapper", "idle", "init"})  # init: RHEL 6 names the idle task init (pid 0)


MAX_WEIGHT = 1e15          # one stack's samples (or period sum) in one add: beyond is not a measurement
MAX_STACKS = 100_000        # distinct records held; about 2 KB each through the whole diagnosis
OVERFLOW_FRAME = "[more distinct stacks than the limit]"


def max_stacks() -> int:
    """The distinct-record budget, FLAMEDIAG_MAX_STACKS overrides it."""
    raw = os.environ.get("FLAMEDIAG_MAX_STACKS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_STACKS


class Frame(NamedTuple):
    """One frame; a tuple underneath, so stacks of frames hash and compare at C speed."""
    name: str
    kind: str = "unknown"

    def __str__(self) -> str:
        return self.name


@dataclass
class StackRecord:
    frames: Tuple[Frame, ...]
    weight: float
    comm: str = ""
    cpu: Optional[int] = None
    context: str = "task"  # task|softirq|hardirq|nmi: the innermost non-task context in the stack
    pid: Optional[int] = None
    seconds: Dict[int, float] = field(default_factory=dict)   # second index -> weight (see module doc)
    timer_sampled: bool = False   # sampled by a timer event: a halted CPU is sampled too (is_idle)

    def names(self) -> Tuple[str, ...]:
        return tuple(f.name for f in self.frames)


def context_of(frames: Iterable[Frame]) -> str:
    """The innermost interrupt context a stack runs in (contexts.py holds the rules)."""
    from .contexts import context_of as innermost_context   # contexts imports Frame from here

    return innermost_context(frames)


def is_idle(record: StackRecord) -> bool:
    """An idle loop's halt is idle; a paravirt spin lock's halt is a waiter (rule AO1).

    >>> halt = ("do_idle", "default_idle", "pv_native_safe_halt")
    >>> is_idle(StackRecord(tuple(Frame(n, "kernel") for n in halt), 1.0, comm="swapper/0", pid=0))
    True
    >>> wait = ("ep_insert", "_raw_spin_lock_irqsave", "__pv_queued_spin_lock_slowpath", "kvm_wait", "pv_native_safe_halt")
    >>> is_idle(StackRecord(tuple(Frame(n, "kernel") for n in wait), 1.0, comm="nginx"))
    False
    >>> is_idle(StackRecord((Frame("kvm_wait", "kernel"),), 1.0, comm="nginx"))
    False
    """
    if record.context != "task" or not record.frames:
        return False
    leaf = record.frames[-1].name.split(".", 1)[0]
    if leaf in IDLE_ENTRY_COST:
        return record.timer_sampled
    if leaf in IDLE_LEAVES:
        return not any(normalize(frame.name) in PV_LOCK_WAIT for frame in record.frames[:-1])
    if len(record.frames) == 1:
        # a lone frame (flat profile) shows no interrupt entry above it: the idle task's entries that
        # are not idle-loop functions are interrupt and softirq work done on an idle CPU (busy)
        return False
    comm = record.comm.split("/", 1)[0]
    return comm in IDLE_COMMS and record.pid in (0, None) and all(f.kind != "user" for f in record.frames)


# A kernel thread runs one function under kthread() for its whole life (per-CPU threads under
# smpboot_thread_fn): that function names the thread. A paste without a command column (a perf report
# --sort sym, perf record -p PID, a crash or dmesg trace) still says which thread ran a stack rooted
# at `kthread -> kswapd`, or at `kswapd` itself where a caller-order tree was cut above it. Values are the thread's command prefix as the kernel names it.
THREAD_FUNCTIONS = {
    "kswapd": "kswapd", "khugepaged": "khugepaged", "ksm_scan_thread": "ksmd", "kcompactd": "kcompactd",
    "run_ksoftirqd": "ksoftirqd/", "worker_thread": "kworker/", "kauditd_thread": "kauditd",
}


def command_of(record: "StackRecord") -> str:
    """The record's command; without one, the kernel thread its stack runs in (`kthread` -> `kswapd`).

    >>> command_of(StackRecord((Frame("ret_from_fork", "kernel"), Frame("kthread", "kernel"),
    ...                         Frame("kswapd", "kernel"), Frame("balance_pgdat", "kernel")), 1.0))
    'kswapd'
    >>> command_of(StackRecord((Frame("kthread", "kernel"), Frame("smpboot_thread_fn", "kernel"),
    ...                         Frame("run_ksoftirqd", "kernel"), Frame("net_rx_action", "kernel")), 1.0))
    'ksoftirqd/'
    >>> command_of(StackRecord((Frame("kthread", "kernel"), Frame("kswapd", "kernel")), 1.0, comm="kswapd1"))
    'kswapd1'
    >>> command_of(StackRecord((Frame("kswapd", "kernel"),), 1.0))
    ''

    A caller-order tree cut above the thread's function (`kthread` and `ret_from_fork` folded or
    trimmed by the author) has that function at its root, and nothing but the thread calls it:
    >>> command_of(StackRecord((Frame("kswapd", "kernel"), Frame("balance_pgdat", "kernel")), 1.0))
    'kswapd'
    >>> command_of(StackRecord((Frame("smpboot_thread_fn", "kernel"), Frame("run_ksoftirqd", "kernel"),
    ...                         Frame("__do_softirq", "kernel")), 1.0))
    'ksoftirqd/'
    >>> command_of(StackRecord((Frame("shrink_node", "kernel"), Frame("kswapd", "kernel"),
    ...                         Frame("balance_pgdat", "kernel")), 1.0))
    ''
    """
    if record.comm:
        return record.comm
    names = [normalize(frame.name) for frame in record.frames]
    if "kthread" in names[:-1]:
        below = names.index("kthread") + 1
        return next((THREAD_FUNCTIONS[name] for name in names[below:below + 2] if name in THREAD_FUNCTIONS), "")
    if len(names) > 1 and names[0] in THREAD_FUNCTIONS.keys() | {"smpboot_thread_fn"}:
        return next((THREAD_FUNCTIONS[name] for name in names[:min(2, len(names) - 1)] if name in THREAD_FUNCTIONS), "")
    return ""


@dataclass
class Profile:
    """Aggregated stacks plus what the reader learned about the input."""

    source_format: str = "unknown"          # e.g. "perf-script", "folded", "perf-report-callgraph"
    ancestry: bool = True                   # False for flat profiles (no call chains)
    records: Dict[tuple, StackRecord] = field(default_factory=dict)
    data_quality: List[str] = field(default_factory=list)   # sentences for findings.json
    skipped_lines: int = 0
    events: Counter = field(default_factory=Counter)          # event name -> samples seen
    time_span: Optional[Tuple[float, float]] = None           # first/last sample timestamp
    origin: Optional[float] = None                            # timestamp of second 0
    not_cpu: Optional[str] = None           # why the weights are not CPU time (off-CPU data): never diagnosed
    percent_of: Optional[float] = None      # weights are % of all samples: the weight 100 % stands for
                                            # (100, or the pasted sample count), set when what was read is
                                            # a listing of the top entries; None = unknown
    cpu_window: Optional[float] = None      # samples one CPU gives over the profiled window (a bcc profile's
                                            # `Sampling at 99 Hertz ... for 10 secs`: 990), None = unknown
    thread_cpu: Dict[str, float] = field(default_factory=dict)
                                            # a pasted top / pidstat table: kernel thread -> the part of one
                                            # CPU it took (%CPU / 100, rule BY1)
    interrupt_cpus: Optional[Tuple[float, str]] = None
                                            # a pasted machine-wide interrupt share and CPU bound: the CPUs'
                                            # worth of hard + soft interrupt time at most, and what says so
                                            # (rules CF1-CF2, paste.irqtime)
    through: Dict[Tuple[str, str], float] = field(default_factory=dict)
                                            # a --children listing: (comm, frame) -> weight of the samples
                                            # that ran through that frame (its Children column)
    # a call-graph paste's listing rows pasted without their call chain (keys of one-frame records):
    # they are judged as a flat listing is (flatclaims.py) while the stacks keep their ancestry
    listed: Set[tuple] = field(default_factory=set)
    overflow_weight: float = 0.0                              # weight of stacks past max_stacks()
    rejected_weights: int = 0                                 # stacks added with a weight out of range

    def add(self, frames: Iterable[Frame], weight: float = 1, comm: str = "", cpu: Optional[int] = None,
            context: Optional[str] = None, pid: Optional[int] = None,
            seconds: Optional[Dict[int, float]] = None) -> None:
        if not 0 < weight <= MAX_WEIGHT:      # NaN, inf (a 400-digit count), zero or negative
            self.rejected_weights += 1
            return
        frames = tuple(frames)
        ctx = context or context_of(frames)
        key = (frames, comm, cpu, ctx, pid if pid == 0 else None)
        rec = self.records.get(key)
        if rec is None:
            self._insert(key, StackRecord(frames, weight, comm, cpu, ctx, pid, dict(seconds or {})))
            return
        self._merge(rec, weight, seconds)

    def mark_listed(self, frames: Iterable[Frame], comm: str = "", cpu: Optional[int] = None,
                    context: Optional[str] = None) -> None:
        """The record of these frames is a listing row pasted without its call chain."""
        frames = tuple(frames)
        self.listed.add((frames, comm, cpu, context or context_of(frames), None))

    def is_listed(self, record: StackRecord) -> bool:
        return (record.frames, record.comm, record.cpu, record.context, None) in self.listed

    def adopt(self, record: StackRecord) -> None:
        """Add a record built by a reader (its `seconds` dict is taken over, not copied)."""
        if not 0 < record.weight <= MAX_WEIGHT:
            self.rejected_weights += 1
            return
        key = (record.frames, record.comm, record.cpu, record.context, record.pid if record.pid == 0 else None)
        rec = self.records.get(key)
        if rec is None:
            self._insert(key, record)
        else:
            self._merge(rec, record.weight, record.seconds)

    def _insert(self, key: tuple, record: StackRecord) -> None:
        """A new distinct record; past max_stacks() it joins the one overflow record of its
        comm and context instead (memory stays bounded; data quality says how much)."""
        if len(self.records) < max_stacks() or key in self.records:
            self.records[key] = record
            return
        self.overflow_weight += record.weight
        frames = (Frame(OVERFLOW_FRAME, "unknown"),)
        overflow_key = (frames, record.comm, None, record.context, None)
        kept = self.records.get(overflow_key)
        if kept is None:
            self.records[overflow_key] = StackRecord(frames, record.weight, record.comm, None, record.context,
                                                     None, dict(record.seconds))
        else:
            self._merge(kept, record.weight, record.seconds)

    def limit_sentences(self) -> List[str]:
        """Data-quality sentences for what the limits kept out of the profile."""
        lines = [self.overflow_sentence()] if self.overflow_weight else []
        if self.rejected_weights:
            lines.append(f"{self.rejected_weights} stacks with a sample count of 0, below 0 or above "
                         f"{MAX_WEIGHT:.0e} ignored")
        return lines

    def overflow_sentence(self) -> Optional[str]:
        if not self.overflow_weight:
            return None
        total = sum(r.weight for r in self.records.values()) or 1
        return (f"more than {max_stacks()} distinct stacks: {self.overflow_weight:.0f} samples "
                f"({self.overflow_weight / total:.1%}) beyond that limit are counted as {OVERFLOW_FRAME} "
                "(not matched; raise FLAMEDIAG_MAX_STACKS to read them all)")

    @staticmethod
    def _merge(rec: StackRecord, weight: float, seconds: Optional[Dict[int, float]]) -> None:
        rec.weight += weight
        if seconds:
            per_second = rec.seconds
            for second, part in seconds.items():
                per_second[second] = per_second.get(second, 0) + part

    def seconds(self) -> int:
        """Seconds the samples span (last index + 1), 0 without timestamps."""
        last = max((max(r.seconds) for r in self.records.values() if r.seconds), default=None)
        return 0 if last is None else last + 1

    def per_second(self, records: Optional[Iterable[StackRecord]] = None) -> List[float]:
        """Total weight per second index (of `records`, default all), 0 .. seconds()-1."""
        totals = [0.0] * self.seconds()
        for record in self.records.values() if records is None else records:
            for second, weight in record.seconds.items():
                if 0 <= second < len(totals):
                    totals[second] += weight
        return totals

    def between(self, start: float, end: float) -> "Profile":
        """The sub-profile of second indexes start <= index < end (see the module docstring)."""
        first, last = math.floor(start), math.ceil(end)
        sub = Profile(self.source_format, self.ancestry, data_quality=list(self.data_quality),
                      skipped_lines=self.skipped_lines, events=Counter(self.events), origin=self.origin,
                      not_cpu=self.not_cpu)
        for record in self.records.values():
            kept = {s: w for s, w in record.seconds.items() if first <= s < last}
            if kept:
                sub.add(record.frames, sum(kept.values()), record.comm, record.cpu, record.context,
                        record.pid, kept)
        if self.origin is not None and self.time_span is not None:
            low = max(self.time_span[0], self.origin + first)
            high = min(self.time_span[1], self.origin + last)
            sub.time_span = (low, max(low, high))
        return sub

    def __iter__(self) -> Iterator[StackRecord]:
        return iter(self.records.values())

    def total(self) -> float:
        return sum(r.weight for r in self.records.values())

    def busy(self) -> float:
        return sum(r.weight for r in self.records.values() if not is_idle(r))

    def note_timer_event(self) -> None:
        """When every sample came from a timer event (`cpu-clock`, `task-clock`), mark the records:
        such an event samples a halted CPU where it halted (see IDLE_ENTRY_COST)."""
        if self.events and all(TIMER_EVENT.match(event) for event in self.events):
            for record in self.records.values():
                record.timer_sampled = True

    def cpus(self) -> List[int]:
        return sorted({r.cpu for r in self.records.values() if r.cpu is not None})
