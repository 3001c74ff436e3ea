"""Join back lines a mail client wrapped (at 72-80 columns), where the tools' grammar says
the second line can only be the tail of the first.

    >>> rejoin(["   |           --50.32%", "--rwsem_down_write_slowpath"], 72)
    ['   |           --50.32%--rwsem_down_write_slowpath']
    >>> rejoin([" [<ffffffff8113f2e0>]", "shrink_inactive_list+0x2f0/0x740"], 72)
    [' [<ffffffff8113f2e0>] shrink_inactive_list+0x2f0/0x740']

The rules (a wrapped tail always starts at column 0):
- perf call graphs: perf indents every graph line under its entry, so a branch `--N%--name`,
  a bare `--name` after a line ending in `--N%`, or a lone rail `|` at column 0 is a tail.
  A branch whose head was only rails lost its column: perf prints a separator line before
  every branch whose last `|` is the branch's rail, so the branch is put back right of it.
- kernel traces: a frame never starts with its offset or module (`+0x1a/0x40`, `[ext4]`),
  and `sym+0x../0x..` alone follows an address-only head `[<ffffffff...>]`; the
  `CPU: N PID: N Comm: x Tainted: ...` line always ends in the release and `#build`.
- a perf report entry or graph line cut inside its symbol (hard wrapping at the paste's
  widest line): a lone identifier at column 0 after a line that fills the width.
"""
from __future__ import annotations

import re
from typing import List, Optional

PCT = r"\d+(?:[.,]\d+)?%"
_HEAD_PCT = re.compile(r"--" + PCT + r"\s*$")                   # `|  --50.32%` waiting for `--name`
_HEAD_PCT_DASHES = re.compile(r"--" + PCT + r"--\s*$")           # `|  --50.32%--` waiting for `name`
_TAIL_NAME = re.compile(r"^--[^\s-]")
_NAME_START = re.compile(r"^[A-Za-z_]")
_TAIL_BRANCH = re.compile(r"^--" + PCT + r"--")                  # `--0.54%--_raw_spin_lock_irqsave`
_RAILS = re.compile(r"^[\s|]*$")
_ADDRESS_HEAD = re.compile(r"\[<[0-9a-f]{8,16}>\](?:\s+\?)?\s*$")
_FRAME_TAIL = re.compile(r"^\??\s*[A-Za-z_][\w.$]*\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?(?:\s+\[[\w.-]+\])?\s*$")
_COMPLETE_FRAME = re.compile(r"\??[A-Za-z_][\w.$]*\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[[\w.-]+\])?\s*$")
_OFFSET_CUT = re.compile(r"\+(?:0x?)?(?:[0-9a-f]+/?(?:0x?)?)?$")     # `sym+`, `sym+0x`, `sym+0x2f0/`
_OFFSET_TAIL = re.compile(r"^[0-9a-fx/]")
_MODULE_TAIL = re.compile(r"^\[[\w.-]+\]\s*$")
_FRAME_END = re.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+\s*$")
_CPU_LINE = re.compile(r"\bCPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: .*(?:Not tainted|Tainted:[ A-Z]*)\s*$")
_RELEASE_TAIL = re.compile(r"^\d+\.\d+\S* #\d+")
_ENTRY_OR_NAME = re.compile(r"(?:%\s.*\[[k.]\]\s+\S+|^[\s|]+(?:--" + PCT + r"--)?[A-Za-z_][\w.]*)$")
_WORD_TAIL = re.compile(r"^[A-Za-z0-9_.$]{1,48}$")


def rejoin(lines: List[str], width: int) -> List[str]:
    """The lines with wrapped tails joined to their heads; `width` is the paste's widest line."""
    out: List[str] = []
    for line in lines:
        joined = _join(out, line, width) if out and line[:1] not in ("", " ", "\t") else None
        if joined is None:
            out.append(line)
        else:
            out[-1] = joined
    return out


MAX_JOINED = 2000          # tool lines are shorter; longer ones are not worth a regex pass
MAX_HARD_WRAPPED = 400


def _join(out: List[str], tail: str, width: int) -> Optional[str]:
    head = out[-1]
    stripped = head.rstrip()
    if len(head) > MAX_JOINED or len(tail) > MAX_JOINED:
        return None
    if _HEAD_PCT.search(stripped) and _TAIL_NAME.match(tail):
        return stripped + tail
    if _HEAD_PCT_DASHES.search(stripped) and _NAME_START.match(tail):
        return stripped + tail
    if _TAIL_BRANCH.match(tail) and _RAILS.match(head):
        return _place_branch(out, tail)
    if tail.strip() == "|" and _RAILS.match(head) and head[:1] in (" ", "\t") and "|" in head:
        return head + tail.strip()
    if _ADDRESS_HEAD.search(stripped) and _FRAME_TAIL.match(tail):
        return stripped + " " + tail
    if _OFFSET_CUT.search(stripped) and _OFFSET_TAIL.match(tail) and not _FRAME_END.search(stripped) \
            and _COMPLETE_FRAME.fullmatch(stripped.rsplit(None, 1)[-1] + tail.rstrip()):
        return stripped + tail
    if _MODULE_TAIL.match(tail) and _FRAME_END.search(stripped):
        return stripped + " " + tail
    if _CPU_LINE.search(stripped) and _RELEASE_TAIL.match(tail):
        return stripped + " " + tail
    if MAX_HARD_WRAPPED >= len(head) >= width - 2 >= 58 and _WORD_TAIL.match(tail) and _ENTRY_OR_NAME.search(stripped):
        return stripped + tail
    return None


def _place_branch(out: List[str], tail: str) -> str:
    """A branch cut after its rails: its rail is the last `|` of the separator line above."""
    head = out[-1].rstrip()
    separator = out[-2].rstrip() if len(out) >= 2 else ""
    rail = separator.rfind("|") if _RAILS.match(separator) else -1
    if rail < len(head):
        return head + " " + tail
    return head.ljust(rail + 1) + tail
