"""Open a capture bundle (.tar.gz or extracted directory) and read its data by collector name.

API (stable; the hardening of issue 9 keeps it):

    with open_bundle(path) as b:
        b.manifest                       # dict (empty if missing/unparseable; see b.problems)
        b.read("proc.vmstat", phase="start")     # bytes or None
        b.read_text("sysctl")                     # str (utf-8, errors replaced) or None
        b.instances("ethtool.S")                  # ["eth0", ...]
        b.collector("perf.script")                # the manifest entry dict or None
        b.source("proc.vmstat", phase="end")      # bundle-relative path the data came from
        b.members                                 # relative names of regular files
        b.problems                                # data-quality sentences (tamper, missing files...)
        b.unverified                              # set of relative paths failing SHA256SUMS

Collector names and default paths: doc/bundle-format.md.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Set

from .cli import UserError

DEFAULT_PATHS = {
    # name -> path template; {phase} and {instance} are filled in
    "perf.preflight": "perf/preflight.txt",
    "perf.record": "perf/record.log",
    "perf.script": "perf/perf.script.gz",
    "mpstat": "metrics/mpstat.txt",
    "mpstat.json": "metrics/mpstat.json",
    "vmstat": "metrics/vmstat.txt",
    "pidstat": "metrics/pidstat.txt",
    "procstat": "metrics/proc-stat.txt",
    "proc.vmstat": "snap/{phase}/proc-vmstat.txt",
    "proc.interrupts": "snap/{phase}/proc-interrupts.txt",
    "proc.softirqs": "snap/{phase}/proc-softirqs.txt",
    "proc.softnet_stat": "snap/{phase}/proc-softnet_stat.txt",
    "proc.meminfo": "snap/{phase}/proc-meminfo.txt",
    "proc.pressure": "snap/{phase}/proc-pressure.txt",
    "proc.stat": "snap/{phase}/proc-stat.txt",
    "numastat": "snap/{phase}/numastat.txt",
    "numastat.m": "snap/{phase}/numastat-m.txt",
    "ss": "snap/{phase}/ss-tiepm.txt",
    "loadavg": "snap/{phase}/loadavg.txt",
    "ethtool.S": "snap/{phase}/ethtool-S-{instance}.txt",
    "numactl.hardware": "system/numactl-hardware.txt",
    "uname": "system/uname.txt",
    "lscpu": "system/lscpu.txt",
    "cmdline": "system/proc-cmdline.txt",
    "sysctl": "system/sysctl.txt",
    "thp": "system/thp.txt",
    "clocksource": "system/clocksource.txt",
    "cpufreq": "system/cpufreq.txt",
    "cpuidle": "system/cpuidle.txt",
    "tuned": "system/tuned.txt",
    "sched.debug": "system/sched-knobs.txt",
    "ethtool.i": "net/ethtool-i-{instance}.txt",
    "ethtool.c": "net/ethtool-c-{instance}.txt",
    "ethtool.l": "net/ethtool-l-{instance}.txt",
    "nic.modparams": "net/module-params.txt",
    "modprobe.d": "net/modprobe.d.txt",
    "nic.irqs": "net/nic-irqs.txt",
    "irqbalance": "system/irqbalance.txt",
    "memcg": "system/memcg.txt",
    "audit": "system/audit.txt",
    "dmesg": "system/dmesg-tail.txt",
    "bpf.profile": "bpf/profile.folded",
    "bpftrace.profile": "bpf/bpftrace-profile.txt",
    "bpftrace.softirq": "bpf/bpftrace-softirq.txt",
}

MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 2 * 1024 ** 3
MAX_MEMBER_BYTES = 1024 ** 3


class Bundle:
    def __init__(self, files: Dict[str, bytes], origin: str):
        self._files = files  # relative path (below the top directory) -> bytes
        self.origin = origin
        self.problems: List[str] = []
        self.unverified: Set[str] = set()
        self.manifest: dict = self._load_manifest()
        self._verify_sums()

    # -- context manager ------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    # -- lookup -----------------------------------------------------------------------
    @property
    def members(self) -> List[str]:
        return sorted(self._files)

    def collector(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[dict]:
        for entry in self.manifest.get("collectors", []) or []:
            if not isinstance(entry, dict) or entry.get("name") != name:
                continue
            if phase is not None and entry.get("phase") not in (phase, None):
                continue
            if instance is not None and entry.get("instance") != instance:
                continue
            return entry
        return None

    def instances(self, name: str) -> List[str]:
        seen = []
        for entry in self.manifest.get("collectors", []) or []:
            if isinstance(entry, dict) and entry.get("name") == name and entry.get("instance"):
                if entry["instance"] not in seen:
                    seen.append(entry["instance"])
        if not seen and "{instance}" in DEFAULT_PATHS.get(name, ""):
            prefix, _, suffix = DEFAULT_PATHS[name].partition("{instance}")
            for member in self._files:
                for phase in ("start", "end", ""):
                    p = prefix.replace("{phase}", phase)
                    if member.startswith(p) and member.endswith(suffix):
                        inst = member[len(p):len(member) - len(suffix)]
                        if inst and "/" not in inst and inst not in seen:
                            seen.append(inst)
        return seen

    def source(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[str]:
        entry = self.collector(name, phase, instance)
        if entry:
            for out in entry.get("outputs") or []:
                if isinstance(out, str) and out in self._files and not out.endswith(".log"):
                    return out
            for out in entry.get("outputs") or []:
                if isinstance(out, str) and out in self._files:
                    return out
        template = DEFAULT_PATHS.get(name)
        if template:
            path = template.format(phase=phase or "start", instance=instance or "")
            if path in self._files:
                return path
        return None

    def read(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[bytes]:
        path = self.source(name, phase, instance)
        if path is None:
            return None
        data = self._files[path]
        if path.endswith(".gz"):
            try:
                data = _gunzip_bounded(data, MAX_MEMBER_BYTES)
            except (OSError, EOFError, ValueError) as err:
                self.problems.append(f"{path}: unreadable gzip ({err})")
                return None
        return data

    def read_text(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[str]:
        data = self.read(name, phase, instance)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_path(self, path: str) -> Optional[bytes]:
        return self._files.get(path)

    # -- integrity --------------------------------------------------------------------
    def _load_manifest(self) -> dict:
        raw = self._files.get("manifest.json")
        if raw is None:
            self.problems.append("manifest.json missing: capture facts unknown")
            return {}
        try:
            manifest = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError as err:
            self.problems.append(f"manifest.json unparseable ({err}); capture was probably killed")
            return {}
        if not isinstance(manifest, dict):
            self.problems.append("manifest.json is not an object")
            return {}
        return manifest

    def _verify_sums(self) -> None:
        raw = self._files.get("SHA256SUMS")
        if raw is None:
            self.problems.append("SHA256SUMS missing: bundle integrity not verified")
            self.unverified = set(self._files) - {"manifest.json"}
            return
        listed = {}
        for line in raw.decode("utf-8", errors="replace").splitlines():
            digest, _, name = line.partition("  ")
            if name:
                listed[name.lstrip("*").removeprefix("./")] = digest.strip().lower()
        for name, data in self._files.items():
            if name == "SHA256SUMS":
                continue
            want = listed.get(name)
            if want is None:
                self.unverified.add(name)
                self.problems.append(f"{name}: not listed in SHA256SUMS (unverified)")
            elif hashlib.sha256(data).hexdigest() != want:
                self.unverified.add(name)
                self.problems.append(f"{name}: SHA256 mismatch — file changed after capture (tampered or corrupted)")
        for name in listed:
            if name not in self._files:
                self.problems.append(f"{name}: listed in SHA256SUMS but missing from the bundle")


def _gunzip_bounded(data: bytes, limit: int) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
        while True:
            chunk = gz.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
            if out.tell() > limit:
                raise ValueError(f"decompresses to more than {limit} bytes")
    return out.getvalue()


def is_bundle(path: Path) -> bool:
    if path.is_dir():
        return (path / "manifest.json").exists() or any(path.glob("*/manifest.json"))
    try:
        with tarfile.open(path, "r:*"):
            return True
    except (tarfile.TarError, OSError):
        return False


def open_bundle(path) -> Bundle:
    path = Path(path)
    if path.is_dir():
        return _open_directory(path)
    return _open_tar(path)


def _open_directory(path: Path) -> Bundle:
    top = path
    if not (path / "manifest.json").exists():
        subdirs = [p for p in path.iterdir() if p.is_dir() and (p / "manifest.json").exists()]
        if len(subdirs) == 1:
            top = subdirs[0]
    files: Dict[str, bytes] = {}
    for root, dirs, names in os.walk(top, followlinks=False):
        for name in names:
            full = Path(root) / name
            if full.is_symlink() or not full.is_file():
                continue
            files[str(full.relative_to(top))] = full.read_bytes()
    return Bundle(files, str(path))


def _open_tar(path: Path) -> Bundle:
    """Read members straight from the tar stream: nothing is extracted to disk."""
    files: Dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(path, "r:*") as tar:
            top = None
            for count, member in enumerate(tar, 1):
                if count > MAX_MEMBERS:
                    raise UserError(f"{path}: more than {MAX_MEMBERS} members: refusing (bomb defence)")
                name = member.name
                _check_member(path, member)
                parts = name.strip("/").split("/")
                if top is None:
                    top = parts[0]
                if parts[0] != top:
                    raise UserError(f"{path}: member {name!r} outside the top directory {top!r}")
                if member.isdir():
                    continue
                rel = "/".join(parts[1:])
                stream = tar.extractfile(member)
                data = _read_bounded(stream, MAX_MEMBER_BYTES, path, name)
                total += len(data)
                if total > MAX_TOTAL_BYTES:
                    raise UserError(f"{path}: decompressed size exceeds {MAX_TOTAL_BYTES} bytes: refusing (bomb defence)")
                files[rel] = data
    except (tarfile.TarError, EOFError, OSError, gzip.BadGzipFile) as err:
        raise UserError(f"{path}: not a readable bundle ({err})")
    return Bundle(files, str(path))


def _check_member(path: Path, member: tarfile.TarInfo) -> None:
    name = member.name
    if not (member.isreg() or member.isdir()):
        raise UserError(f"{path}: member {name!r} is not a regular file or directory: refusing")
    if name.startswith("/") or ".." in name.split("/") or any(ord(c) < 32 for c in name):
        raise UserError(f"{path}: member {name!r} has an unsafe name: refusing")


def _read_bounded(stream, limit: int, path: Path, name: str) -> bytes:
    buf = io.BytesIO()
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return buf.getvalue()
        buf.write(chunk)
        if buf.tell() > limit:
            raise UserError(f"{path}: member {name!r} exceeds {limit} bytes: refusing (bomb defence)")
