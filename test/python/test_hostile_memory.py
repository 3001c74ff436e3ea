"""Peak memory of `flamediag diagnose` on inputs built to exhaust it stays under 300 MiB with the
default limits (doc/safety.md "Memory"): measured as the child's peak RSS (getrusage in a wrapper
process), never as time. Every input is generated at test time."""
from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import hostile

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"
MAX_RSS_KIB = 300 * 1024
RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[1:])\n"
    "sys.stderr.write('\\nMAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(rc)\n"
)


def diagnose(source, tmp_path, *extra):
    """(exit code, stderr without the RSS line, peak RSS KiB) of `flamediag diagnose SOURCE`."""
    argv = [sys.executable, "-c", RSS_WRAPPER, str(FLAMEDIAG), "diagnose", str(source), "-o", str(tmp_path / "out"),
            *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    body, _, rss = proc.stderr.rpartition("MAXRSS ")
    assert "Traceback" not in body, body
    return proc.returncode, body.strip(), int(rss.strip())


def gzip_of_zeros(size: int) -> bytes:
    """gzip of `size` zero bytes, compressed in pieces (about 1 MB for 1000 MiB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + packer.flush()


def test_a_gzip_bomb_nested_in_a_small_bundle(tmp_path):
    files = hostile.default_files()
    files["perf/perf.script.gz"] = gzip_of_zeros(1000 * 1024 ** 2)
    bundle = hostile.write_bundle(tmp_path / "nested.tar.gz", files)
    assert bundle.stat().st_size < 64 * 1024
    rc, stderr, rss = diagnose(bundle, tmp_path)
    assert rc == 65 and stderr.count("ERROR") == 1, stderr
    assert "perf/perf.script.gz" in stderr and "compression ratio" in stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"




def test_a_100_mb_text_member_of_a_directory_bundle(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    line = b"vm.some_setting_" + b"x" * 40 + b" = 1\n"
    with open(bundle / "system" / "sysctl.txt", "ab") as handle:
        for _ in range(100 * 1024 ** 2 // (len(line) * 1024)):
            handle.write(line * 1024)
    hostile.resum(bundle)
    rc, stderr, rss = diagnose(bundle, tmp_path)
    assert rc == 0, stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"
    assert "system/sysctl.txt" in (tmp_path / "out" / "report.md").read_text()


def test_a_million_bogus_sha256sums_lines_are_counted_not_listed(tmp_path):
    bundle = tmp_path / "b"
    shutil.copytree(SAMPLE, bundle)
    with open(bundle / "SHA256SUMS", "ab") as handle:
        for start in range(0, 10 ** 6, 10 ** 4):
            handle.write(b"".join(b"%064x  bogus/%d\n" % (n, n) for n in range(start, start + 10 ** 4)))
    rc, stderr, rss = diagnose(bundle, tmp_path)
    assert rc == 0, stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"
    report = tmp_path / "out" / "report.md"
    assert report.stat().st_size < 1024 ** 2, "every problem listed"
    assert "SHA256SUMS lists more than" in report.read_text()


def test_a_million_unique_folded_stacks(tmp_path):
    folded = tmp_path / "unique.folded"
    with open(folded, "w") as handle:
        for n in range(10 ** 6):
            handle.write(f"java;start_thread;run_{n % 1000};work_{n}\t1\n".replace("\t", " "))
    rc, stderr, rss = diagnose(folded, tmp_path)
    assert rc == 0, stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"
    assert "more than 100000 distinct stacks" in (tmp_path / "out" / "report.md").read_text()


def test_a_huge_paste_is_refused_before_it_is_read(tmp_path):
    paste = tmp_path / "ticket.txt"
    line = b"    12.50%  java  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath " + b"x" * 60 + b"\n"
    with open(paste, "wb") as handle:
        handle.write(b"# Samples: 10K of event 'cpu-clock'\n")
        block = line * 8192
        for _ in range(4 * 1024 ** 3 // len(block) // 16):     # 256 MiB of text is enough to show it
            handle.write(block)
    rc, stderr, rss = diagnose(paste, tmp_path)
    assert rc == 65 and stderr.count("ERROR") == 1, stderr
    assert "too large for a ticket paste" in stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"


def test_dev_zero(tmp_path):
    rc, stderr, rss = diagnose("/dev/zero", tmp_path)
    assert rc == 65 and stderr.count("ERROR") == 1, stderr
    assert rss < MAX_RSS_KIB, f"peak RSS {rss} KiB"
