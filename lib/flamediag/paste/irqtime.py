"""Rules CF1-CF2: the interrupt time of the whole machine, in CPUs, where a paste gives both its share
and a bound on the number of CPUs.

`top`'s summary line (`%Cpu(s): ... 0.0 hi,  3.6 si`) and mpstat's or `sar -u ALL`'s `all` row (`%irq`,
`%soft`) are shares of the time of every online CPU (/proc/stat's `cpu` line), not of one. Times the
number of CPUs they are CPUs' worth of hard and soft interrupt time in all, and one CPU's receive
softirq can never take more than that. The count must be an upper bound for that direction: a
`ksoftirqd/5` or `CPU 5` name only says there are six CPUs or more, which bounds nothing here.

Upper bounds a ticket gives (rule CF1, counts the tools print): sysstat's banner (`Linux 5.10.0-9-amd64
(host)  11/27/2021  _x86_64_  (12 CPU)`, every CPU the system has, offline ones too), perf top's header
(`(all, 12 CPUs)`, the online CPUs it samples), perf report's `# nrcpus online : 12` and lscpu's
`CPU(s):  12` (the patterns: parsers/_cpucount.py, shared with the mpstat and lscpu parsers). Rule CF2:
an unbound kworker's name (`kworker/u24:3`) carries its worker pool's id, and the kernel numbers the
per-CPU pools first, two for each possible CPU (normal and high priority; 6.9 added two BH pools more),
so an unbound pool's id is at least twice the CPUs: `u24` means 12 CPUs at most.

Receive work run in a NAPI kthread (`napi/eth0-...`, `napi_threaded_poll`, 5.12+) is process time
(%sys), not softirq: where a paste shows one, nothing is said.

    >>> cpus, text = interrupt_cpus([["%Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,  3.6 si,  0.0 st",
    ...                               "   0.36%  kworker/u24:3-f  [k] ext4_bio_write_page"]])
    >>> round(cpus, 3), text
    (0.432, "top's %Cpu(s) line gives 3.6 % of every CPU's time to hard and soft interrupts, on 12 CPUs at most (an unbound kworker's pool u24): 43 % of one CPU in all")
    >>> interrupt_cpus([["%Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,  3.6 si,  0.0 st",
    ...                  "     22 root      20   0       0      0      0 S   4.0   0.0   0:06.13 ksoftirqd/5"]]) is None
    True
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..parsers import mpstat
from ..parsers._cpucount import PASTE_COUNTS
from ..text import pct
from .sections import TOP_COLUMNS, TOP_FIELD

# procps-ng `%Cpu(s):  2.9 us, ... 0.0 hi,  3.6 si`, procps 3.2 `Cpu(s):  2.9%us, ... 3.6%si`, BusyBox
# `CPU:   0% usr   0% sys ...   0% irq   3% sirq` (no CPU number: the whole machine)
TOP_SUMMARY = re.compile(r"^[\s>|]*(?:%?Cpu\(s\)|CPU)\s*:(?P<rest>.*)$", re.IGNORECASE)
# rule CF2: an unbound workqueue worker, `kworker/u<pool id>:<worker id>` (3.9+)
UNBOUND_WORKER = re.compile(r"\bkworker/u(?P<pool>\d+):\d+")
THREADED_NAPI = re.compile(r"\bnapi_threaded_poll\b|\bnapi/\S")


def interrupt_cpus(layouts: Iterable[Sequence[str]], sections: Optional[Dict[str, str]] = None
                   ) -> Optional[Tuple[float, str]]:
    """(CPUs' worth of hard and soft interrupt time over the whole machine, at most; what says so)
    from the first of the paste's layouts (`unwrap.layouts`) that gives it, or None when the paste
    lacks the share, an upper bound on the CPUs, or shows threaded NAPI. The mpstat section is the
    same in every layout, so it is read once."""
    mpstat_shares = _mpstat_shares((sections or {}).get("mpstat"))
    return next(filter(None, (_interrupt_cpus(lines, mpstat_shares) for lines in layouts)), None)


def _interrupt_cpus(lines: Sequence[str], mpstat_shares: List[Tuple[float, str]]) -> Optional[Tuple[float, str]]:
    if any(THREADED_NAPI.search(line) for line in lines):
        return None
    share = _highest_share(lines, mpstat_shares)
    bound = cpu_bound(lines)
    if share is None or bound is None:
        return None
    (percent, where), (cpus, why) = share, bound
    total = percent / 100 * cpus
    return total, (f"{where} gives {percent:g} % of every CPU's time to hard and soft interrupts, on {cpus} CPUs at "
                   f"most ({why}): {pct(total)} of one CPU in all")


def cpu_bound(lines: Iterable[str]) -> Optional[Tuple[int, str]]:
    """The most CPUs the host can have, and what says so: the largest count printed (two hosts' tools in
    one paste leave the larger), else the bound of the lowest unbound kworker pool seen.

    >>> cpu_bound(["Linux 3.10.0-1160.el7.x86_64 (db1)  03/02/2021  _x86_64_  (8 CPU)"])
    (8, "sysstat's banner")
    >>> cpu_bound(["kworker/u16:2", "kworker/u17:0"]), cpu_bound(["ksoftirqd/5", "kworker/3:1H"])
    ((8, "an unbound kworker's pool u16"), None)
    """
    counts: List[Tuple[int, str]] = []
    pools: List[int] = []
    for line in lines:
        for pattern, name in PASTE_COUNTS:      # where the tools print the CPU count (rule CF1)
            found = pattern.search(line)
            if found and int(found["n"]) > 0:
                counts.append((int(found["n"]), name))
        pools += [int(found["pool"]) for found in UNBOUND_WORKER.finditer(line)]
    if pools and min(pools) >= 2:
        counts.append((min(pools) // 2, f"an unbound kworker's pool u{min(pools)}"))
    return max(counts, key=lambda count: count[0]) if counts else None


def _highest_share(lines: Sequence[str], mpstat_shares: List[Tuple[float, str]]) -> Optional[Tuple[float, str]]:
    """The highest machine-wide hard + soft interrupt share (percent) pasted: top's summary lines, the
    `all` rows of mpstat or `sar -u ALL` (`mpstat_shares`). The highest, so that no reading can be larger."""
    readings: List[Tuple[float, str]] = list(mpstat_shares)
    for index, line in enumerate(lines):
        found = TOP_SUMMARY.match(line)
        rest = found["rest"] + " " + _wrapped_tail(lines, index) if found else ""
        fields = found and {TOP_COLUMNS[name]: float(value.replace(",", ".")) for value, name in
                            TOP_FIELD.findall(rest)}
        if fields and "soft" in fields and "idle" in fields:
            readings.append((fields["soft"] + fields.get("irq", 0.0), "top's %Cpu(s) line"))
    return max(readings, key=lambda reading: reading[0]) if readings else None


def _mpstat_shares(mpstat_text: Optional[str]) -> List[Tuple[float, str]]:
    """The hard + soft interrupt share (percent) of each `all` row of the paste's mpstat section."""
    if not mpstat_text:
        return []
    parsed = mpstat.parse(mpstat_text)
    rows = [interval["cpus"].get("all") for interval in parsed["intervals"]]
    rows.append(parsed["reported_average"].get("all"))
    return [(row["soft"] + row.get("irq", 0.0), "mpstat's all row") for row in rows if row and "soft" in row]


def _wrapped_tail(lines: Sequence[str], index: int) -> str:
    """The fields a mail client wrapped off the end of top's summary line onto the next one
    (`3.6 si,  0.0 st`, after any quote marker), or "".

    >>> _wrapped_tail(["> %Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,", "3.6 si,  0.0 st"], 0)
    '3.6 si,  0.0 st'
    >>> _wrapped_tail(["> %Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,  3.6", "si,  0.0 st"], 0)
    'si,  0.0 st'
    >>> _wrapped_tail(["%Cpu(s):  2.9 us,  2.3 sy,  0.0 ni, 90.8 id,  0.4 wa,  0.0 hi,  3.6 si,  0.0 st",
    ...                "MiB Mem :  31828.6 total"], 0)
    ''
    """
    if index + 1 >= len(lines) or "si" in {name for _, name in TOP_FIELD.findall(lines[index])} \
            or "sirq" in {name for _, name in TOP_FIELD.findall(lines[index])}:
        return ""
    tail = re.sub(r"^[\s>|]*", "", lines[index + 1])
    words = re.findall(r"[A-Za-z]+", tail)
    return tail if words and all(word in TOP_COLUMNS for word in words) and re.fullmatch(r"[\w\s.,%]*", tail) else ""

