"""Shared helpers for the facts tests: build real directory bundles from the parser fixtures."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from flamediag.bundle import DEFAULT_PATHS
from flamediag.bundlewriter import write_directory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "parsers"


def fixture(relative: str) -> str:
    return (FIXTURES / relative).read_text(encoding="utf-8", errors="replace")


def write_bundle(top: Path, files: Dict[tuple, str], manifest: Optional[dict] = None,
                 tamper: Optional[str] = None) -> Path:
    """files: {(collector, phase, instance): text}. Writes manifest.json (+collectors) and SHA256SUMS.

    `tamper` names a bundle path whose content changes after SHA256SUMS was written.
    """
    contents = {}
    collectors = []
    for (name, phase, instance), text in files.items():
        path = DEFAULT_PATHS[name].format(phase=phase or "start", instance=instance or "")
        contents[path] = text.encode("utf-8")
        collectors.append({"name": name, "phase": phase or "once", "instance": instance,
                           "status": "ok", "outputs": [path]})
    doc = {"schema": 1, "host": "vm", "kernel": "6.18.44-fc-v657", "cpus": 2, "numa_nodes": 1,
           "start_utc": "2026-11-22T07:00:00Z", "end_utc": "2026-11-22T07:00:10Z",
           "duration_requested": 10, "duration_actual": 10.0, "complete": True,
           "perf": {"kernel_symbols": "ok", "lost_chunks": 0}, "collectors": collectors}
    doc.update(manifest or {})
    contents["manifest.json"] = json.dumps(doc).encode("utf-8")
    changed = {tamper: contents[tamper] + b"\n# changed\n"} if tamper else None
    return write_directory(top, contents, tamper=changed)


def real_machine_files() -> Dict[tuple, str]:
    """Every collector with the output recorded on the Debian 12 VM (test/fixtures/parsers)."""
    files = {
        ("mpstat", "window", None): fixture("mpstat/c-24h.txt"),
        ("mpstat.json", "window", None): fixture("mpstat/json.txt"),
        ("vmstat", "window", None): fixture("vmstat/c-wide.txt"),
        ("pidstat", "window", None): fixture("pidstat/c-u-w.txt"),
        ("numactl.hardware", "once", None): fixture("numactl/one-node.txt"),
        ("sysctl", "once", None): fixture("sysctl/c.txt"),
        ("thp", "once", None): fixture("thp/madvise.txt"),
        ("clocksource", "once", None): fixture("clocksource/kvm.txt"),
        ("cpuidle", "once", None): fixture("cpuidle/capture-haltpoll.txt"),
        ("tuned", "once", None): fixture("tuned/none.txt"),
        ("sched.debug", "once", None): fixture("schedknobs/proc.txt"),
        ("ethtool.i", "once", "eth0"): fixture("ethtool/i-virtio.txt"),
        ("ethtool.c", "once", "eth0"): fixture("ethtool/c-virtio.txt"),
        ("ethtool.l", "once", "eth0"): fixture("ethtool/l-virtio.txt"),
        ("nic.modparams", "once", None): fixture("modparams/virtio_net.txt"),
        ("nic.irqs", "once", None): fixture("nicirqs/virtio.txt"),
        ("memcg", "once", None): fixture("memcg/v1.txt"),
        ("audit", "once", None): fixture("audit/plain.txt"),
        ("dmesg", "once", None): fixture("dmesg/tail.txt"),
    }
    snapshots = {"proc.vmstat": "procvmstat", "proc.interrupts": "interrupts", "proc.softirqs": "softirqs",
                 "proc.softnet_stat": "softnet", "proc.meminfo": "meminfo", "proc.stat": "procstat",
                 "loadavg": "loadavg"}
    for name, directory in snapshots.items():
        for phase in ("start", "end"):
            files[(name, phase, None)] = fixture(f"{directory}/{phase}.txt")
    for phase in ("start", "end"):
        files[("numastat", phase, None)] = fixture("numastat/plain.txt")
        files[("numastat.m", phase, None)] = fixture("numastat/m.txt")
        files[("ss", phase, None)] = fixture("ss/loopback.txt")
        files[("proc.pressure", phase, None)] = fixture("pressure/three.txt")
    return files
