"""Shared command-line plumbing: usage blocks that end in examples, exit codes, clean errors.

Every Python subcommand builds its parser with `make_parser()` and runs through `run()`:
- `--help` prints the usage block (ending in examples) to stdout, exit 0;
- a bad flag prints the usage to stderr, exit 2;
- `UserError` prints one line `flamediag SUB: ERROR: ...` and exits with its code;
- Ctrl-C exits 130, a broken pipe (`| head`) exits quietly.
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import sys
from typing import Callable, Sequence

from . import exitcodes


class UserError(Exception):
    """An error the user can fix; printed as one line, never as a traceback."""

    def __init__(self, message: str, code: int = exitcodes.DATAERR):
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # bad usage: usage to stderr, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.stderr.write(self.epilog_hint())
        sys.exit(exitcodes.USAGE)

    def epilog_hint(self) -> str:
        return f"Try '{self.prog} --help' for examples.\n"


def make_parser(sub: str, description: str, examples: str) -> argparse.ArgumentParser:
    """A parser whose --help ends with an `examples:` block (perf-tools / bcc style)."""
    return _Parser(
        prog=f"flamediag {sub}",
        description=description,
        epilog="examples:\n" + examples.rstrip() + "\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def safe_for_terminal(text: str) -> str:
    """Show control characters (ESC, BEL, bidi overrides...) escaped, never raw."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in "\n\t":
            out.append(ch)
        elif code < 0x20 or 0x7F <= code < 0xA0 or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def json_for_terminal(text: str) -> str:
    """JSON text with C1 controls, DEL and bidi/zero-width/line-separator characters written as
    \\uXXXX escapes: the same JSON value, but nothing that a terminal would act on or reorder.
    (They can only occur inside JSON strings, where the escape means the same character.)

    >>> json_for_terminal('{"a": "x\u202ey\x9b"}')
    '{"a": "x\\\\u202ey\\\\u009b"}'
    """
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def check_output_dir(out_dir) -> None:
    """An -o path that exists and is not a directory: one line, exit 77 (before any work is lost)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: exists and is not a directory: choose another directory with -o", exitcodes.NOPERM)


def write_failed(err: OSError, out_dir) -> UserError:
    """The one-line error for outputs that could not be written: exit 1 when the disk is full
    (a partial result), else 77 (not writable)."""
    where = err.filename or out_dir
    code = exitcodes.PARTIAL if err.errno in (errno.ENOSPC, errno.EDQUOT) else exitcodes.NOPERM
    return UserError(f"{where}: cannot write ({err.strerror}): choose another directory with -o", code)


def warn(sub: str, message: str) -> None:
    sys.stderr.write(safe_for_terminal(f"flamediag {sub}: {message}") + "\n")


def run(sub: str, main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    try:
        return main(argv)
    except UserError as err:
        warn(sub, f"ERROR: {err}")
        return err.code
    except KeyboardInterrupt:
        return exitcodes.SIGINT
    except BrokenPipeError:
        # Output closed early (`| head`): not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return exitcodes.OK


def install_sigterm_handler() -> None:
    def _on_term(signum, frame):
        raise SystemExit(exitcodes.SIGTERM)

    signal.signal(signal.SIGTERM, _on_term)
