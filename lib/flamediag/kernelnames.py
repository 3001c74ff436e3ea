"""Kernel frame-name normalisation and context detection (see doc/kernel-symbols).

Compiler suffixes (`.isra.0`, `.constprop.0`, `.part.0`, `.cold`) and perf offsets
(`+0x1a`, `+0x1a/0x40`) are not part of a function's identity; `normalize()` strips them
so `shrink_node.isra.0+0x3f` matches a signature written as `shrink_node`. Signatures compare
`identity()`: the normalised name with `SyS_<call>`, the SYSCALL_DEFINE wrapper of 2.6.32-4.16
(an alias of `sys_<call>` that symbol lookup prefers), read as `sys_<call>`. Big-endian ppc64
kernels (the ELFv1 ABI: function descriptors) list each function's code under its name with a
leading dot (`.shrink_zone`, `._raw_spin_lock_irq`); the dot is not part of the name either. A
name with more dots after the first (`.text.lock.spinlock`, 2.6.9-2.6.18's out-of-line lock
section) is a section, not a dotted function, and is kept.
"""
from __future__ import annotations

import re
from typing import AbstractSet, Optional, Sequence

_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+(?:/0x[0-9a-fA-F]+)?$")
_SUFFIX = re.compile(r"(?:\.(?:isra|constprop|part|cold|lto_priv|llvm)(?:\.\d+)?)+$|\.cold$")
_ANNOTATION = re.compile(r"_\[[kjiw]\]$")
_PPC64_DOT = re.compile(r"^\.(?=[A-Za-z_][\w$]*$)")


def normalize(name: str) -> str:
    """`shrink_node.isra.0+0x3f/0x80` -> `shrink_node`; `foo_[k]` -> `foo`.

    >>> normalize("native_queued_spin_lock_slowpath+0x1a")
    'native_queued_spin_lock_slowpath'
    >>> normalize("shrink_node.isra.0")
    'shrink_node'
    >>> normalize("__alloc_pages_slowpath.constprop.0_[k]")
    '__alloc_pages_slowpath'
    >>> normalize(".isolate_lru_pages.isra.43"), normalize("._raw_spin_lock_irq"), normalize(".text.lock.spinlock")
    ('isolate_lru_pages', '_raw_spin_lock_irq', '.text.lock.spinlock')
    """
    name = _ANNOTATION.sub("", name.strip())
    name = _OFFSET.sub("", name)
    return _PPC64_DOT.sub("", _SUFFIX.sub("", name))


# 2.6.9-2.6.18 (i386, x86_64): the contended loop of a spin lock taken inline is compiled out of line
# into a section named after its source file, `.text.lock.<file>` (`.text.lock.kernel_lock`: the big
# kernel lock, lib/kernel_lock.c; `.text.lock.sched`: a runqueue lock). It is a spin-lock spin whatever
# the file: the ones a playbook knows by name stay themselves (futex-contention owns futex.c's hash-bucket
# lock), every other one compares as the generic out-of-line spin `.text.lock.spinlock` (rule K1).
TEXT_LOCK = ".text.lock."
TEXT_LOCK_SPIN = TEXT_LOCK + "spinlock"
TEXT_LOCK_NAMED = frozenset({TEXT_LOCK_SPIN, TEXT_LOCK + "futex"})


def identity(name: str) -> str:
    """The name signatures compare: normalize(), the 2.6.32-4.16 `SyS_` wrapper is its `sys_` call,
    and a 2.6.9-2.6.18 out-of-line lock section no playbook names is the generic spin-lock spin.

    >>> identity("SyS_mprotect+0x1a/0x40"), identity("sys_futex"), identity("__x64_sys_futex")
    ('sys_mprotect', 'sys_futex', '__x64_sys_futex')
    >>> identity(".text.lock.kernel_lock"), identity(".text.lock.futex"), identity(".text.lock.spinlock+0x4")
    ('.text.lock.spinlock', '.text.lock.futex', '.text.lock.spinlock')
    """
    name = normalize(name)
    if name.startswith(TEXT_LOCK) and name not in TEXT_LOCK_NAMED:
        return TEXT_LOCK_SPIN
    return "sys_" + name[4:] if name.startswith("SyS_") else name


SOFTIRQ_ENTRY = frozenset(
    {"__do_softirq", "__softirqentry_text_start", "handle_softirqs", "do_softirq", "run_ksoftirqd",
     "do_softirq_own_stack", "call_softirq", "__irq_exit_rcu", "irq_exit_rcu", "irq_exit"}
)
# arm and arm64 (rule AX1): the exception-vector entries of an interrupt (el1_irq to 5.10,
# el1h_64_irq and el1_interrupt after; __irq_svc on 32-bit arm), the GIC's handler and the domain
# dispatch under them: every interrupt taken in kernel mode runs them
ARM_IRQ_ENTRY = frozenset(
    {"gic_handle_irq", "el1_irq", "el1h_64_irq", "el1h_64_irq_handler", "el1_interrupt", "__irq_svc",
     "__handle_domain_irq", "handle_domain_irq"}
)
# irq_exit* run softirqs only when pending; they mark softirq context only if a softirq
# entry follows them. The hardirq entries below mark hardirq context.
HARDIRQ_ENTRY = frozenset(
    {"do_IRQ", "common_interrupt", "handle_irq", "asm_common_interrupt", "handle_irq_event",
     "__handle_irq_event_percpu", "handle_edge_irq", "handle_fasteoi_irq", "smp_apic_timer_interrupt",
     "apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
     "__sysvec_apic_timer_interrupt", "hrtimer_interrupt", "asm_sysvec_call_function",
     "sysvec_call_function", "sysvec_call_function_single", "smp_call_function_interrupt",
     "smp_call_function_single_interrupt", "generic_smp_call_function_single_interrupt",
     "xen_evtchn_do_upcall", "__xen_evtchn_do_upcall", "asm_sysvec_xen_hvm_callback",
     "sysvec_reschedule_ipi", "smp_reschedule_interrupt", "flush_tlb_func", "flush_tlb_func_common",
     # the architected timer's handler (arm, arm64). An idle CPU woken by an interrupt runs these
     # above do_idle; without them the interrupt's work would count as the idle loop's (rule AX1).
     "arch_timer_handler_phys", "arch_timer_handler_virt"}
) | ARM_IRQ_ENTRY
NMI_ENTRY = frozenset({"nmi", "do_nmi", "exc_nmi", "asm_exc_nmi", "default_do_nmi", "end_repeat_nmi",
                       "perf_event_nmi_handler", "nmi_handle"})
# The return to user mode. When an interrupt (or exception) was taken in user mode, the entry code,
# after the handler has returned, runs the task's pending work before going back to user space: task
# work (task_numa_work, the NUMA-balancing scanner the tick queues), signal delivery (get_signal ->
# do_exit -> exit_mmap), rescheduling (schedule), mem_cgroup_handle_over_high. That work runs on the
# task's stack with interrupts enabled: task context, although the interrupt's entry frame sits above
# it. A frame of this path ends the interrupt context (doc/accuracy.md, "Idle, scheduler and data kind").
#   5.9+ generic entry (x86, s390, riscv, loongarch): irqentry_exit_to_user_mode ->
#     exit_to_user_mode_prepare -> exit_to_user_mode_loop (exit_to_user_mode: its last step)
#   4.3-5.8 x86: retint_user (entry_64.S, to 5.7; 5.8 comes from the C interrupt exit) ->
#     prepare_exit_to_usermode (__prepare_exit_to_usermode in 5.8) -> exit_to_usermode_loop (4.5-5.8)
#   3.x and older x86: retint_careful (reschedule) / retint_signal -> do_notify_resume
#   arm64: el0_irq (to 5.12) / el0_interrupt (5.13+), whose handler is a hardirq frame of its own, ->
#     ret_to_user (the assembly return) / exit_to_user_mode (5.11+) / prepare_exit_to_user_mode (5.13+) ->
#     do_notify_resume; 32-bit arm: do_work_pending; powerpc: interrupt_exit_user_prepare (5.11+),
#     do_notify_resume
#   tracehook_notify_resume (to 5.17), resume_user_mode_work (5.18+): the inline that runs the task
#     work, when an unwinder lists inlines
# Not here: irq_exit (softirqs run there, in the interrupt), irqentry_exit alone and
# preempt_schedule_irq (a return to kernel mode: the interrupted kernel code is preempted).
USER_RETURN_WORK = frozenset(
    {"irqentry_exit_to_user_mode", "exit_to_user_mode_prepare", "exit_to_user_mode_loop", "exit_to_user_mode",
     "retint_user", "prepare_exit_to_usermode", "__prepare_exit_to_usermode", "exit_to_usermode_loop",
     "retint_careful", "retint_signal", "do_notify_resume",
     "ret_to_user", "prepare_exit_to_user_mode", "do_work_pending", "interrupt_exit_user_prepare",
     "tracehook_notify_resume", "resume_user_mode_work"}
)
_SOFTIRQ_ONLY = SOFTIRQ_ENTRY - {"__irq_exit_rcu", "irq_exit_rcu", "irq_exit"}


def context_for_frame(name: str) -> Optional[str]:
    """The context a frame *enters*, or None when it stays in its caller's context. A frame of the
    return to user mode (USER_RETURN_WORK) enters task context: the interrupt above it has returned.

    >>> [context_for_frame(n) for n in ("__do_softirq", "asm_sysvec_apic_timer_interrupt", "exc_nmi", "schedule")]
    ['softirq', 'hardirq', 'nmi', None]
    >>> [context_for_frame(n) for n in ("irqentry_exit_to_user_mode", "retint_user", "exit_to_usermode_loop+0x5e")]
    ['task', 'task', 'task']
    >>> [context_for_frame(n) for n in ("irq_exit", "irqentry_exit", "preempt_schedule_irq")]
    [None, None, None]
    """
    base = normalize(name)
    if base in _SOFTIRQ_ONLY:
        return "softirq"
    if base in NMI_ENTRY:
        return "nmi"
    if base in HARDIRQ_ENTRY:
        return "hardirq"
    if base in USER_RETURN_WORK:
        return "task"
    return None


def looks_kernel(name: str) -> bool:
    """Heuristic for folded input without `_[k]`: kernel symbols are plain C identifiers
    that perf prints without a module, user frames usually carry `::`, `(`, `/`, `.so` etc."""
    base = normalize(name)
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", base)) and not base.startswith(("Java_", "JVM_", "_Z"))


def lock_caller(names: Sequence[str], lock_frames: AbstractSet[str]) -> Optional[str]:
    """The function that takes the lock a stack ends in: the nearest frame above the run of lock
    frames at the leaf (None when the leaf is no lock or nothing is above it). A spin lock names
    no lock; its direct caller does (free_pcppages_bulk: the zone lock; release_pages: the LRU lock).

    >>> lock_caller(["release_pages", "free_pcppages_bulk", "_raw_spin_lock", "queued_spin_lock_slowpath"],
    ...             frozenset({"_raw_spin_lock", "queued_spin_lock_slowpath"}))
    'free_pcppages_bulk'
    >>> lock_caller(["release_pages", "free_pcppages_bulk"], frozenset({"_raw_spin_lock"})) is None
    True
    """
    index = len(names) - 1
    while index >= 0 and names[index] in lock_frames:
        index -= 1
    return names[index] if 0 <= index < len(names) - 1 else None
