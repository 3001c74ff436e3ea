"""A bundle built from real data of this machine (perf record -a -g, uname, ss, ip, sysctl...).

Used by the redaction tests when `flamediag capture` cannot produce a bundle here. Needs root and
a working perf; `capture_available()` says why not. Laid out per doc/bundle-format.md, plus
`net/ip-addr.txt` / `net/ip-link.txt` (unknown collectors: readers ignore them) so the machine's
real addresses are in the bundle.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import List, Tuple

import hostinfo
from flamediag import bundlewriter

# (collector, phase, path, argv)
COMMANDS: List[Tuple[str, str, str, List[str]]] = [
    ("uname", "once", "system/uname.txt", ["uname", "-a"]),
    ("lscpu", "once", "system/lscpu.txt", ["lscpu"]),
    ("numactl.hardware", "once", "system/numactl-hardware.txt", ["numactl", "--hardware"]),
    ("cmdline", "once", "system/proc-cmdline.txt", ["cat", "/proc/cmdline"]),
    ("sysctl", "once", "system/sysctl.txt", ["sysctl", "vm", "net.core", "kernel.numa_balancing"]),
    ("dmesg", "once", "system/dmesg-tail.txt", ["sh", "-c", "dmesg | tail -n 200"]),
    ("proc.vmstat", "start", "snap/start/proc-vmstat.txt", ["cat", "/proc/vmstat"]),
    ("proc.softirqs", "start", "snap/start/proc-softirqs.txt", ["cat", "/proc/softirqs"]),
    ("proc.interrupts", "start", "snap/start/proc-interrupts.txt", ["cat", "/proc/interrupts"]),
    ("ss", "start", "snap/start/ss-tiepm.txt", ["ss", "-tiepm"]),
    ("ip.addr", "once", "net/ip-addr.txt", ["ip", "addr"]),
    ("ip.link", "once", "net/ip-link.txt", ["ip", "-d", "link"]),
    ("mpstat", "window", "metrics/mpstat.txt", ["mpstat", "-P", "ALL", "1", "1"]),
]
PERF_FIELDS = "comm,pid,tid,cpu,time,period,event,ip,sym,dso"


capture_available = hostinfo.capture_unavailable     # None when a real capture can run here
machine_addresses = hostinfo.machine_addresses


def _tcp_peer(address: str):
    """A connected TCP pair on a real interface address, so ss shows it."""
    server = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
    server.bind((address, 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname()[:2], timeout=5)
    peer, _ = server.accept()
    return [server, client, peer]


def build(dest: Path, seconds: int = 1) -> Path:
    """Record and collect into dest/flamediag-<host>-<ts>.tar.gz (with perf.data kept)."""
    host = socket.gethostname()
    top = f"flamediag-{host}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    root = dest / top
    root.mkdir(parents=True)
    sockets = []
    for address in machine_addresses()["ipv4"][:1]:
        sockets += _tcp_peer(address)
    collectors = []
    try:
        for name, phase, path, argv in COMMANDS:
            collectors.append(_run(root, name, phase, path, argv))
        collectors += _perf(root, seconds)
    finally:
        for sock in sockets:
            sock.close()
    manifest = {
        "schema": 1, "flamediag_version": "test-realcapture", "host": host,
        "kernel": os.uname().release, "arch": os.uname().machine, "cpus": os.cpu_count(),
        "numa_nodes": hostinfo.numa_nodes(), "start_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "end_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "duration_requested": seconds, "duration_actual": seconds, "frequency": 99,
        "label": f"test capture on {host}", "command_line": f"flamediag capture -d {seconds} -o {dest}",
        "complete": True, "end_signal": None, "collectors": collectors,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1))
    bundlewriter.write_sums(root)
    bundle = bundlewriter.write_tarball(dest / f"{top}.tar.gz", top, root)
    shutil.rmtree(root)
    return bundle


def _run(root: Path, name: str, phase: str, path: str, argv: List[str]) -> dict:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(argv, capture_output=True, timeout=60, env={**os.environ, "LC_ALL": "C"})
    target.write_bytes(proc.stdout)
    return {"name": name, "phase": phase, "instance": None, "argv": argv,
            "status": "ok" if proc.returncode == 0 else "failed", "exit_code": proc.returncode,
            "outputs": [path], "bytes": len(proc.stdout)}


def _perf(root: Path, seconds: int) -> List[dict]:
    (root / "perf").mkdir(exist_ok=True)
    data = root / "perf" / "perf.data"
    busy = threading.Thread(target=_kernel_work, args=(seconds,))
    busy.start()
    record = subprocess.run(["perf", "record", "-a", "-g", "-F", "99", "-o", str(data), "--", "sleep", str(seconds)],
                            capture_output=True, timeout=120)
    busy.join()
    (root / "perf" / "record.log").write_bytes(record.stderr)
    script = subprocess.run(["perf", "script", "-F", PERF_FIELDS, "-i", str(data)],
                            capture_output=True, timeout=300)
    with gzip.open(root / "perf" / "perf.script.gz", "wb") as out:
        out.write(script.stdout)
    return [
        {"name": "perf.record", "phase": "window", "instance": None, "status": "ok",
         "outputs": ["perf/perf.data", "perf/record.log"]},
        {"name": "perf.script", "phase": "once", "instance": None, "status": "ok",
         "outputs": ["perf/perf.script.gz"]},
    ]


def _kernel_work(seconds: float) -> None:
    """System time on a CPU (small reads of /proc), so the profile has kernel stacks."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open("/proc/self/status", "rb") as handle:
            handle.read()
