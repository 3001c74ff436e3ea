"""Write a bundle as doc/bundle-format.md lays it out: the one Python writer (redact, the sample
generator and the tests use it; capture's bash writer is lib/capture/pack.bash).

    write_directory(Path("out/flamediag-web1-20261122T031500Z"), {"manifest.json": b"{...}",
                    "perf/perf.script.gz": gz_bytes})       # files + SHA256SUMS
    write_tarball(Path("b.tar.gz"), "flamediag-web1-20261122T031500Z", tree)   # tree -> .tar.gz

SHA256SUMS lists every other file (`sha256sum -c` format), manifest.json first; the tarball holds
one top directory, manifest.json as its first member and SHA256SUMS as its last, and appears under
its final name only once complete.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional

from .safetar import hash_stream

SUMS = "SHA256SUMS"
MANIFEST = "manifest.json"


def sums_text(digests: Mapping[str, str]) -> bytes:
    """SHA256SUMS for {relative path: hex digest}: manifest.json first, then by name."""
    order = sorted(digests, key=lambda name: (name != MANIFEST, name))
    return "".join(f"{digests[name]}  {name}\n" for name in order).encode("utf-8", "surrogateescape")


def file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hash_stream(handle)


def tree_files(tree: Path) -> List[str]:
    """Relative paths of the regular files below `tree`, SHA256SUMS excluded."""
    return sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and p.name != SUMS)


def write_sums(tree: Path, names: Optional[Iterable[str]] = None) -> None:
    """tree/SHA256SUMS over `names` (default: every file below `tree`)."""
    names = tree_files(tree) if names is None else list(names)
    (tree / SUMS).write_bytes(sums_text({name: file_sha256(tree / name) for name in names}))


def write_directory(out: Path, files: Mapping[str, bytes], sums: bool = True,
                    tamper: Optional[Mapping[str, bytes]] = None) -> Path:
    """An extracted bundle at `out` (replaced when it exists): `files` and SHA256SUMS over them.

    `sums=False` leaves SHA256SUMS out; `tamper` replaces contents after the sums were computed
    (tests of the integrity check).
    """
    if out.exists():
        shutil.rmtree(out)
    for name, data in files.items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    out.mkdir(parents=True, exist_ok=True)
    if sums:
        (out / SUMS).write_bytes(sums_text({name: hashlib.sha256(data).hexdigest() for name, data in files.items()}))
    for name, data in (tamper or {}).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    return out


def write_tarball(out: Path, top: str, tree: Path, names: Optional[Iterable[str]] = None,
                  mtime: Optional[int] = None) -> Path:
    """`tree` (its `names`, default every file) as `out`.tar.gz below directory `top`: manifest.json
    first, SHA256SUMS last; written beside `out` and renamed into place."""
    names = tree_files(tree) if names is None else [n for n in names if n != SUMS]
    now = int(time.time()) if mtime is None else mtime
    order = [n for n in names if n == MANIFEST] + [n for n in names if n != MANIFEST]
    if (tree / SUMS).is_file():
        order.append(SUMS)
    fd, partial = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=str(out.parent))
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            _add_members(tar, top, tree, order, now)
        os.replace(partial, out)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise
    return out


def _add_members(tar: tarfile.TarFile, top: str, tree: Path, order: List[str], now: int) -> None:
    made: Dict[str, bool] = {}
    tar.addfile(_dir_info(top, now))
    for name in order:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent not in made:
                made[parent] = True
                tar.addfile(_dir_info(f"{top}/{parent}", now))
        info = tarfile.TarInfo(f"{top}/{name}")
        info.size = (tree / name).stat().st_size
        info.mode, info.mtime = 0o644, now
        with open(tree / name, "rb") as handle:
            tar.addfile(info, handle)


def _dir_info(name: str, now: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
    return info


def write_bundle_tarball(out: Path, top: str, files: Mapping[str, bytes], sums: bool = True,
                         tamper: Optional[Mapping[str, bytes]] = None) -> Path:
    """In-memory `files` as a bundle tarball (write_directory, then write_tarball)."""
    with tempfile.TemporaryDirectory(prefix="flamediag-bundle-") as work:
        tree = write_directory(Path(work) / "tree", files, sums=sums, tamper=tamper)
        return write_tarball(out, top, tree, [n for n in files if n != SUMS] + list(set(tamper or {}) - set(files)))
