"""Wrong inputs get one line that names the file and says what to do: perf.data, a directory of
bundles, a directory without one, a non-bundle given to redact, an occupied or unwritable -o."""
from __future__ import annotations

import shutil

import pytest

from diagnose_helpers import SAMPLES, run_cli


def error_line(proc):
    lines = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.mark.parametrize("magic", [b"PERFILE2", b"2ELIFREP"])
def test_perf_data_says_to_run_perf_script_where_it_was_recorded(tmp_path, magic):
    data = tmp_path / "perf.data"
    data.write_bytes(magic + b"\x68\x00\x00\x00\x00\x00\x00\x00" + bytes(200))
    proc = run_cli("diagnose", data, "-o", tmp_path / "out")
    line = error_line(proc)
    assert proc.returncode == 65 and str(data) in line
    assert "this is binary perf data: run `perf script` on the host that recorded it (its symbols are there)" in line


def test_a_directory_of_bundles_lists_them(tmp_path):
    for name in ("healthy-6.1", "user-bound-6.1"):
        shutil.copytree(SAMPLES / name, tmp_path / "incoming" / name)
    (tmp_path / "incoming" / "web2.tar.gz").write_bytes(b"\x1f\x8b")
    proc = run_cli("diagnose", tmp_path / "incoming", "-o", tmp_path / "out")
    line = error_line(proc)
    assert proc.returncode == 65 and str(tmp_path / "incoming") in line
    assert "holding 3 bundles" in line and "healthy-6.1, user-bound-6.1, web2.tar.gz" in line
    assert "manifest.json perf.record" not in line


def test_a_directory_without_a_bundle_says_so(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("hello\n")
    proc = run_cli("diagnose", tmp_path / "notes", "-o", tmp_path / "out")
    line = error_line(proc)
    assert proc.returncode == 65 and "a directory without a bundle" in line and str(tmp_path / "notes") in line


def test_no_stacks_in_a_paste_names_the_file(tmp_path):
    paste = tmp_path / "ticket.txt"
    paste.write_text("the server is slow, please help\n")
    line = error_line(run_cli("diagnose", paste, "-o", tmp_path / "out"))
    assert line.startswith(f"flamediag diagnose: ERROR: {paste}: no stacks found")


@pytest.mark.parametrize("kind", ["directory", "tarball"])
def test_redact_refuses_a_non_bundle_with_65(tmp_path, kind):
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "notes.txt").write_text("db1 10.1.2.3\n")
    source = tmp_path / "src"
    if kind == "tarball":
        source = tmp_path / "src.tar.gz"
        shutil.make_archive(str(tmp_path / "src"), "gztar", tmp_path / "src")
    proc = run_cli("redact", source, "-o", tmp_path / "red.tar.gz")
    assert proc.returncode == 65 and str(source) in error_line(proc)
    assert not (tmp_path / "red.tar.gz").exists()


def test_occupied_outputs_exit_77_naming_the_path(tmp_path):
    occupied = tmp_path / "taken"
    occupied.write_text("keep me\n")
    proc = run_cli("diagnose", SAMPLES / "healthy-6.1", "-o", occupied)
    assert proc.returncode == 77 and str(occupied) in error_line(proc)
    assert occupied.read_text() == "keep me\n"     # (redact replaces an existing OUT file: doc/redact.md)


def test_unwritable_outputs_exit_77_naming_the_path(tmp_path):
    proc = run_cli("diagnose", SAMPLES / "healthy-6.1", "-o", "/proc/flamediag-test")
    assert proc.returncode == 77 and "/proc/flamediag-test" in error_line(proc)
    proc = run_cli("redact", SAMPLES / "healthy-6.1", "-o", "/proc/flamediag-test.tar.gz")
    assert proc.returncode == 77 and "/proc" in error_line(proc)
