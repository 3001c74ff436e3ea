"""`perf diff` output: two runs in one table (rule S1).

    # Event 'cycles'
    #
    # Baseline  Delta Abs  Shared Object      Symbol
    # ........  .........  .................  ..............
    #
        49.61%    -45.87%  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
         4.12%     +6.02%  [kernel.kallsyms]  [k] clear_page_c_e
                   +2.35%  [kernel.kallsyms]  [k] shrink_page_list     (only in the second run)

`Baseline` is the first data file's share of each symbol; the column after it says how the
second run differs: `Delta` / `Delta Abs` (every perf since 2.6.3x: the second run's share minus
the baseline, in points; `Displ`, 2.6.3x's rank change, is passed over), `Ratio` (`--compute
ratio`: the second run's period over the baseline's, so its share is the baseline times the ratio)
or `Weighted diff` (`--compute wdiff`: a weighted difference of periods, from which no share can be
taken back). With more than two data files the last column is read (the newest run). A row with
no value in the second column is a symbol whose change perf did not print: it keeps the baseline.

Each column is a flat profile. Like two pasted runs (doc/paste.md) and an LKP comparison (rule
E6), the run read is the one with the more busy kernel time (the baseline on a tie): a fix's
commit diffs the broken kernel as the baseline, a regression report diffs the good kernel as the
baseline and the new cost shows in the deltas.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple, Union

from .callgraph import Entry, flat_block
from .common import Block, Miss, clean_name, plural
from .perfreport import MARK, PCT, number
from .profiles import busiest_run

HEADER = re.compile(r"^\s*(?:#\s*)?Baseline\b(?:/0)?\s+(?P<cols>.*?)\s+(?:Shared Object|Command|Symbol)\b")
UNSIGNED = re.compile(rf"^{PCT}%$")
SIGNED = re.compile(rf"^[+-]{PCT}%$")
RATIO = re.compile(rf"^{PCT}$")
VALUE = re.compile(rf"^[+-]?{PCT}%?$")
# A headerless row: a baseline share (or none) then a signed delta, then DSO and `[k]`/`[.]` symbol.
BARE_ROW = re.compile(rf"^\s*(?:{PCT}%\s+)?[+-]{PCT}%\s+\S.*?\s\[[k.]\]\s+\S")


def starts_diff(line: str) -> bool:
    return bool(HEADER.match(line) or ("%" in line and BARE_ROW.match(line)))


def _kind(cols: str) -> str:
    lowered = cols.lower()
    if "ratio" in lowered:
        return "ratio"
    if "weighted" in lowered or "wdiff" in lowered:
        return "wdiff"
    return "delta"


def _row(line: str, kind: str) -> Optional[Tuple[Optional[float], Optional[float], str, str, str]]:
    """(baseline share or None, the second run's share or None, dso, marker, symbol) of a row."""
    mark = MARK.search(line)
    if not mark:
        return None
    tokens = line[:mark.start()].split()
    values: List[str] = []
    while tokens and VALUE.match(tokens[0]):
        values.append(tokens.pop(0))
    symbol = re.split(r"\s{2,}", line[mark.end():].strip(), 1)[0]
    if not values or not symbol or len(tokens) > 2:
        return None
    base = number(values[0][:-1]) if UNSIGNED.match(values[0]) else None
    rest = values[1:] if base is not None else values
    second: Optional[float] = None
    if kind == "delta":
        deltas = [number(v[:-1]) for v in rest if SIGNED.match(v)]
        if deltas:
            second = max(0.0, (base or 0.0) + deltas[-1])
    elif kind == "ratio":
        ratios = [number(v) for v in rest if RATIO.match(v)]
        if ratios and base is not None:
            second = base * ratios[-1]
    if base is None and second is None:
        return None
    return base, second, (tokens[-1] if tokens else ""), mark["mark"], clean_name(symbol)


def read_diff(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """The two runs of a perf diff table; the one with the more busy kernel time, as a flat profile."""
    header = HEADER.match(lines[start])
    kind = _kind(header["cols"]) if header else "delta"
    index = start + 1 if header else start
    rows = []
    end = index
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.lstrip().startswith("#"):
            if rows and not _row_follows(lines, index, kind):
                break
            index += 1
            continue
        row = _row(line, kind)
        if row is None:
            break
        rows.append(row)
        index += 1
        end = index
    if not rows:
        return Miss(max(index, start + 1))
    runs = []
    for second_run in (False, True):
        entries = []
        for base, second, dso, mark, sym in rows:
            share = (second if second is not None else base) if second_run else base
            if share:
                entries.append(Entry(share, None, "", dso, mark, sym))
        runs.append(flat_block(entries, start, end, "perf-diff"))
    second_read = kind != "wdiff" and busiest_run(runs) == 1
    block = runs[1] if second_read else runs[0]
    block.header = True
    column = {"wdiff": "Weighted diff: only the baseline has shares", "ratio": "Ratio"}.get(kind, "Delta")
    if second_read:
        which = (f"the second run (baseline {'x ratio' if kind == 'ratio' else '+ delta'}): it shows more busy "
                 "kernel time than the baseline")
    else:
        which = "the baseline run" + ("" if kind == "wdiff" else ": it shows at least as much busy kernel time")
    block.notes[:] = [f"read perf diff: {plural(len(rows), 'symbol')} ({column} column); diagnosed {which}",
                      "flat profile: no ancestry, confidence capped at medium"]
    return block


def _row_follows(lines: Sequence[str], index: int, kind: str) -> bool:
    """A blank or `#` line inside the table: the table goes on when a row comes before prose."""
    for line in lines[index + 1:index + 4]:
        if line.strip() and not line.lstrip().startswith("#"):
            return _row(line, kind) is not None
    return False
