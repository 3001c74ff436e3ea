"""The one perf script reader on every layout perf prints (test/fixtures/perf-script-formats: one
real recording printed three ways), its time data (per-second weights, Profile.between), the
parallel path against the serial one, the last sample of a file without a closing blank line,
and progress on stderr (only on a terminal, checked with a pty)."""
from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag import perfscript, samplereader  # noqa: E402
from flamediag.collapse import CollapseOptions, collapse_file, collapse_stream  # noqa: E402
from flamediag.profile import Frame  # noqa: E402

FORMATS = ROOT / "test" / "fixtures" / "perf-script-formats"
LAYOUTS = ("default", "narrow", "sideband")
OPTIONS = {"plain": CollapseOptions(), "all": CollapseOptions(kernel=True, jit=True),
           "context": CollapseOptions(kernel=True, context=True), "addrs": CollapseOptions(addrs=True)}


def fold(name: str, options: CollapseOptions):
    with open(FORMATS / f"{name}.perf", "rb") as stream:
        return collapse_stream(stream, options)


def profile(name: str):
    with open(FORMATS / f"{name}.perf", "rb") as stream:
        return perfscript.read_profile(stream)


def records(prof):
    return {(r.frames, r.comm, r.cpu, r.context): (r.weight, dict(r.seconds)) for r in prof}


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("layout", ["default", "sideband"])
def test_every_layout_folds_like_the_narrow_one(layout, option):
    expected = fold("narrow", OPTIONS[option])
    result = fold(layout, OPTIONS[option])
    assert result.samples == expected.samples == 198
    assert result.counts == expected.counts
    assert result.problems.total() == 0


def test_sideband_records_are_counted_not_samples():
    samples = samplereader.read_samples(open(FORMATS / "sideband.perf", "rb"), samplereader.ReadOptions(),
                                        perfscript._ProfileGroups())
    text = (FORMATS / "sideband.perf").read_bytes()
    assert samples.sideband == text.count(b"PERF_RECORD_") > 500
    assert samples.samples == 198 and not samples.problems.total()


@pytest.mark.parametrize("layout", ["default", "sideband"])
def test_every_layout_gives_the_narrow_profile(layout):
    assert records(profile(layout)) == records(profile("narrow"))


def test_seconds_sum_to_weights_and_between_splits_them():
    prof = profile("default")
    assert prof.time_span is not None and prof.origin == prof.time_span[0]
    assert all(sum(r.seconds.values()) == r.weight for r in prof)
    span = prof.time_span[1] - prof.time_span[0]
    assert prof.seconds() == int(span) + 1
    assert sum(prof.per_second()) == prof.total()
    first, rest = prof.between(0, 1), prof.between(1, prof.seconds())
    assert first.total() + rest.total() == prof.total()
    assert first.total() == prof.per_second()[0] > 0
    assert all(set(r.seconds) == {0} for r in first)
    assert first.time_span[0] == prof.time_span[0] and first.time_span[1] <= prof.origin + 1
    assert prof.between(5, 9).total() == 0


def test_input_without_timestamps_has_no_seconds():
    text = b"java 25607 cycles:\n\tffffffff81000000 f ([kernel.kallsyms])\n\n"
    prof = perfscript.read_profile(io.BytesIO(text))
    assert prof.total() == 1 and prof.time_span is None and prof.seconds() == 0
    assert all(not r.seconds for r in prof)


def big_copy(tmp_path: Path, megabytes: int) -> Path:
    """default.perf repeated past `megabytes`, a later stretch of time for each copy."""
    text = (FORMATS / "default.perf").read_bytes()
    path = tmp_path / "big.perf"
    with open(path, "wb") as out:
        copy = 0
        while out.tell() < megabytes << 20:
            out.write(text.replace(b" 2750.", b" %d." % (2750 + 2 * copy)).replace(b" 2751.", b" %d." % (2751 + 2 * copy)))
            copy += 1
    return path


def test_parallel_read_equals_serial(tmp_path):
    path = big_copy(tmp_path, 2)
    serial = perfscript.read_profile_file(str(path), jobs=1)
    options = samplereader.ReadOptions(with_time=True, weight_by_period=False)
    samples = samplereader.read_samples_file(str(path), options, perfscript._ProfileGroups(), jobs=2,
                                             parallel_min_bytes=0)
    parallel = perfscript.profile_of(samples)
    assert list(records(parallel).items()) == list(records(serial).items())
    assert parallel.time_span == serial.time_span and parallel.seconds() > 10
    with open(path, "rb") as stream:
        folded = collapse_stream(stream, CollapseOptions(kernel=True)).counts
    assert collapse_file(str(path), CollapseOptions(kernel=True), jobs=2).counts == folded


def test_last_sample_without_blank_line_is_kept_and_said(tmp_path):
    text = (FORMATS / "default.perf").read_bytes().rstrip(b"\n") + b"\n"
    prof = perfscript.read_profile(io.BytesIO(text))
    assert prof.total() == 198
    assert any("ended without a blank line after its last sample" in line for line in prof.data_quality)
    path = tmp_path / "cut.perf"
    path.write_bytes(text)
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "diagnose", str(path), "-o", str(tmp_path / "out")],
                         capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "ended without a blank line" in (tmp_path / "out" / "report.md").read_text()


def test_inlined_frames_take_the_kind_of_the_frame_they_are_inlined_in():
    """`perf script --inline` prints inlined functions as frames whose module is `(inlined)`."""
    text = (b"swapper 0/0 [000] 1.000000: 1 cpu-clock: \n"
            b"\tffffffff8103ce3b rb_erase (inlined)\n"
            b"\tffffffff8103ce3b timerqueue_del+0x1b ([kernel.kallsyms])\n"
            b"\t    55dee1396380 leaf_helper (inlined)\n"
            b"\t    55dee1396380 main+0x10 (/usr/bin/app)\n\n")
    [record] = list(perfscript.read_profile(io.BytesIO(text)))
    assert record.frames == (Frame("main", "user"), Frame("leaf_helper", "user"),
                             Frame("timerqueue_del", "kernel"), Frame("rb_erase", "kernel"))


def run_with_stderr_on_a_pty(argv):
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave)
    finally:
        os.close(slave)
    output = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:          # EIO: the child closed its end
            break
        if not data:
            break
        output += data
    os.close(master)
    assert proc.wait(timeout=300) == 0
    return output


# A reader process that dies of a signal, with the CLI's SIGTERM handler installed in the parent
# as `flamediag` has it. The worker must die (not raise SystemExit, which a worker inherits with the
# handler and which once left a child running the parent's code, waiting on the pool's lock
# forever), and the parent must read the file itself instead of waiting for the lost piece.
KILLED_READER = """
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from flamediag import cli, perfscript, samplereader
cli.install_sigterm_handler()
read_range = samplereader._read_range

def dying_reader(path, start, end, options, consumer):
    if start > 0:
        os.kill(os.getpid(), signal.SIGTERM)
    return read_range(path, start, end, options, consumer)

samplereader._read_range = dying_reader
options = samplereader.ReadOptions(with_time=True, weight_by_period=False)
samples = samplereader.read_samples_file(sys.argv[2], options, perfscript._ProfileGroups(), jobs=2,
                                         parallel_min_bytes=0)
parallel = perfscript.profile_of(samples)
serial = perfscript.read_profile_file(sys.argv[2], jobs=1)
print(sorted(map(repr, parallel)) == sorted(map(repr, serial)) and len(list(serial)) > 0)
"""


def test_a_reader_killed_by_a_signal_leaves_the_parent_to_read_the_file(tmp_path):
    path = big_copy(tmp_path, 2)
    run = subprocess.run([sys.executable, "-c", KILLED_READER, str(ROOT / "lib"), str(path)],
                         capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "True"), run.stderr[-2000:]


@pytest.fixture(scope="module")
def large_input(tmp_path_factory):
    return big_copy(tmp_path_factory.mktemp("large"), 60)


def test_progress_on_a_terminal(large_input):
    output = run_with_stderr_on_a_pty([str(ROOT / "bin" / "flamediag"), "collapse", "--jobs", "1",
                                       str(large_input)])
    assert b"flamediag: reading big.perf: " in output and b" MB/s" in output and b"s left" in output, output
    assert output.endswith(b"\r\x1b[K"), output[-80:]      # the line is cleared at the end


def test_no_progress_when_stderr_is_not_a_terminal(large_input):
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "collapse", str(large_input)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, timeout=300)
    assert run.returncode == 0 and run.stderr == b""


def test_no_progress_for_small_inputs():
    output = run_with_stderr_on_a_pty([str(ROOT / "bin" / "flamediag"), "collapse", str(FORMATS / "default.perf")])
    assert output == b""
