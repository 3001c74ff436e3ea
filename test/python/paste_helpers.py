"""Helpers shared by the paste tests: read a fixture, compare frame orders."""
from __future__ import annotations

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
