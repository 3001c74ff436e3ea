"""Open a capture bundle (.tar.gz or extracted directory) and read its data by collector name.

API (stable):

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

Safety (doc/safety.md): a tarball is read by safetar.py (checked members, counted bytes, a
private 0700 directory removed on close() or at exit); an extracted directory is walked without
following links. Member data is read on demand, so memory stays bounded. This module gives the
members their meaning: the manifest, SHA256SUMS verification, lookup by collector name.

Collector names and default paths: lib/collectors.tsv (doc/bundle-format.md).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import weakref
import zlib
from pathlib import Path
from contextlib import contextmanager
from typing import BinaryIO, Dict, Iterator, List, Mapping, Optional, Set

from . import collectors, errors
from .errors import UserError
from .safetar import (O_NOFOLLOW, O_NONBLOCK, BundleRefused, extract, gunzip_bounded, hash_stream, limits,
                      looks_like_tarball, member_limit, open_gunzip, read_capped, unsafe_name_reason)

__all__ = ["DEFAULT_PATHS", "Bundle", "BundleRefused", "is_bundle", "limits", "open_bundle", "unsafe_name_reason"]

# name -> path template ({phase}, {instance}) from lib/collectors.tsv, for data the manifest does not list
DEFAULT_PATHS = collectors.default_paths()

# Budgets (env overrides exist for tests and for unusually large captures).
MAX_MANIFEST_BYTES = 16 * 1024 ** 2
MAX_SUMS_LINE = 4096       # 64 hex digits, two spaces and a name of at most 1024 characters
MAX_LISTED_PROBLEMS = 10   # integrity sentences per kind; the rest are counted in one
MAX_TEXT_MEMBER_BYTES = 32 * 1024 ** 2     # a collector's text output read for facts (read_text)
MAX_MANIFEST_DEPTH = 32     # ours is 3 deep; every reader of the manifest may walk it recursively


def _check_depth(value) -> None:
    """ValueError when JSON `value` nests deeper than MAX_MANIFEST_DEPTH (walked without recursion)."""
    level = [value]
    for _ in range(MAX_MANIFEST_DEPTH):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return
    raise ValueError(f"nested deeper than {MAX_MANIFEST_DEPTH} levels")


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
        path = os.path.join(self.root, name)
        try:
            fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        except PermissionError:
            raise UserError(f"{path}: cannot read (permission denied): run as a user who can read every file "
                            "of the bundle", errors.NOPERM)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{name!r} is no longer a regular file")
        return os.fdopen(fd, "rb")

    def read(self, name: str) -> bytes:
        with self.open(name) as handle:
            return read_capped(handle, member_limit(), name)

    def sha256(self, name: str) -> str:
        digest = self._digests.get(name)
        if digest is None:
            with self.open(name) as handle:
                digest = hash_stream(handle)
            self._digests[name] = digest
        return digest

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()


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
        """A collector's output as text, or None; past MAX_TEXT_MEMBER_BYTES (no collector writes
        that much) it is not read, and a problem sentence says so."""
        path = self.source(name, phase, instance)
        if path is None or not self._store.has(path):
            return None
        try:
            with self.open_path(path) as stream:
                data = stream.read(MAX_TEXT_MEMBER_BYTES + 1)
        except (OSError, EOFError, ValueError, zlib.error) as err:
            self._note(f"{path}: unreadable ({err})")
            return None
        if len(data) > MAX_TEXT_MEMBER_BYTES:
            self._note(f"{path}: larger than {MAX_TEXT_MEMBER_BYTES // 1024 ** 2} MiB: not read (its facts are "
                       "not captured)")
            return None
        return data.decode("utf-8", errors="replace")

    def read_path(self, path: str) -> Optional[bytes]:
        """A member's bytes (gunzipped, bounded, when its name ends in .gz), or None."""
        if not self._store.has(path):
            return None
        try:
            if path.endswith(".gz"):
                with self._store.open(path) as handle:
                    return gunzip_bounded(handle, member_limit(), f"member {path}")
            return self._store.read(path)
        except (OSError, EOFError, ValueError, zlib.error, BundleRefused) as err:
            self._note(f"{path}: unreadable ({err})")
            return None

    @contextmanager
    def open_path(self, path: str) -> Iterator[BinaryIO]:
        """A member as a stream of its plain bytes (gunzipped when its name ends in .gz, under the
        member size and ratio budgets: BundleRefused past them), for readers that stream."""
        with self._store.open(path) as handle:
            yield open_gunzip(handle, f"{self.origin}: member {path}") if path.endswith(".gz") else handle

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
            _check_depth(manifest)
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
        with self._store.open("SHA256SUMS") as handle:
            listed = _parse_sums(handle, self.problems, limits()["members"])
        if listed is None:
            self.unverified = set(names)
            return
        mismatched, unlisted = [], []
        for name in sorted(names):
            if name == "SHA256SUMS":
                continue
            want = listed.get(name)
            if want is None:
                unlisted.append(name)
            elif self._store.sha256(name) != want:
                mismatched.append(name)
        missing = [name for name in sorted(listed) if not self._store.has(name)]
        self._flag(unlisted, "not listed in SHA256SUMS (unverified)")
        self._flag(mismatched, "SHA256 mismatch — file changed after capture (tampered or corrupted)")
        self._flag(missing, "listed in SHA256SUMS but missing from the bundle")
        self._carry_redaction_verdicts()

    def _flag(self, names: List[str], why: str) -> None:
        """Mark `names` unverified: one problem sentence each for the first few, then one count."""
        self.unverified.update(names)
        for name in names[:MAX_LISTED_PROBLEMS]:
            self.problems.append(f"{name}: {why}")
        if len(names) > MAX_LISTED_PROBLEMS:
            self.problems.append(f"{len(names) - MAX_LISTED_PROBLEMS} more files: {why}")

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


def _parse_sums(handle, problems: List[str], max_entries: int) -> Optional[Dict[str, str]]:
    """GNU sha256sum lines `<hex>  <name>` (or ` *<name>`), streamed; a name listed twice with two
    digests keeps an impossible digest so the file counts as mismatching. None (with one problem
    sentence) when the file lists more entries than a bundle may hold members: it is not usable."""
    listed: Dict[str, str] = {}
    bad = 0
    for raw_line in iter(lambda: handle.readline(MAX_SUMS_LINE), b""):
        line = raw_line.decode("utf-8", errors="replace").rstrip("\r\n")
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
        if len(listed) > max_entries:
            problems.append(f"SHA256SUMS lists more than {max_entries} files, more than a bundle may hold: "
                            "not used, bundle integrity not verified")
            return None
    if bad:
        problems.append(f"SHA256SUMS: {bad} malformed line(s) ignored")
    return listed


# -- entry points -------------------------------------------------------------------------
def is_bundle(path: Path) -> bool:
    """True for a directory with a manifest, a file named like a tarball, or a gzip'd tar.

    Hostile or broken tarballs are still 'bundles' here so that open_bundle() refuses them with
    the reason instead of a caller treating them as some other input.
    """
    path = Path(path)
    if path.is_dir():
        return _find_top(path) is not None
    if path.name.lower().endswith((".tar.gz", ".tgz", ".tar")):
        return True
    return looks_like_tarball(path)


def open_bundle(path) -> Bundle:
    path = Path(path)
    if path.is_dir():
        return _open_directory(path)
    if not path.exists():
        raise UserError(f"{path}: no such file: give the bundle written by 'flamediag capture'")
    return _open_tar(path)


def _open_tar(path: Path) -> Bundle:
    extracted = extract(path)
    store = _DirStore(extracted.root, dict(extracted.digests), owned=True)
    try:
        return Bundle(store, str(path), top=extracted.top)
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
