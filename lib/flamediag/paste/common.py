"""Shared pieces of the paste readers: frames, blocks, and the kernel/user split."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from ..kernelnames import normalize
from ..profile import Frame

# A record before it reaches the Profile: frames root first, leaf last.
Stack = Tuple[Tuple[Frame, ...], float, str, Optional[int], Optional[str]]  # frames, weight, comm, cpu, context

# Frames where user space enters the kernel, across eras and architectures (x86 syscall, fault
# and interrupt entries; arm64 el0 vectors). The kernel never calls back into user code, so
# everything on the root side of the FIRST of them is user code and from it to the leaf is kernel
# code: later entries are the kernel faulting or interrupted in kernel mode (a fault in copy_user
# under read(), a timer interrupt in a syscall).
KERNEL_ENTRIES = frozenset(
    {
        "system_call", "system_call_fastpath", "system_call_after_swapgs", "sysenter_dispatch",
        "ia32_sysenter_target", "ia32_syscall", "ia32_cstar_target", "tracesys", "sysret_audit", "auditsys",
        "entry_SYSCALL_64", "entry_SYSCALL_64_fastpath", "entry_SYSCALL_64_after_hwframe",
        "entry_SYSCALL_64_safe_stack", "entry_SYSENTER_compat", "entry_INT80_compat", "entry_SYSCALL_compat",
        "entry_SYSENTER_32", "entry_INT80_32", "do_fast_syscall_32", "do_int80_syscall_32",
        "do_syscall_32_irqs_on", "do_syscall_32_irqs_off", "system_call_common", "system_call_exception",
        "system_call_vectored_common",
        "do_syscall_64", "page_fault", "async_page_fault", "asm_exc_page_fault", "retint_careful",
        "ret_from_intr", "asm_common_interrupt", "asm_sysvec_apic_timer_interrupt",
        "apic_timer_interrupt", "common_interrupt", "ret_from_fork", "ret_from_fork_asm",
        "el0_sync", "el0_sync_compat", "el0_svc", "el0_svc_compat", "el0_svc_handler", "el0_svc_common",
        "do_el0_svc", "el0t_64_sync", "el0t_64_sync_handler", "el0t_32_sync", "el0t_32_sync_handler",
        "el0_sync_handler", "el0_da", "el0_ia", "el0_irq", "el0t_64_irq", "el0t_64_irq_handler",
    }
)
# Frames that start a kernel thread or the idle loop: a chain rooted in one is kernel code whole,
# even where an interrupt entry sits in it.
_KERNEL_ROOTS = frozenset(
    {"kthread", "ret_from_fork", "ret_from_fork_asm", "start_secondary", "secondary_startup_64",
     "secondary_startup_64_no_verify", "common_startup_64", "x86_64_start_kernel", "x86_64_start_reservations",
     "start_kernel", "rest_init", "cpu_startup_entry", "worker_thread", "smpboot_thread_fn",
     "secondary_start_kernel", "__secondary_switched", "cpu_idle", "cpu_bringup_and_idle"}
)
_KERNEL_ADDRESS = re.compile(r"^(?:0x)?ffff[0-9a-f]{12}$", re.I)
_HEX_ADDRESS = re.compile(r"^(?:0x)?[0-9a-f]{6,16}$", re.I)
_BARE_ADDRESS = re.compile(r"^(?=[0-9a-f]*[0-9])[0-9a-f]{1,16}$")     # `---0`: an address printed without 0x


@dataclass
class Block:
    """What one reader understood in a run of lines."""

    fmt: str                      # e.g. "perf-report-callgraph"
    start: int                    # first and one-past-last line index in the unwrapped paste
    end: int
    stacks: List[Stack] = field(default_factory=list)
    flat: bool = False            # no ancestry (perf top, flat perf report)
    notes: List[str] = field(default_factory=list)
    unit: str = "samples"         # what a weight counts: samples | percent | tasks | events | us | hitm
    header: bool = False          # the block starts with its tool's own header: a profile of its own
    not_cpu: Optional[str] = None # why the weights are not CPU time (off-CPU data, call durations)
    samples: Optional[int] = None # the sample count a percentage profile printed (`# Samples: 2K`)
    event: Optional[str] = None   # the sampled event a banner names (`of event 'cpu-clock'`)
    whole: Optional[float] = None # the weight that stands for every sample (100 for percentages of all
                                  # samples); None when the listing does not say (--children, fragments)
    through: Dict[Tuple[str, str], float] = field(default_factory=dict)
                                  # --children listings: (comm, symbol) -> its Children, the weight of
                                  # every sample that ran through that frame (Profile.through)
    lone: Set[int] = field(default_factory=set)  # stacks[i] of a graph paste that are listing rows pasted
                                  # without their call chain (folded in the TUI, -g none for them)
    cpu_window: Optional[float] = None  # samples one CPU gives over the profiled window (rate x seconds)
                                  # when the tool's banner says both (rule BR1)
    events: Optional[int] = None  # the event lines an event trace holds (interrupt events): a trace of a few
                                  # is an excerpt beside a sampled profile (PasteProfile.illustration)


@dataclass
class Miss:
    """A reader's answer when no block starts at this line nor anywhere before `resume`: the
    paste is read once, never rescanned from every line of a long run that is not its format."""

    resume: int


def finish(block: Block, start: int, end: int, *notes: str) -> Union[Block, Miss]:
    """The block read from `start` up to `end`; a Miss up to `end` when it holds no stack."""
    if not block.stacks:
        return Miss(max(end, start + 1))
    block.end = end
    block.notes.extend(notes)
    return block


# Lines an author puts where they cut output: they keep a block open, frames are missing there.
ELISION = re.compile(r"^\s*(?:\.{1,6}|\[\.\.\.\]|\[?<?(?:snip|SNIP|Snip|cut|CUT)>?\]?|\u2026|\(\.\.\.\)|-- ?snip ?--)\s*$")


RowFinder = Callable[[str], Optional["re.Match[str]"]]


def rows_of(lines: Sequence[str], first: int, row: RowFinder, other: Optional[RowFinder] = None) -> Tuple[list, int]:
    """What `row` finds in the lines from `first` on, up to the first line that is neither a row, a line
    `other` finds, blank nor elided; and that line's index (where the table ends).

    >>> rows_of(["a 1", "", "...", "b 2", "a note", "prose"], 0, re.compile(r"(\\w) (\\d)$").match,
    ...         re.compile("a note").match)
    ([<re.Match object; span=(0, 3), match='a 1'>, <re.Match object; span=(0, 3), match='b 2'>], 5)
    """
    found, index = [], first
    while index < len(lines):
        line = lines[index]
        match = row(line)
        if match:
            found.append(match)
        elif line.strip() and not (other and other(line)) and not ELISION.match(line):
            break
        index += 1
    return found, index


# An author's remark written after a frame on the same line (rule W1): blanks, then an arrow
# (`<-`, `<--`, `<==`, `←`, `←←←`) or a comment marker and a blank (`# `, `// `), or, after a column
# gap of two blanks or more, words in a script no tool prints (`这里是热点`, `ルールの評価`, `여기`).
# No call-graph line or backtrace frame ends in either: what follows the frame is the author's.
REMARK = r"(?:\s+(?:<-+|<=+|\u2190+|\u27f5|\u21d0|\u2b05)\s*\S.*|\s+(?:#|//)\s.*|\s{2,}\S*[^\x00-\x7f].*)"
_TRAILING_REMARK = re.compile(r"(?<=\S)" + REMARK + r"$")


def drop_remark(line: str) -> str:
    """The line without an author's remark after its last frame (see REMARK; rule W1).

    >>> drop_remark("          try_to_free_mem_cgroup_pages        \u2190\u2190\u2190 \u8fd9\u91cc")
    '          try_to_free_mem_cgroup_pages'
    >>> drop_remark("   |--61.90%--futex_wait_setup   <-- here")
    '   |--61.90%--futex_wait_setup'
    >>> drop_remark("  shrink_zone  # \u70ed\u70b9")
    '  shrink_zone'
    >>> drop_remark("  operator new(unsigned long)")
    '  operator new(unsigned long)'
    """
    return _TRAILING_REMARK.sub("", line)


def plural(count: int, noun: str) -> str:
    """`1 stack`, `3 stacks`."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def clean_name(raw: str) -> str:
    """A frame name as kernelnames.normalize expects it: no offsets, markers or ` ([kernel.kallsyms])`."""
    name = raw.strip()
    name = re.sub(r"^\[[k.]\]\s+", "", name)                 # perf `[k] sym` marker
    name = re.sub(r"\s+\((?:[^()]*)\)$", "", name) if name.endswith("])") else name
    name = name.replace(";", ":")                             # a `;` must never forge a frame
    if (_HEX_ADDRESS.match(name) and (name.startswith("0x") or len(name) >= 12)) or _BARE_ADDRESS.match(name):
        return "0x%x" % int(name[2:] if name.startswith("0x") else name, 16)   # 0x0000563c.. == 0x563c..
    return normalize(name) or raw.strip()


def kind_of_lone(name: str, hint: str = "unknown") -> str:
    if _KERNEL_ADDRESS.match(name):
        return "kernel"
    if name.startswith("0x") and _HEX_ADDRESS.match(name):
        return "user"
    return hint


def split_kernel_user(names: Sequence[str], leaf_kind: str = "kernel") -> Tuple[Frame, ...]:
    """Frames for a root-first chain whose kinds were not printed (perf report graphs, crash bt).

    The first kernel entry point splits user (root side) from kernel (leaf side); a chain rooted
    in a kernel thread or the idle loop is kernel whole; otherwise the whole chain takes the
    leaf's kind (pure user stacks, chains cut short).
    """
    if names and names[0] in _KERNEL_ROOTS:
        return kernel_frames(names)
    entry_at = first_entry(names)
    if entry_at is None:
        return tuple(Frame(n, kind_of_lone(n, leaf_kind)) for n in names)
    user = [Frame(n, "kernel" if n in KERNEL_ENTRIES else kind_of_lone(n, "user")) for n in names[:entry_at]]
    kernel = [Frame(n, "kernel") for n in names[entry_at:]]
    return tuple(user + kernel)


def first_entry(names: Sequence[str]) -> Optional[int]:
    """Index of the first kernel entry point in a root-first chain, None when there is none."""
    return next((index for index, name in enumerate(names) if name in KERNEL_ENTRIES), None)


def kernel_frames(names: Sequence[str]) -> Tuple[Frame, ...]:
    return tuple(Frame(n, "kernel") for n in names)


# Frames that only ever sit at the root side of a stack (entry points, thread starts, user
# code below a syscall) and frames that only ever sit at its leaf (lock spinning, idle, copy
# loops): where they fall tells which way a chain was printed when nothing else does.
ROOT_SIDE = KERNEL_ENTRIES | _KERNEL_ROOTS | frozenset(
    {"start_thread", "clone", "clone3", "__clone", "__libc_start_main", "__libc_start_call_main",
     "main", "_start", "xen_do_hypervisor_callback"}
)
_LEAF_SIDE = re.compile(r"spin_lock|spin_unlock|^osq_lock$|_spin_on_owner$|^clear_page|^copy_user|^copy_page|"
                        r"^mem(?:cpy|set|move)|^native_safe_halt$|_idle$|^finish_task_switch|^read_tsc$|^delay_tsc$")


def leaf_first(chains: Sequence[Sequence[str]]) -> Optional[bool]:
    """True when the chains run leaf -> root (a callee graph), False for root -> leaf, None
    when no frame says: root-side frames late and leaf-side frames early mean leaf first."""
    score = 0.0
    for names in chains:
        if len(names) < 2:
            continue
        last = len(names) - 1
        for index, name in enumerate(names):
            position = index / last - 0.5                 # -0.5 first printed .. +0.5 last printed
            if name in ROOT_SIDE or (name.startswith("0x") and not _KERNEL_ADDRESS.match(name)):
                score += position
            elif _LEAF_SIDE.search(name):
                score -= position
    return None if score == 0 else score > 0
