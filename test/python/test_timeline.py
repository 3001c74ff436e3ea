"""Timeline, spike search, clock mapping and --from/--to, end to end through `flamediag diagnose`
on generated perf script and bundles (timed_inputs.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from flamediag.clock import Clock, clock_for, row_seconds  # noqa: E402
from flamediag.diagnose import run_diagnosis  # noqa: E402
from timed_inputs import mpstat_rows, spike_script, write_bundle  # noqa: E402

SCHEMA = json.loads((ROOT / "lib/flamediag/schemas/findings.schema.json").read_text())
START = 1795403700.0            # 2026-11-23T03:15:00Z
SPIKE_SECOND = 30


def diagnose(*args, check=True):
    result = subprocess.run([str(ROOT / "bin/flamediag"), "diagnose", *map(str, args)], capture_output=True,
                            text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def spike_perf(tmp_path_factory):
    return spike_script(tmp_path_factory.mktemp("spike") / "spike.perf")


@pytest.fixture(scope="module")
def flat_perf(tmp_path_factory):
    return spike_script(tmp_path_factory.mktemp("flat") / "flat.perf", spike=None)


@pytest.fixture(scope="module")
def spike_out(spike_perf, tmp_path_factory):
    out = tmp_path_factory.mktemp("spike-out")
    result = diagnose(spike_perf, "-o", out)
    return out, result


def test_whole_window_alone_is_only_a_weak_match(spike_perf):
    """What a user got before: the spike drowns in the 60 s window."""
    diagnosis = run_diagnosis(str(spike_perf))
    assert [(f.playbook.id, f.confidence) for f in diagnosis.findings] == [("zone-reclaim", "low")]
    assert round(diagnosis.findings[0].match.share, 2) == 0.05


def test_spike_second_is_diagnosed_on_its_own_and_reported_first(spike_out):
    out, result = spike_out
    doc = json.loads((out / "findings.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    [spike] = doc["spikes"]
    assert (spike["from"], spike["to"]) == (SPIKE_SECOND, SPIKE_SECOND + 1)
    top = spike["findings"][0]
    assert top["id"] == "zone-reclaim" and top["confidence"] in ("medium", "high")
    assert top["share"] == 1.0 and round(top["whole_share"], 2) == 0.05
    assert result.stderr.startswith("zone-reclaim (medium), in 100 % of busy samples during seconds 30-31; "
                                    "5.3 % over the whole 60 s window")
    report = (out / "report.md").read_text()
    assert report.index("## Spikes") < report.index("## Findings")
    assert "### Spike 1: seconds 30-31 (1 s, 396 busy samples)" in report
    assert doc["findings"][0]["id"] == "zone-reclaim"          # the whole-window result stays


def test_timeline_series_peak_at_the_spike(spike_out):
    out, _ = spike_out
    timeline = json.loads((out / "findings.json").read_text())["timeline"]
    assert (timeline["step"], timeline["seconds"], timeline["start"]) == (1, 60, None)
    series = timeline["series"]
    assert set(series) == {"busy", "kernel", "softirq", "zone-reclaim"}
    reclaim = series["zone-reclaim"]
    assert max(range(60), key=lambda i: reclaim[i]) == SPIKE_SECOND and reclaim[SPIKE_SECOND] == 1.0
    assert series["busy"][SPIKE_SECOND] == 4 * 99 and 90 < series["busy"][0] < 150
    assert series["kernel"][SPIKE_SECOND] == 1.0 and series["kernel"][0] == 0.0
    assert timeline["cpu_kernel"]["2"][SPIKE_SECOND] == 1.0 and timeline["cpu_kernel"]["2"][10] == 0.0
    svg = (out / "timeline.svg").read_text()
    assert "<script" not in svg and "spike 1" in svg and "zone-reclaim" in svg


def test_flat_profile_has_no_spike(flat_perf, tmp_path):
    result = diagnose(flat_perf, "-o", tmp_path)
    doc = json.loads((tmp_path / "findings.json").read_text())
    assert doc["spikes"] == [] and doc["findings"] == []
    assert "No spike" in (tmp_path / "report.md").read_text() and "## Spikes" not in (tmp_path / "report.md").read_text()
    assert result.stderr.startswith("Not a kernel-time problem")


def clocked_bundle(directory: Path, perf: Path, **manifest) -> Path:
    mpstat = mpstat_rows("03:15:00", 60, 4, lambda second, cpu: 95.0 if second == SPIKE_SECOND else 2.0)
    return write_bundle(directory, perf.read_text(), dict({
        "start_utc": "2026-11-23T03:14:58Z", "end_utc": "2026-11-23T03:16:00Z", "duration_requested": 60,
        "duration_actual": 60.0, "perf": {"kernel_symbols": "ok", "lost_chunks": 0, "warnings": [],
                                          "enabled_epoch": START}}, **manifest),
        {"metrics/mpstat.txt": mpstat})


def test_bundle_spike_is_named_by_clock_time_with_its_mpstat(spike_perf, tmp_path):
    bundle = clocked_bundle(tmp_path / "bundle", spike_perf)
    result = diagnose(bundle, "-o", tmp_path / "out")
    doc = json.loads((tmp_path / "out/findings.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["timeline"]["start"] == START and doc["timeline"]["clock"]["source"] == "perf-enable"
    assert (doc["spikes"][0]["start"], doc["spikes"][0]["end"]) == ("2026-11-23T03:15:30Z", "2026-11-23T03:15:31Z")
    assert "during 03:15:30-03:15:31" in result.stderr
    assert "### Spike 1: 03:15:30-03:15:31" in (tmp_path / "out/report.md").read_text()
    text = (tmp_path / "out/report.txt").read_text()
    assert "Spike 1: 03:15:30-03:15:31" in text and text.index("SPIKES") < text.index("FINDINGS") < text.index("TIMELINE")
    sys_avg = doc["timeline"]["series"]["mpstat.sys_pct.avg"]
    assert sys_avg[SPIKE_SECOND] == 95.0 and sys_avg[0] == 2.0 and len(sys_avg) == 60
    assert doc["spikes"][0]["mpstat"]["mpstat.sys_pct.avg"] == 95.0
    assert "mpstat during the spike: %sys 95 %" in (tmp_path / "out/report.md").read_text()
    evidence = " ".join(e["text"] for e in doc["spikes"][0]["findings"][0]["evidence"])
    assert "100 % of busy samples" in evidence


def test_clock_sources():
    span = (86400.0, 86459.99)
    assert clock_for(span, 86400.0, {"perf": {"enabled_epoch": START}}) == Clock(START, "perf-enable")
    assert clock_for(span, 86400.0, {"end_utc": "2026-11-23T03:16:00Z"}).source == "window-end"
    assert round(clock_for(span, 86400.0, {"end_utc": "2026-11-23T03:16:00Z"}).origin, 2) == START + 0.01
    assert clock_for(span, 86400.0, {"start_utc": "2026-11-23T03:15:00Z"}) == Clock(START, "window-start")
    assert clock_for((START, START + 60), START, {}) == Clock(START, "realtime")
    assert clock_for(span, 86400.0, {}) == Clock(None, "none")
    assert clock_for(None, None, {"perf": {"enabled_epoch": START}}) == Clock(None, "none")


def test_mpstat_rows_in_local_time_land_on_the_same_seconds():
    clock = Clock(START, "perf-enable")
    utc = row_seconds(["03:15:01", "03:15:02", "03:15:31"], clock)
    tokyo = row_seconds(["12:15:01", "12:15:02", "12:15:31"], clock)            # UTC+9
    twelve = row_seconds(["10:15:01 PM", "10:15:02 PM", "10:15:31 PM"], clock)  # UTC-5, 12-hour locale
    assert utc == tokyo == twelve == [0, 1, 30]


def test_from_to_restricts_by_seconds_or_clock_time(spike_perf, tmp_path):
    bundle = clocked_bundle(tmp_path / "bundle", spike_perf)
    by_seconds = tmp_path / "by-seconds"
    by_clock = tmp_path / "by-clock"
    diagnose(bundle, "-o", by_seconds, "--from", "28", "--to", "33")
    diagnose(bundle, "-o", by_clock, "--from", "03:15:28", "--to", "2026-11-23T03:15:33Z")
    first, second = (json.loads((d / "findings.json").read_text()) for d in (by_seconds, by_clock))
    for doc in (first, second):
        assert doc["window"] == {"start": "2026-11-23T03:15:28Z", "seconds": 5}
        assert doc["timeline"]["first_second"] == 28 and doc["timeline"]["seconds"] == 5
        assert doc["findings"][0]["id"] == "zone-reclaim" and doc["findings"][0]["confidence"] != "low"
    assert first["findings"] == second["findings"] and first["samples"] == second["samples"]
    assert "restricted by --from/--to to seconds 28-33 (03:15:28-03:15:33)" in (by_seconds / "report.md").read_text()


@pytest.mark.parametrize("args, says", [
    (["--from", "70"], "select no second: the samples span seconds 0-60"),
    (["--from", "noon"], "give seconds from the start"),
    (["--from", "03:15:00"], "has no clock time"),
])
def test_from_to_errors_are_one_line_usage_errors(spike_perf, tmp_path, args, says):
    result = diagnose(spike_perf, "-o", tmp_path, *args, check=False)
    assert result.returncode == 2 and says in result.stderr and len(result.stderr.splitlines()) == 1


def test_from_to_on_folded_stacks_is_refused(tmp_path):
    folded = tmp_path / "x.folded"
    folded.write_text("java;a;b 12\n")
    result = diagnose(folded, "-o", tmp_path / "out", "--from", "1", check=False)
    assert result.returncode == 2 and "need sample times" in result.stderr


def test_watch_bundle_uses_realtime_and_marks_the_trigger(tmp_path):
    realtime = spike_script(tmp_path / "realtime.perf", uptime=START).read_text()
    bundle = write_bundle(tmp_path / "watch", realtime, {
        "start_utc": "2026-11-23T03:15:00Z", "end_utc": "2026-11-23T03:16:00Z",
        "trigger": {"rule": "sys-above", "threshold": 30, "cpu": None, "value": 97.5, "for_seconds": 1,
                    "time": "2026-11-23T03:15:31Z", "epoch": START + 31.25, "pre_seconds": 31, "post_seconds": 29,
                    "window_start_epoch": START}})
    diagnose(bundle, "-o", tmp_path / "out")
    timeline = json.loads((tmp_path / "out/findings.json").read_text())["timeline"]
    assert timeline["clock"]["source"] == "realtime" and timeline["start"] == START
    assert timeline["trigger"] == {"second": 31.25, "rule": "sys-above", "time": "2026-11-23T03:15:31Z"}
    assert "watch trigger: sys-above &gt; 30" in (tmp_path / "out/timeline.svg").read_text()
    assert "watch trigger: sys-above > 30 97.5 % at 03:15:31" in (tmp_path / "out/report.md").read_text()


def test_inputs_without_times_have_no_timeline(tmp_path):
    folded = tmp_path / "x.folded"
    folded.write_text("java;a;b 12\n")
    diagnose(folded, "-o", tmp_path / "out")
    assert "timeline" not in json.loads((tmp_path / "out/findings.json").read_text())
    assert not (tmp_path / "out/timeline.svg").exists()


def test_a_stray_timestamp_years_away_costs_no_memory(tmp_path):
    """One sample 3 years after the others would make a timeline of 1e8 seconds: refused, said."""
    script = spike_script(tmp_path / "s.perf", seconds=6, spike=None).read_text()
    stray = script.split("\n\n")[0].replace("86400.", "95000000.", 1)
    (tmp_path / "stray.perf").write_text(script + stray + "\n\n")
    diagnose(tmp_path / "stray.perf", "-o", tmp_path / "out")
    doc = json.loads((tmp_path / "out/findings.json").read_text())
    assert "timeline" not in doc and not (tmp_path / "out/timeline.svg").exists()
    assert any("no timeline or spike search beyond 3600 s" in line for line in doc["data_quality"])
    speedscope = json.loads((tmp_path / "out/profile.speedscope.json").read_text())
    assert [p["name"] for p in speedscope["profiles"]] == ["busy samples (all CPUs)"]


def test_long_windows_are_drawn_in_bins_and_titles_escaped():
    from flamediag.timeline import Timeline
    from flamediag.timeline_svg import render

    seconds = 1500
    line = Timeline(Clock(START, "perf-enable"), 0, seconds, [50.0] * seconds, [0.1] * seconds, [0.0] * seconds,
                    {}, [], {}, {0: [0.2] * seconds, 1: [None] * seconds})
    svg = render(line, "<script>alert(1)</script> & co", [(700, 705)])
    assert svg.count('class="cell"') == 2 * 500                 # 3 s per column
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in svg and "<script" not in svg
    assert "spike 1" in svg and "rgb(200,200,200)" in svg       # CPU 1 has no sample: grey


def test_off_cpu_recording_has_no_timeline(tmp_path):
    """A sched_switch recording's weights are switches, not CPU time: no busy share to plot."""
    from timed_inputs import UPTIME, _sample
    blocked = ["entry_SYSCALL_64", "do_syscall_64", "__x64_sys_futex", "do_futex", "futex_wait",
               "futex_wait_queue", "schedule", "__schedule"]
    chunks = [_sample("worker", 1000 + cpu, cpu, UPTIME + second + tick / 10, blocked, False)
              for second in range(20) for tick in range(10 if second != 12 else 100) for cpu in range(2)]
    recording = tmp_path / "switches.perf"
    recording.write_text("".join(chunks))
    result = diagnose(recording, "-o", tmp_path / "out")
    doc = json.loads((tmp_path / "out/findings.json").read_text())
    assert "not a CPU profile" in result.stderr + (tmp_path / "out/report.md").read_text()
    assert "timeline" not in doc and "spikes" not in doc and not (tmp_path / "out/timeline.svg").exists()
