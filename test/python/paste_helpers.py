"""Helpers shared by the paste tests: read a fixture, compare frame orders, read in a child process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.paste import read_paste  # noqa: E402

FIXTURES = ROOT / "test" / "fixtures" / "paste"


def paste(name: str):
    return read_paste((FIXTURES / name).read_text(encoding="utf-8", errors="replace"))


def ordered(names, *wanted) -> bool:
    """Every wanted frame is in the stack, root side first, in this order."""
    position = -1
    for frame in wanted:
        if frame not in names[position + 1:]:
            return False
        position = names.index(frame, position + 1)
    return True


def read_in_subprocess(text: str, tmp_path: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    """read_paste(text) in a child process (a hang is a timeout, not a stuck suite); prints the
    formats read, or `no stacks`."""
    path = tmp_path / "paste.txt"
    path.write_text(text)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from flamediag.paste import read_paste\n"
            "from flamediag.cli import UserError\n"
            "try:\n    r = read_paste(open(sys.argv[2]).read()); print(','.join(r.formats))\n"
            "except UserError:\n    print('no stacks')\n")
    return subprocess.run([sys.executable, "-c", code, str(ROOT / "lib"), str(path)],
                          capture_output=True, text=True, timeout=timeout)
