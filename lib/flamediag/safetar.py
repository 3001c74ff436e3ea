"""Read an untrusted tarball safely: every member checked, every byte counted, nothing written
outside a private directory (doc/safety.md).

    extracted = extract(Path("flamediag-web1-20261122T031500Z.tar.gz"))
    extracted.root, extracted.top, extracted.digests   # private 0700 dir, top directory, name -> sha256

The tarball is scanned twice from the gzip stream. The first pass only validates (regular files
and directories, relative normalised names inside the one top directory, no links/devices/FIFOs/
setuid, no duplicates, no control characters, member and byte budgets counted on the bytes
actually decompressed) and writes nothing; the second pass copies the members into a fresh
private mkdtemp (0700, files O_EXCL|O_NOFOLLOW 0600). Any refusal is a BundleRefused (exit 65)
naming the member with repr() and the rule broken. What the members mean is bundle.py's job.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
import time
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from .errors import UserError
from .magic import GZIP_MAGIC, is_tar_block
from .text import CONTROL_OR_LAYOUT

# Budgets (env overrides exist for tests and for unusually large captures).
MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 2 * 1024 ** 3      # decompressed tar stream, counted as read
MAX_MEMBER_BYTES = 1024 ** 3         # one member, and one gunzipped member on read()
MAX_RATIO = 200                      # decompressed / compressed, checked past RATIO_FLOOR
RATIO_FLOOR = 64 * 1024 ** 2
MAX_NAME_CHARS = 1024
MAX_SECONDS = 600
CHUNK = 1 << 20
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _limit(name: str, default: int) -> int:
    """A budget, overridable by FLAMEDIAG_<NAME> (e.g. FLAMEDIAG_MAX_BUNDLE_BYTES=67108864)."""
    raw = os.environ.get(f"FLAMEDIAG_{name}", "")
    try:
        value = int(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def limits() -> Dict[str, int]:
    return {
        "members": _limit("MAX_MEMBERS", MAX_MEMBERS),
        "total": _limit("MAX_BUNDLE_BYTES", MAX_TOTAL_BYTES),
        "member": _limit("MAX_MEMBER_BYTES", MAX_MEMBER_BYTES),
        "ratio": _limit("MAX_RATIO", MAX_RATIO),
        "ratio_floor": _limit("RATIO_FLOOR", RATIO_FLOOR),
        "seconds": _limit("MAX_BUNDLE_SECONDS", MAX_SECONDS),
    }


class BundleRefused(UserError):
    """A hostile or unusable bundle: exit 65 with one line naming the member and the rule."""


def member_limit() -> int:
    """The byte budget of one member (and of one gunzipped member on read)."""
    return _limit("MAX_MEMBER_BYTES", MAX_MEMBER_BYTES)


# -- bounded reading ------------------------------------------------------------------------
def hash_stream(handle) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: handle.read(CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def read_capped(handle, limit: int, name: str) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{name!r} is larger than {limit} bytes")
    return data


def gunzip_bounded(source, limit: int, origin: str = "gzip data") -> bytes:
    """Gunzip a file object (or bytes) whole, refusing output beyond `limit` bytes (ValueError) and a
    bomb's compression ratio (BundleRefused, as open_gunzip)."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    out = io.BytesIO()
    stream = open_gunzip(source, origin)
    for chunk in iter(lambda: stream.read(CHUNK), b""):
        out.write(chunk)
        if out.tell() > limit:
            raise ValueError(f"decompresses to more than {limit} bytes")
    return out.getvalue()


def open_gunzip(handle, origin: str):
    """A gzip'd member as a stream of its plain bytes, under the same budgets as the outer stream:
    one member's size (FLAMEDIAG_MAX_MEMBER_BYTES) and the compression ratio past the floor; the
    bytes are never held whole. Raises BundleRefused (exit 65) when a budget is crossed."""
    budget = dict(limits())
    budget["total"] = budget["member"]
    packed = _CountingReader(handle, origin, budget)
    return _CountingReader(gzip.GzipFile(fileobj=packed), origin, budget, compressed=packed)


# -- name rules ---------------------------------------------------------------------------
def unsafe_name_reason(name: str) -> Optional[str]:
    """Why a member name is refused, or None when it is a relative, normalised, printable name.

    Examples:
        >>> unsafe_name_reason("flamediag-h-1/perf/perf.script.gz") is None
        True
        >>> unsafe_name_reason("/etc/passwd")
        'absolute name'
        >>> unsafe_name_reason("b/../../evil")
        "'..' component"
        >>> unsafe_name_reason("b/\\x1b[2J")
        'control character in name'
        >>> unsafe_name_reason("b/x\\udcff")
        'name is not UTF-8'
    """
    if not name:
        return "empty name"
    if len(name) > MAX_NAME_CHARS:
        return f"name longer than {MAX_NAME_CHARS} characters"
    if CONTROL_OR_LAYOUT.search(name):
        return "control character in name"
    if any("\udc80" <= char <= "\udcff" for char in name):
        return "name is not UTF-8"
    if name.startswith("/"):
        return "absolute name"
    if "\\" in name:
        return "backslash in name"
    parts = name.split("/")
    if ".." in parts:
        return "'..' component"
    if any(len(part) > 1 and part[1] == ":" and part[0].isalpha() for part in parts):
        return "absolute name (drive letter)"
    if any(part in ("", ".") for part in parts):
        return "not normalised (empty or '.' component)"
    if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in parts):
        return "component longer than 255 bytes"
    return None


# TarInfo predicate -> what the refusal calls it (links, devices and FIFOs are refused)
_KINDS = (("issym", "symlink"), ("islnk", "hardlink"), ("ischr", "character device"), ("isblk", "block device"),
          ("isfifo", "FIFO"), ("issparse", "sparse file"), ("isdir", "dir"), ("isreg", "file"))


def _member_kind(member: tarfile.TarInfo) -> str:
    return next((kind for test, kind in _KINDS if getattr(member, test)()), f"type {member.type!r}")


class _Scan:
    """The rules every member must pass, applied in the same way in both passes."""

    def __init__(self, origin: str, budget: Dict[str, int]):
        self.origin = origin
        self.budget = budget
        self.top: Optional[str] = None
        self.count = 0
        self.seen: Dict[str, str] = {}   # folded name -> kind, catches dups on case-insensitive disks
        self.files: List[str] = []
        self.digests: Dict[str, str] = {}

    def refuse(self, member_name: str, rule: str):
        return BundleRefused(f"{self.origin}: member {member_name!r} refused: {rule}")

    def check(self, member: tarfile.TarInfo) -> Optional[str]:
        """The path below the top directory ('' for the top itself); raises when refused."""
        self.count += 1
        if self.count > self.budget["members"]:
            raise BundleRefused(
                f"{self.origin}: more than {self.budget['members']} members: refused (bomb defence; "
                "raise FLAMEDIAG_MAX_MEMBERS if this bundle is trusted)")
        name = member.name
        kind = _member_kind(member)
        if kind not in ("file", "dir"):
            raise self.refuse(name, f"{kind} (only regular files and directories are accepted)")
        if member.mode & (stat.S_ISUID | stat.S_ISGID):
            raise self.refuse(name, "setuid/setgid bit set")
        reason = unsafe_name_reason(name)
        if reason:
            raise self.refuse(name, reason)
        if kind == "file" and member.size > self.budget["member"]:
            raise self.refuse(name, f"larger than {self.budget['member']} bytes (bomb defence)")
        return self._place(name, kind)

    def _place(self, name: str, kind: str) -> str:
        parts = name.split("/")
        if self.top is None:
            self.top = parts[0]
        if parts[0] != self.top:
            raise self.refuse(name, f"outside the one top directory {self.top!r}")
        if len(parts) == 1 and kind != "dir":
            raise self.refuse(name, "a file where the top directory belongs")
        folded = unicodedata.normalize("NFC", name).casefold()
        if folded in self.seen:
            raise self.refuse(name, "duplicate name (same name, or same name ignoring case)")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            parent_folded = unicodedata.normalize("NFC", parent).casefold()
            if self.seen.get(parent_folded) == "file":
                raise self.refuse(name, f"below {parent!r}, which is a file")
        self.seen[folded] = kind
        rel = "/".join(parts[1:])
        if kind == "file":
            self.files.append(rel)
        return rel


class _CountingReader:
    """Wraps a stream; raises BundleRefused past a byte budget, ratio or deadline."""

    def __init__(self, raw, origin: str, budget: Dict[str, int], compressed: Optional["_CountingReader"] = None):
        self.raw = raw
        self.origin = origin
        self.budget = budget
        self.compressed = compressed
        self.count = 0
        self.deadline = time.monotonic() + budget["seconds"]

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size if size is not None and size >= 0 else CHUNK)
        self.count += len(data)
        if self.compressed is not None:
            self._check()
        return data

    def close(self) -> None:
        self.raw.close()

    def budget_variable(self) -> str:
        return "FLAMEDIAG_MAX_MEMBER_BYTES" if self.budget["total"] == self.budget["member"] \
            else "FLAMEDIAG_MAX_BUNDLE_BYTES"

    def _check(self) -> None:
        if self.count > self.budget["total"]:
            raise BundleRefused(
                f"{self.origin}: decompressed size exceeds {self.budget['total']} bytes: refused "
                f"(bomb defence; raise {self.budget_variable()} if this bundle is trusted)")
        packed = max(self.compressed.count, 1)
        if self.count > self.budget["ratio_floor"] and self.count / packed > self.budget["ratio"]:
            raise BundleRefused(
                f"{self.origin}: compression ratio above {self.budget['ratio']}:1 after "
                f"{self.count} bytes: refused (bomb defence)")
        if time.monotonic() > self.deadline:
            raise BundleRefused(f"{self.origin}: reading took more than {self.budget['seconds']} s: refused")


class _TarPass:
    """One sequential pass over the (gzipped) tar stream with counted, capped reads."""

    def __init__(self, path: Path, budget: Dict[str, int]):
        self.path = path
        self.budget = budget

    def __enter__(self) -> tarfile.TarFile:
        self._raw = open(self.path, "rb")
        try:
            head = self._raw.read(2)
            self._raw.seek(0)
            packed = _CountingReader(self._raw, str(self.path), self.budget)
            stream = gzip.GzipFile(fileobj=packed, mode="rb") if head == GZIP_MAGIC else packed
            if head != GZIP_MAGIC and not _looks_like_tar(self._raw):
                raise BundleRefused(f"{self.path}: not a gzip-compressed tar bundle (first bytes {head!r}): refused")
            plain = _CountingReader(stream, str(self.path), self.budget, compressed=packed)
            self._tar = tarfile.open(fileobj=plain, mode="r|", ignore_zeros=False)
        except BaseException:
            self._raw.close()
            raise
        return self._tar

    def __exit__(self, *exc):
        try:
            self._tar.close()
        except Exception:  # noqa: BLE001 - closing after a refusal must not mask it
            pass
        self._raw.close()
        return False


def _looks_like_tar(raw) -> bool:
    raw.seek(0)
    block = raw.read(512)
    raw.seek(0)
    return is_tar_block(block)


def _translate(path: Path, err: BaseException) -> BundleRefused:
    if isinstance(err, EOFError):
        return BundleRefused(f"{path}: truncated (gzip stream ends early: {err}): refused")
    if isinstance(err, (gzip.BadGzipFile, zlib.error)):
        return BundleRefused(f"{path}: corrupt gzip data ({err}): refused")
    if isinstance(err, tarfile.ReadError) and "unexpected end" in str(err):
        return BundleRefused(f"{path}: truncated tar stream ({err}): refused")
    return BundleRefused(f"{path}: not a readable bundle ({err}): refused")


def _scan_pass(path: Path, budget: Dict[str, int]) -> _Scan:
    """Pass 1: validate every member header and count every byte; write nothing."""
    scan = _Scan(str(path), budget)
    with _TarPass(path, budget) as tar:
        for member in tar:
            scan.check(member)
    if scan.top is None:
        raise BundleRefused(f"{path}: empty archive: refused")
    return scan


def _extract_pass(path: Path, budget: Dict[str, int], dest: str) -> _Scan:
    """Pass 2: the same checks, then copy each regular file into dest (created by us)."""
    scan = _Scan(str(path), budget)
    with _TarPass(path, budget) as tar:
        for member in tar:
            rel = scan.check(member)
            if member.isdir():
                if rel:
                    _make_dirs(dest, rel.split("/"))
                continue
            _make_dirs(dest, rel.split("/")[:-1])
            scan.digests[rel] = _copy_member(tar.extractfile(member), os.path.join(dest, rel), budget, scan, member.name)
    return scan


def _make_dirs(dest: str, parts: List[str]) -> None:
    current = dest
    for part in parts:
        current = os.path.join(current, part)
        try:
            os.mkdir(current, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise BundleRefused(f"path conflict at {part!r}: refused")


def _copy_member(stream, target: str, budget: Dict[str, int], scan: _Scan, name: str) -> str:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags, 0o600)
    except OSError as err:
        raise scan.refuse(name, f"cannot be created safely ({err.strerror})")
    digest = hashlib.sha256()
    written = 0
    with os.fdopen(fd, "wb") as out:
        for chunk in iter(lambda: stream.read(CHUNK), b""):
            written += len(chunk)
            if written > budget["member"]:
                raise scan.refuse(name, f"larger than {budget['member']} bytes (bomb defence)")
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


# -- entry points -------------------------------------------------------------------------
@dataclass
class Extracted:
    root: str                   # the private directory holding the members (caller removes it)
    top: str                    # the tarball's one top directory
    digests: Dict[str, str]     # member path below top -> sha256 of the bytes written


def extract(path: Path) -> Extracted:
    """Validate, then copy the members of the tarball at `path` into a fresh private directory."""
    budget = limits()
    try:
        _scan_pass(path, budget)
        dest = tempfile.mkdtemp(prefix="flamediag-bundle-")
        try:
            scan = _extract_pass(path, budget, dest)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise
    except BundleRefused:
        raise
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise _translate(path, err) from None
    return Extracted(dest, scan.top or "", dict(scan.digests))


def looks_like_tarball(path: Path) -> bool:
    """A gzip'd tar or a plain tar, by content (False when unreadable)."""
    try:
        with open(path, "rb") as raw:
            head = raw.read(2)
            if head == GZIP_MAGIC:
                raw.seek(0)
                with gzip.GzipFile(fileobj=raw) as gz:
                    return is_tar_block(gz.read(512))
            return _looks_like_tar(raw)
    except (OSError, EOFError, zlib.error):
        return False
