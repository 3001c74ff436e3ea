"""Detect what `diagnose` was given, by content, and reduce it to a Profile plus Facts.

Accepted (doc/diagnose.md): a bundle (.tar.gz, or an extracted directory with manifest.json),
`perf script` text (plain or gzip), folded stacks (plain or gzip), else a ticket paste
(perf report / top / crash bt text, read by flamediag.paste). The file name never decides.

    >>> sniff(b"java;a;b 12\\n")
    'folded'
    >>> sniff(b"hello world\\n")
    'paste'
"""
from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import tarfile
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

from . import errors
from .errors import UserError
from .magic import is_gzip, is_tar_block
from .manifest import Capture, interpret
from .profile import Frame, Profile
from .text import from_os

SNIFF_BYTES = 1 << 16
MAX_TEXT_BYTES = 1 << 30          # one input read from a pipe
MAX_PASTE_BYTES = 32 << 20        # a ticket paste (perf report / top / crash text)
EVIDENCE_SCAN_BYTES = 1 << 20     # perf script / folded text searched for pasted evidence (rule BJ1)


class EmptyFacts:
    """Facts for inputs without metrics (plain perf script / folded): every check is "not captured"."""

    data_quality: List[str] = []

    def __contains__(self, name: str) -> bool:
        return False

    def get(self, name: str, default: Any = None) -> Any:
        return default

    def source(self, name: str) -> Optional[str]:
        return None


@dataclass
class Input:
    name: str                       # display name of the input (file or directory name)
    kind: str                       # bundle | perf-script | folded | paste
    profile: Profile
    facts: Any
    stack_source: str               # where the stacks came from (bundle-relative path or file name)
    capture: Capture = field(default_factory=lambda: interpret(None))   # the manifest, interpreted
    problems: List[str] = field(default_factory=list)      # bundle integrity / reader sentences
    unverified: set = field(default_factory=set)           # bundle files failing SHA256SUMS
    notes: List[str] = field(default_factory=list)

    @property
    def manifest(self) -> Dict[str, Any]:
        """The manifest's fields of their documented types (manifest.py)."""
        return self.capture.fields

    @property
    def tools_missing(self) -> List[str]:
        return self.capture.tools_missing(getattr(self.facts, "collectors_read", ()))


def _gunzip_head(data: bytes) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            return handle.read(SNIFF_BYTES)
    except (OSError, EOFError):
        return b""


def sniff(head: bytes) -> str:
    """perf-script | folded | paste, from the first bytes of a text input."""
    if is_gzip(head):
        head = _gunzip_head(head)
    from . import folded, perfscript

    if perfscript.is_perf_script(head):
        return "perf-script"
    if folded.is_folded(head):
        return "folded"
    return "paste"


def _is_tar(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(str(path))
    except (OSError, tarfile.TarError):
        return False


def display_name(path: Path) -> str:
    name = from_os(path.name or str(path))
    for suffix in (".tar.gz", ".tgz", ".gz", ".txt", ".script", ".folded", ".collapsed", ".tar"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


PERF_DATA_MAGICS = (b"PERFILE2", b"2ELIFREP", b"PERFFILE")    # perf.data, both byte orders, and v1
BUNDLE_SUFFIXES = (".tar.gz", ".tgz")
MAX_LISTED = 10


def refuse_perf_data(path: Path, head: bytes) -> None:
    """perf.data is the most common wrong attachment: say what to run instead."""
    if head[:8] in PERF_DATA_MAGICS:
        raise UserError(f"{path}: this is binary perf data: run `perf script` on the host that recorded it (its "
                        f"symbols are there), e.g. `perf script -i {path.name} | gzip > perf.script.gz`, and "
                        "diagnose that, or capture with `flamediag capture`")


def bundles_in(directory: Path) -> List[str]:
    """Names of the bundles one level down: extracted directories and .tar.gz files."""
    found = []
    try:
        children = sorted(directory.iterdir())
    except OSError:
        return []
    for child in children:
        if child.is_symlink():
            continue
        if (child.is_dir() and (child / "manifest.json").is_file()) or \
                (child.is_file() and child.name.endswith(BUNDLE_SUFFIXES)):
            found.append(child.name)
    return found


def check_bundle_directory(path: Path, hint: str = "give a bundle, perf script text, folded stacks or a ticket paste"
                           ) -> None:
    """A directory is a bundle when it (or its only subdirectory) holds manifest.json."""
    if (path / "manifest.json").is_file():
        return
    inside = bundles_in(path)
    extracted = [name for name in inside if (path / name).is_dir()]
    if len(inside) == 1 and len(extracted) == 1:
        return
    if inside:
        shown = ", ".join(inside[:MAX_LISTED]) + (f" and {len(inside) - MAX_LISTED} more" if len(inside) > MAX_LISTED else "")
        raise UserError(f"{path}: a directory holding {len(inside)} bundles, not a bundle: diagnose one at a time "
                        f"({shown})")
    raise UserError(f"{path}: a directory without a bundle (no manifest.json in it or in one subdirectory): {hint}")


OTHER_COMPRESSION = {b"BZh": ("bzip2", "bunzip2"), b"\xfd7zXZ\x00": ("xz", "unxz"),
                     b"\x28\xb5\x2f\xfd": ("zstd", "unzstd")}
BINARY_HEAD = 8000       # git's rule: a NUL byte in the first 8000 bytes means binary, not text


def refuse_unreadable_kinds(path: Path, head: bytes) -> None:
    """perf.data, bundles compressed with something else than gzip, and binary data (/dev/zero,
    a core file) are refused from their first bytes, before anything is read whole."""
    refuse_perf_data(path, head)
    for magic, (name, tool) in OTHER_COMPRESSION.items():
        if head.startswith(magic):
            raise UserError(f"{path}: compressed with {name}, not gzip: flamediag reads gzip bundles and text; "
                            f"run `{tool} {path.name}` (or recompress with gzip) and diagnose the result")
    if not is_gzip(head) and not is_tar_block(head[:512]) and b"\0" in head[:BINARY_HEAD]:
        raise UserError(f"{path}: binary data (NUL bytes), not text, gzip or a bundle: give a bundle, "
                        "perf script text, folded stacks or a ticket paste")


def is_stream(path_text: str) -> bool:
    """`-` (stdin), a pipe, a socket or a device: read once, in order; it cannot be reopened."""
    if path_text == "-":
        return True
    try:
        mode = os.stat(path_text).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def stream_name(path_text: str) -> str:
    return "stdin" if path_text == "-" or path_text in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0") \
        else (Path(path_text).name or "stream")


def input_name(path_text: str) -> str:
    """The input's display name, also for `-` and pipes (`stdin`)."""
    return display_name(Path(stream_name(path_text) if is_stream(path_text) else path_text))


def load(path_text: str, stacks: bool = True) -> Input:
    """The input at `path_text`, detected by content. `stacks=False` (flamediag facts) reads only
    the metrics: no stacks are parsed, and a paste without stacks is fine. `-`, a pipe or a device
    is copied once (bounded) into a private file first: every reader below may reopen its path."""
    inp = _load_stream(path_text, stacks) if is_stream(path_text) else _load_path(Path(path_text), stacks)
    inp.profile.note_timer_event()
    return inp


def _load_stream(path_text: str, stacks: bool) -> Input:
    shown = "-" if path_text == "-" else path_text
    with tempfile.TemporaryDirectory(prefix="flamediag-stream-") as private:
        copy = Path(private) / stream_name(path_text)
        try:
            _spool(path_text, copy)
            return _load_path(copy, stacks)
        except UserError as err:
            raise UserError(str(err).replace(str(copy), shown), err.code)


def _spool(path_text: str, copy: Path) -> None:
    """Copy the stream into `copy`, refusing binary data from its head and anything past the cap."""
    limit = MAX_TEXT_BYTES
    source = sys.stdin.buffer if path_text == "-" else open(path_text, "rb")
    try:
        head = source.read(SNIFF_BYTES)
        if not head:
            raise UserError(f"{path_text}: empty input: no stacks found")
        refuse_unreadable_kinds(Path(path_text), head)
        with open(copy, "xb") as out:
            out.write(head)
            copied = len(head)
            for chunk in iter(lambda: source.read(1 << 20), b""):
                copied += len(chunk)
                if copied > limit:
                    raise UserError(f"{path_text}: more than {limit} bytes: too large for one input "
                                    "(give a bundle, or cut the text to the incident)")
                out.write(chunk)
    except OSError as err:
        raise UserError(f"{path_text}: cannot read ({err.strerror})", errors.NOPERM)
    finally:
        if source is not sys.stdin.buffer:
            source.close()


def _load_path(path: Path, stacks: bool) -> Input:
    if path.is_dir():
        check_bundle_directory(path)
        return _load_bundle(path, stacks)
    if not path.exists():
        raise UserError(f"{path}: no such file or directory: give a bundle, perf script text or folded stacks")
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as err:
        raise UserError(f"{path}: cannot read ({err.strerror}): check the path and permissions",
                        errors.NOPERM if isinstance(err, PermissionError) else errors.DATAERR)
    if not head:
        raise UserError(f"{path}: empty file: no stacks found")
    refuse_unreadable_kinds(path, head)
    # A file named like a tarball goes to the bundle reader even when broken or hostile, so the
    # user gets the reader's reason (not gzip, truncated, bad member) instead of "no stacks found".
    from .bundle import is_bundle

    if is_bundle(path) or ((is_gzip(head) or is_tar_block(head)) and _is_tar(path)):
        return _load_bundle(path, stacks)
    kind = sniff(head)
    if kind == "paste":
        return _load_paste(path) if stacks else _load_evidence(path)
    if not stacks:
        return Input(display_name(path), kind, Profile(), EmptyFacts(), from_os(path.name))
    return _load_stacks(path, kind)


# -- stacks files ---------------------------------------------------------------------------
def _read_stream(path: Path, kind: str) -> Profile:
    from . import folded, perfscript
    from .progress import Progress

    progress = Progress.for_input(str(path), f"reading {path.name}")
    try:
        if kind == "perf-script":
            return perfscript.read_profile_file(str(path), progress=progress)
        with open(path, "rb") as handle:
            progress.watch(handle)
            return folded.read_profile(handle)
    finally:
        progress.done()


def _require_stacks(profile: Profile, where: str) -> None:
    if not profile.records:
        why = f": {' '.join(profile.data_quality)}" if profile.data_quality else ""
        raise UserError(f"{where}: no stacks found (is it `perf script` output, folded stacks or a bundle?){why}")


def _load_stacks(path: Path, kind: str) -> Input:
    profile = _read_stream(path, kind)
    if not profile.records:
        return _load_paste(path)     # an excerpt from a ticket (one sample, no closing blank line)
    if _holds_pasted_evidence(path, profile):
        return _load_paste(path)     # stacks and command output from a ticket (rule BJ1)
    _mark_not_cpu(profile, path)
    return Input(display_name(path), kind, profile, EmptyFacts(), from_os(path.name),
                 notes=["no metrics in this input: corroborating checks are not captured"])


def _holds_pasted_evidence(path: Path, profile: Profile) -> bool:
    """Rule BJ1: `perf script` samples or folded stacks copied into a ticket with the output of
    sysctl, mpstat, vmstat ... pasted after them. The stacks reader skips (or, for `perf script`,
    misreads as frameless samples: `numa_hit  1220133 1219022` has the shape of a sample header)
    the command output; the ticket-paste reader cuts it into the metric sections that corroborate
    the findings and reads the samples alone. Only a text the stacks reader skipped lines of, and
    no larger than EVIDENCE_SCAN_BYTES, is looked at: an excerpt copied into a ticket is kilobytes,
    and a capture tool's own output (megabytes) never holds these sections."""
    from .paste import read_evidence
    if not profile.skipped_lines:
        return False
    try:
        if path.stat().st_size > EVIDENCE_SCAN_BYTES:
            return False
    except OSError:
        return False
    return bool(read_evidence(_paste_text(path)))


def _mark_not_cpu(profile: Profile, path: Path) -> None:
    """Off-CPU stacks (bcc offcputime -f, sched_switch recordings) are not CPU time."""
    from .offcpu import has_waker_separator, offcpu_reason

    with open(path, "rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace")
    comments = "\n".join(line for line in head.split("\n") if line.startswith("#"))
    reason = offcpu_reason(((r.frames[-1].name, r.weight) for r in profile if r.frames), comments,
                           has_waker_separator(r.names() for r in profile))
    if reason:
        profile.not_cpu = reason
        profile.data_quality.append(f"not a CPU profile, not diagnosed: {reason}")


def _load_paste(path: Path) -> Input:
    try:
        from .paste import read_paste
    except ImportError:
        raise UserError(f"{path}: no stacks found (not perf script, folded stacks or a bundle)")
    try:
        result = read_paste(_paste_text(path))
    except UserError as err:
        raise UserError(str(err) if str(path) in str(err) else f"{path}: {err}", err.code)
    _require_stacks(result.profile, str(path))
    facts = _paste_facts(getattr(result, "sections", None) or {})
    notes = list(getattr(result, "notes", None) or [])
    formats = getattr(result, "formats", None) or []
    if formats:
        notes.insert(0, "ticket paste read as: " + ", ".join(str(f) for f in formats))
    return Input(display_name(path), "paste", result.profile, facts, from_os(path.name), notes=notes)


def _paste_text(path: Path) -> str:
    """A ticket paste, whole: text copied from a ticket is never near MAX_PASTE_BYTES; larger text is
    refused before it is read (the paste readers hold it several times over)."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_PASTE_BYTES + 1)
    if len(data) > MAX_PASTE_BYTES:
        raise UserError(f"{path}: more than {MAX_PASTE_BYTES // 1024 ** 2} MiB of text that is neither perf script nor "
                        "folded stacks: too large for a ticket paste; give the bundle, `perf script` output or "
                        "folded stacks")
    return data.decode("utf-8", errors="replace")


def _load_evidence(path: Path) -> Input:
    from .paste import read_evidence

    return Input(display_name(path), "paste", Profile(), _paste_facts(read_evidence(_paste_text(path))), from_os(path.name))


def _paste_facts(sections: Dict[str, str]):
    if not sections:
        return EmptyFacts()
    try:
        from .facts import build_facts_from_sections
    except ImportError:
        return EmptyFacts()
    return build_facts_from_sections(sections)


# -- bundles ----------------------------------------------------------------------------------
def _perf_script_profile(stream: BinaryIO) -> Profile:
    from . import perfscript

    return perfscript.read_profile(stream)


def _folded_profile(stream: BinaryIO) -> Profile:
    from . import folded

    return folded.read_profile(stream)


def _bpftrace_profile(stream: BinaryIO) -> Profile:
    """bpftrace `@[kstack] = count()` maps (capture's profile when bcc cannot compile), read by the
    paste reader of the same format. Kernel stacks only, without commands or CPUs; `@[]: N` counts
    the samples taken in user space (no kernel stack), kept as busy user time."""
    from .bundle import MAX_TEXT_MEMBER_BYTES
    from .paste.stacktext import read_bpftrace

    lines = stream.read(MAX_TEXT_MEMBER_BYTES).decode("utf-8", errors="replace").splitlines()
    profile = Profile(source_format="bpftrace-kstack")
    block = read_bpftrace(lines, 0)
    for frames, weight, comm, cpu, context in block.stacks if block else []:
        profile.add(frames, weight, comm=comm, cpu=cpu, context=context)
    if profile.records:
        profile.data_quality.append("stacks from bpftrace (no perf stacks in this bundle): kernel stacks only, "
                                    "without command names or CPUs, so per-CPU and per-command checks cannot run")
    return profile


# The collectors whose `reader` is `stacks` in lib/collectors.tsv, in order of preference.
STACK_READERS = {"perf.script": _perf_script_profile, "bpf.profile": _folded_profile,
                 "bpftrace.profile": _bpftrace_profile}


def _bundle_profile(bundle) -> Tuple[Profile, str]:
    if "manifest.json" not in bundle.members:
        raise UserError(f"{bundle.origin}: not a flamediag bundle (no manifest.json, no usable stacks): give a "
                        "bundle written by `flamediag capture`, perf script text or folded stacks")
    for name, reader in STACK_READERS.items():
        path = bundle.source(name)
        if not path or path not in bundle.members:
            continue
        try:
            with bundle.open_path(path) as stream:      # streamed: a gzip bomb is stopped by its ratio
                profile = reader(stream)
        except (OSError, EOFError, zlib.error) as err:
            bundle.problems.append(f"{path}: unreadable ({err})")
            continue
        if profile.records:
            return profile, path
    raise UserError(f"{bundle.origin}: bundle has no usable stacks (perf/perf.script.gz missing or empty); "
                    "see its manifest.json perf.record entry for why, and recapture")


def _bundle_facts(bundle, capture: Capture):
    try:
        from .facts import build_facts
    except ImportError:
        return EmptyFacts()
    return build_facts(bundle, capture)


def _load_bundle(path: Path, stacks: bool = True) -> Input:
    from .bundle import open_bundle

    bundle = open_bundle(path)
    try:
        profile, source = _bundle_profile(bundle) if stacks else (Profile(), "")
        capture = interpret(bundle.manifest)
        return Input(display_name(path), "bundle", profile, _bundle_facts(bundle, capture), source, capture=capture,
                     problems=list(bundle.problems), unverified=set(bundle.unverified))
    finally:
        close = getattr(bundle, "close", None)
        if callable(close):
            close()
