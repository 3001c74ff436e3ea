"""The output-set writer (flamediag.outputs, doc/safety.md "Output directories") through the real
`flamediag diagnose`: links planted in -o are replaced, never followed; a directory of another user
is refused; a set is never mixed with another run's; -o onto a file, /proc or /dev/null exits 77."""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from flamediag import outputs
from flamediag.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"
SET = ("report.md", "report.txt", "flamegraph.svg", "profile.speedscope.json", "timeline.svg", "findings.json")


def diagnose(source, out, **kwargs):
    return subprocess.run([str(FLAMEDIAG), "diagnose", str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=300, **kwargs)


def test_symlinks_planted_in_the_output_directory_are_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "inc"
    out.mkdir()
    for name in SET:
        (out / name).symlink_to(victim)
    proc = diagnose(SAMPLE, out)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "precious\n"
    for name in SET:
        assert not (out / name).is_symlink() and (out / name).stat().st_size > 0
    assert sorted(p.name for p in out.iterdir()) == sorted(SET), "the private staging directory was left"


def test_an_output_directory_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory owned by another user")
    out = tmp_path / "theirs"
    out.mkdir()
    os.chown(out, 65534, 65534)
    proc = diagnose(SAMPLE, out)
    assert proc.returncode == 77, proc.stderr
    assert "owned by another user" in proc.stderr and "Traceback" not in proc.stderr
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("target", ["file", "/dev/null", "/proc", "/proc/self/nothing"])
def test_output_onto_a_file_or_pseudo_filesystem_exits_77(tmp_path, target):
    if target == "file":
        target = tmp_path / "a-file"
        target.write_text("keep\n")
    proc = diagnose(SAMPLE, target)
    assert proc.returncode == 77, proc.stderr
    assert proc.stderr.count("ERROR") == 1 and "Traceback" not in proc.stderr


def test_a_failure_while_staging_leaves_the_old_set_whole(tmp_path):
    outputs.write_set(tmp_path, {"a.txt": b"old a\n", "b.json": b"old b\n"})

    class Interrupted(dict):
        def items(self):
            yield "a.txt", b"new a\n"
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        outputs.write_set(tmp_path, Interrupted({"a.txt": b"", "b.json": b""}))
    assert (tmp_path / "a.txt").read_bytes() == b"old a\n"
    assert (tmp_path / "b.json").read_bytes() == b"old b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.json"]


def test_write_set_refuses_names_with_a_directory_part(tmp_path):
    with pytest.raises(ValueError):
        outputs.write_set(tmp_path, {"../escape": b"x"})


def test_write_set_into_a_file_is_a_user_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError) as caught:
        outputs.write_set(tmp_path / "f", {"a": b"x"})
    assert caught.value.code == 77


def _waiting_for_lock(pid: int) -> bool:
    """True once /proc/locks shows `pid` blocked on a lock (a '->' line)."""
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields and fields[fields.index("->") + 4] == str(pid):
            return True
    return False


def test_a_second_diagnose_into_the_same_directory_waits_for_the_first(tmp_path):
    out = tmp_path / "out"
    assert diagnose(SAMPLE, out).returncode == 0
    before = {name: (out / name).read_bytes() for name in SET}
    folded = tmp_path / "other.folded"
    folded.write_text("java;start_thread;do_syscall_64;schedule 100\n")
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)          # a first diagnose in its write phase
        second = subprocess.Popen([str(FLAMEDIAG), "diagnose", str(folded), "-o", str(out)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 240
        while not _waiting_for_lock(second.pid) and second.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert second.poll() is None, second.communicate()
        assert {name: (out / name).read_bytes() for name in SET} == before
    finally:
        os.close(fd)
    _, stderr = second.communicate(timeout=240)
    assert second.returncode == 0, stderr
    findings = json.loads((out / "findings.json").read_text())
    assert findings["input"] == str(folded)
    assert "other" in (out / "report.md").read_text() and "zone-reclaim-rhel6" not in (out / "report.md").read_text()


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 240
    while not path.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.exists(), proc.communicate(timeout=60)


def test_sigterm_between_two_renames_is_held_until_the_whole_new_set_is_in_place(tmp_path):
    """A real SIGTERM sent to a real diagnose while its set is half renamed (report.md new,
    findings.json still the old run's): the renames finish, then the signal is honoured."""
    out = tmp_path / "out"
    assert diagnose(SAMPLE, out).returncode == 0
    old = {name: (out / name).read_bytes() for name in SET}
    folded = tmp_path / "other.folded"
    folded.write_text("java;start_thread;do_syscall_64;schedule 100\n")
    marker = tmp_path / "between-renames"
    env = {**os.environ, outputs.TEST_PAUSE_ENV: str(marker)}
    second = subprocess.Popen([str(FLAMEDIAG), "diagnose", str(folded), "-o", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_for(marker, second)
    assert (out / "report.md").read_bytes() != old["report.md"]              # really between renames
    assert (out / "findings.json").read_bytes() == old["findings.json"]
    second.send_signal(signal.SIGTERM)
    _, stderr = second.communicate(timeout=240)
    assert second.returncode == 143, stderr                                    # the signal was honoured
    assert "Traceback" not in stderr
    new = {name: (out / name).read_bytes() for name in SET if (out / name).exists()}
    assert json.loads(new["findings.json"])["input"] == str(folded)
    assert all(new[name] != old[name] for name in ("report.md", "report.txt", "findings.json"))
    assert "zone-reclaim-rhel6" not in new["report.md"].decode() and "diagnosis: other" in new["report.txt"].decode()
    assert sorted(p.name for p in out.iterdir()) == sorted(SET), "a private staging directory was left"


def test_sigterm_before_the_renames_leaves_the_old_set_whole(tmp_path):
    """The other half: a SIGTERM that arrives before write_set starts renaming (here: while the
    command is still reading its input) leaves the old set exactly as it was."""
    out = tmp_path / "out"
    assert diagnose(SAMPLE, out).returncode == 0
    old = {name: (out / name).read_bytes() for name in SET}
    fifo = tmp_path / "input.folded"
    os.mkfifo(fifo)
    second = subprocess.Popen([str(FLAMEDIAG), "diagnose", str(fifo), "-o", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(fifo, "w") as writer:           # opens once diagnose reads the pipe: it is in its input phase
        writer.write("java;start_thread;do_syscall_64;schedule 100\n")
        writer.flush()
        second.send_signal(signal.SIGTERM)
    # the pipe is closed: a diagnose that lost the signal would finish and replace the set (and fail below)
    _, stderr = second.communicate(timeout=240)
    assert second.returncode in (143, -signal.SIGTERM), stderr       # -15: before Python set its handler
    assert {name: (out / name).read_bytes() for name in SET} == old
    assert sorted(p.name for p in out.iterdir()) == sorted(SET)


def test_the_pause_knob_is_inert_when_unset(tmp_path, monkeypatch):
    monkeypatch.delenv(outputs.TEST_PAUSE_ENV, raising=False)
    outputs.write_set(tmp_path, {"a.txt": b"a\n", "b.json": b"b\n"})        # returns: no pause, no marker
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.json"]
