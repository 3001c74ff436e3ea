"""Helpers every evidence parser shares: tolerant line splitting, numbers in any locale, notes.

Parsers never raise on bad input. Whatever they cannot read goes into the `notes` list of their
result (the facts layer turns notes into data_quality sentences).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Tuple

MAX_LINE = 8192       # longer lines are garbage (or hostile): skipped with a note
MAX_LINES = 1_000_000  # bound the work on a huge file (capture caps mpstat at 32 MiB, ~330k lines)
MAX_NOTES = 20



def lines(text: Optional[str], notes: List[str]) -> List[str]:
    """Split into lines without NULs; drop over-long lines and stop at MAX_LINES (with a note).

    Examples:
        >>> notes = []
        >>> lines("a\\x00b\\n" + "x" * 9000 + "\\nc", notes)
        ['ab', 'c']
        >>> notes
        ['skipped 1 line(s) longer than 8192 characters']
    """
    if not text:
        return []
    if not isinstance(text, str):
        text = str(text)
    out, long_lines = [], 0
    for count, line in enumerate(text.replace("\x00", "").splitlines()):
        if count >= MAX_LINES:
            add_note(notes, f"stopped after {MAX_LINES} lines")
            break
        if len(line) > MAX_LINE:
            long_lines += 1
            continue
        out.append(line)
    if long_lines:
        add_note(notes, f"skipped {long_lines} line(s) longer than {MAX_LINE} characters")
    return out


def add_note(notes: List[str], sentence: str) -> None:
    """Append a note once; keep the list short."""
    if sentence in notes:
        return
    if len(notes) < MAX_NOTES:
        notes.append(sentence)
    elif len(notes) == MAX_NOTES:
        notes.append("more problems not listed")


def number(token: str) -> Optional[float]:
    """A float from `12.5`, `12,5` (decimal comma locales) or `-3`; None when not a finite number.

    Examples:
        >>> number("59,09"), number("1.5e3"), number("n/a"), number("nan"), number("1_0")
        (59.09, 1500.0, None, None, None)
    """
    if "_" in token:  # float() accepts digit separators; no tool prints them
        return None
    try:
        value = float(token.replace(",", "."))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def integer(token: str) -> Optional[int]:
    """An int from a decimal token, None otherwise.

    Examples:
        >>> integer("42"), integer("-1"), integer("4.5"), integer("")
        (42, -1, None, None)
    """
    token = token.strip()
    if re.fullmatch(r"[+-]?\d{1,40}", token):
        return int(token)
    return None


def scalar(value: str):
    """int if the text is an integer, else the stripped text.

    Examples:
        >>> scalar(" 1 "), scalar("tsc")
        (1, 'tsc')
    """
    as_int = integer(value)
    return value.strip() if as_int is None else as_int


def cpu_list(text: str) -> Optional[List[int]]:
    """Expand a CPU list (`0-3,8`) into ints; None when unparseable or absurd.

    Examples:
        >>> cpu_list("0-2,8"), cpu_list("5"), cpu_list("x")
        ([0, 1, 2, 8], [5], None)
    """
    cpus: List[int] = []
    for part in text.strip().split(","):
        match = re.fullmatch(r"(\d{1,5})(?:-(\d{1,5}))?", part.strip())
        if not match:
            return None
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if high < low or high - low > 8192:
            return None
        cpus.extend(range(low, high + 1))
    return cpus


def key_value_lines(text: Optional[str], notes: List[str], sep: str = ":") -> Dict[str, str]:
    """`key<sep> value` lines into a dict (first separator splits); other lines are noted."""
    result: Dict[str, str] = {}
    bad = 0
    for line in lines(text, notes):
        if not line.strip():
            continue
        key, found, value = line.partition(sep)
        if not found or not key.strip():
            bad += 1
            continue
        result[key.strip()] = value.strip()
    if bad:
        add_note(notes, f"{bad} line(s) without '{sep}' ignored")
    return result


def per_cpu_rows(text: Optional[str], notes: List[str],
                 source: str) -> Tuple[List[str], List[Tuple[str, List[int], List[str]]]]:
    """The CPU header and the rows of a `/proc` table counted per CPU (/proc/interrupts,
    /proc/softirqs): (cpus, [(label, counts, rest)]), `counts` the leading decimal columns (at most
    one per CPU), `rest` the words after them; unreadable lines and a missing header are noted.

    Examples:
        >>> per_cpu_rows("   CPU0  CPU1\\n 38:  7  3  PCI-MSI eth0\\nNET_RX: 9 1\\n", [], "x")
        (['CPU0', 'CPU1'], [('38', [7, 3], ['PCI-MSI', 'eth0']), ('NET_RX', [9, 1], [])])
    """
    cpus: List[str] = []
    rows: List[Tuple[str, List[int], List[str]]] = []
    for line in lines(text, notes):
        tokens = line.split()
        if tokens and all(t.startswith("CPU") for t in tokens):
            cpus = tokens
            continue
        if not tokens or not tokens[0].endswith(":"):
            if tokens:
                add_note(notes, f"{source}: unreadable line(s) ignored")
            continue
        index = 1
        while index < len(tokens) and index <= max(len(cpus), 1) and tokens[index].isdecimal():
            index += 1
        rows.append((tokens[0][:-1], [int(t) for t in tokens[1:index]], tokens[index:]))
    if not cpus and (text or "").strip():
        add_note(notes, f"{source}: no CPU header line (unknown format)")
    return cpus, rows


def hex_int(token: str) -> Optional[int]:
    """int from a hex token (softnet_stat), None otherwise.

    Examples:
        >>> hex_int("0000001f"), hex_int("zz")
        (31, None)
    """
    if re.fullmatch(r"[0-9a-fA-F]{1,16}", token or ""):
        return int(token, 16)
    return None
