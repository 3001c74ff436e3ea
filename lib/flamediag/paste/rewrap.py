"""Join back lines a mail client wrapped (at 72-80 columns), where the tools' grammar says
the second line can only be the tail of the first.

    >>> rejoin(["   |           --50.32%", "--rwsem_down_write_slowpath"])
    ['   |           --50.32%--rwsem_down_write_slowpath']
    >>> rejoin([" [<ffffffff8113f2e0>]", "shrink_inactive_list+0x2f0/0x740"])
    [' [<ffffffff8113f2e0>] shrink_inactive_list+0x2f0/0x740']
    >>> rejoin(["22.90%", "ret_from_fork;io_wqe_worker;_raw_spin_lock"])
    ['22.90% ret_from_fork;io_wqe_worker;_raw_spin_lock']

The rules (a wrapped tail always starts at column 0):
- perf call graphs: perf indents every graph line under its entry, so a branch `--N%--name`,
  a bare `--name` after a line ending in `--N%`, or a lone rail `|` at column 0 is a tail.
  A branch whose head was only rails lost its column: perf prints a separator line before
  every branch whose last `|` is the branch's rail, so the branch is put back right of it.
- kernel traces: a frame never starts with its offset or module (`+0x1a/0x40`, `[ext4]`),
  and `sym+0x../0x..` alone follows an address-only head `[<ffffffff...>]`; the
  `CPU: N PID: N Comm: x Tainted: ...` line always ends in the release and `#build`.
- a chain's name alone at column 0 under a line of rails goes back 10 columns right of the
  last rail; a folded stack without its count takes a count alone on the next line; a
  `perf report -g folded` chain's share alone on a line takes the chain (`a;b;c`, no spaces:
  the only place a mail client can break it) from the next line (rule Q3); a
  `perf lock contention` row (or its header) ending in its lock type takes the caller alone on
  the next line; an LKP comparison row's values (1-4 numbers, each maybe with `± N%`) take the
  `perf-profile.` metric alone on the next line (a metric name never starts a row).
- a perf report entry cut before or after its `[k]`/`[.]` marker (the symbol, or marker and
  symbol, alone at column 0), and perf's column header cut in its padding.
- hard wrapping (`fold -w 80`, fixed-width archives): several lines exactly as long as the
  widest, each followed by text; the line after one of them continues it, wherever the cut fell
  (inside a symbol, inside the padding). Fixed-width tools print equally long lines too (crash's
  `#N [sp] func at addr (via x)` frames, rows of raw stack words): a line that is a whole record of
  a trace (a crash frame, a kernel frame ending in `+0x../0x..`, a row of stack words, `Call
  Trace:`), followed by another whole record, was not cut.
- not joined here (rule CI2), since their own readers join them and read pasted text too: `perf
  script` stack lines (`perfscript.block_lines`) and `top`'s task rows cut after TIME+, whose
  COMMAND alone on the next line the task-table reader takes back (`paste._top_rows`).
- syslog: every line starts `Mon dd hh:mm:ss host kernel:` (or an ISO 8601 / monotonic stamp); a line without it between two
  that have it is the tail of the one above.
- an x86_64 oops register dump (2.6.x-4.x): `knlGS:<hex>` alone ends the `FS: .. GS: ..` line,
  and `<hex>)` alone ends 2.6.x's `Process comm (pid: N, threadinfo <hex>, task` line (rule K9).
"""
from __future__ import annotations

import re
from typing import List, Optional

from .kstack import SYSLOG_HEAD as _SYSLOG_HEAD
from .lkp import PLUS_MINUS as _PLUS_MINUS
from .c2c import ROW as _C2C_ROW
from .lockcon import SYM as _LOCK_CALLER, TIME as _LOCK_TIME

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
# the symbol after a cut `[k]` / `[.]` mark and the columns after it, two blanks apart (`--sort mem,sym,dso`:
# `hashjoin::probe_partition            hjbench`, rule BM4)
_SYMBOL_COLUMNS_TAIL = re.compile(r"^[A-Za-z_.][\w.$:~]*(?:\s{2,}\S+)+\s*$")
_MARK_END = re.compile(r"%\s.*\s\[[k.gujH]\]$")                 # an entry cut right after its `[k]`
_WORD_TAIL = re.compile(r"^[A-Za-z0-9_.$]{1,128}$")
_ENTRY_HEAD = re.compile(r"^[-+]?\s*" + PCT + r"(?:\s+" + PCT + r")?\s+\S")      # `  12.10%  java  [kernel]`
_MARK_TAIL = re.compile(r"^\[[k.gujH]\]\s+\S")                                 # `[k] finish_task_switch`
_HEADER_HEAD = re.compile(r"^#\s+(?:Overhead|Children|\.{4,})")                 # perf report's column header
_HEADER_TAIL = re.compile(r"^(?:[A-Z][\w:]*|\.+)(?:\s+(?:[A-Z][\w:]*|\.+))*\s*$")
_FOLDED_UNCOUNTED = re.compile(r"^\S[^;\s]*;\S.*[^\s]$")     # `java;start_thread;...;do_syscall_64`
_COUNT_TAIL = re.compile(r"^\d+\s*$")
_FOLDED_SHARE_HEAD = re.compile(r"^\s*" + PCT + r"$")             # `22.90%` cut from its `-g folded` chain
_FOLDED_CHAIN_TAIL = re.compile(r"^[^\s;]+(?:;[^\s;]+)+\s*$")
# A `perf lock contention` row cut before its caller column (`... 25.79 us   mutex`).
_LOCK_ROW_HEAD = re.compile(r"^\s*\d+\s+" + r"\s+".join(_LOCK_TIME.format(n) for n in ("t", "m", "a")) + r"\s+[\w:-]+$")
_LOCK_HEADER_HEAD = re.compile(r"^\s*contended\s+total wait\s+max wait\s+avg wait\s+type$")
# An LKP comparison row cut before its metric (`  0.00  +41.2  41.18 ±  3%` / `perf-profile.self...`).
_LKP_VALUES_HEAD = re.compile(r"^\s*(?:[+-]?[\d.]+%?(?:\s*" + _PLUS_MINUS + r"\s*\d+%)?\s+){0,3}[+-]?[\d.]+%?"
                              r"(?:\s*" + _PLUS_MINUS + r"\s*\d+%)?$")
_LKP_METRIC_TAIL = re.compile(r"^perf-profile\.[\w.$-]+\s*$")
_GRAPH_CHAIN_COLUMN = 11   # perf prints a chain's names 10 columns right of their rail
_SYSLOG = re.compile(r"^" + _SYSLOG_HEAD)   # any time stamp the kernel-log reader knows (rule N2)
# The register dump of an x86_64 oops / soft lockup: `FS:  00007f..(0000) GS:ffff88..(0000) knlGS:0000..`
# and 2.6.x's `Process java (pid: 30117, threadinfo ffff88.., task ffff88..)`, cut before their last field.
_FS_HEAD = re.compile(r"^\s*FS:\s+[0-9a-f]+\(\w+\)\s+GS:\s*[0-9a-f]+\(\w+\)$")
_KNLGS_TAIL = re.compile(r"^knlGS:\s*[0-9a-f]+\s*$")
_PROCESS_HEAD = re.compile(r"^\s*Process \S.* \(pid: \d+, (?:ti|threadinfo):?\s*[0-9a-f]+,? task:?$")
_TASK_TAIL = re.compile(r"^[0-9a-f]{8,16}\)(?:\s*$|,)")
# Whole records of a trace: a crash `bt` frame, a kernel frame with its offset and size, a row of
# raw stack words (`ffff88043fc79a08 0000000000000082 ...`), the `Call Trace:` line, a traced event
# (`<idle>-0  [000]  412.118201: irq_handler_entry: irq=47 name=tsc2007`: events of one kind print
# equally long lines).
_WHOLE_RECORD = re.compile(r"^\s*(?:#\d+\s+\[[0-9a-f]+\]\s+\S+\s+at\s+[0-9a-f]+(?:\s+\[[\w.-]+\])?(?:\s+\(via\s+\S+\))?"
                           r"|.*\S\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[[\w.-]+\])?"
                           r"|(?:<d>\s*)?[0-9a-f]{16}(?:\s+[0-9a-f]{16})+|Call Trace:"
                           r"|\S.*?[-\s]\d+\s+(?:\(\s*\d+\)\s+)?\[\d{1,4}\]\s.*?\d+\.\d+:\s+[\w:]+:\s.*)\s*$")


def _two_records(head: str, tail: str) -> bool:
    return bool(_WHOLE_RECORD.match(head) and _WHOLE_RECORD.match(tail))


def rejoin(lines: List[str], hard_cut: bool = True) -> List[str]:
    """The lines with wrapped tails joined to their heads (hard_cut: and lines cut at a fixed
    width, when the paste looks cut)."""
    hard = _hard_width(lines) if hard_cut else 0
    out: List[str] = []
    segment = 0                            # length of the last physical line joined into out[-1]
    for index, line in enumerate(lines):
        joined = None
        if out and hard and segment == hard and line.strip() and not _two_records(out[-1], line):
            joined = out[-1] + line        # cut at a fixed width, wherever it fell
        elif out and line[:1] not in ("", " ", "\t"):
            joined = _join(out, line)
            if joined is None and _log_tail(out[-1], lines, index):
                joined = out[-1].rstrip() + " " + line
        if joined is None:
            out.append(line)
        else:
            out[-1] = joined
        segment = len(line)
    return out


def looks_cut(lines: List[str]) -> bool:
    """Whether `rejoin` takes the paste for one cut at a fixed width (so `hard_cut` matters)."""
    return bool(_hard_width(lines))


def _hard_width(lines: List[str]) -> int:
    """The width a paste was cut at (`fold -w 80`, a web archive's fixed columns): several
    lines exactly as long as the longest one, each followed by more text. 0 when not cut."""
    width = max((len(line) for line in lines), default=0)
    if not 60 <= width <= MAX_HARD_WRAPPED:
        return 0
    full = [len(following) for line, following in zip(lines, lines[1:])
            if len(line) == width and following.strip() and not _two_records(line, following)]
    tails = sum(1 for length in full if length < width)
    # A fixed-width table (mpstat, ps) has many full lines too, but each followed by another full one.
    return width if tails >= 3 and tails > len(full) - tails else 0


def _log_tail(head: str, lines: List[str], index: int) -> bool:
    """Every line of a syslog carries `Mon dd hh:mm:ss host kernel:`: one without it, between
    two that have it (a long line such as `Modules linked in:` wraps into many), is the tail of
    the line above."""
    if not _SYSLOG.match(head) or _SYSLOG.match(lines[index]) or len(head) > MAX_JOINED:
        return False
    for following in lines[index + 1:index + MAX_LOG_TAILS]:
        if not following.strip():
            return False
        if _SYSLOG.match(following):
            return True
    return False


MAX_LOG_TAILS = 16         # a module list of a thousand characters, wrapped at 72 columns
MAX_JOINED = 2000          # tool lines are shorter; longer ones are not worth a regex pass
MAX_HARD_WRAPPED = 400


# A perf c2c Pareto row cut by a mail client (rule BM4): its head is the share columns, then only the
# offset, node, PA count, code address and cycle columns (hex or decimal), perhaps the `[k]` / `[.]` mark;
# its tails carry the rest of those columns, the mark and symbol, then the object, source line and nodes.
_C2C_ROW_HEAD = re.compile(r"^\s*(?:\d+(?:[.,]\d+)?%\s+){2,}0x[0-9a-f]+(?:\s+(?:0x)?[0-9a-f]+)*(?:\s+\[[k.]\])?\s*$")
_C2C_ROW_TAIL = re.compile(r"^(?:(?:0x)?[0-9a-f]+\s+)*(?:\[[k.]\](?:\s|$)|(?:0x)?[0-9a-f]+\s*$)|^[A-Za-z_.][\w.$:]*(?:\s|$)")
_C2C_REST_TAIL = re.compile(r"^(?![=#-])[^%\s]+(?:\s+[^%\s]+)*\s*$")      # not a rule or a comment


def _c2c_tail(head: str, tail: str) -> bool:
    """Whether `tail` goes on a c2c Pareto row cut before it (rule BM4): the row's head has no symbol
    yet and the tail goes on with its columns (or the symbol after a mark the head ends with), or the
    head is a whole row and the tail holds no share (its object, `source:line` and node columns).

    >>> _c2c_tail("    58.82%   61.22%    0.00%    0.00%    0x0     0       1  0x4019f2",
    ...           "402       201       188     8802         2  [.] ring_consume       msgbus")
    True
    >>> _c2c_tail("    58.82%   61.22%    0.00%    0.00%    0x0  0  1  0x4019f2  402  2  [.] ring_consume  msgbus", "ring.h:88     0")
    True
    >>> _c2c_tail("    58.82%   61.22%    0.00%    0.00%    0x0  0  1  0x4019f2  402  2  [.] ring_consume  msgbus",
    ...           "41.18%   38.78%  100.00%    0.00%   0x40     0       1  0x401a71")
    False
    """
    if _C2C_ROW_HEAD.match(head):
        marked = head.rstrip().endswith("]")
        return bool(_C2C_ROW_TAIL.match(tail)) and (marked or not re.match(r"^[A-Za-z_]", tail))
    return bool(_C2C_ROW.match(head) and _C2C_REST_TAIL.match(tail))


def _join(out: List[str], tail: str) -> Optional[str]:
    head = out[-1]
    stripped = head.rstrip()
    if len(head) > MAX_JOINED or len(tail) > MAX_JOINED:
        return None
    if "%" in stripped and _c2c_tail(stripped, tail):
        return stripped + "  " + tail.rstrip()
    if _HEAD_PCT.search(stripped) and _TAIL_NAME.match(tail):
        return stripped + tail
    if _HEAD_PCT_DASHES.search(stripped) and _NAME_START.match(tail):
        return stripped + tail
    if _TAIL_BRANCH.match(tail) and _RAILS.match(head):
        return _place_branch(out, tail)
    if _RAILS.match(head) and stripped.endswith("|") and _WORD_TAIL.match(tail.rstrip()):
        column = _chain_column(out[-2]) if len(out) >= 2 else 0
        if column < len(stripped) + 1:
            column = len(stripped) - 1 + _GRAPH_CHAIN_COLUMN
        return stripped.ljust(column) + tail.rstrip()
    if (_LOCK_ROW_HEAD.match(stripped) and _LOCK_CALLER.match(tail.rstrip())) or \
            (_LOCK_HEADER_HEAD.match(stripped) and _WORD_TAIL.match(tail.rstrip())):
        return stripped + "   " + tail.rstrip()
    if _LKP_VALUES_HEAD.match(stripped) and _LKP_METRIC_TAIL.match(tail):
        return stripped + "  " + tail.rstrip()
    if _FOLDED_UNCOUNTED.match(stripped) and not re.search(r"\s\d+$", stripped) and _COUNT_TAIL.match(tail):
        return stripped + " " + tail.strip()
    if _FOLDED_SHARE_HEAD.match(stripped) and _FOLDED_CHAIN_TAIL.match(tail):
        return stripped + " " + tail.rstrip()
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
    if (_FS_HEAD.match(stripped) and _KNLGS_TAIL.match(tail)) or (_PROCESS_HEAD.match(stripped) and _TASK_TAIL.match(tail)):
        return stripped + " " + tail
    if stripped.endswith("]") and _MARK_END.search(stripped) and (_WORD_TAIL.match(tail.rstrip())
                                                                   or _SYMBOL_COLUMNS_TAIL.match(tail)):
        return stripped + " " + tail
    if _MARK_TAIL.match(tail) and _ENTRY_HEAD.match(stripped) and "[" not in stripped[-4:]:
        return head + tail if head.endswith(" ") else stripped + " " + tail
    if _HEADER_HEAD.match(stripped) and _HEADER_TAIL.match(tail):
        return head + tail if head.endswith(" ") else stripped + " " + tail
    return None


_CHAIN_NAME = re.compile(r"^(?:[\s|]*(?:--" + PCT + r"--|---)|[\s|]*(?=[A-Za-z_]))")


def _chain_column(line: str) -> int:
    """The column where a graph line's name starts (a branch `--N%--name`, a root `---name`, a
    continuation below them); 0 when the line names nothing. A name a mail client carried over
    from under a line of rails continues the chain printed just above it, so it goes back to that
    chain's column (rule L5; realworld-probe-l case 1194): `|` and its padding alone on the head line
    do not say how deep it was.

    >>> _chain_column("   |          --46.88%--native_flush_tlb_multi"), _chain_column("   |   |")
    (24, 0)
    """
    match = _CHAIN_NAME.match(line)
    if not match or not re.match(r"[A-Za-z_]", line[match.end():]):
        return 0
    return match.end()


def _place_branch(out: List[str], tail: str) -> str:
    """A branch cut after its rails: its rail is the last `|` of the separator line above."""
    head = out[-1].rstrip()
    separator = out[-2].rstrip() if len(out) >= 2 else ""
    rail = separator.rfind("|") if _RAILS.match(separator) else -1
    if rail < len(head):
        return head + " " + tail
    return head.ljust(rail + 1) + tail


# A line that starts a record of its own in some tool's output: a count or share followed by
# column padding and a name (a row of numbers alone is the end of a longer row), a timestamp
# `[ 12.3]` or address `[<ffff...>]`, a header `#`, a map `@[`, a prompt, quoting, rails or
# branches, a `<IRQ>` marker, a label (`Call Trace:`).
_RECORD_START = re.compile(r"^(?:\d[\d.,]*%?\s{2,}(?=.*[A-Za-z_])|[#@$<>|=+*-]|\[\s*\d+\.\d+\]|\[<[0-9a-f]|[A-Za-z][\w ()/.-]*:\s*$)")
MAX_WORD_WRAPPED = 100     # the widest line of a mail or chat that wraps words
MAX_WORD_WRAPPED_LINES = 5000
WRAP_SLACK = 24            # a table's padding before the carried-over word is dropped with it


def rejoin_words(lines: List[str]) -> List[str]:
    """The lines as they were before a mail client wrapped words at its width: a line at
    column 0 that does not start a record of its own is the tail of a line above that was
    full (its last word, with the padding before it, would not fit). The padding is lost: the
    two parts are joined by one space. Only for pastes whose widest line of several words is a
    mail's width (a word longer than the width stays alone on its line).

    >>> rejoin_words(["1843120  31.2466  vmlinux                  vmlinux" + " " * 21, ".text.lock.spinlock",
    ...               "702113   11.9031  vmlinux                  vmlinux"])[0].split()
    ['1843120', '31.2466', 'vmlinux', 'vmlinux', '.text.lock.spinlock']
    """
    if len(lines) > MAX_WORD_WRAPPED_LINES:
        return lines
    width = _word_wrap_width(lines)
    if not 60 <= width <= MAX_WORD_WRAPPED:
        return lines
    out: List[str] = []
    segment = 0
    for line in lines:
        if out and _carried_over(out[-1], line) and segment + 1 + len(line.split()[0]) > width - WRAP_SLACK:
            out[-1] = out[-1].rstrip() + " " + line
        else:
            out.append(line)
        segment = len(line.rstrip())
    return out


MIN_WRAPPED_ROWS = 3


def _word_wrap_width(lines: List[str]) -> int:
    """The width a mail client wrapped words at: the widest line of several words; or, when every
    row of a padded table was wrapped and so no line is a mail's width any more, the widest row
    with its carried-over word back (rule AL1; realworld-probe-al case 1692: an OProfile listing in
    timer mode, whose banner is short, quoted and wrapped at 72 columns). Those rows count only
    when at least three, and most, are wider joined than every line left (a row's padding before
    its carried word is lost, so a short carried word can leave it narrower): a table whose rows
    merely precede short lines is not wrapped.

    >>> row = "210476   27.8931  vmlinux                  vmlinux"
    >>> _word_wrap_width(["CPU: CPU with timer interrupt, speed 0 MHz (estimated)"] + [row, "do_gettimeoffset_pm"] * 3)
    70
    >>> _word_wrap_width(["CPU: CPU with timer interrupt, speed 0 MHz (estimated)", row, "done"])
    54
    """
    width = max((len(line) for line in lines if len(line.split()) > 1), default=0)
    if width >= 60:
        return width
    joined = [len(head.rstrip()) + 1 + len(line.split()[0]) for head, line in zip(lines, lines[1:])
              if "  " in head.strip() and _carried_over(head, line)]
    wider = [length for length in joined if length > width]
    if len(wider) >= MIN_WRAPPED_ROWS and 2 * len(wider) > len(joined):
        return max(wider)
    return width


def _carried_over(head: str, line: str) -> bool:
    """Whether line can be the tail of head: it starts at column 0 and no record starts with
    it, and it is padded into columns only when head is (a table's row is padded throughout;
    prose above a table is not)."""
    if not head.strip() or not line.strip() or line[0] in " \t" or _RECORD_START.match(line):
        return False
    return "  " not in line.strip() or "  " in head.strip()
