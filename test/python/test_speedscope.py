"""speedscope export: valid against speedscope's own file-format schema (a copy of the npm
package's, test/fixtures/speedscope/), weights per CPU-second, frames shared, from diagnose and
from `flamediag flamegraph --format speedscope`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timed_inputs import spike_script  # noqa: E402

SCHEMA = json.loads((ROOT / "test/fixtures/speedscope/file-format-schema.json").read_text())
PINNED = ROOT / "test/browser/node_modules/speedscope/dist/release/file-format-schema.json"


def flamediag(*args):
    result = subprocess.run([str(ROOT / "bin/flamediag"), *map(str, args)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def spike(tmp_path_factory):
    return spike_script(tmp_path_factory.mktemp("ss") / "spike.perf")


def test_schema_copy_is_the_pinned_packages():
    if not PINNED.exists():
        pytest.skip("npm package not installed (make venv-dev)")
    assert json.loads(PINNED.read_text()) == SCHEMA


def test_diagnose_writes_a_valid_time_ordered_file(spike, tmp_path):
    flamediag("diagnose", spike, "-o", tmp_path)
    doc = json.loads((tmp_path / "profile.speedscope.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    names = [p["name"] for p in doc["profiles"]]
    assert names == ["busy samples (all CPUs)"] + [f"CPU {c} (time order)" for c in range(4)]
    busy = doc["profiles"][0]
    assert busy["unit"] == "none" and sum(busy["weights"]) == busy["endValue"] == 7430
    cpu2 = doc["profiles"][3]
    assert cpu2["unit"] == "seconds" and cpu2["endValue"] == 60
    assert round(sum(cpu2["weights"]), 3) == 60.0             # every second spans one second
    frames = doc["shared"]["frames"]
    leaves = {frames[s[-1]]["name"] for s in cpu2["samples"] if s}
    assert "native_queued_spin_lock_slowpath" in leaves and "hash_block" in leaves
    assert {"name": "native_queued_spin_lock_slowpath", "file": "kernel"} in frames


def test_flamegraph_format_speedscope_from_perf_script_and_folded(spike, tmp_path):
    out = tmp_path / "a.json"
    result = flamediag("flamegraph", spike, "--format", "speedscope", "-o", out)
    assert "with sample times" in result.stderr
    jsonschema.validate(json.loads(out.read_text()), SCHEMA)
    folded = tmp_path / "x.folded"
    folded.write_text("java;a;b_[k] 12\njava;a;c 3\n")
    doc = json.loads(flamediag("flamegraph", folded, "--format", "speedscope").stdout)
    jsonschema.validate(doc, SCHEMA)
    assert [p["name"] for p in doc["profiles"]] == ["busy samples (all CPUs)"]
    assert sorted(doc["profiles"][0]["weights"]) == [3, 12]
