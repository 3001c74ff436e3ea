"""`perf c2c report --stdio`: the Shared Cache Line Distribution Pareto, code addresses that
touch each contended cache line, with their shares of the line's HITMs and stores.

    =================================================
          Shared Cache Line Distribution Pareto
    =================================================
      -------------------------------------------------------------
          0    13642    19392     9012       63  0xff1ddd3f0c8a3b00     (line: Num, then the counts
      -------------------------------------------------------------      of RmtHitm LclHitm L1Hit L1Miss)
       44.74%   49.78%    0.00%    0.00%   0x10  0  1  0xffffffffab170995  609 ... [k] rwsem_spin_on_owner ...

A row's weight is its share of each column times the line's count in that column (remote and
local HITMs, stores), summed over all lines: the accesses that bounced the line between
caches. Without the line's counts the row weighs the sum of its percentages. Rows carry no
call chain: the block is a flat profile, and its weights are cache-line accesses, not CPU
samples. The Shared Data Cache Line Table (no symbols) is passed over.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Union

from ..kernelnames import normalize
from ..profile import Frame
from .common import Block, Miss, finish, plural

TITLE = re.compile(r"^\s*(?:Shared Cache Line Distribution Pareto|Shared Data Cache Line Table|"
                   r"Trace Event Information|Global Shared Cache Line Event Information|c2c details)\s*$")
RULE = re.compile(r"^\s*[=-]{20,}\s*$")
LINE = re.compile(r"^\s*\d+(?P<counts>(?:\s+\d+){1,8})\s+0x[0-9a-f]{6,}\s*$")
ROW = re.compile(r"^\s*(?P<pcts>(?:\d+(?:[.,]\d+)?%\s+){2,})(?:0x)?[0-9a-f]+\s.*?\s\[(?P<mark>[k.])\]\s+"
                 r"(?P<sym>[^\s]+)")
SUMMARY = re.compile(r"^\s+[A-Za-z][\w ()/.,-]*?\s+:\s+\S")      # "  Total records         :  329219"
TABLE_ROW = re.compile(r"^\s*\d+\s+0x[0-9a-f]{6,}\s+\d")            # Shared Data Cache Line Table: no symbols


def starts_c2c(line: str) -> bool:
    return bool(TITLE.match(line) or ("%" in line and "[" in line and ROW.match(line)))


def read_c2c(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    block = Block("perf-c2c", start, start, flat=True, unit="hitm", header=bool(TITLE.match(lines[start])))
    counts: Optional[List[int]] = None
    index = start
    rows = 0
    while index < len(lines):
        line = lines[index]
        line_counts = LINE.match(line)
        row = ROW.match(line) if "%" in line else None
        if line_counts:
            counts = [int(n) for n in line_counts["counts"].split()]
        elif row:
            rows += 1
            _add_row(block, row, counts)
        elif not (not line.strip() or line.lstrip().startswith("#") or RULE.match(line) or TITLE.match(line)
                  or SUMMARY.match(line) or TABLE_ROW.match(line)):
            break
        index += 1
    return finish(block, start, index,
                  f"read perf c2c Pareto: {plural(rows, 'row')} (code addresses); weights are cache-line "
                  "accesses (HITM loads and stores on contended lines), not CPU samples",
                  "flat profile: no ancestry, confidence capped at medium")


def _add_row(block: Block, row: "re.Match[str]", counts: Optional[List[int]]) -> None:
    shares = [float(p.rstrip("%").replace(",", ".")) for p in row["pcts"].split()]
    if counts and len(counts) >= len(shares):
        weight = sum(share / 100 * count for share, count in zip(shares, counts))
    else:
        weight = sum(shares)
    if weight <= 0:
        return
    kind = "kernel" if row["mark"] == "k" else "user"
    block.stacks.append(((Frame(normalize(row["sym"]), kind),), weight, "", None, None))
