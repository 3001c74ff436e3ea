"""ftrace text: stack traces (` => func` lines under an event) and function_graph output.

Stack traces, from trace_pipe with `options/stacktrace` or a `stacktrace` trigger, trace-cmd,
or perf-tools such as `tcpretrans -s` (innermost first; the line above names the event):

              <idle>-0       [001] ..s1.  1234.567891: <stack trace>
     => tcp_fastretrans_alert
     => tcp_ack+0x1a/0x40
     => kfree_skb (ffffffff81234567)

Each stack is one traced event: weight 1, the shares are shares of events. The tracer's own
frames at the innermost end (`trace_event_raw_event_*`, `__traceiter_*`, `perf_trace_*`) are
dropped: the event happened in the function below them.

function_graph (the `function_graph` tracer, perf-tools `funcgraph`, `trace-cmd report`):

     0)               |  do_nanosleep() {
     0)   0.198 us    |    _raw_spin_lock_irqsave();          (a leaf call and its duration)
     0)   3.447 us    |  }
     1) ! 1000131 us  |  }                                    (`+ ! # * @ $`: duration markers)
     0)  platfor-3210  =>  vmstat-2854                        (task switch)

A leaf call becomes a stack (the open calls above it + the leaf) weighted by its duration in
microseconds; leaves that switch the task out (`schedule`) are time asleep and dropped. The
durations are wall-clock times of the calls chosen for tracing, not CPU samples: such a block
is read, drawn, and not diagnosed (`Block.not_cpu`).

workqueue_execute_start events without stacks (`perf script` of `-e workqueue:workqueue_execute_start`,
trace_pipe, trace-cmd report):

     kworker/5:1   312 [005] 881203.331021: workqueue:workqueue_execute_start: work struct 0xffff9e8c3f75a8e0: function lru_add_drain_per_cpu
     kworker/5:1-312   [005] d..1 881203.331021: workqueue_execute_start: work struct ffff9e8c3f75a8e0: function vmstat_update

The tracepoint fires in process_one_work right before it calls the work function, so each event
reads as the stack worker_thread -> process_one_work -> <function> of that kworker, weight 1. The
weights count work items started, not CPU time: the block names the hottest work function, and is
read, drawn, and not diagnosed.

The workqueue's own report of CPU-hogging work items (6.5+, CONFIG_WQ_CPU_INTENSIVE_REPORT), kernel
log lines with any log prefix:

    [   12.004512] workqueue: drm_fb_helper_damage_work hogged CPU for >10000us 4 times, consider switching to WQ_UNBOUND
    [   19.027716] workqueue: drm_fb_helper_damage_work hogged CPU for >10000us 16 times, consider switching to WQ_UNBOUND

A per-CPU work item that runs longer than wq_cpu_intensive_thresh_us (10 ms by default) without
sleeping is marked CPU-intensive and counted; the line is printed again at growing intervals (each
doubling on 6.5), so the last count of a function is how many of its runs were long. Each function
reads as worker_thread -> process_one_work -> <function> weighted by that count: how often one work
item ran long, a hint to its driver to use an unbound workqueue, not what share of the CPUs the
workers took.
Read, drawn, and not diagnosed (rule AG3 of doc/accuracy.md).

    >>> block = read_ftrace(["[ 12.0] workqueue: vmstat_shepherd hogged CPU for >10000us 4 times, consider "
    ...     "switching to WQ_UNBOUND", "[ 19.0] workqueue: vmstat_shepherd hogged CPU for >10000us 8 times, consider "
    ...     "switching to WQ_UNBOUND"], 0)
    >>> [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks], bool(block.not_cpu)
    ([(('worker_thread', 'process_one_work', 'vmstat_shepherd'), 8.0)], True)

bcc `criticalstat` (the preemptirq tracepoints: sections run with interrupts or preemption off for
longer than a threshold), one record per section, the stack where it ended:

    ===================================
    TASK: kworker/u16:5 (pid  5903 tid  5903) Total Time: 194.427  us

    Section start: __schedule -> schedule
    Section end:   _raw_spin_unlock_irq -> finish_task_switch
      trace_hardirqs_on+0xdc
      _raw_spin_unlock_irq+0x18

A section's length is a latency: how long that CPU could not take an interrupt or switch task,
whatever it was doing. The records are a few of the longest sections, not samples of where CPU time
goes: each reads as its stack weighted by its time, and the block is read, drawn, and not diagnosed
(rule V3 of doc/accuracy.md).

    >>> block = read_ftrace(["TASK: irq/296-cs35l36 (pid   666 tid   666) Total Time: 580.730  us", "",
    ...     "Section start: __handle_softirq -> irq_exit", "Section end:   __do_softirq -> irq_exit",
    ...     "  trace_hardirqs_on+0xdc", "  __local_bh_enable_ip+0xd8", "  irq_thread+0x154",
    ...     "==================================="], 0)
    >>> [(tuple(f.name for f in s[0]), s[1], s[2]) for s in block.stacks], bool(block.not_cpu)
    ([(('irq_thread', '__local_bh_enable_ip'), 580.73, 'irq/296-cs35l36')], True)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

from ..kernelnames import normalize
from ..offcpu import SWITCH_LEAVES
from ..profile import Frame
from .common import ELISION, Block, Miss, finish, plural, rows_of

ARROW = re.compile(r"^\s*=>\s+(?:<(?P<user>[0-9a-f]{6,16})>|(?P<sym>[A-Za-z_][\w.$]*)(?:\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?)?"
                   r"(?:\s+\(?[0-9a-f]{6,16}\)?)?(?:\s+\[[\w.-]+\])?)\s*$")
TRACER = re.compile(r"^(?:trace_event_raw_event_|__traceiter_|perf_trace_|__bpf_trace_|trace_call_bpf|ftrace_|"
                    r"function_trace_call|stack_trace_|__ftrace_trace_stack|event_triggers_call|trace_buffer_)")
STACK_EVENT = re.compile(r"<(?:user )?stack trace\s*>")
TASK_CPU = re.compile(r"^\s*(?P<comm>\S.*?)-(?P<pid>\d+)\s+(?:\(\s*\d+\)\s+)?\[(?P<cpu>\d{1,4})\]\s")
# A function_graph line is cut at its last `|`: the call on the right, CPU and duration on the left.
GRAPH_BODY = re.compile(r"^(?P<indent>\s*)(?P<call>[A-Za-z_][\w.$]*\(\)\s*[{;]|\}|/\*.*\*/)(?P<tail>.*)$")
GRAPH_CPU = re.compile(r"(?:^|\s)\d{1,4}\)|funcgraph_(?:entry|exit)")
DURATION = re.compile(r"\d+(?:\.\d+)?")
GRAPH_OTHER = re.compile(r"^\s*(?:\d{1,4}\)\s+\S+-\d+\s+=>\s+\S+-\d+\s*|-{20,}|#.*|\d{1,4}\)\s.*(?:==========>|<==========).*)$")
WQ_EVENT = re.compile(r"^\s*(?P<comm>\S.*?)[-\s]+(?P<pid>\d+)\s+(?:\(\s*\d+\)\s+)?\[(?P<cpu>\d{1,4})\]\s.*?"
                      r"\bworkqueue(?::|_)execute_start:\s+work struct\s*=?\s*(?:0x)?[0-9a-f]+:?\s+"
                      r"function\s*=?\s*(?P<fn>[A-Za-z_][\w.$]*)")
WQ_NOT_CPU = ("these are workqueue_execute_start events: one per work item a kworker started, counts of work "
              "items, not CPU samples")
# the workqueue's CPU-intensive report (6.5+): `workqueue: FUNC hogged CPU for >10000us N times, consider
# switching to WQ_UNBOUND` (the tail may be cut or wrapped away)
WQ_HOG = re.compile(r"\bworkqueue:\s+(?P<fn>[A-Za-z_][\w.$]*)(?:\+0x[0-9a-f]+/0x[0-9a-f]+)?(?:\s+\[[\w-]+\])?\s+"
                    r"hogged\s+CPU\s+for\s+>\s*\d+\s*us\s+(?P<count>\d+)\s+times\b")
WQ_HOG_NOT_CPU = ("these are the workqueue's reports of CPU-hogging work items (workqueue: ... hogged CPU): how many "
                  "runs of each work function kept a CPU longer than wq_cpu_intensive_thresh_us without sleeping, "
                  "a hint to use an unbound workqueue, not CPU samples")
NOT_CPU = ("this is an ftrace function_graph trace: durations of the traced calls (wall-clock time, including "
           "time asleep), not CPU samples")


CRITICAL_FIND = re.compile(r"^\s*Finding critical section with (?:IRQ|preempt\w*|IRQ and preempt\w*) disabled for > ")
CRITICAL_TASK = re.compile(r"^\s*TASK:\s+(?P<comm>\S.*?)\s+\(pid\s+\d+\s+tid\s+\d+\)\s+Total Time:\s+"
                           r"(?P<us>\d+(?:\.\d+)?)\s+us\s*$")
CRITICAL_OTHER = re.compile(r"^\s*(?:={10,}|Section (?:start|end):.*)\s*$")
CRITICAL_FRAME = re.compile(r"^\s+(?P<sym>[A-Za-z_.][\w.$]*)(?:\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?)?\s*$")
CRITICAL_NOT_CPU = ("these are bcc criticalstat records: sections run with interrupts or preemption disabled, "
                    "their lengths latencies and their stacks where each ended, not CPU samples")


def starts_ftrace(line: str) -> bool:
    if "critical section" in line or "Total Time:" in line:
        return bool(CRITICAL_FIND.match(line) or CRITICAL_TASK.match(line))
    return bool(("execute_start" in line and WQ_EVENT.match(line)) or ("=>" in line and ARROW.match(line)) or line.startswith("# tracer: function_graph")
                or ("|" in line and _graph_line(line)) or ("hogged" in line and WQ_HOG.search(line)))


def read_ftrace(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    if CRITICAL_FIND.match(lines[start]) or CRITICAL_TASK.match(lines[start]):
        return _read_critical(lines, start)
    if ARROW.match(lines[start]):
        return _read_stacks(lines, start)
    if WQ_EVENT.match(lines[start]):
        return _read_workqueue_events(lines, start)
    if WQ_HOG.search(lines[start]):
        return _read_workqueue_hogs(lines, start)
    return _read_graph(lines, start)


@dataclass
class GraphLine:
    indent: str
    call: str
    duration: Optional[float]


def _graph_line(line: str) -> Optional[GraphLine]:
    bar = line.rfind("|")
    body = GRAPH_BODY.match(line[bar + 1:]) if bar >= 0 else None
    if body is None or not GRAPH_CPU.search(line[:bar]):
        return None
    left = line[:bar].rstrip()
    duration = None
    if left.endswith("us"):
        token = left[:-2].split()[-1:] or [""]
        duration = float(token[0]) if DURATION.fullmatch(token[0]) else None
    return GraphLine(body["indent"], body["call"], duration)


# --- stack traces --------------------------------------------------------------------------

def _read_stacks(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    first = start - 1 if start and lines[start - 1].strip() else start
    block = Block("ftrace-stack", first, start, unit="events")
    names: List[Frame] = []
    comm, cpu = _event(lines[first]) if first < start else ("", None)
    index = start
    while index < len(lines):
        line = lines[index]
        arrow = ARROW.match(line)
        if arrow:
            names.append(Frame(normalize(arrow["sym"]), "kernel") if arrow["sym"] else Frame("0x" + arrow["user"], "user"))
        else:
            _flush(block, names, comm, cpu)
            names = []
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if ARROW.match(following) or STACK_EVENT.search(following):
                comm, cpu = _event(line) if not STACK_EVENT.search(line) or TASK_CPU.match(line) else (comm, cpu)
            elif not (not line.strip() or STACK_EVENT.search(line) or ELISION.match(line)):
                break
        index += 1
    _flush(block, names, comm, cpu)
    return finish(block, start, index, f"read ftrace stack traces: {plural(len(block.stacks), 'stack')}, one per "
                  "traced event (not CPU samples: the shares are shares of events)")


def _event(line: str):
    """comm and CPU of a trace_pipe event line (`bash-1234  [001] ...`), else nothing."""
    found = TASK_CPU.match(line)
    return (found["comm"].strip(), int(found["cpu"])) if found else ("", None)


def _flush(block: Block, frames: List[Frame], comm: str, cpu: Optional[int]) -> None:
    while len(frames) > 1 and TRACER.match(frames[0].name):
        frames = frames[1:]                    # the tracer's own frames, innermost: not the event's code
    if frames:
        block.stacks.append((tuple(reversed(frames)), 1.0, comm, cpu, None))


# --- workqueue events -----------------------------------------------------------------------

def _work_item(function: str) -> Tuple[Frame, ...]:
    """The stack a kworker runs a work function on: worker_thread -> process_one_work -> it."""
    return (Frame("worker_thread", "kernel"), Frame("process_one_work", "kernel"), Frame(function, "kernel"))


def _read_workqueue_events(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("ftrace-workqueue-events", start, start, unit="events", not_cpu=WQ_NOT_CPU)
    events, index = rows_of(lines, start, WQ_EVENT.match)
    block.stacks = [(_work_item(normalize(found["fn"])), 1.0, found["comm"].strip(), int(found["cpu"]), None)
                    for found in events]
    return finish(block, start, index, f"read workqueue_execute_start events: {plural(len(block.stacks), 'work item')}, "
                  "each as worker_thread -> process_one_work -> its work function")


def _read_workqueue_hogs(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("workqueue-cpu-hog-report", start, start, unit="events", not_cpu=WQ_HOG_NOT_CPU)
    counts: Dict[str, int] = {}
    reports, index = rows_of(lines, start, WQ_HOG.search)
    for found in reports:
        name = normalize(found["fn"])
        counts[name] = max(counts.get(name, 0), int(found["count"]))   # each report repeats the running count
    block.stacks = [(_work_item(name), float(count), "", None, None) for name, count in counts.items()]
    return finish(block, start, index, f"read the workqueue's CPU-hog reports: {plural(len(block.stacks), 'work function')}, "
                  "each weighted by its count of long runs (not CPU samples)")


# --- bcc criticalstat ---------------------------------------------------------------------------

def _read_critical(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("bcc-criticalstat", start, start, unit="us", header=True, not_cpu=CRITICAL_NOT_CPU)
    task: Optional[re.Match] = None
    frames: List[str] = []

    def close() -> None:
        names = [n for n in reversed(frames)
                 if not TRACER.match(n) and not n.startswith(("trace_hardirqs_", "trace_preempt_"))]
        if task is not None and names:
            block.stacks.append((tuple(Frame(normalize(n) or n, "kernel") for n in names), float(task["us"]),
                                 task["comm"], None, None))
        frames.clear()

    index = start + (1 if CRITICAL_FIND.match(lines[start]) else 0)
    while index < len(lines):
        line = lines[index]
        found = CRITICAL_TASK.match(line)
        frame = CRITICAL_FRAME.match(line) if task is not None and not CRITICAL_OTHER.match(line) else None
        if found:
            close()
            task = found
        elif frame:
            frames.append(frame["sym"])
        elif not (not line.strip() or CRITICAL_OTHER.match(line) or ELISION.match(line)):
            break
        index += 1
    close()
    return finish(block, start, index, f"read bcc criticalstat: {plural(len(block.stacks), 'section')} with "
                  "interrupts or preemption disabled (latencies, not CPU samples)")


# --- function_graph -----------------------------------------------------------------------------

def _read_graph(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("ftrace-function-graph", start, start, unit="us", not_cpu=NOT_CPU)
    open_calls: List[str] = []
    calls = 0
    index = start
    while index < len(lines):
        line = lines[index]
        found = _graph_line(line)
        if found:
            calls += 1
            open_calls = _graph_call(block, found, open_calls)
        elif GRAPH_OTHER.match(line):
            if "=>" in line:
                open_calls = []                # another task runs from here on
        elif not (not line.strip() or ELISION.match(line)):
            break
        index += 1
    return finish(block, start, index, f"read ftrace function_graph: {plural(calls, 'line')}, "
                  f"{plural(len(block.stacks), 'leaf call')} weighted by their duration in microseconds")


def _graph_call(block: Block, found: GraphLine, open_calls: List[str]) -> List[str]:
    depth = max(1, len(found.indent) // 2)
    call = found.call
    above = open_calls[:depth - 1]
    if call.endswith("{"):
        return above + [normalize(call.split("(", 1)[0])]
    if call.endswith(";") and found.duration:
        leaf = normalize(call.split("(", 1)[0])
        if leaf not in SWITCH_LEAVES:
            frames = tuple(Frame(n, "kernel") for n in above + [leaf])
            block.stacks.append((frames, found.duration, "", None, None))
    return open_calls if not call.startswith("}") else open_calls[:depth - 1]
