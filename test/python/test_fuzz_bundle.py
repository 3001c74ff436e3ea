"""Bounded-time fuzzing (hypothesis) of the bundle reader, the redactor and every evidence parser:
no crash (only UserError for refused bundles), no hang (pytest-timeout per test), and accepted
bundles only ever expose safe names and leave no temp dir behind."""
from __future__ import annotations

import gzip
import importlib
import io
import pkgutil
import tarfile
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flamediag.bundle import open_bundle, unsafe_name_reason
from flamediag.errors import UserError
from flamediag.redact import Redactor

FUZZ = settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "120")), deadline=None, derandomize=False, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

TYPES = [tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
         tarfile.CHRTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE]
name_parts = st.sampled_from(["top", "top", "a", "b", "..", ".", "", "manifest.json", "SHA256SUMS",
                              "perf", "perf.script.gz", "A", "\x1b[2J", "x\ny", "\u202e", "/", "c:"])
names = st.lists(name_parts, min_size=1, max_size=5).map("/".join)
members = st.tuples(names, st.sampled_from(TYPES), st.binary(max_size=300),
                    st.sampled_from([0o644, 0o4755, 0o2755, 0o777]), st.sampled_from(["", "/etc/passwd", "../x", "a"]))


def build_tar(entries, compress: bool) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, data, mode, link in entries:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.linkname = kind, mode, link
            if kind in (tarfile.REGTYPE, tarfile.CONTTYPE):
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    data = raw.getvalue()
    return gzip.compress(data, mtime=0) if compress else data


def exercise(path, tmpdir) -> None:
    try:
        bundle = open_bundle(path)
    except UserError:
        return
    with bundle:
        for member in bundle.members:
            assert unsafe_name_reason(member) is None
            bundle.read_path(member)
        for name in ("perf.script", "sysctl", "mpstat", "ethtool.S", "uname"):
            bundle.read_text(name)
            bundle.instances(name)
        assert isinstance(bundle.problems, list)
    assert not any(p.name.startswith("flamediag-bundle-") for p in tmpdir.iterdir())


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    return work


@pytest.mark.timeout(180)
@FUZZ
@given(entries=st.lists(members, min_size=0, max_size=8), compress=st.booleans())
def test_fuzz_random_tar_structures(tmp_path, tmpdir_env, entries, compress):
    path = tmp_path / "fuzz.tar.gz"
    path.write_bytes(build_tar(entries, compress))
    exercise(path, tmpdir_env)


@pytest.mark.timeout(180)
@FUZZ
@given(blob=st.binary(max_size=2000), cut=st.integers(min_value=0, max_value=4000))
def test_fuzz_random_and_truncated_bytes(tmp_path, tmpdir_env, blob, cut):
    good = build_tar([("top", tarfile.DIRTYPE, b"", 0o755, ""),
                      ("top/manifest.json", tarfile.REGTYPE, b"{}", 0o644, ""),
                      ("top/perf/perf.script.gz", tarfile.REGTYPE, gzip.compress(blob), 0o644, "")], True)
    for data in (blob, b"\x1f\x8b" + blob, good[:cut], good[:cut] + blob):
        path = tmp_path / "fuzz.tar.gz"
        path.write_bytes(data)
        exercise(path, tmpdir_env)


def parser_modules():
    try:
        package = importlib.import_module("flamediag.parsers")
    except ImportError:
        return []
    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"flamediag.parsers.{info.name}")
        if callable(getattr(module, "parse", None)):
            found.append(module)
    return found


HOSTILE_TEXT = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", "replace")),
    st.lists(st.sampled_from(["CPU", "all", "0", "12:00:01", "%usr", "Node 0", "eth0:", "vm.x = 1", "=", ":",
                              "\x00", "\x1b[2J", "-1e999", "nan", "99999999999999999999", "\t", "  ", "\n", ";",
                              "== cpu ==", "some avg10=1.00", "users:((", "[", "]"]), max_size=60).map(" ".join),
)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("module", parser_modules(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_fuzz_every_evidence_parser(module):
    @settings(max_examples=60, deadline=None, print_blob=True)
    @given(text=HOSTILE_TEXT)
    def run(text):
        result = module.parse(text)
        assert result is None or isinstance(result, dict)

    run()
    module.parse("x" * 2_000_000)        # one huge line
    module.parse("\x00\n" * 50_000)      # many NUL lines


def test_there_are_parsers_to_fuzz():
    if not parser_modules():
        pytest.skip("no evidence parsers in this tree yet")
    assert len(parser_modules()) >= 5


@pytest.mark.timeout(120)
@FUZZ
@given(text=st.text(max_size=500), ip=st.tuples(*[st.integers(1, 254)] * 4))
def test_fuzz_redactor_removes_a_planted_address(text, ip):
    address = ".".join(map(str, ip))
    if ip[0] in (127, 255):
        return
    redactor = Redactor(hostnames=["web1"], users=["alice"])
    out = redactor.text(f"{text}\nsrc {address}:22 web1 /home/alice/x\n{text}")
    last = out.splitlines()[-2] if text.endswith("\n") else out
    assert f" {address}:" not in last
    assert redactor.text(address) == redactor.maps["ipv4"][address]


@pytest.mark.timeout(120)
@FUZZ
@given(block=st.integers(8, 96), pieces=st.lists(st.sampled_from(
    ["10.1.2.3", "2001:db8::7", "52:54:00:12:34:56", "web1", "/home/alice/x", " ", ",", "\t", "(", ";", "=", "pad",
     "9", ".", ":", "-"]), min_size=1, max_size=400))
def test_fuzz_block_boundaries_never_split_an_identifier(block, pieces):
    """A long single line cut into blocks anywhere redact may cut it: every planted identifier that
    the whole line loses, the blocked line loses too (or the line is refused, never split)."""
    import flamediag.redact as redact

    line = "".join(pieces).encode()
    whole = Redactor(hostnames=["web1"], users=["alice"]).text(line.decode())
    original, redact.BLOCK = redact.BLOCK, block
    try:
        redactor = Redactor(hostnames=["web1"], users=["alice"])
        out = "".join(redact.redact_bytes(redactor, b).decode() for b in redact.text_blocks(io.BytesIO(line), 1 << 30))
    except ValueError:
        return                                  # refused: nothing written, nothing leaked
    finally:
        redact.BLOCK = original
    for secret in ("10.1.2.3", "2001:db8::7", "52:54:00:12:34:56", "web1", "alice"):
        assert out.count(secret) <= whole.count(secret), (secret, out)
