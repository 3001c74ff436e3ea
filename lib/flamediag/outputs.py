"""Write a command's set of output files into a directory safely: the one writer for `-o DIR`.

    from flamediag import outputs
    paths = outputs.write_set(Path("out"), {"report.md": b"...", "findings.json": b"{...}\\n"})
    paths["report.md"]          # Path("out/report.md")

Promises (doc/safety.md, "Output directories"):
- nothing is written through a link planted in DIR: every file is created with
  O_CREAT|O_EXCL|O_NOFOLLOW (mode 0644 less the umask) in a fresh private directory made inside
  DIR, then renamed over the old name; rename replaces a planted symlink, it never follows it;
- DIR must be a directory owned by the user running the command (or by root): a directory of
  another user could be swapped under us, so it is refused (exit 77, like an unwritable DIR);
- the set is replaced as a whole: files are complete before the first rename; the renames run
  with SIGINT/SIGTERM/SIGHUP held back and `findings.json`-like last names last (the caller's
  order), so an interrupt never leaves one input's report beside another input's findings;
  a previous set's files that this set does not rewrite are left alone;
- two commands writing the same DIR take turns (flock on DIR), so their sets never mix;
- any failure removes the private directory; the old set stays as it was.
Errors are `UserError`s naming the path: 77 (cannot write there), 1 (disk full).
"""
from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, Mapping

from . import errors
from .errors import UserError

HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
# TEST-ONLY knob (test/python/test_outputs.py): when set to a path, write_set creates that file after
# its first rename and waits (at most PAUSE_LIMIT_SECONDS) until a held signal is pending, so a test
# can deliver SIGTERM exactly between two renames. Unset in normal runs, where it does nothing.
TEST_PAUSE_ENV = "FLAMEDIAG_TEST_PAUSE_BETWEEN_RENAMES"
PAUSE_LIMIT_SECONDS = 120
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def write_set(directory: Path, files: Mapping[str, bytes]) -> Dict[str, Path]:
    """Write `files` ({plain file name: content}) into `directory` as one set; return their paths.

    Names are plain file names (no `/`); they are renamed into place in the mapping's order, so
    put the file that marks a finished set (findings.json) last."""
    for name in files:
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"output name must be a plain file name: {name!r}")
    directory = Path(directory)
    _make_directory(directory)
    with _locked(directory), _private_dir(directory) as staging:
        for name, content in files.items():
            _write_new(staging / name, content, directory)
        with _signals_held():
            for index, name in enumerate(files):
                _rename(staging / name, directory / name)
                if index == 0 and len(files) > 1:
                    _test_pause_between_renames()
    return {name: directory / name for name in files}


def check_target(directory: Path) -> None:
    """Refuse early (before long work) a `-o` that write_set would refuse: not a directory, not
    owned by us or root. A missing directory is fine: it will be created."""
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return
    except OSError as err:
        raise _cannot_write(directory, err)
    if not stat.S_ISDIR(info.st_mode):
        raise UserError(f"{directory}: exists and is not a directory: choose another directory with -o", errors.NOPERM)
    if info.st_uid not in (os.geteuid(), 0):
        raise UserError(f"{directory}: owned by another user (uid {info.st_uid}), who could swap files in it: "
                        "choose a directory of your own with -o", errors.NOPERM)


def _make_directory(directory: Path) -> None:
    check_target(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cannot_write(directory, err)
    check_target(directory)


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise _cannot_write(directory, err)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextmanager
def _private_dir(directory: Path) -> Iterator[Path]:
    try:
        staging = Path(tempfile.mkdtemp(prefix=".flamediag-", dir=directory))
    except OSError as err:
        raise _cannot_write(directory, err)
    try:
        yield staging
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()


def _write_new(path: Path, content: bytes, directory: Path) -> None:
    try:
        fd = os.open(path, CREATE_FLAGS, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
    except OSError as err:
        raise _cannot_write(directory, err)


def _rename(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except OSError as err:
        raise _cannot_write(target, err)


@contextmanager
def _signals_held() -> Iterator[None]:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _test_pause_between_renames() -> None:
    """Test-only (TEST_PAUSE_ENV): announce the point between two renames, wait for a held signal."""
    marker = os.environ.get(TEST_PAUSE_ENV)
    if not marker:
        return
    Path(marker).touch()
    deadline = time.monotonic() + PAUSE_LIMIT_SECONDS
    while not signal.sigpending() & HELD_SIGNALS and time.monotonic() < deadline:
        time.sleep(0.01)


def _cannot_write(where: Path, err: OSError) -> UserError:
    code = errors.PARTIAL if err.errno in (errno.ENOSPC, errno.EDQUOT) else errors.NOPERM
    reason = err.strerror or str(err)
    return UserError(f"{where}: cannot write ({reason}): choose another directory with -o", code)
