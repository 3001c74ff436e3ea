"""The interrupt context a stack runs in, in one place: which frame enters which context
(kernelnames.context_for_frame), the `[softirq]` / `[hardirq]` / `[nmi]` marker frames that the
flame graph and folded stacks carry, and the context of a stack with or without markers. A frame of
the return to user mode (kernelnames.USER_RETURN_WORK) ends an interrupt's context: the work the
entry code runs there (task work, signals, schedule) is the task's, and a `[task]` marker follows
it when it leaves an interrupt's context.

    >>> from flamediag.profile import Frame
    >>> stack = [Frame("do_idle", "kernel"), Frame("__do_softirq", "kernel"), Frame("net_rx_action", "kernel")]
    >>> [f.name for f in mark_contexts_in_frames(stack)]
    ['do_idle', '__do_softirq', '[softirq]', 'net_rx_action']
    >>> context_of(stack), context_of_marked(mark_contexts_in_frames(stack))
    ('softirq', 'softirq')
    >>> ret = [Frame("0x5611c2", "user"), Frame("asm_sysvec_apic_timer_interrupt", "kernel"),
    ...        Frame("irqentry_exit_to_user_mode", "kernel"), Frame("task_work_run", "kernel"),
    ...        Frame("task_numa_work", "kernel")]
    >>> [f.name for f in mark_contexts_in_frames(ret)][1:]
    ['asm_sysvec_apic_timer_interrupt', '[hardirq]', 'irqentry_exit_to_user_mode', '[task]', 'task_work_run', 'task_numa_work']
    >>> context_of(ret), context_of_marked(mark_contexts_in_frames(ret)), context_of(ret[:2])
    ('task', 'task', 'hardirq')

A stack folded with only the `[hardirq]` marker (before `[task]` was written) reads the same:

    >>> context_of_marked([ret[1], Frame("[hardirq]", "context")] + ret[2:])
    'task'
    >>> context_of_marked([ret[1], Frame("[hardirq]", "context"), Frame("irqentry_exit", "kernel"),
    ...                    Frame("preempt_schedule_irq", "kernel")])
    'hardirq'
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional

from .kernelnames import context_for_frame
from .profile import Frame

# "[task]" is written only where a stack leaves an interrupt's context (the return to user mode)
CONTEXT_MARKERS = {"softirq": "[softirq]", "hardirq": "[hardirq]", "nmi": "[nmi]", "task": "[task]"}
MARKER_CONTEXTS = {v: k for k, v in CONTEXT_MARKERS.items()}
ENTRY_KINDS = ("kernel", "unknown")     # frames that may enter a context (context_for_frame)
_ENTERED: Dict[str, Optional[str]] = {}


def entered(name: str) -> Optional[str]:
    """kernelnames.context_for_frame, remembered per name (readers ask for the same names millions
    of times)."""
    found = _ENTERED.get(name, "?")
    if found == "?":
        if len(_ENTERED) > 1 << 18:
            _ENTERED.clear()
        found = _ENTERED[name] = context_for_frame(name)
    return found


def context_of(frames: Iterable[Frame]) -> str:
    """The innermost interrupt context a stack runs in, from its frame names (root first)."""
    found = "task"
    for frame in frames:
        ctx = entered(frame.name) if frame.kind in ENTRY_KINDS else None
        if ctx:
            found = ctx
    return found


def mark_contexts_in_frames(frames: List[Frame]) -> List[Frame]:
    """Insert a `[softirq]`/`[hardirq]`/`[nmi]` frame (kind "context") right after
    (leaf side of) the first frame of each interrupt context the stack enters, and a `[task]` frame
    after the return-to-user frame that leaves one."""
    out: List[Frame] = []
    current = "task"
    for frame in frames:
        out.append(frame)
        if frame.kind not in ENTRY_KINDS:
            continue
        context = entered(frame.name)
        if context and context != current:
            out.append(Frame(CONTEXT_MARKERS[context], "context"))
            current = context
    return out


def context_of_marked(frames: Iterable[Frame]) -> str:
    """The context named by the innermost marker frame ("task" without markers); a return-to-user
    frame after it (a stack marked without `[task]`) ends that context as context_of does."""
    found = "task"
    for frame in frames:
        if frame.kind == "context":
            found = MARKER_CONTEXTS.get(frame.name, found)
        elif found != "task" and frame.kind in ENTRY_KINDS and entered(frame.name) == "task":
            found = "task"
    return found
