"""Odd and hostile command lines and inputs get one ERROR line (or a clean result), never a traceback:
names that are not UTF-8, absurd counts, manifests of the wrong shape, unreadable files, /proc.
Anything unexpected is a bug, reported as one line naming the input with the traceback in a file,
exit 70 (doc/safety.md "Errors")."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import hostile

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"
SAMPLE = ROOT / "samples" / "zone-reclaim-rhel6"
NOBODY = 65534


def run(argv, tmp_path, cwd=None, env=None, prefix=()):
    """`flamediag ARGV` with a private TMPDIR; fails the test on a traceback or a crash file."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    os.chmod(tmpdir, 0o777)
    full_env = {**os.environ, "TMPDIR": str(tmpdir), **(env or {})}
    command = [*prefix, *([str(FLAMEDIAG)] if not prefix else [])] + [os.fsencode(a) if isinstance(a, str) else a
                                                                     for a in argv]
    proc = subprocess.run(command, cwd=cwd or tmp_path, env=full_env, capture_output=True, timeout=300)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert not list(tmpdir.glob("flamediag-*-crash-*")), stderr
    return proc.returncode, stderr, proc.stdout


def one_error(stderr: str) -> bool:
    return len([line for line in stderr.splitlines() if "ERROR" in line]) == 1


def bundle_copy(tmp_path: Path, edit=None) -> Path:
    target = tmp_path / "bundle"
    shutil.copytree(SAMPLE, target)
    if edit:
        manifest = json.loads((target / "manifest.json").read_text())
        text = edit(manifest)
        (target / "manifest.json").write_text(text if isinstance(text, str) else json.dumps(manifest))
    return target


def test_an_input_file_name_that_is_not_utf8(tmp_path):
    name = b"stacks-\xff.folded"
    (tmp_path / os.fsdecode(name)).write_text("java;start_thread;do_syscall_64;schedule 10\n")
    rc, stderr, _ = run(["diagnose", name, "-o", "out"], tmp_path)
    assert rc == 0, stderr
    assert "stacks-\ufffd" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "out" / "findings.json").read_text())["input"] == "stacks-\ufffd.folded"


def test_a_title_that_is_not_utf8(tmp_path):
    (tmp_path / "a.folded").write_text("a;b 1\n")
    rc, stderr, svg = run(["flamegraph", "--title", b"x\xff", "a.folded"], tmp_path)
    assert rc == 0, stderr
    assert "x\ufffd" in svg.decode("utf-8")


@pytest.mark.parametrize("count", ["9" * 400, "0", "1e5"], ids=["400-digits", "zero", "exponent"])
@pytest.mark.parametrize("command", ["diagnose", "flamegraph"])
def test_folded_counts_out_of_range_are_skipped_with_a_reason(tmp_path, count, command):
    (tmp_path / "c.folded").write_text(f"java;a;b {count}\njava;c;d {count}\n")
    rc, stderr, _ = run([command, "c.folded"] + (["-o", "out"] if command == "diagnose" else []), tmp_path)
    assert rc == 65 and one_error(stderr), stderr
    assert "no stacks found" in stderr


def test_folded_counts_out_of_range_beside_good_lines(tmp_path):
    (tmp_path / "c.folded").write_text("java;a;b " + "9" * 400 + "\njava;a;c 0\njava;x;y 5\n")
    rc, stderr, _ = run(["diagnose", "c.folded", "-o", "out"], tmp_path)
    assert rc == 0, stderr
    assert "count is 0 or above" in (tmp_path / "out" / "report.md").read_text()


def _collectors_number(manifest):
    manifest["collectors"] = 5


def _perf_warnings_number(manifest):
    manifest.setdefault("perf", {})["warnings"] = 5


def _deep_list(manifest):
    return json.dumps(manifest)[:-1] + ', "deep": ' + "[" * 600 + "]" * 600 + "}"


def _deeper_than_json(manifest):
    return json.dumps(manifest)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("edit", [_collectors_number, _perf_warnings_number, _deep_list, _deeper_than_json])
@pytest.mark.parametrize("command", ["diagnose", "redact", "facts"])
def test_manifest_of_the_wrong_shape(tmp_path, edit, command):
    bundle = bundle_copy(tmp_path, edit)
    out = {"diagnose": ["-o", "out"], "redact": ["-o", str(tmp_path / "r.tar.gz")], "facts": []}[command]
    rc, stderr, _ = run([command, str(bundle), *out], tmp_path)
    assert rc == 0, stderr


def test_a_member_name_that_is_not_utf8_in_a_directory_bundle_is_skipped(tmp_path):
    bundle = bundle_copy(tmp_path)
    (bundle / os.fsdecode(b"notes-\xff.txt")).write_text("x\n")
    rc, stderr, _ = run(["diagnose", str(bundle), "-o", "out"], tmp_path)
    assert rc == 0, stderr
    assert "unsafe names" in (tmp_path / "out" / "report.md").read_text()


def test_a_member_name_that_is_not_utf8_in_a_tarball_is_refused(tmp_path):
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        hostile.add_dir(tar, hostile.TOP)
        for name, data in hostile.default_files().items():
            hostile.add_file(tar, f"{hostile.TOP}/{name}", data)
        hostile.add_file(tar, f"{hostile.TOP}/notes-" + os.fsdecode(b"\xff") + ".txt", b"x\n")
    for argv in (["diagnose", str(path), "-o", "out"], ["redact", str(path), "-o", str(tmp_path / "r.tar.gz")]):
        rc, stderr, _ = run(argv, tmp_path)
        assert rc == 65 and one_error(stderr), stderr
        assert "not UTF-8" in stderr
    assert not (tmp_path / "out").exists()


def test_a_directory_that_is_not_a_bundle_under_proc(tmp_path):
    rc, stderr, _ = run(["diagnose", "/proc/self", "-o", "out"], tmp_path)
    assert rc == 65 and one_error(stderr), stderr


def as_nobody():
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as another user")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-m", "flamediag"]


def _open_to_nobody(path: Path) -> None:
    for part in [path, *path.parents]:
        if part == Path("/"):
            break
        os.chmod(part, os.stat(part).st_mode | 0o005)


@pytest.mark.parametrize("command", ["diagnose", "redact"])
def test_an_unreadable_member_of_a_directory_bundle_exits_77(tmp_path, command):
    prefix = as_nobody()
    _open_to_nobody(tmp_path)
    bundle = bundle_copy(tmp_path)
    shutil.chown(tmp_path, NOBODY)
    for path in [bundle, *bundle.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    os.chmod(bundle / "system" / "sysctl.txt", 0)
    out = ["-o", str(tmp_path / "out")] if command == "diagnose" else ["-o", str(tmp_path / "r.tar.gz")]
    rc, stderr, _ = run([command, str(bundle), *out], tmp_path, prefix=prefix,
                        env={"PYTHONPATH": str(ROOT / "lib")})
    assert rc == 77 and one_error(stderr), stderr
    assert "sysctl.txt" in stderr


def test_redact_without_o_in_a_read_only_directory_exits_77(tmp_path):
    prefix = as_nobody()
    _open_to_nobody(tmp_path)
    bundle = bundle_copy(tmp_path)
    os.chmod(tmp_path, 0o755)           # root's: nobody cannot write beside the bundle
    rc, stderr, _ = run(["redact", str(bundle)], tmp_path, prefix=prefix, env={"PYTHONPATH": str(ROOT / "lib")})
    assert rc == 77 and one_error(stderr), stderr


def test_an_unexpected_error_is_one_line_naming_the_input_with_the_traceback_in_a_file(tmp_path):
    code = ("import sys; from flamediag import cli\n"
            "def main(argv):\n"
            "    cli.note_input(argv[0])\n"
            "    raise ZeroDivisionError('boom')\n"
            "sys.exit(cli.run('diagnose', main, ['the-input.tar.gz']))\n")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT / "lib")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 70
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "the-input.tar.gz" in proc.stderr and "bug" in proc.stderr
    crash, = tmp_path.glob("flamediag-diagnose-crash-*.txt")
    assert str(crash) in proc.stderr
    assert "ZeroDivisionError: boom" in crash.read_text() and "Traceback" in crash.read_text()


def test_a_python_without_the_requirements_is_named(tmp_path):
    bare = tmp_path / "bare-python"
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")     # -S: no site-packages, no jinja2
    bare.chmod(0o755)
    (tmp_path / "a.folded").write_text("java;a;b 1\n")
    rc, stderr, _ = run(["diagnose", "a.folded", "-o", "out"], tmp_path, env={"FLAMEDIAG_PYTHON": str(bare)})
    assert rc == 2 and one_error(stderr), stderr
    assert sys.version.split()[0] in stderr
    assert "lacks the module" in stderr and "bare-python" not in stderr and "FLAMEDIAG_PYTHON" in stderr
