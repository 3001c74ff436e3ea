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
        b.is_verified("proc.vmstat", phase="end") # False when the data's file failed SHA256SUMS
        b.top                                     # the bundle's top directory name

Safety (doc/safety.md): a tar bundle is scanned twice from the gzip stream. The first pass only
validates (regular files and directories, relative normalised names inside the one top directory,
no links/devices/FIFOs/setuid, no duplicates, no control characters, member and byte budgets
counted on the bytes actually decompressed) and writes nothing; the second pass copies the members
into a fresh private mkdtemp (0700, files O_EXCL|O_NOFOLLOW 0600) that is removed on close() or at
exit. Member data is read from there on demand, so memory stays bounded. Any refusal is a
UserError (exit 65) naming the member with repr() and the rule broken.

Collector names and default paths: lib/collectors.tsv (doc/bundle-format.md).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
import time
import unicodedata
import weakref
import zlib
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Set

from . import collectors
from .cli import UserError

# name -> path template ({phase}, {instance}) from lib/collectors.tsv, for data the manifest does not list
DEFAULT_PATHS = collectors.default_paths()

# Budgets (env overrides exist for tests and for unusually large captures).
MAX_MEMBERS = 10_000
MAX_TOTAL_BYTES = 2 * 1024 ** 3      # decompressed tar stream, counted as read
MAX_MEMBER_BYTES = 1024 ** 3         # one member, and one gunzipped member on read()
MAX_RATIO = 200                      # decompressed / compressed, checked past RATIO_FLOOR
RATIO_FLOOR = 64 * 1024 ** 2
MAX_NAME_CHARS = 1024
MAX_SECONDS = 600
MAX_MANIFEST_BYTES = 16 * 1024 ** 2
CHUNK = 1 << 20

_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


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


# -- storage: where member bytes live ------------------------------------------------------
class _MemoryStore:
    """Members held in memory (tests, and callers that build a Bundle from a dict)."""

    def __init__(self, files: Mapping[str, bytes]):
        self._files = dict(files)

    def names(self) -> List[str]:
        return list(self._files)

    def has(self, name: str) -> bool:
        return name in self._files

    def read(self, name: str) -> bytes:
        return self._files[name]

    def open(self, name: str):
        return io.BytesIO(self._files[name])

    def sha256(self, name: str) -> str:
        return hashlib.sha256(self._files[name]).hexdigest()

    def close(self) -> None:
        pass


class _DirStore:
    """Members as files below a root; only the validated names are ever opened."""

    def __init__(self, root: str, digests: Dict[str, Optional[str]], owned: bool):
        self.root = root
        self._digests = digests
        self._finalizer = weakref.finalize(self, shutil.rmtree, root, True) if owned else None

    def names(self) -> List[str]:
        return list(self._digests)

    def has(self, name: str) -> bool:
        return name in self._digests

    def open(self, name: str):
        if name not in self._digests:
            raise KeyError(name)
        fd = os.open(os.path.join(self.root, name), os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{name!r} is no longer a regular file")
        return os.fdopen(fd, "rb")

    def read(self, name: str) -> bytes:
        with self.open(name) as handle:
            return _read_capped(handle, _limit("MAX_MEMBER_BYTES", MAX_MEMBER_BYTES), name)

    def sha256(self, name: str) -> str:
        digest = self._digests.get(name)
        if digest is None:
            with self.open(name) as handle:
                digest = _hash_stream(handle)
            self._digests[name] = digest
        return digest

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Bundle:
    def __init__(self, files, origin: str, top: str = ""):
        # files: a mapping relative path -> bytes (in memory), or an internal store
        self._store = files if isinstance(files, (_MemoryStore, _DirStore)) else _MemoryStore(files)
        self.origin = origin
        self.top = top
        self.problems: List[str] = []
        self.unverified: Set[str] = set()
        self.manifest: dict = self._load_manifest()
        self._verify_sums()

    # -- context manager / cleanup ------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self) -> None:
        """Remove the private extraction directory (also done at interpreter exit)."""
        self._store.close()

    # -- lookup -----------------------------------------------------------------------
    @property
    def members(self) -> List[str]:
        return sorted(self._store.names())

    def _entries(self) -> List[dict]:
        entries = self.manifest.get("collectors")
        if not isinstance(entries, list):
            return []
        return [entry for entry in entries if isinstance(entry, dict)]

    def collector(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[dict]:
        for entry in self._entries():
            if entry.get("name") != name:
                continue
            if phase is not None and entry.get("phase") not in (phase, None):
                continue
            if instance is not None and entry.get("instance") != instance:
                continue
            return entry
        return None

    def instances(self, name: str) -> List[str]:
        seen: List[str] = []
        for entry in self._entries():
            inst = entry.get("instance")
            if entry.get("name") == name and isinstance(inst, str) and inst and inst not in seen:
                seen.append(inst)
        if not seen and "{instance}" in DEFAULT_PATHS.get(name, ""):
            seen = self._instances_from_paths(DEFAULT_PATHS[name])
        return seen

    def _instances_from_paths(self, template: str) -> List[str]:
        prefix, _, suffix = template.partition("{instance}")
        seen: List[str] = []
        for member in self.members:
            for phase in ("start", "end", ""):
                head = prefix.replace("{phase}", phase)
                if member.startswith(head) and member.endswith(suffix) and len(member) > len(head) + len(suffix):
                    inst = member[len(head):len(member) - len(suffix)]
                    if "/" not in inst and inst not in seen:
                        seen.append(inst)
        return seen

    def source(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[str]:
        entry = self.collector(name, phase, instance)
        if entry:
            outputs = entry.get("outputs")
            outputs = [out for out in outputs if isinstance(out, str)] if isinstance(outputs, list) else []
            present = [out for out in outputs if self._store.has(out)]
            for out in present:
                if not out.endswith(".log"):
                    return out
            if present:
                return present[0]
        template = DEFAULT_PATHS.get(name)
        if template:
            path = template.replace("{phase}", phase or "start").replace("{instance}", instance or "")
            if self._store.has(path):
                return path
        return None

    def is_verified(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> bool:
        """False when the collector's data file is missing from or fails SHA256SUMS."""
        path = self.source(name, phase, instance)
        return path is not None and path not in self.unverified

    def read(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[bytes]:
        path = self.source(name, phase, instance)
        if path is None:
            return None
        return self.read_path(path)

    def read_text(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> Optional[str]:
        data = self.read(name, phase, instance)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_path(self, path: str) -> Optional[bytes]:
        """A member's bytes (gunzipped, bounded, when its name ends in .gz), or None."""
        if not self._store.has(path):
            return None
        try:
            if path.endswith(".gz"):
                with self._store.open(path) as handle:
                    return _gunzip_bounded(handle, _limit("MAX_MEMBER_BYTES", MAX_MEMBER_BYTES))
            return self._store.read(path)
        except (OSError, EOFError, ValueError, zlib.error) as err:
            self._note(f"{path}: unreadable ({err})")
            return None

    def read_raw(self, path: str) -> Optional[bytes]:
        """A member's bytes exactly as stored (no gunzip), or None."""
        if not self._store.has(path):
            return None
        try:
            return self._store.read(path)
        except (OSError, ValueError) as err:
            self._note(f"{path}: unreadable ({err})")
            return None

    def open_member(self, path: str):
        """A binary file object on the stored bytes of a member (caller closes it)."""
        return self._store.open(path)

    def _note(self, sentence: str) -> None:
        if sentence not in self.problems:
            self.problems.append(sentence)

    # -- integrity --------------------------------------------------------------------
    def _load_manifest(self) -> dict:
        if not self._store.has("manifest.json"):
            self.problems.append("manifest.json missing: capture facts unknown")
            return {}
        try:
            with self._store.open("manifest.json") as handle:
                raw = handle.read(MAX_MANIFEST_BYTES + 1)
            if len(raw) > MAX_MANIFEST_BYTES:
                raise ValueError(f"larger than {MAX_MANIFEST_BYTES} bytes")
            manifest = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError, OSError) as err:
            self.problems.append(f"manifest.json unparseable ({str(err)[:200]}); capture was probably killed")
            return {}
        if not isinstance(manifest, dict):
            self.problems.append("manifest.json is not an object")
            return {}
        return manifest

    def _verify_sums(self) -> None:
        names = self._store.names()
        if not self._store.has("SHA256SUMS"):
            self.problems.append("SHA256SUMS missing: bundle integrity not verified")
            self.unverified = set(names)
            return
        listed = _parse_sums(self._store.read("SHA256SUMS"), self.problems)
        for name in sorted(names):
            if name == "SHA256SUMS":
                continue
            want = listed.get(name)
            if want is None:
                self.unverified.add(name)
                self.problems.append(f"{name}: not listed in SHA256SUMS (unverified)")
            elif self._store.sha256(name) != want:
                self.unverified.add(name)
                self.problems.append(f"{name}: SHA256 mismatch — file changed after capture (tampered or corrupted)")
        for name in sorted(listed):
            if not self._store.has(name):
                self.unverified.add(name)
                self.problems.append(f"{name}: listed in SHA256SUMS but missing from the bundle")
        self._carry_redaction_verdicts()

    def _carry_redaction_verdicts(self) -> None:
        """`flamediag redact` regenerates SHA256SUMS; files that failed verification before
        redaction stay unverified (recorded in manifest.redaction.unverified_in_source)."""
        redaction = self.manifest.get("redaction")
        earlier = redaction.get("unverified_in_source") if isinstance(redaction, dict) else None
        if not isinstance(earlier, list):
            return
        for name in earlier:
            if isinstance(name, str) and name not in self.unverified:
                self.unverified.add(name)
                self.problems.append(f"{name}: failed SHA256SUMS before redaction (unverified)")


def _parse_sums(raw: bytes, problems: List[str]) -> Dict[str, str]:
    """GNU sha256sum lines `<hex>  <name>` (or ` *<name>`); a name listed twice with two digests
    keeps an impossible digest so the file counts as mismatching."""
    listed: Dict[str, str] = {}
    bad = 0
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        digest, sep, name = line.partition(" ")
        name = name[1:] if name[:1] in (" ", "*") else name
        if name.startswith("./"):
            name = name[2:]
        digest = digest.strip().lower()
        if not sep or not name or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            bad += 1
            continue
        listed[name] = digest if listed.get(name, digest) == digest else "conflicting entries"
    if bad:
        problems.append(f"SHA256SUMS: {bad} malformed line(s) ignored")
    return listed


def _hash_stream(handle) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: handle.read(CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _read_capped(handle, limit: int, name: str) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{name!r} is larger than {limit} bytes")
    return data


def _gunzip_bounded(source, limit: int) -> bytes:
    """Gunzip a file object (or bytes), refusing output beyond `limit` bytes."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=source) as gz:
        while True:
            chunk = gz.read(CHUNK)
            if not chunk:
                break
            out.write(chunk)
            if out.tell() > limit:
                raise ValueError(f"decompresses to more than {limit} bytes")
    return out.getvalue()


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
    """
    if not name:
        return "empty name"
    if len(name) > MAX_NAME_CHARS:
        return f"name longer than {MAX_NAME_CHARS} characters"
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch in _BIDI for ch in name):
        return "control character in name"
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


def _member_kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "symlink"
    if member.islnk():
        return "hardlink"
    if member.ischr():
        return "character device"
    if member.isblk():
        return "block device"
    if member.isfifo():
        return "FIFO"
    if member.issparse():
        return "sparse file"
    if member.isdir():
        return "dir"
    if member.isreg():
        return "file"
    return f"type {member.type!r}"


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

    def _check(self) -> None:
        if self.count > self.budget["total"]:
            raise BundleRefused(
                f"{self.origin}: decompressed size exceeds {self.budget['total']} bytes: refused "
                "(bomb defence; raise FLAMEDIAG_MAX_BUNDLE_BYTES if this bundle is trusted)")
        packed = max(self.compressed.count, 1)
        if self.count > self.budget["ratio_floor"] and self.count / packed > self.budget["ratio"]:
            raise BundleRefused(
                f"{self.origin}: compression ratio above {self.budget['ratio']}:1 after "
                f"{self.count} bytes: refused (bomb defence)")
        if time.monotonic() > self.deadline:
            raise BundleRefused(f"{self.origin}: reading took more than {self.budget['seconds']} s: refused")


GZIP_MAGIC = b"\x1f\x8b"


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
    raw.seek(257)
    magic = raw.read(5)
    raw.seek(0)
    return magic == b"ustar"


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
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
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
def is_bundle(path: Path) -> bool:
    """True for a directory with a manifest, a file named like a tarball, or a gzip'd tar.

    Hostile or broken tarballs are still 'bundles' here so that open_bundle() refuses them with
    the reason instead of a caller treating them as some other input.
    """
    path = Path(path)
    if path.is_dir():
        return _find_top(path) is not None
    name = path.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        return True
    try:
        with open(path, "rb") as raw:
            head = raw.read(2)
            if head == GZIP_MAGIC:
                raw.seek(0)
                with gzip.GzipFile(fileobj=raw) as gz:
                    block = gz.read(512)
                return block[257:262] == b"ustar"
            return _looks_like_tar(raw)
    except (OSError, EOFError, zlib.error):
        return False


def open_bundle(path) -> Bundle:
    path = Path(path)
    if path.is_dir():
        return _open_directory(path)
    if not path.exists():
        raise UserError(f"{path}: no such file: give the bundle written by 'flamediag capture'")
    return _open_tar(path)


def _open_tar(path: Path) -> Bundle:
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
    store = _DirStore(dest, dict(scan.digests), owned=True)
    try:
        return Bundle(store, str(path), top=scan.top or "")
    except BaseException:
        store.close()
        raise


def _find_top(path: Path) -> Optional[Path]:
    if (path / "manifest.json").is_file():
        return path
    found = []
    for child in path.iterdir():
        if child.is_symlink() or not child.is_dir():
            continue
        if (child / "manifest.json").is_file() and not (child / "manifest.json").is_symlink():
            found.append(child)
    return found[0] if len(found) == 1 else None


def _open_directory(path: Path) -> Bundle:
    """An extracted bundle: regular files only, never following a symlink out of it."""
    top = _find_top(path) or path
    budget = limits()
    names: Dict[str, Optional[str]] = {}
    skipped: List[str] = []
    total = 0
    for root, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
        for name in sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, top).replace(os.sep, "/")
            info = os.lstat(full)
            if not stat.S_ISREG(info.st_mode) or unsafe_name_reason(rel):
                skipped.append(rel)
                continue
            if len(names) >= budget["members"]:
                raise BundleRefused(f"{path}: more than {budget['members']} files: refused")
            total += info.st_size
            if info.st_size > budget["member"] or total > budget["total"]:
                raise BundleRefused(f"{path}: file {rel!r} refused: over the size budget")
            names[rel] = None
    bundle = Bundle(_DirStore(str(top), names, owned=False), str(path), top=top.name)
    if skipped:
        shown = ", ".join(repr(name) for name in skipped[:5])
        bundle.problems.append(f"ignored {len(skipped)} entries that are not regular files or have unsafe names: {shown}")
    return bundle
