"""Read folded stacks (`comm;root;...;leaf 12`) into a Profile.

Frame kinds come from the `_[k]` (kernel), `_[j]` (JIT), `_[i]` (inlined) annotations
that `collapse --kernel/--jit/--all` and bcc `profile -f` write (the suffix is stripped
from the name), else from `kernelnames.looks_kernel()`. Context marker frames
(`[softirq]`, `[hardirq]`, `[nmi]`, `[task]`, written by `collapse --context-frames`) become kind
"context" and set the record's context. A first frame that looks like a process name
(`java`, `swapper`, `nginx-1234`, `ksoftirqd/0`) becomes the record's comm.
"""
from __future__ import annotations

import re
from typing import BinaryIO, Iterator, Optional, Tuple

from .kernelnames import looks_kernel
from .contexts import MARKER_CONTEXTS, context_of_marked, mark_contexts_in_frames
from .perfscript import Problems, open_binary
from .profile import Frame, Profile

_NUMBER = re.compile(rb"\d+(?:\.\d+)?")
_ANNOTATION = {"_[k]": "kernel", "_[j]": "jit", "_[i]": "user", "_[w]": "user"}
# comm-PID or comm-PID/TID as written by collapse --pid/--tid
_COMM_PID = re.compile(r"^(.+?)-(\d+|\?)(?:/(\d+))?$")
# Names the kernel gives its threads, and common process names that are not functions.
_KERNEL_THREAD = re.compile(r"^(swapper|ksoftirqd|kworker|migration|rcu_\w+|kswapd|khugepaged|kcompactd|"
                            r"idle|watchdog|cpuhp|irq|jbd2|kthreadd|init|systemd)(/.*)?$")


MAX_COUNT = 1e15     # samples of one stack: a year of 1000 CPUs at 10 kHz is 3e14


def parse_line(line: bytes) -> Optional[Tuple[bytes, float]]:
    """`a;b;c 12` -> (b"a;b;c", 12.0); None for lines that are not folded stacks. Split from the
    right (linear: a regex backtracked quadratically over long whitespace runs).

    >>> parse_line(b"java;main;run 1.5")
    (b'java;main;run', 1.5)
    >>> parse_line(b"java;a" + b" " * 100000 + b"x") is None
    True
    """
    parts = line.rsplit(None, 1)
    if len(parts) != 2 or not _NUMBER.fullmatch(parts[1]):
        return None
    return parts[0].rstrip(), float(parts[1])


def frame_of(name: str, annotated: bool = False) -> Frame:
    """`tcp_sendmsg_[k]` -> Frame("tcp_sendmsg", "kernel"). In an `annotated` stack
    (one with `_[k]` frames) unmarked frames are user frames, else a name heuristic decides."""
    if name in MARKER_CONTEXTS:
        return Frame(name, "context")
    suffix = name[-4:]
    kind = _ANNOTATION.get(suffix)
    if kind:
        return Frame(name[:-4], kind)
    return Frame(name, "kernel" if not annotated and looks_kernel(name) else "user")


def looks_like_comm(name: str) -> bool:
    """The first frame of a folded line is a process name (not a function)?

    >>> [looks_like_comm(n) for n in ("java", "swapper", "nginx-123", "ksoftirqd/0", "main", "tcp_sendmsg_[k]")]
    [True, True, True, True, False, False]
    """
    if name.endswith(("_[k]", "_[j]", "_[i]")) or name in MARKER_CONTEXTS:
        return False
    if _COMM_PID.match(name) or _KERNEL_THREAD.match(name):
        return True
    if name in ("main", "start_thread", "_start", "__libc_start_main", "clone", "clone3"):
        return False
    # process names are short and carry no C++/Java scope or call-site punctuation
    return len(name) <= 16 and not any(c in name for c in ":()<>[] ") and not looks_kernel_only(name)


def looks_kernel_only(name: str) -> bool:
    """Names that are surely kernel functions (leading underscores, *_x64_sys_*, entry points)."""
    return name.startswith("_") or name.startswith(("entry_", "do_", "sys_", "ret_from_", "secondary_", "start_"))


def _comm_and_pid(first: str) -> Tuple[str, Optional[int]]:
    match = _COMM_PID.match(first)
    if match and not _KERNEL_THREAD.match(first):
        pid = match.group(2)
        return match.group(1), int(pid) if pid.isdigit() else None
    return first, None


def iter_stacks(stream: BinaryIO, problems: Problems) -> Iterator[Tuple[bytes, float]]:
    line_no = 0
    for line_no, line in enumerate(open_binary(stream), 1):
        line = line.rstrip(b"\r\n")
        if not line.strip() or line.startswith(b"#"):
            continue
        parsed = parse_line(line)
        if parsed is None:
            problems.add("lines that are not `stack count`", line_no)
        elif not 0 < parsed[1] <= MAX_COUNT:
            problems.add(f"lines whose count is 0 or above {MAX_COUNT:.0e}", line_no)
        else:
            yield parsed


def read_profile(stream: BinaryIO, max_warnings: int = 5) -> Profile:
    profile = Profile(source_format="folded")
    problems = Problems(max_warnings)
    for stack, count in iter_stacks(stream, problems):
        names = stack.decode("utf-8", errors="replace").split(";")
        comm, pid = "", None
        if len(names) > 1 and looks_like_comm(names[0]):
            comm, pid = _comm_and_pid(names[0])
            names = names[1:]
        annotated = any(n.endswith("_[k]") for n in names)
        frames = [frame_of(n, annotated) for n in names if n]
        context = context_of_marked(frames)
        if context == "task":
            context = context_of_marked(mark_contexts_in_frames(frames))
        profile.add(frames, count, comm=comm, cpu=None, context=context, pid=pid)
        profile.events["folded"] += 1
    profile.skipped_lines = problems.total()
    if problems.total():
        profile.data_quality.append(f"folded stacks: {problems.sentence()}.")
    return profile


_TABLE_ROW = re.compile(rb"^[^;\s]+\s+\d+\s+\d+(?:\.\d+)?\s*$")
_NUMBER_WORD = re.compile(rb"\d+(?:[.,]\d+)?%?")


def _numbered_row(stack: bytes) -> bool:
    """A one-frame stack (no `;`) with a bare number among its words is a table row, not a frame:
    a whole number, or a share (`27.3`, `4,2`, `9.8%`) as a typed comparison of two runs has in
    its first value column (rule S4).

    >>> _numbered_row(b"rwsem_down_read_slowpath           27.3"), _numbered_row(b"java;main")
    (True, False)
    """
    return b";" not in stack and any(_NUMBER_WORD.fullmatch(word) for word in stack.split())


def is_folded(sample: bytes) -> bool:
    """Content sniffing: most non-comment lines are `frame;frame count`.

    >>> is_folded(b"java;main;run 12\\njava;main;gc 3\\n")
    True
    >>> is_folded(b"java 123 [000] 1.0: 1 cycles:\\n\\tffff sym (dso)\\n")
    False

    A row of a table with two number columns (`net_rx   0   9311247`, bcc softirqs -C) is no
    one-frame stack:

    >>> is_folded(b"net_rx   0   9311247\\ntimer    3   3241\\n")
    False

    Nor is a one-frame "stack" that holds a number column of its own: readprofile's `ticks name
    load` rows mail-quoted (`>  14102 isolate_pages_global   38.3207`) end in a number too (rule K5,
    realworld-probe-k case 1171):

    >>> is_folded(b">  48817 total   0.0197\\n>  14102 isolate_pages_global   38.3207\\n")
    False

    Nor are the `function  count` rows under a `stap` command that samples the timer (`# stap -e '...
    probe timer.profile ...'`, the root prompt looking like a comment): a SystemTap timer profile, whose
    reader knows the command's kernel-only filter (rule AS3, realworld-probe-as case 1826):

    >>> is_folded(b"# stap -e 'probe timer.profile { s[probefunc()] <<< 1 }'\\ncompact_zone 9812\\n")
    False
    """
    from .paste.systemtap import PROFILE_COMMAND
    if any(PROFILE_COMMAND.match(l.decode("utf-8", "replace")) for l in sample.split(b"\n")[:20]):
        return False
    lines = [l for l in sample.split(b"\n")[:200] if l.strip() and not l.startswith(b"#")]
    if len(sample) >= 1 << 16 and lines and not sample.endswith(b"\n"):
        lines = lines[:-1]  # last line may be cut by the sample window
    if not lines:
        return False
    good = sum(1 for l in lines if parse_line(l) and not l[:1].isspace() and b"\t" not in l and not _TABLE_ROW.match(l)
               and not _numbered_row(parse_line(l)[0]))
    return good >= max(1, int(len(lines) * 0.9))
