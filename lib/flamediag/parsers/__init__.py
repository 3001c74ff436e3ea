"""Evidence parsers: one module per collector, each `parse(text) -> dict` with a `notes` list.

Parsers turn raw collector output into plain data and never raise on bad input; whatever they do not
understand is reported in `notes` (the facts layer turns those into data_quality sentences).
`PARSERS` maps bundle collector names (doc/bundle-format.md) to the module that reads them.
"""
from __future__ import annotations

import importlib
from typing import Callable, Dict

PARSERS = {
    "mpstat": "mpstat", "mpstat.json": "mpstat", "vmstat": "vmstat", "pidstat": "pidstat",
    "procstat": "procstat", "proc.stat": "procstat", "proc.vmstat": "procvmstat",
    "proc.interrupts": "interrupts", "proc.softirqs": "softirqs", "proc.softnet_stat": "softnet",
    "proc.meminfo": "meminfo", "proc.pressure": "pressure", "numastat": "numastat",
    "numastat.m": "numastat", "numactl.hardware": "numactl", "ss": "ss", "sysctl": "sysctl",
    "thp": "thp", "clocksource": "clocksource", "cpufreq": "cpufreq", "cpuidle": "cpuidle",
    "ethtool.i": "ethtool", "ethtool.c": "ethtool", "ethtool.l": "ethtool", "ethtool.S": "ethtool",
    "nic.modparams": "modparams", "nic.irqs": "nicirqs", "memcg": "memcg", "audit": "audit",
    "dmesg": "dmesg", "loadavg": "loadavg", "tuned": "tuned", "sched.debug": "schedknobs",
}


def parser_for(collector: str) -> Callable[[str], dict]:
    """The parse function for a bundle collector name.

    Examples:
        >>> parser_for("proc.softirqs").__module__
        'flamediag.parsers.softirqs'
    """
    module = importlib.import_module(f"{__name__}.{PARSERS[collector]}")
    return module.parse


def all_modules() -> Dict[str, object]:
    """module name -> module, for the fuzz tests."""
    names = sorted(set(PARSERS.values()))
    return {name: importlib.import_module(f"{__name__}.{name}") for name in names}
