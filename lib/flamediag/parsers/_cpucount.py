"""Where the tools print the number of CPUs: one home for the patterns that the evidence parsers
(mpstat's banner, lscpu's `CPU(s):` field) and the paste rule CF1 (`paste/irqtime.py`) both read.

A parser reads one collector's whole output, where sysstat's banner starts its line. A paste is
scanned line by line, any line counting (a sar, pidstat or iostat banner as well as mpstat's), each
possibly indented or quoted in mail (`> `, `| `) and standing alone on its line.

    >>> SYSSTAT_BANNER.match("Linux 2.6.32-358.el6.x86_64 (ip-10-0-0-1)   05/12/2014  _x86_64_  (4 CPU)")["n"]
    '4'
    >>> def counts(line): return [(found["n"], name) for found, name in
    ...                           ((pattern.search(line), name) for pattern, name in PASTE_COUNTS) if found]
    >>> counts("> Linux 5.10.0-9-amd64 (host)  11/27/2021  _x86_64_  (12 CPU)")
    [('12', "sysstat's banner")]
    >>> counts("CPU(s):                                  2"), counts("On-line CPU(s) list:   0,1")
    ([('2', 'lscpu')], [])
    >>> counts("# nrcpus online : 12")
    [('12', "perf report's header")]
    >>> counts("   PerfTop:    1509 irqs/sec  kernel:65.2%  exact:  0.0% [4000Hz cycles],  (all, 12 CPUs)")
    [('12', "perf top's header")]
"""
from __future__ import annotations

import re

# sysstat's banner (mpstat, sar, pidstat, iostat): `Linux 5.10.0-9-amd64 (host)  11/27/2021  _x86_64_  (12 CPU)`,
# every CPU the system has, offline ones too
SYSSTAT = r"Linux\s+\S+.*\((?P<n>\d+) CPU\)"
# the banner at the start of a line of mpstat's own output (parsers/mpstat.py)
SYSSTAT_BANNER = re.compile("^" + SYSSTAT)
# lscpu's field of the online CPUs, `CPU(s):  12` (parsers/lscpu.py reads its value)
LSCPU_FIELD = "CPU(s)"

# before a count on a pasted line: indentation, a mail quote marker
_QUOTED = r"^[\s>|]*"
# where the tools print the CPU count, on a line of a paste (rule CF1), and what says so
PASTE_COUNTS = (
    (re.compile(_QUOTED + SYSSTAT + r"\s*$"), "sysstat's banner"),
    (re.compile(r"\(all,\s*(?P<n>\d+)\s+CPUs?\)"), "perf top's header"),
    (re.compile(_QUOTED + r"#\s*nrcpus online\s*:\s*(?P<n>\d+)\s*$"), "perf report's header"),
    (re.compile(_QUOTED + re.escape(LSCPU_FIELD) + r":\s*(?P<n>\d+)\s*$"), "lscpu"),
)
