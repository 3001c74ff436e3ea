"""Bundle builders for the safety tests: a well-formed bundle and hostile tarballs, made at test time.

Nothing binary lives in git: every case is built here with tarfile.TarInfo. `HOSTILE` maps a case
name to a builder `fn(path, canary) -> expected_rule_fragment`; `canary` is a directory beside the
extraction directory that a successful attack would change.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Callable, Dict, Iterable, Optional

from flamediag.bundlewriter import sums_text, write_bundle_tarball

TOP = "flamediag-web1-20261122T031500Z"


def manifest(host: str = "web1", **extra) -> dict:
    doc = {
        "schema": 1, "flamediag_version": "0.1.0", "host": host, "kernel": "6.1.0-18-amd64",
        "arch": "x86_64", "cpus": 2, "numa_nodes": 1, "start_utc": "2026-11-22T03:15:00Z",
        "end_utc": "2026-11-22T03:15:31Z", "duration_requested": 30, "duration_actual": 30.4,
        "frequency": 99, "label": "", "command_line": "flamediag capture -d 30", "complete": True,
        "end_signal": None, "collectors": [
            {"name": "sysctl", "phase": "once", "instance": None, "status": "ok",
             "outputs": ["system/sysctl.txt"]},
            {"name": "perf.script", "phase": "once", "instance": None, "status": "ok",
             "outputs": ["perf/perf.script.gz"]},
        ],
    }
    doc.update(extra)
    return doc


PERF_SCRIPT = (
    "stress-ng 1234/1234 [001] 100.000000:   10101010 cpu-clock:pppH:\n"
    "\tffffffff81a0 native_queued_spin_lock_slowpath+0x1 ([kernel.kallsyms])\n"
    "\tffffffff81b0 _raw_spin_lock+0x2 ([kernel.kallsyms])\n"
    "\tffffffff81c0 zone_reclaim+0x3 ([kernel.kallsyms])\n"
    "\t7f0000001000 main+0x10 (/usr/bin/stress-ng)\n\n"
)


def default_files() -> Dict[str, bytes]:
    return {
        "system/sysctl.txt": b"vm.zone_reclaim_mode = 1\nkernel.numa_balancing = 0\n",
        "perf/perf.script.gz": gzip.compress(PERF_SCRIPT.encode(), mtime=0),
    }


def sha256sums(files: Dict[str, bytes]) -> bytes:
    return sums_text({name: hashlib.sha256(data).hexdigest() for name, data in files.items()})


def add_file(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    tar.addfile(info)


def write_bundle(path: Path, files: Optional[Dict[str, bytes]] = None, top: str = TOP,
                 manifest_doc: Optional[dict] = None, sums: bool = True,
                 tamper: Optional[Dict[str, bytes]] = None) -> Path:
    """A well-formed bundle (flamediag's own writer): manifest.json first, SHA256SUMS over every
    other file. `tamper` replaces file contents after the sums were computed."""
    files = dict(default_files() if files is None else files)
    files["manifest.json"] = json.dumps(manifest_doc or manifest(), indent=1).encode()
    return write_bundle_tarball(path, top, files, sums=sums, tamper=tamper)


def members(path: Path) -> Dict[str, bytes]:
    """Every member of a bundle tarball, gunzipped when it is gzip: name -> bytes."""
    out = {}
    with tarfile.open(path) as tar:
        for member in tar:
            if member.isfile():
                data = tar.extractfile(member).read()
                out[member.name] = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return out


def _hostile(path: Path, members: Iterable[Callable[[tarfile.TarFile], None]]) -> Path:
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        add_dir(tar, TOP)
        add_file(tar, f"{TOP}/manifest.json", json.dumps(manifest()).encode())
        for add in members:
            add(tar)
    return path


def _link(name: str, target: str, kind: bytes) -> Callable[[tarfile.TarFile], None]:
    def add(tar):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = target
        tar.addfile(info)
    return add


def _special(name: str, kind: bytes) -> Callable[[tarfile.TarFile], None]:
    def add(tar):
        info = tarfile.TarInfo(name)
        info.type = kind
        info.devmajor, info.devminor = 1, 3
        tar.addfile(info)
    return add


def _file(name: str, data: bytes = b"pwned\n", mode: int = 0o644) -> Callable[[tarfile.TarFile], None]:
    return lambda tar: add_file(tar, name, data, mode)


def dotdot(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{TOP}/../../{canary.name}/pwned")]) and "'..' component"


def absolute(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{canary}/pwned")]) and "absolute name"


def symlink_out(path: Path, canary: Path) -> str:
    return _hostile(path, [_link(f"{TOP}/escape", str(canary), tarfile.SYMTYPE)]) and "symlink"


def symlink_then_write(path: Path, canary: Path) -> str:
    members = [_link(f"{TOP}/escape", str(canary), tarfile.SYMTYPE), _file(f"{TOP}/escape/pwned")]
    return _hostile(path, members) and "symlink"


def hardlink_out(path: Path, canary: Path) -> str:
    return _hostile(path, [_link(f"{TOP}/hl", str(canary / "keep.txt"), tarfile.LNKTYPE)]) and "hardlink"


def chardev(path: Path, canary: Path) -> str:
    return _hostile(path, [_special(f"{TOP}/null", tarfile.CHRTYPE)]) and "character device"


def fifo(path: Path, canary: Path) -> str:
    return _hostile(path, [_special(f"{TOP}/fifo", tarfile.FIFOTYPE)]) and "FIFO"


def setuid(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{TOP}/suid", b"#!/bin/sh\n", 0o4755)]) and "setuid"


def sibling_prefix(path: Path, canary: Path) -> str:
    # sos's commonprefix check passes '../<dir>_evil/x' because '<dir>_evil' starts with '<dir>'
    return _hostile(path, [_file(f"{TOP}/../{TOP}_evil/x")]) and "'..' component"


def outside_top(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{TOP}_evil/x")]) and "outside the one top directory"


def dup_names(path: Path, canary: Path) -> str:
    members = [_file(f"{TOP}/system/sysctl.txt", b"vm.zone_reclaim_mode = 0\n"),
               _file(f"{TOP}/system/sysctl.txt", b"vm.zone_reclaim_mode = 1\n")]
    return _hostile(path, members) and "duplicate name"


def case_dup_names(path: Path, canary: Path) -> str:
    members = [_file(f"{TOP}/system/sysctl.txt"), _file(f"{TOP}/system/SYSCTL.txt")]
    return _hostile(path, members) and "duplicate name"


def ctrl_char_name(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{TOP}/\x1b[2Jcleared")]) and "control character"


def newline_name(path: Path, canary: Path) -> str:
    return _hostile(path, [_file(f"{TOP}/a\nb")]) and "control character"


def many_members(path: Path, canary: Path, count: int = 10_001) -> str:
    def add_many(tar):
        for index in range(count):
            add_file(tar, f"{TOP}/m/{index}", b"")
    return _hostile(path, [add_many]) and "members"


class _Zeros(io.RawIOBase):
    """`size` zero bytes produced on demand, so building a 1 GB member needs no 1 GB buffer."""

    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def gzip_bomb(path: Path, canary: Path, size: int = 1024 ** 3) -> str:
    def add_bomb(tar):
        info = tarfile.TarInfo(f"{TOP}/perf/perf.script.gz")
        info.size = size
        tar.addfile(info, io.BufferedReader(_Zeros(size), 1 << 20))
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w|") as tar:
                add_dir(tar, TOP)
                add_bomb(tar)
    return "bomb defence"


def not_gzip(path: Path, canary: Path) -> str:
    path.write_bytes(b"this is not a bundle\n" * 40)
    return "not a gzip-compressed tar bundle"


def truncated_gzip(path: Path, canary: Path) -> str:
    good = path.with_suffix(".good")
    write_bundle(good, files={"big.txt": bytes(range(256)) * 4096})
    data = good.read_bytes()
    good.unlink()
    path.write_bytes(data[: len(data) // 2])
    return "truncated"


HOSTILE = {
    "dotdot": dotdot, "absolute": absolute, "symlink_out": symlink_out,
    "symlink_then_write": symlink_then_write, "hardlink_out": hardlink_out, "chardev": chardev,
    "fifo": fifo, "setuid": setuid, "sibling_prefix": sibling_prefix, "outside_top": outside_top,
    "dup_names": dup_names, "case_dup_names": case_dup_names, "ctrl_char_name": ctrl_char_name,
    "newline_name": newline_name, "many_members": many_members, "not_gzip": not_gzip,
    "truncated_gzip": truncated_gzip,
}


def resum(bundle: Path) -> None:
    """Rewrite SHA256SUMS of an extracted bundle directory over its files as they are now."""
    from flamediag.bundlewriter import file_sha256

    lines = [f"{file_sha256(p)}  {p.relative_to(bundle).as_posix()}\n"
             for p in sorted(bundle.rglob("*")) if p.is_file() and p.name != "SHA256SUMS"]
    (bundle / "SHA256SUMS").write_text("".join(lines))
