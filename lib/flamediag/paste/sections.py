"""Metric evidence pasted next to the stacks, cut into the collector texts that
facts.build_facts_from_sections() reads (same layout as in a bundle, doc/bundle-format.md).

    >>> text = "$ sysctl vm.zone_reclaim_mode\\nvm.zone_reclaim_mode = 1\\n"
    >>> find_sections(text.split("\\n"))[0]["sysctl"]
    'vm.zone_reclaim_mode = 1'
    >>> text = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:ondemand\\nCurrent active profile: balanced"
    >>> sorted(find_sections(text.split("\\n"))[0].items())
    [('cpufreq', 'cpu0: governor=ondemand'), ('tuned', 'Current active profile: balanced')]
"""
from __future__ import annotations

import re
from typing import Dict, List, Sequence, Set, Tuple

# sysstat 9+ heads the user column `%usr`; sysstat 5-8 (RHEL 4/5, SLES 10/11, Ubuntu <= 10.04) `%user` (rule K2)
MPSTAT_HEAD = re.compile(r"^\S+(?:\s+[AP]M)?\s+CPU\s+%us(?:e)?r\s+%nice\s+%sys")
MPSTAT_ROW = re.compile(r"^(?:\S+(?:\s+[AP]M)?|Average:)\s+(?:all|\d+)(?:\s+\d+[.,]\d+){5,}\s*$")
SYSSTAT_BANNER = re.compile(r"^Linux \S+ \(.*\)\s+\S+\s+_\w+_\s+\(\d+ CPU\)")
VMSTAT_HEAD = re.compile(r"^\s*-*procs-*\s+-+\s*memory|^\s*r\s+b\s+swpd\s+free")
VMSTAT_ROW = re.compile(r"^\s*\d+\s+\d+(?:\s+\d+){10,}(?:\s+\S+\s+\S+)?\s*$")
NUMA_LINE = re.compile(r"^\s*(?:available: \d+ nodes|node \d+ (?:cpus|size|free):|node distances:|node(?:\s+\d+)+\s*$|"
                       r"\d+:(?:\s+\d+)+\s*$|No distance information available)")
SYSCTL = re.compile(r"^\s*(?P<key>(?:vm|kernel|net|fs|dev|user)\.[\w.\-/]+)\s*=\s*(?P<value>\S.*?)\s*$")
PROC_SYS = re.compile(r"/proc/sys/(?P<path>[\w/\-.]+)\s*[:=]\s*(?P<value>\S+)\s*$")
CAT = re.compile(r"^\s*(?:[$#]|\S*[$#])\s*(?:sudo\s+)?cat\s+(?P<path>\S+)\s*$")
THP_PATH = re.compile(r"^\s*(?P<path>/sys/kernel/mm/transparent_hugepage/[\w/]+)\s*:\s*(?P<value>\S.*?)\s*$")
THP_VALUE = re.compile(r"^\s*(?:\[?\w[\w+]*\]?\s+){1,5}\[?\w[\w+]*\]?\s*$")
CLOCK = re.compile(r"^\s*(?P<key>current_clocksource|available_clocksource)\s*:\s*(?P<value>\S.*?)\s*$")
# `tuned-adm active`
TUNED = re.compile(r"^\s*Current active profile:\s*(?P<value>\S+)\s*$")
# `cpupower frequency-info`: `analyzing CPU 0:`, `  driver: intel_pstate`, then under `current policy:`
# `The governor "powersave" may decide which speed to use`; a mail client that quoted the indented
# line may wrap its last words onto the next line, so it is whole from `may` on (rule AE2)
GOVERNOR = re.compile(r'^\s*The governor "(?P<governor>[\w-]+)" may(?: decide(?: which(?: speed(?: to(?: use\b.*)?)?)?)?)?\s*$')
CPUPOWER_DRIVER = re.compile(r"^\s*driver:\s*(?P<driver>[\w-]+)\s*$")
CPUPOWER_CPU = re.compile(r"^\s*analyzing CPU (?P<cpu>\d+):\s*$")
SCALING_GOVERNOR = re.compile(r"/sys/devices/system/cpu/cpu(?P<cpu>\d+)/cpufreq/scaling_governor$")
# `grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor`
GOVERNOR_PATH = re.compile(r"^\s*/sys/devices/system/cpu/cpu(?P<cpu>\d+)/cpufreq/scaling_governor\s*:\s*(?P<value>[\w-]+)\s*$")


# /proc/softirqs: the `CPU0 CPU1 ...` header and `NET_RX: n n ...` rows (rule O3)
SOFTIRQ_HEAD = re.compile(r"^\s*(?:CPU\d+\s+)+CPU\d+\s*$")
SOFTIRQ_ROW = re.compile(r"^\s*(?P<vector>HI|TIMER|NET_TX|NET_RX|BLOCK|BLOCK_IOPOLL|IRQ_POLL|TASKLET|SCHED|HRTIMER|RCU):"
                         r"(?P<counts>(?:\s+\d+)+)\s*$")


def find_sections(lines: Sequence[str]) -> Tuple[Dict[str, str], Set[int]]:
    """Collector name -> text, and the line indexes used."""
    out: Dict[str, List[str]] = {}
    used: Set[int] = set()
    for name, finder in (("mpstat", _mpstat), ("vmstat", _vmstat), ("numactl.hardware", _numactl)):
        taken = finder(lines)
        if taken:
            out[name] = [lines[i] for i in taken]
            used.update(taken)
    if "mpstat" not in out:
        _top_cpus(lines, out)
    _settings(lines, out, used)
    _softirqs(lines, out, used)
    _turbostat(lines, out, used)
    return {name: "\n".join(text) for name, text in out.items()}, used


# `top`'s per-CPU lines (key 1), rule AZ1: procps-ng `%Cpu0  :  0.3 us,  1.0 sy, ... 98.7 si,  0.0 st`,
# procps 3.2 (RHEL 5/6) `Cpu0  :  0.3%us,  1.0%sy, ...`, BusyBox `CPU0:   0% usr   0% sys ... 100% sirq`
TOP_CPU = re.compile(r"^[\s>|]*%?cpu(?P<cpu>\d+)\s*:(?P<rest>.*)$", re.IGNORECASE)
TOP_FIELD = re.compile(r"(\d+(?:[.,]\d+)?)\s*%?\s*(usr|us|sys|sy|nic|ni|idle|id|io|wa|sirq|si|irq|hi|st)\b")
TOP_COLUMNS = {"us": "usr", "usr": "usr", "ni": "nice", "nic": "nice", "sy": "sys", "sys": "sys", "wa": "iowait",
               "io": "iowait", "hi": "irq", "irq": "irq", "si": "soft", "sirq": "soft", "st": "steal",
               "id": "idle", "idle": "idle"}
TOP_ORDER = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "idle")


def _top_cpus(lines: Sequence[str], out: Dict[str, List[str]]) -> None:
    """Rule AZ1: `top`'s per-CPU lines are one reading of the per-CPU utilisation mpstat gives, so
    a screen that shows two CPUs or more becomes the `mpstat` section (one interval per screen:
    a CPU seen again starts the next). A paste with a real mpstat keeps it; the all-CPU summary line
    (`%Cpu(s):`) is not per CPU and is left alone. The lines stay where they are (no stack reader
    takes them).

    >>> out = {}
    >>> _top_cpus(["CPU0:   0% usr   0% sys   0% nic   0% idle   0% io   0% irq 100% sirq",
    ...            "CPU1:   0% usr   2% sys   0% nic  96% idle   0% io   0% irq   1% sirq"], out)
    >>> out["mpstat"]
    ['top CPU %usr %nice %sys %iowait %irq %soft %steal %idle', 'top 0 0 0 0 0 0 100 0 0', 'top 1 0 0 2 0 0 1 0 96']
    >>> _top_cpus(["%Cpu0  :  0.3 us,  1.0 sy,  0.0 ni, 98.7 id"], out := {}); out    # one CPU, not a view
    {}
    """
    rows: List[str] = []
    for line in lines:
        found = TOP_CPU.match(line)
        fields = found and TOP_FIELD.findall(found["rest"])
        if not fields:
            continue
        values = {TOP_COLUMNS[name]: value.replace(",", ".") for value, name in fields}
        if len(values) < 5 or "sys" not in values or "soft" not in values:
            continue
        rows.append(f"top {int(found['cpu'])} " + " ".join(values.get(col, "0") for col in TOP_ORDER))
    if len({row.split()[1] for row in rows}) >= 2:
        out["mpstat"] = ["top CPU " + " ".join("%" + col for col in TOP_ORDER)] + rows


def _softirqs(lines: Sequence[str], out: Dict[str, List[str]], used: Set[int]) -> None:
    """/proc/softirqs read twice (`grep NET_RX /proc/softirqs; sleep 1; grep NET_RX /proc/softirqs`,
    or whole): the first and the last reading are the collector's start and end snapshots
    (`proc.softirqs@start`, `proc.softirqs`), so the per-CPU deltas of the window are known. One
    reading is counts since boot, no window: it is left alone. A reading without the CPU header
    (grep without `CPU`) gets the header of another reading, or CPU0..CPUn-1 by position.

    >>> found, used = find_sections(["      CPU0  CPU1", "NET_RX: 10  5", "$ sleep 1", "NET_RX: 910  6"])
    >>> found["proc.softirqs@start"].split("\\n"), found["proc.softirqs"].split("\\n"), sorted(used)
    (['      CPU0  CPU1', 'NET_RX: 10  5'], ['      CPU0  CPU1', 'NET_RX: 910  6'], [0, 1, 3])
    """
    readings: List[List[int]] = []
    header = None
    index = 0
    while index < len(lines):
        head = SOFTIRQ_HEAD.match(lines[index]) and index + 1 < len(lines) and SOFTIRQ_ROW.match(lines[index + 1])
        if head or SOFTIRQ_ROW.match(lines[index]):
            taken = [index]
            if head:
                header = header or lines[index]
                index += 1
                taken.append(index)
            vectors = {SOFTIRQ_ROW.match(lines[index])["vector"]}
            index += 1
            while index < len(lines) and SOFTIRQ_ROW.match(lines[index]) \
                    and SOFTIRQ_ROW.match(lines[index])["vector"] not in vectors:
                vectors.add(SOFTIRQ_ROW.match(lines[index])["vector"])
                taken.append(index)
                index += 1
            readings.append(taken)
            continue
        index += 1
    if len(readings) < 2:
        return
    first, last = readings[0], readings[-1]
    columns = len(SOFTIRQ_ROW.match(lines[last[-1]])["counts"].split())
    header = header or " ".join(f"CPU{n}" for n in range(columns))
    for name, reading in (("proc.softirqs@start", first), ("proc.softirqs", last)):
        out[name] = [header] + [lines[i] for i in reading if not SOFTIRQ_HEAD.match(lines[i])]
    for reading in readings:
        used.update(reading)


def _turbostat(lines: Sequence[str], out: Dict[str, List[str]], used: Set[int]) -> None:
    """Rule CK1: turbostat's tables (parsers/turbostat.py reads them): each header line with the rows
    under it, every interval, and the `turbostat ...` command line just above the first header (it
    gives the interval). The lines are evidence, so no reader takes them as a profile.

    >>> found, used = find_sections(["$ turbostat --interval 5", "CPU Avg_MHz Busy% Bzy_MHz TSC_MHz",
    ...                              "-  418 34.81 1201 2497", "0  452 37.62 1201 2497", "PerfTop: 100 irqs/sec"])
    >>> found["turbostat"].split("\\n")[0], sorted(used)
    ('$ turbostat --interval 5', [0, 1, 2, 3])
    """
    from ..parsers import turbostat
    taken: List[int] = []
    header = None
    for index, line in enumerate(lines):
        if turbostat.is_header(line):
            header = line
            if not taken:
                taken += [i for i in range(max(0, index - 2), index)
                          if turbostat.COMMAND.search(lines[i]) and not turbostat.is_header(lines[i])]
            taken.append(index)
        elif header is not None and turbostat.is_row(line, header):
            taken.append(index)
        elif line.strip():
            header = None
    if any(not turbostat.is_header(lines[i]) and not turbostat.COMMAND.search(lines[i]) for i in taken):
        out["turbostat"] = [lines[i] for i in taken]
        used.update(taken)


def _runs(lines: Sequence[str], starts, continues) -> List[int]:
    taken: List[int] = []
    index = 0
    while index < len(lines):
        if starts(lines[index]):
            while index < len(lines) and (starts(lines[index]) or continues(lines[index])):
                taken.append(index)
                index += 1
            continue
        index += 1
    return taken


def _mpstat(lines: Sequence[str]) -> List[int]:
    taken = _runs(lines, lambda l: bool(MPSTAT_HEAD.match(l)),
                  lambda l: bool(MPSTAT_ROW.match(l)) or not l.strip())
    banner = [i for i, l in enumerate(lines) if SYSSTAT_BANNER.match(l)]
    return sorted(set(taken) | set(banner[:1])) if taken else []


def _vmstat(lines: Sequence[str]) -> List[int]:
    return _runs(lines, lambda l: bool(VMSTAT_HEAD.match(l)), lambda l: bool(VMSTAT_ROW.match(l)))


def _numactl(lines: Sequence[str]) -> List[int]:
    starts = lambda l: bool(re.match(r"^\s*(?:available: \d+ nodes|node distances:)", l))  # noqa: E731
    return _runs(lines, starts, lambda l: bool(NUMA_LINE.match(l)) or l.strip() == "...")


def _settings(lines: Sequence[str], out: Dict[str, List[str]], used: Set[int]) -> None:
    for index, line in enumerate(lines):
        found = _setting(lines, index)
        if found:
            name, text, taken = found
            out.setdefault(name, []).append(text)
            used.update(taken)


def _setting(lines: Sequence[str], index: int):
    line = lines[index]
    match = SYSCTL.match(line)
    if match:
        return "sysctl", f"{match['key']} = {match['value']}", [index]
    match = THP_PATH.match(line)
    if match:
        return "thp", f"{match['path']}: {match['value']}", [index]
    match = CLOCK.match(line)
    if match:
        return "clocksource", f"{match['key']}: {match['value']}", [index]
    match = TUNED.match(line)
    if match:
        return "tuned", f"Current active profile: {match['value']}", [index]
    match = GOVERNOR.match(line)
    if match:
        return _cpupower(lines, index, match["governor"])
    match = GOVERNOR_PATH.match(line)
    if match:
        return "cpufreq", f"cpu{match['cpu']}: governor={match['value']}", [index]
    match = PROC_SYS.search(line)
    if match and re.match(r"^\s*\S*/proc/sys/", line):
        return "sysctl", f"{match['path'].replace('/', '.')} = {match['value']}", [index]
    cat = CAT.match(line)
    if cat and index + 1 < len(lines) and lines[index + 1].strip():
        return _cat_output(cat["path"], lines[index + 1].strip(), index)
    return None


def _cat_output(path: str, value: str, index: int):
    """`$ cat /sys/kernel/mm/transparent_hugepage/enabled` + `[always] madvise never`."""
    if path.startswith("/proc/sys/") and re.fullmatch(r"\S+(?:\s+\S+){0,3}", value):
        return "sysctl", f"{path[len('/proc/sys/'):].replace('/', '.')} = {value}", [index, index + 1]
    if path.startswith("/sys/kernel/mm/transparent_hugepage/") and THP_VALUE.match(value):
        return "thp", f"{path}: {value}", [index, index + 1]
    if path.endswith(("/current_clocksource", "/available_clocksource")):
        return "clocksource", f"{path.rsplit('/', 1)[1]}: {value}", [index, index + 1]
    governor = SCALING_GOVERNOR.search(path)
    if governor and re.fullmatch(r"[\w-]+", value):
        return "cpufreq", f"cpu{governor['cpu']}: governor={value}", [index, index + 1]
    return None


def _cpupower(lines: Sequence[str], index: int, governor: str):
    """`cpupower frequency-info`'s governor line, with the driver and CPU printed above it, as the
    cpufreq collector's `cpuN: driver=... governor=...` line.

    >>> _cpupower(["analyzing CPU 0:", "  driver: intel_pstate", "  current policy: frequency should be",
    ...            '                  The governor "powersave" may decide which speed to use'], 3, "powersave")
    ('cpufreq', 'cpu0: driver=intel_pstate governor=powersave', [0, 1, 3])
    """
    taken, driver, cpu = [index], None, "0"
    for back in range(index - 1, max(-1, index - 15), -1):
        found = CPUPOWER_DRIVER.match(lines[back])
        if found and driver is None:
            driver = found["driver"]
            taken.append(back)
        found = CPUPOWER_CPU.match(lines[back])
        if found:
            cpu = found["cpu"]
            taken.append(back)
            break
    text = f"cpu{cpu}: " + (f"driver={driver} " if driver else "") + f"governor={governor}"
    return "cpufreq", text, sorted(taken)
