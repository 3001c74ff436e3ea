"""Timed perf script inputs for the timeline, spike and diff tests, written in real `perf script`
syntax (default fields: comm pid/tid [cpu] time: period event: then leaf-first frames).

    spike_script(path)              # 60 s, 4 CPUs at 99 Hz, 30 % busy in user space,
                                    # second 30: every CPU spins in zone reclaim
    spike_script(path, spike=None)  # the same 60 s without the spike (flat)
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Optional, Sequence

HZ = 99
UPTIME = 86400.0
PERIOD = 10101010
IDLE = ["secondary_startup_64", "start_secondary", "cpu_startup_entry", "do_idle", "default_idle_call",
        "default_idle"]
USER = ["_start", "__libc_start_main", "main", "compute", "hash_block"]
ZONE_RECLAIM = ["entry_SYSCALL_64", "do_syscall_64", "ksys_write", "vfs_write", "ext4_buffered_write_iter",
                "generic_perform_write", "ext4_da_write_begin", "__filemap_get_folio", "filemap_alloc_folio",
                "__alloc_pages", "get_page_from_freelist", "node_reclaim", "__node_reclaim", "shrink_node",
                "shrink_lruvec", "shrink_inactive_list", "_raw_spin_lock_irq", "native_queued_spin_lock_slowpath"]


def _sample(comm: str, pid: int, cpu: int, when: float, frames: Sequence[str], user: bool) -> str:
    lines = [f"{comm} {pid}/{pid} [{cpu:03d}] {when:.6f}: {PERIOD} cpu-clock: "]
    dso = "/usr/bin/worker" if user else "[kernel.kallsyms]"
    for index, name in enumerate(reversed(frames)):
        address = 0xFFFFFFFF81000000 + 0x1000 * (hash(name) & 0xFFF) if not user else 0x401000 + 0x40 * index
        lines.append(f"\t{address:16x} {name} ({dso})")
    return "\n".join(lines) + "\n\n"


def spike_script(path: Path, seconds: int = 60, cpus: int = 4, busy: float = 0.30,
                 spike: Optional[int] = 30, seed: int = 7, uptime: float = UPTIME) -> Path:
    """Write the perf script (sample times from `uptime`: boot-time seconds by default, pass
    an epoch for a CLOCK_REALTIME recording); returns `path`."""
    rng = random.Random(seed)
    chunks = []
    for second in range(seconds):
        for tick in range(HZ):
            for cpu in range(cpus):
                when = uptime + second + tick / HZ + cpu * 1e-5
                if second == spike:
                    chunks.append(_sample("writer", 2000 + cpu, cpu, when, ZONE_RECLAIM, False))
                elif rng.random() < busy:
                    chunks.append(_sample("worker", 1000 + cpu, cpu, when, USER, True))
                else:
                    chunks.append(_sample("swapper", 0, cpu, when, IDLE, False))
    path.write_text("".join(chunks))
    return path


def write_bundle(directory: Path, script: str, manifest: dict, files: Optional[dict] = None) -> Path:
    """A bundle directory (doc/bundle-format.md): manifest.json, perf/perf.script.gz, `files`
    ({relative path: text}) and SHA256SUMS over all of them."""
    import gzip
    import hashlib
    import json

    directory.mkdir(parents=True, exist_ok=True)
    contents = {"perf/perf.script.gz": gzip.compress(script.encode(), mtime=0)}
    contents.update({name: text.encode() for name, text in (files or {}).items()})
    base = {"schema": 1, "flamediag_version": "0.1.0", "host": "lab1", "kernel": "6.1.0-18-amd64", "arch": "x86_64",
            "cpus": 4, "numa_nodes": 1, "complete": True, "end_signal": None, "frequency": HZ, "label": "",
            "command_line": "flamediag capture", "perf": {"kernel_symbols": "ok", "lost_chunks": 0, "warnings": []},
            "collectors": []}
    contents["manifest.json"] = json.dumps(dict(base, **manifest), indent=2).encode()
    for name, data in contents.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    sums = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(contents.items()))
    (directory / "SHA256SUMS").write_text(sums)
    return directory


def mpstat_rows(start_clock: str, seconds: int, cpus: int, sys_pct, soft_pct: float = 1.0) -> str:
    """`mpstat -P ALL 1` text: one block per second, stamped HH:MM:SS from start_clock + 1 s;
    sys_pct(second, cpu) gives %sys."""
    hour, minute, sec = (int(x) for x in start_clock.split(":"))
    base = hour * 3600 + minute * 60 + sec
    header = "CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"
    out = ["Linux 6.1.0-18-amd64 (lab1) \t11/22/2026 \t_x86_64_\t(%d CPU)" % cpus, ""]
    for second in range(seconds):
        stamp = base + second + 1
        clock = f"{stamp // 3600 % 24:02d}:{stamp // 60 % 60:02d}:{stamp % 60:02d}"
        rows = {cpu: sys_pct(second, cpu) for cpu in range(cpus)}
        out.append(f"{clock}  {header}")
        every = sum(rows.values()) / cpus
        for name, value in [("all", every)] + [(str(c), v) for c, v in rows.items()]:
            idle = max(0.0, 100 - 30 - value - soft_pct)
            out.append(f"{clock}  {name:>3}   30.00    0.00 {value:7.2f}    0.00    0.00 {soft_pct:7.2f}"
                       f"    0.00    0.00    0.00 {idle:7.2f}")
        out.append("")
    return "\n".join(out) + "\n"
