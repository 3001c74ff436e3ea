"""Stack formats that other tools print as text: folded lines (bcc `profile -f`, stackcollapse),
bpftrace `@[kstack] = count` maps, and perf script chunks (read by flamediag.perfscript).

    java;start_thread;run;-;entry_SYSCALL_64_[k];do_syscall_64_[k];futex_wait_[k] 37
    @[
        native_queued_spin_lock_slowpath+29
        _raw_spin_lock+30
    ]: 412
"""
from __future__ import annotations

import io
import re
from typing import List, Optional, Sequence

from .. import folded as folded_reader
from .. import perfscript
from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, clean_name, kernel_frames, plural, split_kernel_user

FOLDED = re.compile(r"^(?P<stack>[^\s;][^;]*(?:;[^;]*)+?)\s+(?P<count>\d+(?:\.\d+)?)\s*$")
BPF_OPEN = re.compile(r"^@\w*\[(?P<key>[^\]]*?)\s*$")
BPF_CLOSE = re.compile(r"^\]:\s*(?P<count>\d+)\s*$")
BPF_FRAME = re.compile(r"^\s+(?:[0-9a-f]{8,16}\s+)?(?P<sym>[A-Za-z_][\w.$]*)(?:\+(?:0x[0-9a-f]+|\d+))?(?:\s+\(.*\))?\s*$")
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
    """A frame has no spaces unless it is a C++/Java signature; prose with a `;` fails."""
    return bool(part) and (not re.search(r"\s", part) or bool(re.search(r"[(<:\[]", part)))


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


def read_bpftrace(lines: Sequence[str], start: int) -> Optional[Block]:
    """`@[` + kstack frames (innermost first) + `]: count`, repeated; `Attaching N probe` lines pass."""
    block = Block("bpftrace-kstack", start, start)
    index = start
    entries = 0
    while index < len(lines):
        line = lines[index]
        opening = BPF_OPEN.match(line)
        if opening:
            index, done = _bpf_entry(lines, index + 1, opening["key"].rstrip(", "), block)
            entries += done
            if not done:
                break
            continue
        if not (line.strip() == "" or line.startswith("Attaching ") or BPF_ONELINE.match(line)):
            break
        index += 1
    if not block.stacks:
        return None
    block.end = index
    block.notes.append(f"read bpftrace @[kstack] map: {plural(entries, 'stack')}")
    return block


def _bpf_entry(lines: Sequence[str], index: int, key: str, block: Block):
    names: List[str] = []
    while index < len(lines):
        closing = BPF_CLOSE.match(lines[index])
        if closing:
            if names:
                comm = key if key and not key.startswith(("kstack", "ustack")) else ""
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


def read_perf_script(lines: Sequence[str], start: int) -> Optional[Block]:
    """A perf script chunk: event lines followed by tab/space-indented frame lines."""
    index = start
    while index < len(lines):
        line = lines[index]
        if not (PERF_SCRIPT_HEADER.match(line) or line.startswith((" ", "\t")) and line.strip()
                or line.strip() == "" or line.startswith("#")):
            break
        index += 1
    chunk = "\n".join(lines[start:index]).encode("utf-8", "surrogateescape") + b"\n"
    if not perfscript.is_perf_script(chunk):
        return None
    profile = perfscript.read_profile(io.BytesIO(chunk))
    block = Block("perf-script", start, index)
    for record in profile:
        block.stacks.append((record.frames, record.weight, record.comm, record.cpu, record.context))
    if not block.stacks:
        return None
    block.notes.append(f"read perf script: {sum(profile.events.values()) or len(block.stacks)} samples")
    return block
