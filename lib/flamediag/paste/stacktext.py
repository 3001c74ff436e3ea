"""Stack formats that other tools print as text: folded lines (bcc `profile -f`, stackcollapse),
bcc's multi-line stacks (`profile`, `offcputime`, `stackcount` without -f), bpftrace
`@[kstack] = count` maps, async-profiler's traces and flat table, and perf script chunks (read by
flamediag.perfscript).

    java;start_thread;run;-;entry_SYSCALL_64_[k];do_syscall_64_[k];futex_wait_[k] 37
    @[
        native_queued_spin_lock_slowpath+29
        _raw_spin_lock+30
    ]: 412
    --- 10431229000 ns (21.64%), 10431 samples
      [ 0] smp_call_function_many_[k]
      [ 1] native_flush_tlb_others_[k]
"""
from __future__ import annotations

import io
import re
from typing import List, Optional, Sequence, Tuple, Union

from .. import folded as folded_reader
from .. import perfscript
from ..kernelnames import looks_kernel, normalize
from ..profile import Frame
from .common import ELISION, REMARK, Block, Miss, clean_name, finish, kernel_frames, kind_of_lone, plural, split_kernel_user

FOLDED = re.compile(r"^(?P<stack>[^\s;][^;]*(?:;[^;]*)+?)\s+(?P<count>\d+(?:\.\d+)?)\s*$")
BPF_OPEN = re.compile(r"^@\w*\[(?P<key>[^\]]*?)\s*$")
BPF_CLOSE = re.compile(r"^(?:,\s*(?P<tail>[^\]]*?)\s*)?\]:\s*(?P<count>\d+)\s*$")   # `]: 3`, `, bash]: 3`
# (an author's remark after a frame is not part of it: rule W1)
BPF_FRAME = re.compile(r"^\s+(?:[0-9a-f]{8,16}\s+)?(?P<sym>[A-Za-z_][\w.$]*)(?:\+(?:0x[0-9a-f]+|\d+))?(?:\s+\(.*\))?"
                       + REMARK + r"?\s*$")
BPF_ONELINE = re.compile(r"^@\w*\[(?P<key>.*)\]:\s*(?P<count>\d+)\s*$")


def read_folded(lines: Sequence[str], start: int) -> Optional[Block]:
    """Consecutive folded lines; bcc's `-` delimiter and `_[k]` suffixes make it bcc profile -f."""
    index = start
    rows = []
    while index < len(lines):
        match = FOLDED.match(lines[index].strip())
        if not match or not all(_frame_like(p) for p in match["stack"].split(";")[1:]):
            break
        rows.append((match["stack"].split(";"), float(match["count"])))
        index += 1
    if not rows:
        return None
    bcc = any("-" in names or any(n.endswith("_[k]") for n in names) for names, _ in rows)
    block = Block("bcc-profile-folded" if bcc else "folded", start, index)
    for names, count in rows:
        comm = names[0] if (bcc or folded_reader.looks_like_comm(names[0])) else ""
        frames = _folded_frames(names[1:] if comm else names)
        if frames:
            block.stacks.append((frames, count, comm, None, None))
    what = "bcc profile -f folded stacks" if bcc else "folded stacks"
    block.notes.append(f"read {what}: {plural(len(rows), 'line')}")
    return block


def _frame_like(part: str) -> bool:
    """A frame has no spaces unless it is a C++/Java signature; prose with a `;` fails. A colon
    marks a signature only as a scope or a line number (`std::vector`, `app.rb:12`): a colon
    before a space is a label in prose, such as an htop header typed on one line (rule AW1).

    >>> [_frame_like(p) for p in ("do_syscall_64", "std::vector<int>::push_back(int const&)",
    ...                           "block in run (app.rb:12)", "30 running  Load average: 27.10 26.88")]
    [True, True, True, False]
    """
    return bool(part) and (not re.search(r"\s", part) or bool(re.search(r"[(<\[]|:(?!\s)", part)))


def _folded_frames(names: List[str]):
    names = [n for n in names if n and not n.startswith("[Missed ")]
    if "-" in names:
        cut = names.index("-")
        user = [Frame(clean_name(n), "user") for n in names[:cut] if n != "-"]
        kernel = [Frame(clean_name(n), "kernel") for n in names[cut + 1:] if n != "-"]
        return tuple(user + kernel)
    if any(n.endswith(("_[k]", "_[j]")) for n in names):
        return tuple(_annotated(n) for n in names)
    cleaned = [clean_name(n) for n in names]
    return split_kernel_user(cleaned, "kernel" if cleaned and folded_reader.looks_kernel_only(cleaned[-1]) else "unknown")


def _annotated(name: str) -> Frame:
    frame = folded_reader.frame_of(name)
    return Frame(clean_name(frame.name), frame.kind if frame.kind != "kernel" or name.endswith("_[k]") else "user")


def read_bpftrace(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """`@[` + kstack frames (innermost first) + `]: count`, repeated; `Attaching N probe` lines pass."""
    block = Block("bpftrace-kstack", start, start)
    index = start
    entries = 0
    user_samples: List[float] = []
    while index < len(lines):
        line = lines[index]
        opening = BPF_OPEN.match(line)
        if opening:
            index, done = _bpf_entry(lines, index + 1, opening["key"].rstrip(", "), block, user_samples)
            entries += done
            if not done:
                break
            continue
        oneline = BPF_ONELINE.match(line)
        if not (line.strip() == "" or line.startswith("Attaching ") or oneline):
            break
        if oneline and not oneline["key"].strip() and int(oneline["count"]):
            user_samples.append(float(oneline["count"]))
        index += 1
    if block.stacks and user_samples:
        # `@[]: N` (or `@[` + `]: N`): samples whose kernel stack is empty were taken in user space
        # (rule BG1 of doc/accuracy.md): busy time the listing's shares must include
        block.stacks.extend(((Frame("[unknown]", "user"),), weight, "", None, None) for weight in user_samples)
    if not block.stacks:
        return _bpf_counts(lines, start, index)
    block.not_cpu = _lock_entry_calls(lines, start, index)
    return finish(block, start, index, f"read bpftrace @[kstack] map: {plural(entries, 'stack')}")


# A probe that instruments a function (fires on each call) rather than sampling CPUs.
BPF_CALL_PROBE = re.compile(r"\b(?:kprobe|kretprobe|kfunc|kretfunc|fentry|fexit):(?:[\w.]+:)?(?P<func>[\w.*]+)")
# The entry points every taker of a lock calls, contended or not: spin / rw lock acquisition of every
# era (2.6.18-2.6.32 `_spin_lock*`, `_read_lock*`; 2.6.33+ `_raw_spin_lock*`, `do_raw_spin_lock`; RHEL 7
# `_raw_qspin_lock`), sleeping locks' `mutex_lock*`, `down_read*` / `down_write*`. Their slow paths
# (`native_queued_spin_lock_slowpath`, `__mutex_lock_slowpath`, `rwsem_down_*`) are entered only on
# contention and are not in this list.
LOCK_ENTRY = re.compile(r"^(?:_raw_|_|do_raw_)?(?:spin|read|write|qspin)_lock(?:_irq|_irqsave|_bh|_nested|_irqsave_nested)?$"
                        r"|^rt_spin_lock$|^mutex_lock(?:_interruptible|_killable|_nested|_io)?$"
                        r"|^down_(?:read|write)(?:_killable|_interruptible|_nested)?$")


def _lock_entry_calls(lines: Sequence[str], start: int, end: int) -> Optional[str]:
    """A `@[kstack] = count()` map of a program that probes only a lock's acquisition entry point
    (`kprobe:_raw_spin_lock`, `kfunc:mutex_lock`) counts acquisitions, nearly all of them uncontended:
    how often the lock is taken, not how long anyone waits, so it is never diagnosed (rule BS1 of
    doc/accuracy.md). A probe on the slow path (`kprobe:native_queued_spin_lock_slowpath`) counts
    contended acquisitions and stays a stack map as before; a sampling probe or a map of summed
    times (`sum(nsecs - @ts)`) is time, also as before.

    >>> bool(_lock_entry_calls(["# bpftrace -e 'kprobe:_raw_spin_lock { @[kstack(5)] = count(); }'",
    ...                         "@[", "    _raw_spin_lock+1", "]: 3"], 1, 4))
    True
    >>> _lock_entry_calls(["# bpftrace -e 'kprobe:native_queued_spin_lock_slowpath { @[kstack] = count(); }'",
    ...                    "@[", "    native_queued_spin_lock_slowpath+1", "]: 3"], 1, 4) is None
    True
    """
    context = "\n".join(lines[max(0, start - 5):min(end, start + 2)])
    probed = [m["func"] for m in BPF_CALL_PROBE.finditer(context)]
    if not probed or BPF_SAMPLING.search(context) or "count()" not in context \
            or not all(LOCK_ENTRY.match(func) for func in probed):
        return None
    return (f"this bpftrace map counts the calls of {', '.join(dict.fromkeys(probed))}, a lock's acquisition "
            "entry point that every taker passes, contended or not: how often the lock is taken, not "
            "time spent waiting for it (a CPU profile's share of the lock's slow path shows that)")


BPF_KEY = re.compile(r"^[\w.:/-]+$")
BPF_SAMPLING = re.compile(r"\bprofile:(?:hz|s|ms|us)?:?\d*|\bprofile\.bt\b|\bsoftware:cpu-clock\b|\bhardware:cycles\b")


def _bpf_counts(lines: Sequence[str], start: int, end: int) -> Union[Block, Miss]:
    """A map keyed by one name per entry (`@[vfs_read]: 1113`, `@[comm]: 40`) and no stacks: what its
    probes counted, calls or events (rule V7 of doc/accuracy.md), read and never diagnosed. A program
    that samples (`profile:hz:99`) would make it a count of samples per name, whose meaning (a process,
    a sampled function) the map does not say: left unread.

    >>> block = read_bpftrace(["Attaching 54 probes...", "@[vfs_write]: 276", "@[vfs_read]: 1113"], 0)
    >>> [(s[0][-1].name, s[1]) for s in block.stacks], bool(block.not_cpu)
    ([('vfs_write', 276.0), ('vfs_read', 1113.0)], True)
    >>> read_bpftrace(["# bpftrace -e 'profile:hz:99 { @[comm] = count(); }'", "@[java]: 40"], 1).fmt
    Traceback (most recent call last):
    ...
    AttributeError: 'Miss' object has no attribute 'fmt'
    """
    context = "\n".join(lines[max(0, start - 5):end])
    entries = [BPF_ONELINE.match(line) for line in lines[start:end]]
    entries = [e for e in entries if e and BPF_KEY.match(e["key"].strip())]
    if not entries or BPF_SAMPLING.search(context):
        return Miss(max(end, start + 1))
    block = Block("bpftrace-count-map", start, end, unit="events", header=True)
    block.stacks = [((Frame(e["key"].strip(), "kernel"),), float(e["count"]), "", None, None)
                    for e in entries if int(e["count"]) > 0]
    block.not_cpu = ("this bpftrace map counts what its probes fired on, one name per entry and no stacks "
                     "(calls of traced functions, events per process): how often, not CPU time")
    return finish(block, start, end, f"read a bpftrace count map: {plural(len(block.stacks), 'key')}")


def _bpf_entry(lines: Sequence[str], index: int, key: str, block: Block, user_samples: List[float]):
    names: List[str] = []
    while index < len(lines):
        closing = BPF_CLOSE.match(lines[index])
        if closing:
            if not names and not key and not closing["tail"] and int(closing["count"]):
                user_samples.append(float(closing["count"]))
            if names:
                comm = key if key and not key.startswith(("kstack", "ustack")) else (closing["tail"] or "")
                block.stacks.append((kernel_frames([normalize(n) for n in reversed(names)]),
                                     float(closing["count"]), comm, None, None))
            return index + 1, 1
        frame = BPF_FRAME.match(lines[index])
        if not frame:
            return index, 0
        names.append(frame["sym"])
        index += 1
    return index, 0


PERF_SCRIPT_HEADER = re.compile(r"^\S.*?\s+\d+(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:\s")


# A frame of `perf script -F ...,ip,sym[,symoff]`: the address and the symbol, no `(dso)` column.
NO_DSO_FRAME = re.compile(r"^[ \t]+[0-9a-f]{6,16}[ \t]+\S")


def _with_dso(line: str) -> str:
    """A frame line printed without the DSO column (`-F ip,sym,symoff`) gets perf's own `([unknown])`:
    the address then says whose code it is, `ffff...` the kernel's (rule AE1 of doc/accuracy.md).
    A line perf script's grammar reads already is left as it is.

    >>> _with_dso("\\tffffffff8124ec3a try_to_free_mem_cgroup_pages+0xfa")
    '\\tffffffff8124ec3a try_to_free_mem_cgroup_pages+0xfa ([unknown])'
    >>> _with_dso("\\tffffffff8124ec3a shrink_node+0x22e ([kernel.kallsyms])")
    '\\tffffffff8124ec3a shrink_node+0x22e ([kernel.kallsyms])'
    """
    if not NO_DSO_FRAME.match(line):
        return line
    encoded = line.encode("utf-8", "surrogateescape")
    if perfscript.split_frame_line(encoded) is not None:
        return line
    return line.rstrip() + " ([unknown])"


def read_perf_script(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """A perf script chunk: event lines followed by tab/space-indented frame lines. Whether it
    is one is decided from its first lines, before the run is scanned (a long run of event-like
    lines without frames costs one pass, not one pass per line)."""
    head = "\n".join(_with_dso(line[:512]) for line in lines[start:start + 4]).encode("utf-8", "surrogateescape")
    if not perfscript.is_perf_script(head):
        return Miss(start + 1)
    index = start
    while index < len(lines):
        line = lines[index]
        if not (PERF_SCRIPT_HEADER.match(line[:256]) or line.startswith((" ", "\t")) and line.strip()
                or line.strip() == "" or line.startswith("#")):
            break
        index += 1
    # The paste ends the last sample: perf script's reader wants the blank line that closes it.
    chunk = "\n".join(_with_dso(line) for line in lines[start:index]).encode("utf-8", "surrogateescape") + b"\n\n"
    profile = perfscript.read_profile(io.BytesIO(chunk))
    block = Block("perf-script", start, index)
    for record in profile:
        block.stacks.append((record.frames, record.weight, record.comm, record.cpu, record.context))
    if not block.stacks:
        return Miss(index)
    block.notes.append(f"read perf script: {sum(profile.events.values()) or len(block.stacks)} samples")
    return block


# bcc multi-line stacks (`profile`, `offcputime`, `stackcount` without -f), innermost first:
#     ffffffff813d0af8 __clear_user             (older tools print the address too)
#     entry_SYSCALL_64_fastpath
#     --                                        (`-d`: kernel above, user below)
#     00007fc5652ad9b0 read
#     -                dd (25036)               (comm and pid)
#         4                                     (count: samples, or microseconds off CPU)
BCC_FRAME = re.compile(r"^\s{2,}(?:(?P<addr>[0-9a-f]{8,16})\s+)?(?:b')?(?P<sym>[A-Za-z_.\[][\w.$:<>~\[\]@-]*?"
                       r"(?:\([\w\s:<>,*&]*\)(?: const)?)?)'?"
                       r"(?:\+0x[0-9a-f]+)?" + REMARK + r"?\s*$")
BCC_DELIMITER = re.compile(r"^\s+--\s*(?:--)?\s*$")
BCC_COMM = re.compile(r"^\s+(?:-|waker:|target:)\s+(?P<comm>.+?)(?:\s+\(?(?P<pid>\d+)\)?)?\s*$")
BCC_COUNT = re.compile(r"^\s+(?P<count>\d+)\s*$")


def read_bcc_stacks(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Consecutive bcc multi-line stacks, each ending in an indented count line."""
    block = Block("bcc-stacks", start, start)
    index = last_stack_end = scanned = start
    while index < len(lines):
        if not lines[index].strip() or ELISION.match(lines[index]):
            index += 1
            continue
        end, scanned = _bcc_stack(lines, index, block)
        if end is None:
            break
        index = last_stack_end = end
    # Nothing read: no stack starts before the line where the first attempt stopped.
    return finish(block, start, last_stack_end if block.stacks else scanned,
                  f"read bcc multi-line stacks: {plural(len(block.stacks), 'stack')}")


def _bcc_stack(lines: Sequence[str], index: int, block: Block) -> Tuple[Optional[int], int]:
    """One stack into `block`: (the index after its count line, or None when it is not one;
    how far it looked — no stack starts before a line that is not part of one)."""
    kernel_part: List[str] = []
    user_part: List[str] = []
    part, comm, addresses = kernel_part, "", {}
    while index < len(lines):
        line = lines[index]
        frame = BCC_FRAME.match(line)
        if BCC_DELIMITER.match(line):
            part = user_part
        elif BCC_COUNT.match(line):
            return _bcc_finish(block, kernel_part, user_part, part is user_part, comm, addresses,
                               float(BCC_COUNT.match(line)["count"]), index + 1), index + 1
        elif BCC_COMM.match(line):
            comm = BCC_COMM.match(line)["comm"]
        elif frame:
            part.append(frame["sym"])
            addresses[len(kernel_part) + len(user_part) - 1] = frame["addr"]
        else:
            return None, index
        index += 1
    return None, index


def _bcc_finish(block: Block, kernel_part: List[str], user_part: List[str], delimited: bool, comm: str,
                addresses, count: float, end: int) -> Optional[int]:
    names = kernel_part + user_part
    if not names:
        return None
    rooted = [clean_name(n) for n in reversed(names)]
    if delimited:
        frames = tuple(Frame(n, "user") for n in rooted[:len(user_part)]) + \
            tuple(Frame(n, "kernel") for n in rooted[len(user_part):])
    elif any(addresses.values()):
        kinds = [kind_of_lone("0x" + (addresses.get(i) or "0"), "user") for i in range(len(names))][::-1]
        frames = tuple(Frame(n, k) for n, k in zip(rooted, kinds))
    else:
        frames = split_kernel_user(rooted, "kernel" if looks_kernel(rooted[-1]) else "unknown")
    block.stacks.append((frames, count, comm, None, None))
    return end


# async-profiler's text output (`profiler.sh` / `asprof` without -f, or -o summary,traces,flat), the
# layout JVM projects' issues paste (rule BP1 of doc/accuracy.md):
#     --- Execution profile ---
#     Total samples       : 48211
#     --- 10431229000 ns (21.64%), 10431 samples       one trace: its time, share and samples
#       [ 0] smp_call_function_many_[k]                 innermost first, kernel frames `_[k]`
#       [ 1] native_flush_tlb_others_[k]
#               ns  percent  samples  top               the flat table: self samples per frame
#       ----------  -------  -------  ---
#      12011230000   24.91%    12011  smp_call_function_many_[k]
# `bytes` (allocation profiling) weigh memory, not CPU: such a trace is not read.
ASYNC_BANNER = re.compile(r"^\s*---\s+Execution profile\s+---\s*$")
ASYNC_TRACE = re.compile(r"^\s*---\s+\d+\s+(?P<unit>ns|us|ms|counts?|bytes)\s+\(\s*\d+(?:\.\d+)?%\),\s+"
                         r"(?P<samples>\d+)\s+samples?\s*$")
ASYNC_FRAME = re.compile(r"^\s*\[\s*\d+\]\s+(?P<name>\S.*?)\s*$")
ASYNC_SUMMARY = re.compile(r"^\s*[A-Z][\w ]*?\s+:\s+\S")          # `Total samples       : 48211`
ASYNC_FLAT_HEADER = re.compile(r"^\s*(?P<unit>ns|us|ms|counts?|bytes)\s+percent\s+samples\s+top\s*$")
ASYNC_FLAT_RULE = re.compile(r"^\s*-{3,}\s+-{3,}\s+-{3,}\s+-{3}\s*$")
ASYNC_FLAT_ROW = re.compile(r"^\s*\d+\s+\d+(?:\.\d+)?%\s+(?P<samples>\d+)\s+(?P<name>\S.*?)\s*$")
# The command line above names the mode when it is not CPU time: `-e wall` samples every thread,
# running or asleep; `-e lock` weighs the time waited for Java monitors and locks.
ASYNC_NOT_CPU = re.compile(r"\b(?:profiler\.sh|asprof|async-profiler|libasyncProfiler\S*)\b.*?"
                           r"(?:\s-e\s*|\s--event[= ]|[,=]event=)(?P<mode>wall|lock)\b")


def starts_async_profiler(line: str) -> bool:
    return bool(ASYNC_BANNER.match(line) or ASYNC_TRACE.match(line) or ASYNC_FLAT_HEADER.match(line))


def read_async_profiler(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """async-profiler's traces (`--- N ns (P%), S samples` + `[ i] frame` lines, innermost first) and
    its flat table (`ns percent samples top`), weighted by samples. The traces hold the call chains,
    so the flat table after them is read only where no trace is: then each row is a frame's own
    samples, a flat listing. Kernel frames carry async-profiler's `_[k]` (Java `_[j]`, inlined `_[i]`);
    a listing printed without them is split at the kernel entry as perf's graphs are.

    >>> block = read_async_profiler(["--- 120 ns (60.00%), 12 samples", "  [ 0] osq_lock_[k]",
    ...     "  [ 1] __mutex_lock.isra.9_[k]", "  [ 2] java.lang.Thread.run", "", "--- 80 ns (40.00%), 8 samples",
    ...     "  [ 0] java.util.HashMap.getNode"], 0)
    >>> [([(f.name, f.kind) for f in s[0]], s[1]) for s in block.stacks][0]
    ([('java.lang.Thread.run', 'user'), ('__mutex_lock', 'kernel'), ('osq_lock', 'kernel')], 12.0)
    >>> flat = read_async_profiler(["     ns  percent  samples  top", "  -----  -------  -------  ---",
    ...     "    120   60.00%       12  osq_lock_[k]", "     80   40.00%        8  java.util.HashMap.getNode"], 0)
    >>> flat.flat, [(s[0][-1].name, s[0][-1].kind, s[1]) for s in flat.stacks]
    (True, [('osq_lock', 'kernel', 12.0), ('java.util.HashMap.getNode', 'user', 8.0)])
    """
    traces: List[Tuple[List[str], float]] = []
    rows: List[Tuple[str, float]] = []
    index, memory = start, False
    while index < len(lines):
        line = lines[index]
        trace, flat_header = ASYNC_TRACE.match(line), ASYNC_FLAT_HEADER.match(line)
        frame, row = ASYNC_FRAME.match(line), ASYNC_FLAT_ROW.match(line)
        if trace or flat_header:
            memory = memory or (trace or flat_header)["unit"] == "bytes"
        if trace:
            traces.append(([], float(trace["samples"])))
        elif frame and traces:
            traces[-1][0].append(frame["name"])
        elif row and not frame:
            rows.append((row["name"], float(row["samples"])))
        elif not (line.strip() == "" or flat_header or ASYNC_BANNER.match(line) or ASYNC_FLAT_RULE.match(line)
                  or ASYNC_SUMMARY.match(line) or ELISION.match(line)):
            break
        index += 1
    if memory:
        return Miss(max(index, start + 1))
    names = [n for chain, _ in traces for n in chain] or [n for n, _ in rows]
    annotated = any(n.endswith("_[k]") for n in names)
    block = Block("async-profiler", start, index, header=True)
    mode = next((m["mode"] for m in map(ASYNC_NOT_CPU.search, lines[max(0, start - 5):start]) if m), None)
    if mode:
        block.not_cpu = (f"this is async-profiler's {mode} mode (`-e {mode}`): " +
                         ("every thread is sampled, running or asleep, so the weights are wall time" if mode == "wall"
                          else "the weights are time spent waiting for Java locks") + ", not CPU samples")
    if any(chain for chain, _ in traces):
        for chain, samples in traces:
            rooted = [n for n in reversed(chain) if not (n.startswith("[") and n.endswith("]"))]  # `[tid=12]` threads
            if annotated:
                frames = tuple(_annotated(n) for n in rooted)
            else:
                cleaned = [clean_name(n) for n in rooted]
                frames = split_kernel_user(cleaned, "kernel" if cleaned and looks_kernel(cleaned[-1]) else "user")
            if frames:
                block.stacks.append((frames, samples, "", None, None))
        return finish(block, start, index, f"read async-profiler traces: {plural(len(block.stacks), 'trace')}")
    block.flat = True
    for name, samples in rows:
        kind = "kernel" if name.endswith("_[k]") or (not annotated and looks_kernel(clean_name(name))) else "user"
        block.stacks.append(((Frame(clean_name(name), kind),), samples, "", None, None))
    return finish(block, start, index, f"read async-profiler's flat table: {plural(len(block.stacks), 'row')}")
