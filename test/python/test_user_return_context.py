"""The return to user mode ends an interrupt's context: the pending work the entry code runs after an
interrupt taken in user mode (task work, signals, schedule) is the task's, in every reader and in the
context markers. An interrupt taken in kernel mode, and the handler's own work, stay hardirq."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag import folded, perfscript  # noqa: E402
from flamediag.collapse import CollapseOptions, collapse_stream, write_folded  # noqa: E402
from flamediag.contexts import context_of, context_of_marked, mark_contexts_in_frames  # noqa: E402
from flamediag.kernelnames import USER_RETURN_WORK, context_for_frame  # noqa: E402
from flamediag.profile import Frame  # noqa: E402

SCAN = ["task_work_run", "task_numa_work", "change_prot_numa", "change_protection", "change_pte_range"]
# root first; the first frame is the user code the interrupt hit
STACKS = {
    # 5.9+ generic entry (x86): the timer interrupt's return runs the NUMA scanner queued by the tick
    "5.8+ task work": (["0x5611c2", "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
                        "irqentry_exit_to_user_mode", "exit_to_user_mode_prepare", "exit_to_user_mode_loop"]
                       + SCAN, "task"),
    # 4.x-5.7 x86_64
    "4.x task work": (["0x5611c2", "apic_timer_interrupt", "retint_user", "prepare_exit_to_usermode",
                       "exit_to_usermode_loop"] + SCAN, "task"),
    # 3.x: a signal delivered on the return from an IPI tears the process down
    "3.x signal": (["0x5611c2", "reschedule_interrupt", "smp_reschedule_interrupt", "retint_signal",
                    "do_notify_resume", "do_signal", "get_signal_to_deliver", "do_group_exit", "do_exit",
                    "mmput", "exit_mmap", "unmap_vmas"], "task"),
    # look-alike: an interrupt taken in kernel mode returns to the kernel and preempts it there
    "kernel-mode preemption": (["entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_read",
                                "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
                                "irqentry_exit", "preempt_schedule_irq", "__schedule"], "hardirq"),
    # look-alike: the tick's own work queues the scan from inside the handler
    "handler's work": (["0x5611c2", "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
                        "__sysvec_apic_timer_interrupt", "hrtimer_interrupt", "__hrtimer_run_queues",
                        "tick_sched_timer", "update_process_times", "scheduler_tick", "task_tick_fair",
                        "task_tick_numa"], "hardirq"),
    # softirqs run on the interrupt's exit (irq_exit) stay softirq
    "irq_exit softirq": (["0x5611c2", "apic_timer_interrupt", "smp_apic_timer_interrupt", "irq_exit",
                          "__do_softirq", "run_timer_softirq"], "softirq"),
}


def frames_of(names):
    return [Frame(n, "user" if n.startswith("0x") else "kernel") for n in names]


def test_the_set_holds_only_return_to_user_frames():
    assert {"irq_exit", "irq_exit_rcu", "irqentry_exit", "preempt_schedule_irq", "el0_irq",
            "el0_interrupt"}.isdisjoint(USER_RETURN_WORK)
    assert all(context_for_frame(name) == "task" for name in USER_RETURN_WORK)


@pytest.mark.parametrize("case", STACKS)
def test_context_with_and_without_markers_agree(case):
    names, expected = STACKS[case]
    frames = frames_of(names)
    assert context_of(frames) == expected
    assert context_of_marked(mark_contexts_in_frames(frames)) == expected


def perf_script(comm: bytes, root_first) -> bytes:
    header = b"%s 7/7 [001] 100.000001: 250000 cpu-clock:ppp: \n" % comm
    lines = []
    for i, name in enumerate(reversed(root_first)):
        module = b"[unknown]" if name.startswith("0x") else b"[kernel.kallsyms]"
        shown = b"[unknown]" if name.startswith("0x") else name.encode()
        lines.append(b"\t%16x %s (%s)" % (0xffffffff81000000 + i, shown, module))
    return header + b"\n".join(lines) + b"\n\n"


@pytest.mark.parametrize("case", STACKS)
def test_perf_script_reader_gives_the_same_context(case):
    names, expected = STACKS[case]
    profile = perfscript.read_profile(io.BytesIO(perf_script(b"worker", names)))
    assert [record.context for record in profile] == [expected]


def fold(data: bytes, options: CollapseOptions) -> bytes:
    out = io.BytesIO()
    write_folded(collapse_stream(io.BytesIO(data), options).counts, out)
    return out.getvalue()


def test_collapse_writes_task_marker_only_where_the_return_leaves_the_interrupt():
    data = perf_script(b"worker", STACKS["5.8+ task work"][0]) + perf_script(b"worker", STACKS["4.x task work"][0])
    marked = fold(data, CollapseOptions(context=True)).decode()
    assert marked.splitlines() == [
        "worker;[unknown];apic_timer_interrupt;[hardirq];retint_user;[task];prepare_exit_to_usermode;"
        "exit_to_usermode_loop;" + ";".join(SCAN) + " 250000",
        "worker;[unknown];asm_sysvec_apic_timer_interrupt;[hardirq];sysvec_apic_timer_interrupt;"
        "irqentry_exit_to_user_mode;[task];exit_to_user_mode_prepare;exit_to_user_mode_loop;"
        + ";".join(SCAN) + " 250000",
    ]
    assert "[" not in fold(data, CollapseOptions()).decode().replace("[unknown]", "")
    # a return to user mode from a system call leaves no interrupt: no marker
    syscall = ["0x5611c2", "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "syscall_exit_to_user_mode",
               "exit_to_user_mode_prepare", "exit_to_user_mode_loop"] + SCAN
    assert b"[task]" not in fold(perf_script(b"worker", syscall), CollapseOptions(context=True))


def test_folded_reader_reads_the_markers_and_older_folded_stacks():
    names = STACKS["5.8+ task work"][0][1:]
    with_task = "worker;app;asm_sysvec_apic_timer_interrupt;[hardirq];irqentry_exit_to_user_mode;[task];" + \
        ";".join(names[3:]) + " 5\n"
    hardirq_only = "worker;app;asm_sysvec_apic_timer_interrupt;[hardirq];irqentry_exit_to_user_mode;" + \
        ";".join(names[3:]) + " 5\n"
    handler = "worker;app;asm_sysvec_apic_timer_interrupt;[hardirq];hrtimer_interrupt;task_tick_numa 5\n"
    for text, expected in ((with_task, "task"), (hardirq_only, "task"), (handler, "hardirq")):
        profile = folded.read_profile(io.BytesIO(text.encode()))
        assert [record.context for record in profile] == [expected], text
