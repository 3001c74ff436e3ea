"""Hypothesis over the input classes of the second hostile-input review: file names, folded counts,
manifest field types, pipes, long whitespace runs (perf script lines: test_perfscript_linear.py)
and symlinked outputs. The only allowed failure
is a UserError (one ERROR line); anything else is a bug. Bounded: FUZZ_EXAMPLES (default 40) per
class in-process, a tenth of that for the subprocess classes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flamediag import outputs
from flamediag.diagnose import run_diagnosis, write_outputs
from flamediag.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(max_examples=max(3, EXAMPLES // 10), deadline=None, suppress_health_check=list(HealthCheck))


def diagnose_in_process(source: Path, out: Path) -> None:
    try:
        write_outputs(run_diagnosis(str(source)), out)
    except UserError:
        pass


NAME_BYTES = st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\0" not in b
                                                       and b not in (b".", b".."))


@FUZZ
@given(name=NAME_BYTES)
def test_fuzz_input_file_names(name):
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / os.fsdecode(name)
        path.write_text("java;start_thread;do_syscall_64;schedule 10\n")
        diagnose_in_process(path, Path(work) / "out")


COUNTS = st.one_of(st.integers(min_value=-10, max_value=10 ** 400).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.text(alphabet="0123456789.eE+-", min_size=1, max_size=30))


@FUZZ
@given(counts=st.lists(COUNTS, min_size=1, max_size=5))
def test_fuzz_folded_counts(counts):
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "c.folded"
        path.write_text("".join(f"java;a;f{i} {count}\n" for i, count in enumerate(counts)))
        diagnose_in_process(path, Path(work) / "out")


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4),
                           max_leaves=12)
MANIFEST_KEYS = ["host", "kernel", "cpus", "start_utc", "duration_actual", "duration_requested", "label",
                 "complete", "end_signal", "perf", "collectors", "frequency", "redaction"]


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(MANIFEST_KEYS), JSON_VALUES, min_size=1, max_size=4))
def test_fuzz_manifest_types(fields):
    with tempfile.TemporaryDirectory() as work:
        bundle = Path(work) / "b"
        shutil.copytree(SAMPLE, bundle)
        manifest = json.loads((bundle / "manifest.json").read_text())
        manifest.update(fields)
        (bundle / "manifest.json").write_text(json.dumps(manifest))
        out = Path(work) / "out"
        diagnose_in_process(bundle, out)
        if (out / "findings.json").exists():
            json.loads((out / "findings.json").read_text(), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


@FUZZ
@given(run=st.integers(min_value=1, max_value=200_000), where=st.sampled_from(["frame", "count", "paste"]))
def test_fuzz_long_whitespace_runs(run, where):
    """Folded stacks and pastes (perf script lines: test_perfscript_linear.py)."""
    pad = " " * run
    text = {"frame": f"java;a{pad}b;c 3\n", "count": f"java;a;b{pad}3{pad}\n",
            "paste": f"Samples: 10K of event 'cpu-clock'\n    12.50%{pad}java{pad}[k] schedule\n"}[where]
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "input.txt"
        path.write_text(text * 3)
        diagnose_in_process(path, Path(work) / "out")


@FUZZ
@given(linked=st.sets(st.sampled_from(["report.md", "report.txt", "flamegraph.svg", "findings.json"]), min_size=1),
       kind=st.sampled_from(["file", "dir", "dangling"]))
def test_fuzz_symlinked_outputs(linked, kind):
    with tempfile.TemporaryDirectory() as work:
        victim = Path(work) / "victim"
        if kind == "file":
            victim.write_text("keep\n")
        elif kind == "dir":
            victim.mkdir()
        out = Path(work) / "out"
        out.mkdir()
        for name in linked:
            (out / name).symlink_to(victim)
        try:
            outputs.write_set(out, {name: b"new\n" for name in sorted(linked)})
        except UserError:
            pass
        if kind == "file":
            assert victim.read_text() == "keep\n"
        elif kind == "dir":
            assert list(victim.iterdir()) == []
        else:
            assert not victim.exists()


@FUZZ_SLOW
@given(data=st.binary(max_size=4096))
def test_fuzz_pipes(data):
    proc = subprocess.run([str(FLAMEDIAG), "diagnose", "-", "-o", "out"], input=data, capture_output=True,
                          timeout=300, cwd=tempfile.mkdtemp())
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 65), stderr
    assert "Traceback" not in stderr and "bug in flamediag" not in stderr
