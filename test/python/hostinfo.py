"""What THIS host should give, read from the host itself: the Python twin of test/lib/host.bash.

A fresh CI host of the same kind may lack cpuidle states, cpufreq policies, the ss diag modules,
PSI, a physical NIC, cgroup v1, a routable address, root or a working perf. A test reads the host
here and asserts what the host in front of it gives, or skips naming what is absent.
test_hostinfo.py checks that these answers equal host.bash's on the machine running the suite.
"""
from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

def _exists(pattern: str) -> bool:
    return bool(glob.glob(pattern))


def _read(path: str, default: str = "") -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return default


def memcg_version() -> str:
    """'v1', 'v2', or '' when no memory cgroup controller is mounted."""
    if os.path.isfile("/sys/fs/cgroup/memory/memory.usage_in_bytes"):
        return "v1"
    if "memory" in _read("/sys/fs/cgroup/cgroup.controllers").split():
        return "v2"
    return ""


def physical_nics() -> List[str]:
    """NICs with a device link outside devices/virtual, as the capture picks them."""
    nics = []
    for link in sorted(glob.glob("/sys/class/net/*")):
        if os.path.exists(f"{link}/device") and "/devices/virtual/" not in os.path.realpath(link):
            nics.append(os.path.basename(link))
    return nics


def _diag_modules_loaded() -> bool:
    """ss runs only with inet_diag and tcp_diag loaded (no /proc/modules: nothing loadable)."""
    if not os.access("/proc/modules", os.R_OK):
        return True
    loaded = {line.split(" ", 1)[0] for line in _read("/proc/modules").splitlines()}
    return {"inet_diag", "tcp_diag"} <= loaded


SOURCES = {
    "cpuidle": lambda: os.path.isdir("/sys/devices/system/cpu/cpu0/cpuidle"),
    "cpufreq": lambda: _exists("/sys/devices/system/cpu/cpufreq/policy*"),
    "thp": lambda: os.path.isdir("/sys/kernel/mm/transparent_hugepage"),
    "clocksource": lambda: os.path.isdir("/sys/devices/system/clocksource/clocksource0"),
    "proc.pressure": lambda: any(os.access(f"/proc/pressure/{r}", os.R_OK) for r in ("cpu", "memory", "io")),
    "nic.irqs": lambda: bool(physical_nics()),
    "memcg": lambda: bool(memcg_version()),
    "ss": _diag_modules_loaded,
}


def collector_status(name: str) -> str:
    """'ok', or 'skipped' when this host lacks the collector's source (every other name: ok)."""
    present = SOURCES.get(name)
    return "ok" if present is None or present() else "skipped"


def numa_nodes() -> int:
    """NUMA nodes as the capture counts them (no /sys/devices/system/node: one)."""
    return len(glob.glob("/sys/devices/system/node/node[0-9]*")) or 1


def online_cpus() -> List[int]:
    """Online CPU ids (the cpuN lines of /proc/stat), as the capture and mpstat see them."""
    return [int(line.split()[0][3:]) for line in _read("/proc/stat").splitlines()
            if line.startswith("cpu") and line[3:4].isdigit()]


def kernel_symbols_as_root() -> str:
    """perf's kernel_symbols for a capture run as root: restricted only with kptr_restrict=2."""
    return "restricted" if _read("/proc/sys/kernel/kptr_restrict") == "2" else "ok"


def perf_open_to_users() -> bool:
    """kernel.perf_event_paranoid <= 0: an unprivileged user may record system-wide."""
    return int(_read("/proc/sys/kernel/perf_event_paranoid", "2")) <= 0


def bcc_has_headers() -> bool:
    """bcc finds kernel headers: a build tree, the in-kernel archive, or the kheaders module."""
    release = platform.release()
    if any(os.path.exists(p) for p in (f"/lib/modules/{release}/build", f"/lib/modules/{release}/source",
                                       "/sys/kernel/kheaders.tar.xz")):
        return True
    modinfo = shutil.which("modinfo") or next((p for p in ("/usr/sbin/modinfo", "/sbin/modinfo") if os.path.exists(p)), None)
    return bool(modinfo) and subprocess.run([modinfo, "kheaders"], capture_output=True).returncode == 0


def machine_addresses() -> Dict[str, List[str]]:
    """Non-loopback IPv4/IPv6 addresses and MACs of this machine, from `ip -o`."""
    ipv4, ipv6, macs = [], [], []
    for line in subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout.splitlines():
        words = line.split()
        if len(words) > 3 and words[2] in ("inet", "inet6"):
            value = words[3].split("/")[0]
            if value not in ("127.0.0.1", "::1"):
                (ipv4 if words[2] == "inet" else ipv6).append(value)
    for line in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.splitlines():
        words = line.split()
        if "link/ether" in words:
            macs.append(words[words.index("link/ether") + 1])
    return {"ipv4": ipv4, "ipv6": ipv6, "mac": macs}


def capture_unavailable() -> Optional[str]:
    """None when a real `perf record -a` can run here, else the reason."""
    if os.geteuid() != 0:
        return "needs root (perf record -a)"
    if not shutil.which("perf"):
        return "perf not installed"
    probe = subprocess.run(["perf", "record", "-o", "/dev/null", "-q", "--", "true"],
                           capture_output=True, timeout=60)
    return None if probe.returncode == 0 else f"perf does not work here: {probe.stderr[-200:]!r}"

