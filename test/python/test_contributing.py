"""CONTRIBUTING.md's checklists are enforced: every item names tests that exist, and the items no
other test covers are checked here (paste formats)."""
from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import List


import cases
from flamediag.errors import UserError
from flamediag.paste import read_paste

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
PASTE_FIXTURES = cases.PASTES


# -- the checklists name real tests ------------------------------------------------------------
def checklist_items() -> List[str]:
    """Each `- [ ]` item of CONTRIBUTING.md, continuation lines joined."""
    items: List[str] = []
    open_item = False
    for line in CONTRIBUTING.read_text(encoding="utf-8").splitlines():
        if line.startswith("- [ ]"):
            items.append(line)
        elif open_item and line.startswith("  "):
            items[-1] += " " + line.strip()
        open_item = line.startswith("- [ ]") or (open_item and line.startswith("  "))
    return items


def names_a_test(reference: str) -> bool:
    """`file.py::test_name` (a def in test/python) or `file.bats::title prefix` (an @test)."""
    path, _, name = reference.partition("::")
    if path.endswith(".py"):
        source = ROOT / "test" / "python" / path
        return source.is_file() and re.search(rf"^def {re.escape(name)}\(", source.read_text(), re.M) is not None
    found = list(ROOT.glob(f"test/*/{path}"))
    return any(f'@test "{name}' in f.read_text() for f in found)


def test_every_checklist_item_names_a_test_that_exists():
    items = checklist_items()
    assert len(items) >= 15, items
    for item in items:
        named = re.search(r"\(test: (.*)\)\s*$", item)
        assert named, f"CONTRIBUTING.md item without '(test: ...)': {item[:80]}"
        references = re.findall(r"`([^`]+::[^`]+)`", named.group(1))
        assert references, f"no test named in: {item[:80]}"
        missing = [r for r in references if not names_a_test(r)]
        assert not missing, f"CONTRIBUTING.md names tests that do not exist: {missing}"


# -- collectors ----------------------------------------------------------------------------------
# -- paste formats -------------------------------------------------------------------------------
def documented_formats() -> set:
    doc = (ROOT / "doc" / "paste.md").read_text(encoding="utf-8")
    table = doc[doc.index("## Formats understood"):].split("\n\n")[1]
    rows = table.split("|---", 1)[1].splitlines()[1:]          # below the header row
    return {re.match(r"\| `([^`]+)`", line).group(1) for line in rows if line.startswith("| `")}


def formats_read_from_fixtures() -> set:
    found = set()
    for path in sorted(PASTE_FIXTURES.glob("*.txt")):
        try:
            found.update(read_paste(path.read_text(encoding="utf-8", errors="replace")).formats)
        except UserError:
            pass
    return found


def test_every_paste_format_is_documented_and_has_a_fixture():
    documented, read = documented_formats(), formats_read_from_fixtures()
    assert read - documented == set(), f"formats read but not in doc/paste.md 'Formats understood': {read - documented}"
    assert documented - read == set(), f"documented formats no fixture in test/fixtures/paste/ shows: {documented - read}"


def expand_braces(pattern: str) -> List[str]:
    """`a-{b,c}-d` -> ['a-b-d', 'a-c-d'] (one level, as the README writes them)."""
    match = re.search(r"\{([^}]*)\}", pattern)
    if not match:
        return [pattern]
    return [out for choice in match.group(1).split(",")
            for out in expand_braces(pattern[:match.start()] + choice + pattern[match.end():])]


def test_every_paste_fixture_has_a_provenance_row():
    readme = (PASTE_FIXTURES / "README.md").read_text(encoding="utf-8")
    patterns = [p for line in readme.splitlines() if line.startswith("| `")
                for cell in re.findall(r"`([^`]+)`", line.split("|")[1]) for p in expand_braces(cell)]
    fixtures = [p.name for p in PASTE_FIXTURES.glob("*.txt")]
    orphans = [name for name in fixtures if not any(fnmatch.fnmatch(name, p) for p in patterns)]
    assert fixtures and not orphans, f"paste fixtures without a row in test/fixtures/paste/README.md: {orphans}"
