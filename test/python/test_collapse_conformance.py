"""Every (file, option) of the stackcollapse-perf.pl corpus, byte for byte: 13 files x 6 options."""
from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.collapse import CollapseOptions, collapse_stream, write_folded  # noqa: E402

CORPUS = ROOT / "test" / "fixtures" / "stackcollapse-perf"
OPTIONS = ("pid", "tid", "kernel", "jit", "all", "addrs")
INPUTS = sorted(p.stem for p in CORPUS.glob("*.txt"))
CASES = [(name, opt) for name in INPUTS for opt in OPTIONS]


def options_for(opt: str) -> CollapseOptions:
    """The Perl script drops a last sample with no closing blank line; --perl-compat does too."""
    if opt == "all":
        return CollapseOptions(kernel=True, jit=True, keep_unterminated=False)
    return CollapseOptions(**{opt: True}, keep_unterminated=False)


def test_corpus_is_complete():
    assert len(INPUTS) == 13
    assert len(list((CORPUS / "results").glob("*-collapsed-*.txt"))) == 78


@pytest.mark.parametrize("name,opt", CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_matches_stackcollapse_perf(name, opt):
    with open(CORPUS / f"{name}.txt", "rb") as stream:
        result = collapse_stream(stream, options_for(opt))
    out = io.BytesIO()
    write_folded(result.counts, out)
    expected = (CORPUS / "results" / f"{name}-collapsed-{opt}.txt").read_bytes()
    assert out.getvalue() == expected


@pytest.mark.parametrize("name", ["perf-vertx-stacks-01", "perf-java-stacks-01"])
def test_command_line_matches_too(name):
    """The CLI path (file reader, parallel split for big files aside) prints the same bytes."""
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "collapse", "--all", "--perl-compat",
                          str(CORPUS / f"{name}.txt")],
                         capture_output=True, check=True)
    assert run.stdout == (CORPUS / "results" / f"{name}-collapsed-all.txt").read_bytes()


def test_parallel_split_gives_identical_output(tmp_path):
    """Force the multi-process path on a corpus file repeated many times."""
    from flamediag import collapse as module

    source = (CORPUS / "perf-vertx-stacks-01.txt").read_bytes()
    if not source.endswith(b"\n\n"):
        source += b"\n"
    big = tmp_path / "big.txt"
    big.write_bytes(source * 40)
    with open(big, "rb") as stream:
        serial = collapse_stream(stream, CollapseOptions(kernel=True)).counts
    saved = module.PARALLEL_MIN_BYTES
    module.PARALLEL_MIN_BYTES = 0
    try:
        parallel = module.collapse_file(str(big), CollapseOptions(kernel=True), jobs=2).counts
    finally:
        module.PARALLEL_MIN_BYTES = saved
    assert parallel == serial
