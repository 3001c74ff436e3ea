"""Every perf script line costs time linear in its length (hostile input, issue: regex blow-up).

A lazy `(\\S.*?)\\s+(\\d+)` over `java` + 20 000 spaces + `x` took 10 s per line in collapse and
145 s at 60 000 spaces; a file of such lines ran for hours. Each shape below is a line the old
patterns backtracked on quadratically. The bound is a subprocess timeout far above the expected
time (well under a second per file), so a machine under load does not fail it: only a return of
super-linear matching does."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag import perfscript  # noqa: E402

SPACES = 20_000
SHAPES = {
    "spaces-before-junk": b"java" + b" " * SPACES + b"x",
    "spaces-before-digit": b"java" + b" " * SPACES + b"1",
    "digit-words": b"java " + b"1 " * (SPACES // 2) + b"x",
    "colons": b"java 1 " + b":" * SPACES,
    "spaces-after-pid": b"java 1" + b" " * SPACES + b"x",
    "period-then-spaces": b"java 1 1.5: 7" + b" " * SPACES + b"x",
    "digits": b"java " + b"1" * SPACES + b" x",
    "indented-spaces": b"\t" + b" " * SPACES + b"x",
    "go-method": b"\tffffffff81000000 " + b"a.(" * (SPACES // 3) + b" ([kernel.kallsyms])",
    "vmlinux": b"\tffffffff81000000 f (" + b"vmlinux" * (SPACES // 7) + b"!)",
}


def hostile_file(tmp_path: Path, line: bytes, copies: int = 200) -> Path:
    path = tmp_path / "hostile.perf"
    sample = b"java 25607/25607 [000] 4794564.109216: 1 cycles: \n\tffffffff81000000 f ([kernel.kallsyms])\n\n"
    path.write_bytes(sample + (line + b"\n") * copies + b"\n" + sample)
    return path


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_collapse_reads_hostile_lines_in_linear_time(tmp_path, shape):
    path = hostile_file(tmp_path, SHAPES[shape])
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "collapse", str(path)], capture_output=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert b"java;f 2" in run.stdout.split(b"\n"), run.stdout[:200]


def test_diagnose_reads_hostile_lines_in_linear_time(tmp_path):
    path = hostile_file(tmp_path, SHAPES["spaces-before-junk"])
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "diagnose", str(path), "-o", str(tmp_path / "out")],
                         capture_output=True, timeout=60)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_parse_header_on_hostile_lines(shape):
    """One line of each shape, in process: no event line hides in them."""
    header = perfscript.parse_header(SHAPES[shape])
    assert header is None or header.comm == b"java"
