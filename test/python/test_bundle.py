"""Bundle reader: API on well-formed bundles, SHA256SUMS verification, cleanup, odd manifests."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import tarfile
from pathlib import Path

import pytest

import hostile
from flamediag.bundle import Bundle, is_bundle, open_bundle, unsafe_name_reason
from flamediag.errors import UserError


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """TMPDIR pointing at an empty directory, to see what the reader leaves behind."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp


def test_reads_collectors_by_name_and_gunzips_perf_script(tmp_path):
    path = hostile.write_bundle(tmp_path / "b.tar.gz")
    with open_bundle(path) as bundle:
        assert bundle.top == hostile.TOP
        assert bundle.members == ["SHA256SUMS", "manifest.json", "perf/perf.script.gz", "system/sysctl.txt"]
        assert bundle.problems == []
        assert bundle.unverified == set()
        assert bundle.manifest["host"] == "web1"
        assert bundle.read_text("sysctl").startswith("vm.zone_reclaim_mode = 1")
        assert "native_queued_spin_lock_slowpath" in bundle.read_text("perf.script")
        assert bundle.source("perf.script") == "perf/perf.script.gz"
        assert bundle.is_verified("sysctl")
        assert bundle.read("mpstat") is None


def test_extraction_directory_is_private_and_removed_on_close(tmp_path, private_tmp):
    path = hostile.write_bundle(tmp_path / "b.tar.gz")
    bundle = open_bundle(path)
    [workdir] = list(private_tmp.iterdir())
    assert (workdir.stat().st_mode & 0o777) == 0o700
    assert (workdir / "system" / "sysctl.txt").stat().st_mode & 0o777 == 0o600
    bundle.close()
    assert list(private_tmp.iterdir()) == []


def test_tampered_file_is_unverified_and_reported(tmp_path):
    path = hostile.write_bundle(tmp_path / "b.tar.gz", tamper={"system/sysctl.txt": b"vm.zone_reclaim_mode = 0\n"})
    with open_bundle(path) as bundle:
        assert bundle.unverified == {"system/sysctl.txt"}
        assert any("system/sysctl.txt" in p and "mismatch" in p for p in bundle.problems)
        assert not bundle.is_verified("sysctl")
        assert bundle.is_verified("perf.script")
        assert bundle.read_text("sysctl") == "vm.zone_reclaim_mode = 0\n"  # still readable, flagged


def test_file_listed_but_missing_and_file_not_listed(tmp_path):
    files = hostile.default_files()
    files["manifest.json"] = json.dumps(hostile.manifest()).encode()
    sums = hostile.sha256sums({**files, "system/thp.txt": b"always\n"})
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        for name, data in files.items():
            hostile.add_file(tar, f"{hostile.TOP}/{name}", data)
        hostile.add_file(tar, f"{hostile.TOP}/extra.txt", b"not in the sums\n")
        hostile.add_file(tar, f"{hostile.TOP}/SHA256SUMS", sums)
    with open_bundle(tmp_path / "b.tar.gz") as bundle:
        assert bundle.unverified == {"system/thp.txt", "extra.txt"}
        assert any("system/thp.txt: listed in SHA256SUMS but missing" in p for p in bundle.problems)
        assert any("extra.txt: not listed" in p for p in bundle.problems)


def test_missing_sha256sums_marks_everything_unverified(tmp_path):
    path = hostile.write_bundle(tmp_path / "b.tar.gz", sums=False)
    with open_bundle(path) as bundle:
        assert "system/sysctl.txt" in bundle.unverified
        assert "manifest.json" in bundle.unverified
        assert any("SHA256SUMS missing" in p for p in bundle.problems)


def test_malformed_and_conflicting_sum_lines(tmp_path):
    files = {"a.txt": b"a\n"}
    digest = hashlib.sha256(b"a\n").hexdigest()
    sums = f"{digest}  a.txt\n{'0' * 64}  a.txt\nnot a sum line\n".encode()
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        hostile.add_file(tar, f"{hostile.TOP}/a.txt", files["a.txt"])
        hostile.add_file(tar, f"{hostile.TOP}/SHA256SUMS", sums)
    with open_bundle(tmp_path / "b.tar.gz") as bundle:
        assert "a.txt" in bundle.unverified
        assert any("malformed" in p for p in bundle.problems)


@pytest.mark.parametrize("manifest_raw", [
    b"[" * 100000, b"{\"collectors\": 5}", b"{\"collectors\": [1, \"x\", {\"name\": \"sysctl\", \"outputs\": \"abc\"}]}",
    b"\xff\xfe\x00garbage", b"{\"collectors\": [{\"name\": \"ethtool.S\", \"instance\": [\"x\"]}]}",
])
def test_odd_manifests_never_crash(tmp_path, manifest_raw):
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        hostile.add_file(tar, f"{hostile.TOP}/manifest.json", manifest_raw)
        hostile.add_file(tar, f"{hostile.TOP}/system/sysctl.txt", b"vm.x = 1\n")
    with open_bundle(tmp_path / "b.tar.gz") as bundle:
        assert bundle.read_text("sysctl") == "vm.x = 1\n"  # falls back to the default path
        assert bundle.instances("ethtool.S") == []
        assert isinstance(bundle.manifest, dict)


def test_corrupt_gzip_member_is_a_problem_not_a_crash(tmp_path):
    files = hostile.default_files()
    files["perf/perf.script.gz"] = b"\x1f\x8b\x08\x00garbage"
    with open_bundle(hostile.write_bundle(tmp_path / "b.tar.gz", files=files)) as bundle:
        assert bundle.read("perf.script") is None
        assert any("perf/perf.script.gz: unreadable" in p for p in bundle.problems)


def test_gzip_member_bomb_is_capped_on_read(tmp_path, monkeypatch):
    files = {"perf/perf.script.gz": gzip.compress(bytes(8 * 1024 * 1024))}
    monkeypatch.setenv("FLAMEDIAG_MAX_MEMBER_BYTES", str(1024 * 1024))
    with open_bundle(hostile.write_bundle(tmp_path / "b.tar.gz", files=files)) as bundle:
        assert bundle.read("perf.script") is None
        assert any("1048576 bytes" in p for p in bundle.problems)


def test_directory_bundle_ignores_symlinks_and_fifos(tmp_path):
    top = tmp_path / "dir" / hostile.TOP
    (top / "system").mkdir(parents=True)
    (top / "manifest.json").write_text(json.dumps(hostile.manifest()))
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    (top / "system" / "sysctl.txt").symlink_to(secret)
    (top / "escape").symlink_to(tmp_path)
    os.mkfifo(top / "fifo")
    with open_bundle(tmp_path / "dir") as bundle:   # parent dir: finds the one top dir
        assert bundle.members == ["manifest.json"]
        assert bundle.read_text("sysctl") is None
        assert any("'system/sysctl.txt'" in p or "fifo" in p for p in bundle.problems)
    assert secret.read_text() == "outside\n"


def test_directory_bundle_reads_and_verifies(tmp_path):
    top = tmp_path / hostile.TOP
    (top / "system").mkdir(parents=True)
    files = {"manifest.json": b"{}", "system/sysctl.txt": b"vm.x = 1\n"}
    for name, data in files.items():
        (top / name).write_bytes(data)
    (top / "SHA256SUMS").write_bytes(hostile.sha256sums(files))
    (top / "system" / "sysctl.txt").write_bytes(b"vm.x = 2\n")
    with open_bundle(top) as bundle:
        assert bundle.unverified == {"system/sysctl.txt"}


def test_memory_bundle_api_stays_compatible():
    bundle = Bundle({"manifest.json": b"{}", "system/sysctl.txt": b"vm.x = 1\n"}, "mem")
    assert bundle.read_text("sysctl") == "vm.x = 1\n"
    assert "system/sysctl.txt" in bundle.unverified


def test_is_bundle(tmp_path):
    good = hostile.write_bundle(tmp_path / "b.tar.gz")
    plain = tmp_path / "perf.script.gz"
    plain.write_bytes(gzip.compress(b"perf script text\n"))
    assert is_bundle(good)
    assert not is_bundle(plain)
    assert is_bundle(tmp_path / "missing.tar.gz")  # named like one: open_bundle gives the reason


def test_missing_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        open_bundle(tmp_path / "nope.tar.gz")


@pytest.mark.parametrize("name,reason", [
    ("a/b", None), ("a/./b", "not normalised"), ("a//b", "not normalised"), ("a/b\u202e", "control"),
    ("C:/x", "absolute"), ("a\\..\\b", "backslash"), ("a/" + "x" * 300, "255 bytes"),
])
def test_name_rules(name, reason):
    got = unsafe_name_reason(name)
    assert (got is None) if reason is None else (reason in got)
