"""Goldens of every sample's findings.json: test/fixtures/goldens/<sample>.findings.json.

A refactor must leave every sample's findings.json byte-for-byte the same (test_goldens.py); a
change that means to alter it (a new field, better accuracy) re-records them in one line:

    test/record-goldens findings          # then review: git diff test/fixtures/goldens

Run as a script, this module rewrites the goldens (what test/record-goldens calls).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.diagnose import load_playbooks, run_diagnosis  # noqa: E402

SAMPLES = ROOT / "samples"
GOLDENS = ROOT / "test" / "fixtures" / "goldens"
RERECORD = "test/record-goldens findings"


def sample_names() -> List[str]:
    return sorted(p.parent.name for p in SAMPLES.glob("*/manifest.json"))


def golden_path(name: str) -> Path:
    return GOLDENS / f"{name}.findings.json"


def findings_text(name: str, loaded=None) -> str:
    """findings.json of samples/<name> as `flamediag diagnose` writes it, with `input` given as
    the path from the repository root (the same wherever the checkout lives) and the tool version
    left out (a release changes no diagnosis)."""
    diagnosis = run_diagnosis(str(SAMPLES / name), loaded=loaded)
    doc = diagnosis.findings_json()
    doc["input"] = f"samples/{name}"
    if isinstance(doc.get("tool"), dict) and "version" in doc["tool"]:
        doc["tool"]["version"] = "(lib/VERSION)"
    return json.dumps(doc, indent=2) + "\n"


def record() -> Dict[str, bool]:
    """Rewrite every golden (and drop those of samples that no longer exist): name -> changed."""
    GOLDENS.mkdir(parents=True, exist_ok=True)
    loaded = load_playbooks()
    changed = {}
    for name in sample_names():
        text = findings_text(name, loaded)
        path = golden_path(name)
        changed[name] = not path.is_file() or path.read_text(encoding="utf-8") != text
        path.write_text(text, encoding="utf-8")
    for stale in GOLDENS.glob("*.findings.json"):
        if stale.name[: -len(".findings.json")] not in changed:
            stale.unlink()
            changed[stale.name] = True
    return changed


if __name__ == "__main__":
    result = record()
    print(f"record-goldens: {sum(result.values())} of {len(result)} findings goldens changed; "
          f"review with: git diff {GOLDENS.relative_to(ROOT)}", file=sys.stderr)
