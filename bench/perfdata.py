"""Inputs and measurement shared by bench/collapse and bench/diagnose (a module, not a benchmark).

- `real_capture()`: one real `perf record -a -g` of a mixed kernel load on this machine (stress-ng
  fork, pipe, vm, hdd, sock and context-switch stressors), kept as perf.data under bench/data/
  and printed twice: `perf script` with no -F (the default layout people attach) and with the
  narrow `-F comm,pid,tid,cpu,time,period,event,ip,sym,dso` the capture writes.
- `replicated(text, mb)`: that text repeated until it reaches `mb` megabytes, each copy with
  its pids/tids and timestamps moved so every copy is a new stretch of time.
- `synthetic_96cpu()`: a 96-CPU, 60 s, 99 Hz capture (570 240 samples, default layout) built
  from the real capture's stacks: every CPU samples every tick; 35 % of samples are the idle
  loop, the rest are the real stacks with their comm and tid moved per CPU and the leaf
  address varied (four variants), so distinct stacks and records grow as they would on a big host.
- `measure(argv)`: wall and CPU seconds and peak RSS (largest process of the tree, from wait4).
"""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
NARROW_FIELDS = "comm,pid,tid,cpu,time,period,event,ip,sym,dso"
LOCK = "/tmp/flamediag-perf.lock"          # captures on a shared machine take turns
HEADER_IDS = re.compile(rb"^(\S.*?\s+)(\d+)(?:/(\d+))?(\s+\[\d+\]\s+)(\d+)\.(\d+):", re.M)
STRESSORS = ["--cpu", "1", "--fork", "1", "--pipe", "1", "--vm", "1", "--vm-bytes", "256M", "--hdd", "1",
             "--hdd-bytes", "64M", "--sock", "1", "--switch", "1"]
IDLE_STACK = (b"\tffffffff8225f64b pv_native_safe_halt+0xb ([kernel.kallsyms])\n"
              b"\tffffffff8225f6e5 default_idle+0x5 ([kernel.kallsyms])\n"
              b"\tffffffff813c3a2d default_idle_call+0x2d ([kernel.kallsyms])\n"
              b"\tffffffff813c7ee0 do_idle+0x1f0 ([kernel.kallsyms])\n"
              b"\tffffffff813c8159 cpu_startup_entry+0x29 ([kernel.kallsyms])\n"
              b"\tffffffff81321a3d start_secondary+0x11d ([kernel.kallsyms])\n"
              b"\tffffffff812e9a2d common_startup_64+0x13e ([kernel.kallsyms])\n")


def tool(name: str):
    """Path of an installed tool (inferno installs under ~/.cargo/bin), or None."""
    found = shutil.which(name) or str(Path.home() / ".cargo" / "bin" / name)
    return found if os.access(found, os.X_OK) else None


def real_capture(seconds: int = 20, rerecord: bool = False):
    """(default-layout text path, narrow-layout text path) of one real capture."""
    DATA.mkdir(parents=True, exist_ok=True)
    raw, default, narrow = DATA / "mixed.data", DATA / "mixed-default.perf", DATA / "mixed-narrow.perf"
    if rerecord or not raw.exists():
        if os.geteuid() != 0 or not shutil.which("perf") or not shutil.which("stress-ng"):
            sys.exit("bench: recording the source needs root, perf and stress-ng (apt-get install linux-perf stress-ng)")
        script = (f"stress-ng {' '.join(STRESSORS)} --timeout {seconds + 2} >/dev/null 2>&1 & sleep 1; "
                  f"perf record -q -F 999 -a -g -o {raw} -- sleep {seconds}; wait")
        subprocess.run(["flock", LOCK, "sh", "-c", script], check=True)
    for path, extra in ((default, []), (narrow, ["-F", NARROW_FIELDS])):
        if rerecord or not path.exists() or path.stat().st_mtime < raw.stat().st_mtime:
            with open(path, "wb") as out:
                subprocess.run(["perf", "script", "-i", str(raw)] + extra, stdout=out, stderr=subprocess.DEVNULL,
                               check=True)
    return default, narrow


def shifted(text: bytes, copy: int) -> bytes:
    """The same samples with pids/tids and timestamps moved, so every copy is a new stretch of time."""
    def move(match):
        prefix, pid, tid, cpu, secs, frac = match.groups()
        shift = copy * 7 if pid != b"0" else 0
        ids = b"%d/%d" % (int(pid) + shift, int(tid) + shift) if tid is not None else b"%d" % (int(pid) + shift)
        return b"%s%s%s%d.%s:" % (prefix, ids, cpu, int(secs) + copy * 30, frac)
    return HEADER_IDS.sub(move, text)


def replicated(source: Path, size_mb: int) -> Path:
    big = DATA / f"{source.stem}-{size_mb}mb.perf"
    if big.exists() and big.stat().st_mtime >= source.stat().st_mtime:
        return big
    text = source.read_bytes()
    if not text.endswith(b"\n\n"):
        text = text.rstrip(b"\n") + b"\n\n"
    with open(big, "wb") as out:
        copy = 0
        while out.tell() < size_mb << 20:
            out.write(shifted(text, copy))
            copy += 1
    return big


def _blocks(text: bytes):
    """(comm, tid, period event tail, stack text) of each sample block of a default-layout text."""
    found = []
    for block in text.split(b"\n\n"):
        head, _, stack = block.partition(b"\n")
        match = re.match(rb"\s*(\S.*?)\s+(\d+)\s+\[\d+\]\s+\d+\.\d+:(.*)$", head)
        if match and stack:
            found.append((match.group(1), int(match.group(2)), match.group(3), stack + b"\n"))
    return found


def synthetic_96cpu(source: Path, cpus: int = 96, seconds: int = 60, hz: int = 99, seed: int = 1) -> Path:
    path = DATA / f"synthetic-{cpus}cpu-{seconds}s.perf"
    if path.exists() and path.stat().st_mtime >= source.stat().st_mtime:
        return path
    rng = random.Random(seed)
    pool = _blocks(source.read_bytes())
    tail = pool[0][2]
    with open(path, "wb") as out:
        for tick in range(seconds * hz):
            stamp = 10000.0 + tick / hz
            lines = []
            for cpu in range(cpus):
                if rng.random() < 0.35:
                    lines.append(b"swapper 0 [%03d] %.6f:%s\n%s\n" % (cpu, stamp, tail, IDLE_STACK))
                    continue
                comm, tid, event, stack = pool[rng.randrange(len(pool))]
                leaf, rest = stack.split(b"\n", 1)
                variant = rng.randrange(4)
                if variant:
                    leaf = re.sub(rb"\+0x([0-9a-f]+) \(", lambda m: b"+0x%x (" % (int(m.group(1), 16) + variant), leaf, 1)
                lines.append(b"%s %d [%03d] %.6f:%s\n%s\n%s\n\n" % (comm, tid + (cpu // 8) * 100000, cpu, stamp, event,
                                                                     leaf, rest.rstrip(b"\n")))
            out.write(b"".join(lines))
    return path


def measure(argv, stdout_path) -> tuple:
    """(wall seconds, CPU seconds of the tree, peak RSS MiB of its largest process); exits on failure.
    The RSS comes from /usr/bin/time when installed: a child forked from this (larger) Python
    process would otherwise report this process's RSS as its own peak."""
    rss_file = Path(str(stdout_path) + ".rss")
    timer = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file)] if os.access("/usr/bin/time", os.X_OK) else []
    with open(stdout_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(timer + list(argv), stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    if code != 0:
        sys.exit(f"bench: {' '.join(map(str, argv))} failed with status {code}")
    peak = usage.ru_maxrss / 1024
    if timer:
        peak = int(rss_file.read_text().split()[-1]) / 1024
        rss_file.unlink()
    return seconds, usage.ru_utime + usage.ru_stime, peak
