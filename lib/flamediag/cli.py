"""Shared command-line plumbing: usage blocks that end in examples, exit codes, clean errors.

Every Python subcommand builds its parser with `make_parser()` and runs through `run()`:
- `--help` prints the usage block (ending in examples) to stdout, exit 0;
- a bad flag prints the usage to stderr, exit 2;
- `UserError` prints one line `flamediag SUB: ERROR: ...` and exits with its code;
- Ctrl-C exits 130, a broken pipe (`| head`) exits quietly;
- any other exception is a bug: one line naming the input and the file holding the traceback
  (for the bug report), exit 70 (EX_SOFTWARE). Commands name their input with `note_input()`.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import traceback
from typing import Callable, Sequence

from . import errors
from .errors import UserError  # noqa: F401 - re-exported: `from flamediag.cli import UserError` keeps working
from .text import escape_controls, escape_in_json


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # bad usage: usage to stderr, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.stderr.write(self.epilog_hint())
        sys.exit(errors.USAGE)

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
    return escape_controls(text)


def json_for_terminal(text: str) -> str:
    """JSON text with C1 controls, DEL and bidi/zero-width/line-separator characters written as
    \\uXXXX escapes: the same JSON value, but nothing that a terminal would act on or reorder.
    (They can only occur inside JSON strings, where the escape means the same character.)

    >>> json_for_terminal('{"a": "x\u202ey\x9b"}')
    '{"a": "x\\\\u202ey\\\\u009b"}'
    """
    return escape_in_json(text)


def warn(sub: str, message: str) -> None:
    sys.stderr.write(safe_for_terminal(f"flamediag {sub}: {message}") + "\n")


_current_input: list = []


def note_input(path) -> None:
    """Remember what the command is reading, for the one-line report of an unexpected error."""
    _current_input[:] = [str(path)]


def report_bug(sub: str, argv: Sequence[str]) -> int:
    """The last line of defence: the traceback goes to a file, the terminal gets one line."""
    error = sys.exc_info()[1]
    where = _current_input[0] if _current_input else " ".join(argv) or "(no arguments)"
    try:
        fd, crash_file = tempfile.mkstemp(prefix=f"flamediag-{sub}-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(f"flamediag {sub} {' '.join(argv)}\n")
            traceback.print_exc(file=handle)
        saved = f"the traceback is in {crash_file}"
    except OSError as err:
        saved = f"the traceback could not be saved ({err.strerror})"
    warn(sub, f"ERROR: {where}: unexpected {type(error).__name__}: {error}: this is a bug in flamediag; "
              f"please report it with the input if you can share it ({saved})")
    return errors.SOFTWARE


def run(sub: str, main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    try:
        return main(argv)
    except UserError as err:
        warn(sub, f"ERROR: {err}")
        return err.code
    except KeyboardInterrupt:
        return errors.SIGINT
    except BrokenPipeError:
        # Output closed early (`| head`): not an error. Point stdout at devnull so the
        # interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return errors.OK
    except ModuleNotFoundError as err:
        if err.name and "." not in err.name and err.name not in sys.builtin_module_names and not err.name.startswith("flamediag"):
            warn(sub, f"ERROR: the Python running flamediag ({sys.executable}, {sys.version.split()[0]}) lacks the "
                      f"module {err.name}: install requirements.txt into it, or set FLAMEDIAG_PYTHON to a Python "
                      "that has them")
            return errors.USAGE
        return report_bug(sub, argv)
    except Exception:  # noqa: BLE001 - anything else is a bug: one line and a traceback file
        return report_bug(sub, argv)


def install_sigterm_handler() -> None:
    def _on_term(signum, frame):
        raise SystemExit(errors.SIGTERM)

    signal.signal(signal.SIGTERM, _on_term)
