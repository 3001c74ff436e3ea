"""Where the suite finds its cases: by directory, never by a list in Python (hotsos's scenario
tests). Adding a case is adding files; a known problem without its cases fails the suite, naming
what is missing (`missing_cases`).

    playbooks/<id>.md                          a known problem (its id is the file name)
    test/fixtures/signatures/<id>/<case>.yaml  make-sample specs with an `expect:` block: a positive
                                               per kernel era (>= 2) and a look-alike
    samples/<name>/ + samples/<name>.expect.yaml   a bundle and what diagnosing it must give
    test/fixtures/paste/<name>.txt + <name>.expect.yaml   a pasted ticket and what it must give

Expectation format: expectations.py.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional

import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = ROOT / "playbooks"
SIGNATURES = ROOT / "test" / "fixtures" / "signatures"
SAMPLES = ROOT / "samples"
PASTES = ROOT / "test" / "fixtures" / "paste"
EXPECT_SUFFIX = ".expect.yaml"


def _yaml(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def playbook_ids(directory: Path = PLAYBOOKS) -> List[str]:
    """Ids of playbooks/<id>.md (the loader requires id == file name)."""
    return sorted(p.stem for p in directory.glob("*.md") if p.name.upper() != "README.MD")


def signature_fixtures(directory: Path = SIGNATURES) -> List[Path]:
    return sorted(directory.glob("*/*.yaml"))


def fixture_expectation(path: Path) -> dict:
    return _yaml(path).get("expect") or {}


def sample_dirs(directory: Path = SAMPLES) -> List[Path]:
    return sorted(p.parent for p in directory.glob("*/manifest.json"))


def expectation_path(case: Path) -> Path:
    """samples/<name>/ -> samples/<name>.expect.yaml; paste/<name>.txt -> paste/<name>.expect.yaml."""
    stem = case.name if case.is_dir() else case.stem
    return case.parent / f"{stem}{EXPECT_SUFFIX}"


def case_expectation(case: Path) -> Optional[dict]:
    """The expectation beside a sample or a paste, None when it has none."""
    path = expectation_path(case)
    return _yaml(path) if path.is_file() else None


def paste_cases(directory: Path = PASTES) -> List[Path]:
    """Pasted tickets that carry an expectation (the rest are reader fixtures)."""
    return sorted(p.parent / (p.name[: -len(EXPECT_SUFFIX)] + ".txt") for p in directory.glob(f"*{EXPECT_SUFFIX}"))


def kernel_era(kernel: str) -> str:
    """The era a kernel release belongs to, by major version: 2.6.32-431.el6 -> '2', 6.18.4 -> '6'."""
    match = re.match(r"(\d+)\.", str(kernel))
    return match.group(1) if match else str(kernel)


def _fixture_gaps(playbook_id: str, signatures: Path) -> List[str]:
    directory = signatures / playbook_id
    where = f"test/fixtures/signatures/{playbook_id}/"
    if not directory.is_dir():
        return [f"{playbook_id}: no fixture directory {where} (a positive per kernel era, >= 2, and a look-alike)"]
    specs = [(p, _yaml(p)) for p in sorted(directory.glob("*.yaml"))]
    gaps = [f"{where}{p.name}: no expect: block" for p, s in specs if not s.get("expect")]
    eras = {kernel_era(s.get("kernel", "")) for _, s in specs if (s.get("expect") or {}).get("top") == playbook_id}
    if len(eras) < 2:
        gaps.append(f"{playbook_id}: positive fixtures (expect: top: {playbook_id}) in {where} cover "
                    f"{len(eras)} kernel era(s) {sorted(eras)}; need >= 2")
    if not any(playbook_id in ((s.get("expect") or {}).get("not") or []) for _, s in specs):
        gaps.append(f"{playbook_id}: no look-alike in {where} (a fixture whose expect: not: lists {playbook_id})")
    return gaps


def _sample_gaps(samples: Path) -> Dict[str, List[str]]:
    """Samples by their expected top finding, plus problems: {'<id>': [names], '': [problems]}."""
    owners: Dict[str, List[str]] = {"": []}
    for sample in sample_dirs(samples):
        expect = case_expectation(sample)
        if expect is None:
            owners[""].append(f"samples/{sample.name}: no samples/{sample.name}{EXPECT_SUFFIX} (what diagnosing it must give)")
            continue
        owners.setdefault(expect.get("top") or "none", []).append(sample.name)
    for path in samples.glob(f"*{EXPECT_SUFFIX}"):
        if not (samples / path.name[: -len(EXPECT_SUFFIX)] / "manifest.json").is_file():
            owners[""].append(f"samples/{path.name}: no sample directory beside it")
    return owners


def missing_cases(playbooks: Path = PLAYBOOKS, signatures: Path = SIGNATURES, samples: Path = SAMPLES) -> List[str]:
    """Everything a playbook lacks to be tested, one line each naming the missing file; [] when complete."""
    owners = _sample_gaps(samples)
    gaps = list(owners[""])
    for playbook_id in playbook_ids(playbooks):
        gaps += _fixture_gaps(playbook_id, signatures)
        if not owners.get(playbook_id):
            gaps.append(f"{playbook_id}: no sample (samples/<name>/ with samples/<name>{EXPECT_SUFFIX} saying top: {playbook_id})")
    return gaps
