"""The playbook loader: every shipped playbook validates; malformed ones fail with a one-line reason."""
from __future__ import annotations

import json
import subprocess

import pytest

from diagnose_helpers import FIXTURES, ROOT, run_cli
from flamediag import playbooks
from flamediag.playbooks import PlaybookError, load_all, parse_playbook

SHIPPED = sorted((ROOT / "playbooks").glob("*.md"))
GOOD = (FIXTURES / "playbooks" / "never-fires.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_playbook_is_valid(path):
    playbook = playbooks.load_file(path)
    assert playbook.id == path.stem
    assert playbook.section("Mitigate") and playbook.section("Verify the fix")
    for pattern in playbook.signature["patterns"] + playbook.signature["exclude"]:
        for element in pattern:
            # a pattern element that is neither a frame set nor a plausible function name is a typo
            assert element in playbook.frames or element.replace("_", "a").replace(".", "a").isalnum(), element


def test_a_lock_caller_group_is_the_same_in_the_playbook_that_claims_it_and_those_that_give_it_away():
    """A spin lock is named by its direct caller: the fallback's `own_lockers` groups claim it and the
    specific playbooks' `foreign_lockers` groups of the same name give it away (rules A9, E3, L3, Z1).
    A caller added to one copy of a group and not the others would be claimed by both or by neither."""
    copies = {}
    for playbook in load_all():
        for key in ("own_lockers", "foreign_lockers"):
            for group in playbook.signature.get(key) or []:
                copies.setdefault(group, {})[playbook.id] = frozenset(playbook.frames[group])
    shared = {group: by_id for group, by_id in copies.items() if len(by_id) > 1}
    assert {"swap_lockers", "mapping_lockers", "rstat_lockers", "net_lockers"} <= set(shared)
    for group, by_id in shared.items():
        union = frozenset().union(*by_id.values())
        assert all(frames == union for frames in by_id.values()), \
            (group, {pid: sorted(union - frames) for pid, frames in by_id.items() if frames != union})


def test_the_three_seed_playbooks_are_shipped():
    ids = {p.id for p in load_all()}
    assert {"zone-reclaim", "thp-compaction", "nic-softirq"} <= ids


def test_canaries_load_from_an_extra_directory():
    ids = [p.id for p in load_all([str(FIXTURES / "playbooks")])]
    assert "always-fires" in ids and "never-fires" in ids


def test_env_variable_adds_a_directory(monkeypatch):
    monkeypatch.setenv("FLAMEDIAG_PLAYBOOKS", str(FIXTURES / "playbooks"))
    assert "never-fires" in [p.id for p in load_all()]


def test_defaults_are_filled():
    playbook = parse_playbook(GOOD, "never-fires.md")
    assert playbook.signature["context"] == "any"
    assert playbook.signature["strong"] == [0]
    assert playbook.checks == []


MUTATIONS = {
    "no front matter": lambda t: t.split("---", 2)[2],
    "unclosed front matter": lambda t: "---\n" + t.split("---", 2)[1],
    "invalid yaml": lambda t: t.replace("title: Canary", "title: [Canary", 1),
    "missing signature": lambda t: t.replace("signature:", "signatur:", 1),
    "unknown key": lambda t: t.replace("title:", "colour: red\ntitle:", 1),
    "bad op": lambda t: t.replace("mitigation_summary:", "checks:\n  - {fact: x, op: approx, value: 1, says: s}\nmitigation_summary:", 1),
    "op without value": lambda t: t.replace("mitigation_summary:", "checks:\n  - {fact: x, op: gt, says: s}\nmitigation_summary:", 1),
    "strong out of range": lambda t: t.replace("  patterns:", "  strong: [3]\n  patterns:", 1),
    "bad context": lambda t: t.replace("  min_share: 0.01", "  context: irq\n  min_share: 0.01", 1),
    "bad comm regex": lambda t: t.replace("  min_share: 0.01", "  comm: '('\n  min_share: 0.01", 1),
    "share above 1": lambda t: t.replace("min_share: 0.01", "min_share: 5", 1),
    "section missing": lambda t: t.replace("## Verify the fix", "## Verify", 1),
    "sections out of order": lambda t: t.replace("## Mitigate", "## TMP", 1).replace("## Confirm by hand", "## Mitigate", 1).replace("## TMP", "## Confirm by hand", 1),
    "id not the file name": lambda t: t.replace("id: never-fires", "id: other", 1),
    "id with capitals": lambda t: t.replace("id: never-fires", "id: Never", 1),
    # rule AF3 (realworld-probe-af case 1565): a claims_min_ratio names a claimed frame set
    "claims_min_ratio on no claim": lambda t: t.replace("  min_share: 0.01", "  claims_min_ratio: {spinlock: 0.25}\n  min_share: 0.01", 1),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_malformed_playbook_is_rejected(name):
    broken = MUTATIONS[name](GOOD)
    assert broken != GOOD, "mutation did not apply: fix the test"
    with pytest.raises(PlaybookError) as err:
        parse_playbook(broken, "never-fires.md")
    assert "never-fires.md" in str(err.value) and "\n" not in str(err.value)


def test_duplicate_ids_are_rejected(tmp_path):
    (tmp_path / "never-fires.md").write_text(GOOD, encoding="utf-8")
    with pytest.raises(PlaybookError, match="duplicate"):
        load_all([str(FIXTURES / "playbooks"), str(tmp_path)])


def test_missing_extra_directory_is_an_error(tmp_path):
    with pytest.raises(PlaybookError, match="not found"):
        load_all([str(tmp_path / "nope")])


def test_catalog_command_lists_every_playbook_as_json():
    result = run_cli("playbooks", "--format", "json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert {e["id"] for e in entries} == {p.stem for p in SHIPPED}
    zone = next(e for e in entries if e["id"] == "zone-reclaim")
    assert any("2.6.32" in era for era in zone["eras"]) and "sysctl" in zone["evidence"]


def test_catalog_command_text_and_help():
    result = run_cli("playbooks")
    assert result.returncode == 0 and "nic-softirq" in result.stdout and "era:" in result.stdout
    helped = run_cli("playbooks", "--help")
    assert helped.returncode == 0 and helped.stdout.rstrip().splitlines()[-1].strip().startswith("flamediag playbooks")


def test_catalog_command_fails_65_on_a_malformed_extra_playbook(tmp_path):
    (tmp_path / "bad.md").write_text("---\nid: bad\n---\n", encoding="utf-8")
    result = run_cli("playbooks", "--playbooks", tmp_path)
    assert result.returncode == 65
    assert result.stderr.count("\n") == 1 and "bad.md" in result.stderr
