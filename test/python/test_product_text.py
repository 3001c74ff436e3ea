"""Product text speaks to users: no internal words in what users read (README, doc/, playbooks,
samples/README.md, schemas, report templates, --help). Public sources are cited by title; the
words below are the team's own vocabulary or machine paths, meaningless to a user."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(r"\bseeds?\s*[0-9]{1,3}\b|\bseeds\b|\bissues?\s+#?[0-9]+|/work/|\b(?:this|previous|earlier|last|next|new)\s+sessions?\b|\bsessions?\s+[0-9]+\b|\bcoordinator\b|\bworkstreams?\b",
                      re.IGNORECASE)
USER_FACING = (["README.md", "CONTRIBUTING.md", "samples/README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "doc").rglob("*")
                                                       if p.is_file())
               + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "playbooks").glob("*.md"))
               + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "lib/flamediag/schemas").glob("*.json"))
               + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "lib/flamediag/templates").rglob("*") if p.is_file())
               # provenance tables and sample specs are read by contributors
               + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "test/fixtures").rglob("README.md"))
               + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "samples/specs").glob("*.yaml")))
SUBCOMMANDS = ("capture", "watch", "diagnose", "collapse", "flamegraph", "redact", "playbooks", "facts")


def internal_words(text: str):
    return sorted({match.group(0) for match in INTERNAL.finditer(text)})


def test_the_pattern_catches_what_it_must():
    assert internal_words("seed 003 and Seed 000, the seeds; issue 5; /work/main; this session; coordinator") == \
        ["/work/", "Seed 000", "coordinator", "issue 5", "seed 003", "seeds", "this session"]
    assert internal_words("seed000-haproxy.txt") == ["seed000"]
    assert internal_words("issues of the day, a seeded RNG") == []
    assert internal_words("requests to other workstreams") == ["workstreams"]
    # the word in its ordinary meanings stays allowed
    assert internal_words("an SSH session, the opcontrol-session lines") == []


@pytest.mark.parametrize("path", USER_FACING)
def test_user_facing_file_has_no_internal_words(path):
    text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
    assert internal_words(text) == [], f"{path}: say it in the product's words (cite sources by title)"


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_help_has_no_internal_words(sub):
    result = subprocess.run([str(ROOT / "bin" / "flamediag"), sub, "--help"], capture_output=True, text=True,
                            timeout=60, env={"PATH": "/usr/bin:/bin", "FLAMEDIAG_PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr
    assert internal_words(result.stdout + result.stderr) == [], sub
