"""Malformed input never crashes or hangs collapse: one summary warning with counts and the first
line numbers, exit 65 only when nothing was usable; a bounded hypothesis fuzz run; memory grows
with unique stacks, not with input size (peak RSS of a child process, as a bound)."""
from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag import perfscript  # noqa: E402
from flamediag.collapse import CollapseOptions, collapse_stream, write_folded  # noqa: E402

FIXTURES = ROOT / "test" / "fixtures" / "perf-script"
GOOD = (FIXTURES / "cpu-softirq.perf").read_bytes()
FOLDED_LINE = re.compile(rb"[^\n]+ \d+")


def collapse_cli(data: bytes, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "flamediag"), "collapse", *args, "-"], input=data,
                          capture_output=True, timeout=120)


def warnings_of(run: subprocess.CompletedProcess):
    return [line for line in run.stderr.decode().splitlines() if "warning" in line]


def total(folded: bytes) -> int:
    return sum(int(line.rsplit(b" ", 1)[1]) for line in folded.splitlines())


def _cut_mid_stack():
    cut = GOOD[:len(GOOD) // 2]
    cut = cut[:cut.rfind(b"\n", 0, len(cut) - 1) - 5]      # mid-line, mid-stack
    return cut, cut[:cut.rfind(b"\n\n") + 2].count(b"\n") + 1


def test_truncated_last_sample_is_kept_and_named():
    cut, header_line = _cut_mid_stack()
    run = collapse_cli(cut)
    assert run.returncode == 0
    warnings = "\n".join(warnings_of(run))
    assert re.search(r"ended without a blank line after its last sample \(line %d\); that sample was kept"
                     % header_line, warnings), warnings
    assert total(run.stdout) == total(collapse_cli(cut[:cut.rfind(b"\n\n") + 2]).stdout) + 250000


def test_truncated_last_sample_is_dropped_with_perl_compat():
    cut, header_line = _cut_mid_stack()
    run = collapse_cli(cut, "--perl-compat")
    assert run.returncode == 0
    [warning] = warnings_of(run)
    assert re.search(r"1 incomplete last sample \(no closing blank line\) \(line %d\)" % header_line, warning)
    assert run.stdout == collapse_cli(cut[:cut.rfind(b"\n\n") + 2]).stdout


def test_one_sample_without_a_blank_line_is_not_lost():
    one = GOOD[:GOOD.index(b"\n\n")] + b"\n"
    run = collapse_cli(one)
    assert run.returncode == 0 and total(run.stdout) == 250000, run


def test_non_utf8_bytes_pass_through_as_bytes():
    data = GOOD.replace(b"read_zero", b"read_\xff\xfezero", 1)
    run = collapse_cli(data)
    assert run.returncode == 0 and run.stderr == b""
    assert b"read_\xff\xfezero" in run.stdout
    assert total(run.stdout) == total(collapse_cli(GOOD).stdout)


def test_a_one_megabyte_line_is_skipped_and_counted():
    blocks = GOOD.split(b"\n\n")
    victim = blocks[3].split(b"\n")
    victim.insert(2, b"\t" + b"x" * (1 << 20))
    blocks[3] = b"\n".join(victim)
    data = b"\n\n".join(blocks)
    line_no = b"\n\n".join(blocks[:3]).count(b"\n") + 2 + 1 + 2
    run = collapse_cli(data)
    assert run.returncode == 0
    [warning] = warnings_of(run)
    assert f"1 over-long lines (line {line_no})" in warning
    assert total(run.stdout) == total(collapse_cli(GOOD).stdout)


@pytest.mark.parametrize("data", [b"", b"\n\n\n", bytes(random.Random(7).getrandbits(8) for _ in range(1 << 16))],
                         ids=["empty", "blank-lines", "binary-junk"])
def test_nothing_usable_exits_65_with_one_error_line(data):
    run = collapse_cli(data)
    assert run.returncode == 65
    assert run.stdout == b""
    errors = [line for line in run.stderr.decode().splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "perf script" in errors[0]
    assert len(warnings_of(run)) <= 1


def test_junk_between_good_samples_is_one_summary_warning():
    blocks = GOOD.split(b"\n\n")
    junk = bytes(random.Random(3).getrandbits(8) for _ in range(4000)).replace(b"\n\n", b"\n")
    data = b"\n\n".join(blocks[:20] + [junk] + blocks[20:])
    run = collapse_cli(data)
    assert run.returncode == 0
    [warning] = warnings_of(run)
    assert re.search(r"skipped \d+ ", warning) and re.search(r"\(line \d+", warning)
    assert total(run.stdout) >= total(collapse_cli(GOOD).stdout) - 250000


def test_input_without_any_newline_is_bounded():
    """Ten megabytes in one line: cut into bounded blocks, reported, no stacks -> 65."""
    run = collapse_cli(b"swapper 0/0 [000] 1.0: 1 cpu-clock: " + b"y" * (10 << 20))
    assert run.returncode == 65
    [warning] = warnings_of(run)
    assert "over-long" in warning


# --- bounded fuzz -------------------------------------------------------------------------------

PERFISH = [
    b"swapper     0/0     [000]   884.644824:     250000 cpu-clock:ppp: ",
    b"java 25607 4794564.109216: 1 cycles:",
    b"web 1: wrk 13065/13065 [000]  1876.090075:     250000 cpu-clock:ppp:      55dee1396380 f (/usr/bin/bash)",
    b"\tffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])",
    b"\t    7f1e2215d058 [unknown] (/tmp/perf-77.map)",
    b"\t              9c Builtin:JSEntry (/tmp/jitted-8590-55.so)",
    b"\t7f53 a->b->c (/lib/x.so)",
    b"\tffffffff81 handle_softirqs ([kernel.kallsyms])",
    b"# comment", b"", b"\t", b"\t0 ( )", b"x 1/ [", b"\t1 (((())", b"; ;", b"\xff\xfe\x00",
]
LINES = st.lists(st.one_of(st.sampled_from(PERFISH), st.binary(max_size=60)), max_size=40)
OPTION_SETS = st.sampled_from([CollapseOptions(), CollapseOptions(kernel=True, jit=True, context=True),
                               CollapseOptions(tid=True, addrs=True)])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=LINES, options=OPTION_SETS)
def test_fuzz_collapse_never_raises_and_prints_folded_lines(lines, options):
    data = b"\n".join(lines)
    result = collapse_stream(io.BytesIO(data), options)
    out = io.BytesIO()
    write_folded(result.counts, out)
    for line in out.getvalue().splitlines():
        assert FOLDED_LINE.fullmatch(line), line
    perfscript.read_profile(io.BytesIO(data))          # the diagnose engine's reader too


# --- streaming: memory follows unique stacks, not input size -------------------------------------

PEAK_RSS = r"""
import io, json, resource, sys
sys.path.insert(0, sys.argv[1])
from flamediag.collapse import CollapseOptions, collapse_stream

class Repeated(io.RawIOBase):
    def __init__(self, data, times):
        self.data, self.left = data, times
    def readable(self):
        return True
    def read(self, size=-1):
        if self.left <= 0:
            return b""
        self.left -= 1
        return self.data

data = open(sys.argv[2], "rb").read()
result = collapse_stream(Repeated(data, int(sys.argv[3])), CollapseOptions())
print(json.dumps({"rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "samples": result.samples, "stacks": len(result.counts)}))
"""


def peak_rss(times: int) -> dict:
    run = subprocess.run([sys.executable, "-c", PEAK_RSS, str(ROOT / "lib"), str(FIXTURES / "cpu-softirq.perf"),
                          str(times)], capture_output=True, check=True, timeout=600)
    return json.loads(run.stdout)


def test_memory_does_not_grow_with_input_size():
    small, large = peak_rss(1), peak_rss(1500)          # 58 KB vs 87 MB of input, same stacks
    assert large["samples"] == 1500 * small["samples"]
    assert large["stacks"] == small["stacks"]
    growth_mib = (large["rss_kib"] - small["rss_kib"]) / 1024
    assert growth_mib < 24, (small, large)             # input grew by 87 MiB; chunks are 4 MiB


def test_truncated_gzip_keeps_the_samples_before_the_cut():
    gz = (FIXTURES / "cpu-softirq-gz.perf.gz").read_bytes()
    run = collapse_cli(gz[:len(gz) * 2 // 3])
    assert run.returncode == 0
    [warning] = warnings_of(run)
    assert "gzip input is corrupt or truncated" in warning
    assert run.stdout.count(b"\n") > 10
    assert collapse_cli(gz[:2] + b"junk").returncode == 65


class _NoBlankLines:
    """A lazily generated stream of `size` bytes of text lines and no blank line at all."""

    def __init__(self, size: int):
        self.left = size
        self.line = b"x" * 99 + b"\n"

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        self.left -= n
        whole, rest = divmod(n, len(self.line))
        return self.line * whole + self.line[:rest]


def test_read_profile_memory_is_bounded_without_blank_lines():
    # The diagnoser's reader (not only collapse) must not hold a block that never ends.
    import tracemalloc
    from flamediag import perfscript

    tracemalloc.start()
    profile = perfscript.read_profile(_NoBlankLines(96 << 20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not profile.records
    assert peak < 48 << 20, f"peak {peak >> 20} MiB for 96 MiB of input"
