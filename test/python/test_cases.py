"""The suite finds its cases by directory (cases.py), so a playbook added as documented is tested,
and one added without its cases fails the suite naming what is missing.

Acceptance: a copy of an existing playbook under a new id, with frames that match nothing, no
fixtures and no sample, is reported missing its fixture directory and its sample; once those
exist, the structure check passes and its own fixtures still fail (nothing matches its frames)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

import cases
from diagnose_helpers import build_bundle, load_spec
from expectations import unmet
from flamediag import playbooks as playbook_loader
from flamediag.diagnose import run_diagnosis

NEW_ID = "futex-contention-copy"


def test_every_playbook_has_its_fixtures_and_a_sample():
    """A positive fixture per kernel era (>= 2) and a look-alike under test/fixtures/signatures/<id>/,
    and a sample expected to give <id>; the failure lists each missing file."""
    missing = cases.missing_cases()
    assert not missing, "cases missing:\n" + "\n".join(missing)


def test_kernel_eras_are_major_versions():
    assert [cases.kernel_era(k) for k in ("2.6.32-431.el6.x86_64", "3.10.0-1160.el7", "6.18.44-fc")] == ["2", "3", "6"]


def copy_playbook_with_new_id(directory: Path) -> Path:
    """playbooks/ copied, plus futex-contention.md as NEW_ID with every frame renamed (matches nothing)."""
    shutil.copytree(cases.PLAYBOOKS, directory)
    text = (cases.PLAYBOOKS / "futex-contention.md").read_text(encoding="utf-8")
    front, body = text.split("\n---\n", 1)
    front = front.replace("id: futex-contention", f"id: {NEW_ID}")
    front = re.sub(r"\b(futex_\w+|__futex\w*|sys_futex|__x64_sys_futex\w*|do_futex|hash_futex|get_futex_key)\b",
                   r"\1_renamed", front)
    path = directory / f"{NEW_ID}.md"
    path.write_text(front + "\n---\n" + body, encoding="utf-8")
    assert playbook_loader.load_file(path).id == NEW_ID     # a valid playbook, as documented
    return path


def add_cases_for_new_id(signatures: Path, samples: Path) -> Path:
    """Fixtures (two eras + a look-alike) and a sample for NEW_ID, copied from futex-contention's."""
    shutil.copytree(cases.SIGNATURES, signatures)
    own = signatures / NEW_ID
    own.mkdir()
    for name in ("rhel6-hash-bucket-spin", "618-futex-hammer"):
        spec = yaml.safe_load((cases.SIGNATURES / "futex-contention" / f"{name}.yaml").read_text(encoding="utf-8"))
        spec["expect"] = {"top": NEW_ID, "confidence": "high"}
        (own / f"{name}.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    lookalike = yaml.safe_load((cases.SIGNATURES / "futex-contention" / "pipe-pingpong-is-sched.yaml").read_text(encoding="utf-8"))
    lookalike["expect"]["not"] = [NEW_ID]
    (own / "pipe-pingpong-is-sched.yaml").write_text(yaml.safe_dump(lookalike), encoding="utf-8")
    samples.mkdir()
    for sample in cases.sample_dirs():
        (samples / sample.name).symlink_to(sample)
        shutil.copy(cases.expectation_path(sample), samples)
    (samples / f"{NEW_ID}-6.18").symlink_to(cases.SAMPLES / "futex-contention-6.18")
    (samples / f"{NEW_ID}-6.18{cases.EXPECT_SUFFIX}").write_text(f"top: {NEW_ID}\nconfidence: high\n", encoding="utf-8")
    return own


def test_a_copied_playbook_fails_the_suite_until_its_fixtures_and_sample_exist(tmp_path):
    playbooks = tmp_path / "playbooks"
    copy_playbook_with_new_id(playbooks)

    missing = cases.missing_cases(playbooks, cases.SIGNATURES, cases.SAMPLES)
    assert missing == [
        f"{NEW_ID}: no fixture directory test/fixtures/signatures/{NEW_ID}/ (a positive per kernel era, >= 2, and a look-alike)",
        f"{NEW_ID}: no sample (samples/<name>/ with samples/<name>.expect.yaml saying top: {NEW_ID})",
    ]

    own = add_cases_for_new_id(tmp_path / "signatures", tmp_path / "samples")
    assert cases.missing_cases(playbooks, tmp_path / "signatures", tmp_path / "samples") == []

    # the fixtures now run (found by directory) and fail: the copy's frames match no stack
    loaded = playbook_loader.load_all([str(playbooks)], include_default=False)
    spec = load_spec(own / "618-futex-hammer.yaml")
    doc = run_diagnosis(str(build_bundle(spec, tmp_path / "bundle")), loaded=loaded).findings_json()
    assert unmet(doc, spec["expect"]) == [f"top finding futex-contention, expected {NEW_ID}"]


def test_each_missing_piece_is_named(tmp_path):
    """Remove one piece at a time from a complete set: the message names exactly that piece."""
    playbooks = tmp_path / "playbooks"
    copy_playbook_with_new_id(playbooks)
    own = add_cases_for_new_id(tmp_path / "signatures", tmp_path / "samples")
    check = lambda: cases.missing_cases(playbooks, tmp_path / "signatures", tmp_path / "samples")  # noqa: E731

    (own / "pipe-pingpong-is-sched.yaml").rename(tmp_path / "lookalike.yaml")
    assert check() == [f"{NEW_ID}: no look-alike in test/fixtures/signatures/{NEW_ID}/ "
                       f"(a fixture whose expect: not: lists {NEW_ID})"]
    (tmp_path / "lookalike.yaml").rename(own / "pipe-pingpong-is-sched.yaml")

    (own / "rhel6-hash-bucket-spin.yaml").unlink()
    assert check() == [f"{NEW_ID}: positive fixtures (expect: top: {NEW_ID}) in test/fixtures/signatures/{NEW_ID}/ "
                       f"cover 1 kernel era(s) ['6']; need >= 2"]

    (tmp_path / "samples" / f"{NEW_ID}-6.18{cases.EXPECT_SUFFIX}").unlink()
    assert f"samples/{NEW_ID}-6.18: no samples/{NEW_ID}-6.18{cases.EXPECT_SUFFIX} (what diagnosing it must give)" in check()
