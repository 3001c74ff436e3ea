"""`uname -a`: the kernel release, third word after `Linux` and the host name.

Sample input::

    Linux vm 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0 x86_64 GNU/Linux

Result: {"release": str|None, "version": [major, minor]|None, "notes": [...]}.

Examples:
    >>> parse("Linux db7 2.6.32-431.11.2.el6.x86_64 #1 SMP Wed Mar 26 16:32:49 EDT 2014 x86_64 GNU/Linux")["version"]
    [2, 6]
    >>> parse("Darwin mac 23.1.0 Darwin Kernel Version 23.1.0")["notes"]
    ["uname: not Linux `uname -a` output ('Darwin')"]
"""
from __future__ import annotations

import re
from typing import List, Optional

from ._builder import builds
from ._common import add_note

COLLECTORS = ("uname",)


def parse(text: str) -> dict:
    notes: List[str] = []
    tokens = (text or "").split()
    release = tokens[2] if len(tokens) > 2 and tokens[0] == "Linux" else None
    if release is None and tokens:
        add_note(notes, f"uname: not Linux `uname -a` output ({tokens[0][:40]!r})")
    return {"release": release, "version": version_of(release), "notes": notes}


def version_of(release: Optional[str]) -> Optional[List[int]]:
    """`5.15.0-91-generic` -> [5, 15]; None when the release does not start with major.minor."""
    found = re.match(r"^(\d+)\.(\d+)", release or "")
    return [int(found.group(1)), int(found.group(2))] if found else None


@builds("kernel.release", "kernel.version")
def kernel_facts(src) -> None:
    """The release the manifest names (the capture's `uname -r`), else the one in `uname -a`."""
    release = src.manifest.get("kernel") if isinstance(src.manifest.get("kernel"), str) else None
    if release:
        path, bad = "manifest.json", False
    else:
        result, path, bad = src.parsed("uname", parse)
        release = (result or {}).get("release")
    if release:
        src.facts.set("kernel.release", release, path, bad)
        src.facts.set("kernel.version", version_of(release), path, bad)
