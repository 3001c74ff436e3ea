"""`flamediag diff`: statuses, headline, facts that moved, the four outputs, exit codes."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timed_inputs import spike_script  # noqa: E402

SCHEMA = json.loads((ROOT / "lib/flamediag/schemas/diff.schema.json").read_text())
SAMPLES = ROOT / "samples"
LIVE = ROOT / "test/fixtures/diff"


def diff(before, after, out, *extra, code=0):
    result = subprocess.run([str(ROOT / "bin/flamediag"), "diff", str(before), str(after), "-o", str(out), *extra],
                            capture_output=True, text=True)
    assert result.returncode == code, result.stderr
    return result


def load(out: Path) -> dict:
    doc = json.loads((out / "diff.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_zone_reclaim_against_healthy_is_gone(tmp_path):
    result = diff(SAMPLES / "zone-reclaim-rhel6", SAMPLES / "healthy-6.1", tmp_path)
    assert result.stderr.splitlines()[0] == "zone-reclaim gone (77 % -> 0 %); %sys 44 % -> 3 %"
    doc = load(tmp_path)
    [reclaim] = [s for s in doc["signatures"] if s["id"] == "zone-reclaim"]
    assert reclaim["status"] == "gone" and reclaim["before"] == {"share": 0.7698, "confidence": "high"}
    assert reclaim["after"]["confidence"] is None and reclaim["after"]["share"] == 0
    moved = {f["name"]: (f["before"], f["after"]) for f in doc["facts"]}
    assert moved["sysctl.vm.zone_reclaim_mode"] == (1, 0)
    assert moved["mpstat.sys_pct.avg"][0] > 40 > 5 > moved["mpstat.sys_pct.avg"][1]
    assert moved["vmstat.delta.zone_reclaim_failed"][1] == 0
    assert doc["frames"]["shrank"][0]["after"] == 0 and any(f["frame"] == "zone_reclaim" for f in doc["frames"]["shrank"])
    markdown = (tmp_path / "diff.md").read_text()
    assert "| `zone-reclaim` Spin-lock contention" in markdown and "| **gone** | 77 % (high) | 0 % |" in markdown
    text = (tmp_path / "diff.txt").read_text()
    assert "gone       zone-reclaim: 77 % (high) -> 0 %" in text and "`" not in text and "**" not in text
    svg = (tmp_path / "diff.svg").read_text()
    assert "<script" not in svg and "rgb(0,0,255)" in svg and "zone_reclaim" in svg


def test_a_bundle_against_itself_changed_nothing(tmp_path):
    result = diff(SAMPLES / "zone-reclaim-rhel6", SAMPLES / "zone-reclaim-rhel6", tmp_path)
    assert result.stderr.startswith("Nothing changed: zone-reclaim unchanged (77 % -> 77 %); %sys 44 % -> 44 %")
    doc = load(tmp_path)
    assert {s["status"] for s in doc["signatures"]} == {"unchanged"}
    assert doc["facts"] == [] and doc["frames"] == {"grew": [], "shrank": []}
    fills = re.findall(r'<g class="f">.*?fill="([^"]+)"', (tmp_path / "diff.svg").read_text())
    assert len(fills) > 50 and set(fills) == {"rgb(255,255,255)"}


def test_spike_gone_between_perf_scripts(tmp_path):
    before = spike_script(tmp_path / "before.perf")
    after = spike_script(tmp_path / "after.perf", spike=None)
    result = diff(before, after, tmp_path / "out", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc == load(tmp_path / "out")
    assert [(s["id"], s["status"]) for s in doc["signatures"]] == [("zone-reclaim", "gone")]
    assert result.stderr.startswith("zone-reclaim gone (5.3 % -> 0 %); kernel share of busy samples 5.3 % -> 0 %")


def test_new_and_reduced_and_tolerance(tmp_path):
    from flamediag.diff import status

    assert status(0.0, 0.3, False, True) == "new"
    assert status(0.77, 0.70, True, True) == "unchanged"       # within 20 % of 77 %
    assert status(0.10, 0.16, True, True) == "grew"            # 6 points > max(5, 3.2)
    assert status(0.10, 0.14, True, True) == "unchanged"
    assert status(0.77, 0.30, True, True) == "reduced"


@pytest.mark.parametrize("name, content, says", [
    ("missing.tar.gz", None, "no such file"),
    ("empty.txt", "", "empty file"),
    ("prose.txt", "hello\nworld\n", "no stacks"),
])
def test_unusable_input_exits_65_with_one_line(tmp_path, name, content, says):
    bad = tmp_path / name
    if content is not None:
        bad.write_text(content)
    result = diff(SAMPLES / "healthy-6.1", bad, tmp_path / "out", code=65)
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_hostile_names_stay_inert(tmp_path):
    folded_before = tmp_path / "a.folded"
    folded_after = tmp_path / "b.folded"
    hostile = "evil\x1b[31m[x](javascript:alert(1))<script>|"
    folded_before.write_text(f"{hostile};do_syscall_64_[k];zone_reclaim_[k];_raw_spin_lock_[k] 90\napp;main 10\n")
    folded_after.write_text("app;main 100\n")
    diff(folded_before, folded_after, tmp_path / "out")
    text = (tmp_path / "out/diff.txt").read_text()
    markdown = (tmp_path / "out/diff.md").read_text()
    svg = (tmp_path / "out/diff.svg").read_text()
    assert "\x1b" not in text + markdown + svg
    assert "<script>" not in markdown + svg and "](javascript" not in markdown


def test_live_lab_before_and_after_the_fix(tmp_path):
    """Bundles recorded with the lab's tlb-shootdown scenario, then with its playbook's fix applied
    (the process confined to one CPU): the finding is gone (test/fixtures/diff/README.md)."""
    before = next(LIVE.glob("tlb-shootdown-before*"))
    after = next(LIVE.glob("tlb-shootdown-after*"))
    result = diff(before, after, tmp_path)
    doc = load(tmp_path)
    status = {s["id"]: s["status"] for s in doc["signatures"]}
    assert status["tlb-shootdown"] == "gone", result.stderr
    assert result.stderr.startswith("tlb-shootdown gone")
