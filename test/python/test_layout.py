"""One home for each shared rule: the modules other code relies on exist once, and the names other
branches import keep working after a move."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "lib" / "flamediag"
SHIPPED_PYTHON = sorted(PACKAGE.rglob("*.py")) + [ROOT / "samples" / "tools" / "make-sample"]
# the shell side that runs Python (lib/install.bash only creates the installed tree's .venv)
SHIPPED_SHELL = [ROOT / "bin" / "flamediag", *sorted(p for p in (ROOT / "lib").glob("*.bash") if p.name != "install.bash"),
                 *sorted((ROOT / "lib" / "capture").glob("*.bash"))]


def defining(pattern: str, files) -> list:
    """Files (relative) with a line matching `pattern`."""
    regex = re.compile(pattern, re.M)
    return sorted(str(f.relative_to(ROOT)) for f in files if regex.search(f.read_text(encoding="utf-8")))


@pytest.mark.parametrize("what,pattern,home", [
    ("the gzip magic", r"""^\s*GZIP_MAGIC\s*=|b["']\\x1f\\x8b["']""", "lib/flamediag/magic.py"),
    ("the share formatting", r"""100:\.[01]f\} %""", "lib/flamediag/text.py"),
    ("the control-character set", r"\\x7f-\\x9f|\\u202a-|0x7F|\\u202a\\u202b", "lib/flamediag/text.py"),
    ("context markers", r"""^[^#\n]*["']\[softirq\][;"']""", "lib/flamediag/contexts.py"),
    ("the SHA256SUMS writer", r"""hexdigest\(\)\}  \{|\{digests\[name\]\}  \{""", "lib/flamediag/bundlewriter.py"),
    ("the exit codes", r"^DATAERR\s*=", "lib/flamediag/errors.py"),
])
def test_one_copy_in_the_package(what, pattern, home):
    assert defining(pattern, SHIPPED_PYTHON) == [home], f"{what} must live only in {home}"


def test_one_python_choice_for_the_shell_side():
    """bin/flamediag and capture both ask lib/python.bash which interpreter runs the Python side."""
    assert defining(r"\.venv/bin/python|command -v python3", SHIPPED_SHELL) == ["lib/python.bash"]
    assert defining(r"^\. .*lib/python\.bash", SHIPPED_SHELL) == ["bin/flamediag", "lib/capture.bash"]


def test_subcommands_are_the_command_modules():
    from flamediag.__main__ import COMMANDS

    assert sorted(COMMANDS) == sorted(p.stem for p in (PACKAGE / "commands").glob("[a-z]*.py"))
    assert "PYTHON_SUBCOMMANDS" not in (ROOT / "bin" / "flamediag").read_text(encoding="utf-8")


def test_moved_names_still_import_from_their_old_homes():
    from flamediag import bundle, cli, contexts, errors, exitcodes, magic, perfscript, profile, safetar

    assert cli.UserError is errors.UserError and exitcodes.DATAERR == errors.DATAERR == 65
    assert bundle.unsafe_name_reason is safetar.unsafe_name_reason and bundle.limits is safetar.limits
    assert perfscript.GZIP_MAGIC is magic.GZIP_MAGIC
    assert perfscript.mark_contexts_in_frames is contexts.mark_contexts_in_frames
    assert profile.context_of([profile.Frame("__do_softirq", "kernel")]) == "softirq"
