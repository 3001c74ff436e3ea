"""Modern-perf fixtures (recorded on this machine with perf 6.1, see test/record-goldens) x every
option against the checked-in expected files, plus checks that do not trust those files: the
goldens are made by our own collapse, so each property they should have is asserted directly."""
from __future__ import annotations

import gzip
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag import perfscript  # noqa: E402
from flamediag.collapse import CollapseOptions, collapse_stream, write_folded  # noqa: E402

FIXTURES = ROOT / "test" / "fixtures" / "perf-script"
OPTIONS = {
    "default": CollapseOptions(),
    "kernel": CollapseOptions(kernel=True),
    "jit": CollapseOptions(jit=True),
    "all": CollapseOptions(kernel=True, jit=True),
    "context-frames": CollapseOptions(context=True),
    "pid": CollapseOptions(pid=True),
    "tid": CollapseOptions(tid=True),
    "addrs": CollapseOptions(addrs=True),
    "page-faults": CollapseOptions(event_filter=b"page-faults"),
}
INPUTS = sorted(p for p in FIXTURES.iterdir() if p.name.endswith((".perf", ".perf.gz")))
CASES = [(path, opt) for path in INPUTS for opt in OPTIONS]


def stem(path: Path) -> str:
    return path.name.split(".perf")[0]


def fold(data: bytes, options: CollapseOptions) -> bytes:
    out = io.BytesIO()
    write_folded(collapse_stream(io.BytesIO(data), options).counts, out)
    return out.getvalue()


def fold_file(name: str, options: CollapseOptions = CollapseOptions()) -> bytes:
    with open(FIXTURES / name, "rb") as stream:
        out = io.BytesIO()
        write_folded(collapse_stream(stream, options).counts, out)
    return out.getvalue()


def totals(folded: bytes) -> int:
    return sum(int(line.rsplit(b" ", 1)[1]) for line in folded.splitlines())


def samples_of(path: Path):
    """Event lines of a fixture: (comm, period, event) straight from the text."""
    text = path.read_bytes()
    if text.startswith(b"\x1f\x8b"):
        text = gzip.decompress(text)
    found = []
    for line in text.splitlines():
        header = perfscript.parse_header(line) if line and not line.startswith(b"\t") else None
        if header is not None:
            found.append(header)
    return found


def test_every_fixture_is_real_and_has_all_expected_files():
    assert len(INPUTS) >= 10
    for path in INPUTS:
        assert path.stat().st_size > 1000, f"{path.name}: empty fixture"
        for opt in OPTIONS:
            assert (FIXTURES / f"{stem(path)}.expected-{opt}.folded").exists(), (path.name, opt)


@pytest.mark.parametrize("path,opt", CASES, ids=[f"{stem(p)}-{o}" for p, o in CASES])
def test_fixture_matches_expected(path, opt):
    expected = (FIXTURES / f"{stem(path)}.expected-{opt}.folded").read_bytes()
    assert fold_file(path.name, OPTIONS[opt]) == expected


def test_gzip_is_detected_by_content():
    plain = (FIXTURES / "cpu-softirq.perf").read_bytes()
    assert gzip.decompress((FIXTURES / "cpu-softirq-gz.perf.gz").read_bytes()) == plain
    renamed = io.BytesIO((FIXTURES / "cpu-softirq-gz.perf.gz").read_bytes())
    for options in (CollapseOptions(), CollapseOptions(kernel=True, context=True)):
        renamed.seek(0)
        out = io.BytesIO()
        write_folded(collapse_stream(renamed, options).counts, out)
        assert out.getvalue() == fold(plain, options)


def test_versioned_vmlinux_frames_are_kernel_frames():
    """vmlinux-versioned.perf is cpu-softirq.perf's first 40 samples with the module printed as
    /usr/lib/debug/boot/vmlinux-<release>: the folded output must be the same, _[k] included."""
    first = b"\n\n".join((FIXTURES / "cpu-softirq.perf").read_bytes().split(b"\n\n")[:40]) + b"\n\n"
    versioned = (FIXTURES / "vmlinux-versioned.perf").read_bytes()
    assert b"(/usr/lib/debug/boot/vmlinux-" in versioned
    for options in (CollapseOptions(kernel=True), CollapseOptions(kernel=True, context=True)):
        assert fold(versioned, options) == fold(first, options)
    assert b"do_syscall_64_[k]" in fold(versioned, CollapseOptions(kernel=True))


@pytest.mark.parametrize("name", ["single-line.perf", "no-stack.perf"])
def test_every_sample_of_a_stackless_or_single_line_file_counts(name):
    """No blank lines between samples: each event line ends the previous sample (Perl prints nothing)."""
    headers = samples_of(FIXTURES / name)
    assert len(headers) >= 100
    assert totals(fold_file(name)) == sum(h.period for h in headers)


def test_single_line_frames_are_the_leaf():
    folded = fold_file("single-line.perf", CollapseOptions(kernel=True))
    assert all(line.count(b";") == 1 for line in folded.splitlines()), folded[:300]
    assert b"_[k] " in folded


def test_comm_with_spaces_colons_and_a_digit_word():
    folded = fold_file("comm-spaces.perf", CollapseOptions(tid=True))
    roots = {line.split(b";", 1)[0] for line in folded.splitlines()}
    assert all(re.fullmatch(rb"web_1:_wrk-\d+/\d+", root) for root in roots), roots


def test_period_weighted_counts_and_event_filter():
    headers = samples_of(FIXTURES / "multi-event.perf")
    by_event = {}
    for header in headers:
        by_event.setdefault(header.event, []).append(header.period)
    assert set(by_event) == {b"task-clock", b"page-faults"}
    assert len(set(by_event[b"page-faults"])) > 1, "page-fault periods vary: the counts are weights"
    first_event = headers[0].event
    assert totals(fold_file("multi-event.perf")) == sum(by_event[first_event])
    faults = fold_file("multi-event.perf", CollapseOptions(event_filter=b"page-faults"))
    assert totals(faults) == sum(by_event[b"page-faults"])


def test_multi_event_warning_names_the_events():
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "collapse", str(FIXTURES / "multi-event.perf")],
                         capture_output=True)
    assert run.returncode == 0
    assert b"several event types (page-faults, task-clock)" in run.stderr
    assert run.stderr.count(b"\n") == 1


def test_unresolved_kernel_frames_follow_perl():
    kernel = fold_file("kernel-unresolved.perf", CollapseOptions(kernel=True))
    assert b"[[kernel.kallsyms]]_[k]" in kernel
    addrs = fold_file("kernel-unresolved.perf", CollapseOptions(addrs=True))
    assert re.search(rb"\[\[kernel\.kallsyms\] <ffffffff[0-9a-f]+>\]", addrs)


@pytest.mark.parametrize("name,frame", [("jit-perfmap.perf", b"JS:*hot [eval]:1:13_[j]"),
                                        ("jitdump.perf", b"Builtin:JSEntry_[j]")])
def test_jit_frames(name, frame):
    jit = fold_file(name, CollapseOptions(jit=True))
    assert frame in jit
    assert b"_[j]" not in fold_file(name), "suffixes only with --jit"
    everything = fold_file(name, CollapseOptions(kernel=True, jit=True))
    assert frame in everything and b"_[k]" in everything


# --- --context-frames ------------------------------------------------------------------------------

HEADER = b"%s %d/%d [%03d] 100.%06d: 250000 cpu-clock:ppp: \n"


def perf_sample(comm: bytes, cpu: int, leaf_first: list, n: int = 1) -> bytes:
    lines = [b"\t%16x %s ([kernel.kallsyms])" % (0xffffffff81000000 + i, name) for i, name in enumerate(leaf_first)]
    return HEADER % (comm, 7, 7, cpu, n) + b"\n".join(lines) + b"\n\n"


IDLE_SOFTIRQ = [b"net_rx_action", b"handle_softirqs", b"__irq_exit_rcu", b"common_interrupt",
                b"asm_common_interrupt", b"pv_native_safe_halt", b"default_idle", b"do_idle",
                b"cpu_startup_entry", b"start_secondary"]
IDLE = [b"pv_native_safe_halt", b"default_idle", b"do_idle", b"cpu_startup_entry", b"start_secondary"]
NMI = [b"perf_event_nmi_handler", b"nmi_handle", b"default_do_nmi", b"exc_nmi", b"asm_exc_nmi", b"do_idle"]


def test_context_marker_sits_just_above_the_first_frame_of_the_context():
    data = perf_sample(b"swapper", 0, IDLE_SOFTIRQ) + perf_sample(b"swapper", 1, IDLE, 2)
    folded = fold(data, CollapseOptions(context=True)).splitlines()
    assert folded == [
        b"swapper;start_secondary;cpu_startup_entry;do_idle;default_idle;pv_native_safe_halt 250000",
        b"swapper;start_secondary;cpu_startup_entry;do_idle;default_idle;pv_native_safe_halt;asm_common_interrupt;"
        b"[hardirq];common_interrupt;__irq_exit_rcu;handle_softirqs;[softirq];net_rx_action 250000",
    ]
    assert b"[" not in b"".join(fold(data, CollapseOptions()).splitlines()).replace(b"[k]", b"")


def test_nmi_marker_and_no_marker_for_task_context():
    folded = fold(perf_sample(b"swapper", 0, NMI) + perf_sample(b"dd", 1, [b"read_zero", b"vfs_read"]),
                  CollapseOptions(context=True, kernel=True))
    assert b"swapper;do_idle_[k];asm_exc_nmi_[k];[nmi];exc_nmi_[k];" in folded
    assert b"dd;vfs_read_[k];read_zero_[k] 250000" in folded


def test_softirq_on_an_idle_cpu_is_not_idle():
    """The diagnose engine reads the same stacks: softirq work under the idle loop is busy."""
    from flamediag.profile import is_idle

    data = perf_sample(b"swapper", 0, IDLE_SOFTIRQ) + perf_sample(b"swapper", 1, IDLE)
    profile = perfscript.read_profile(io.BytesIO(data))
    by_leaf = {record.frames[-1].name: record for record in profile}
    assert by_leaf["net_rx_action"].context == "softirq" and not is_idle(by_leaf["net_rx_action"])
    assert is_idle(by_leaf["pv_native_safe_halt"])


def test_context_markers_in_real_softirq_fixture():
    from flamediag.kernelnames import context_for_frame

    folded = fold_file("cpu-softirq.perf", CollapseOptions(context=True))
    marked = [line for line in folded.splitlines() if b";[softirq]" in line]
    assert marked, "the recording has softirq samples"
    for line in marked:
        frames = line.rsplit(b" ", 1)[0].split(b";")
        at = frames.index(b"[softirq]")
        assert context_for_frame(frames[at - 1].decode()) == "softirq"
        assert all(context_for_frame(f.decode()) != "softirq" for f in frames[1:at - 1])
