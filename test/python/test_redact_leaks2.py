"""Redaction leaks, round two (doc/redact.md): a host name inside the kernel string, the host's
domain when the manifest holds the short name, user names in /home/<domain>/<user> and
/home/<user>@<domain>, the prefix of an IPv6 address with an IPv4 inside, numeric host names,
and an address cut in two at the block boundary of a long single-line member."""
from __future__ import annotations

import gzip
import io
import ipaddress
import json
import re
import subprocess
from pathlib import Path

import pytest

import hostile
from flamediag import redact
from flamediag.redact import Redactor, redact_bytes, redact_manifest, text_blocks

ROOT = Path(__file__).resolve().parents[2]
FLAMEDIAG = ROOT / "bin" / "flamediag"


def redact_cli(source: Path, out: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(FLAMEDIAG), "redact", str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def members(path: Path) -> dict:
    """name -> text of every member of a redacted bundle (gunzipped)."""
    return {name: data.decode("utf-8", "replace") for name, data in hostile.members(path).items()}


def everything(path: Path) -> str:
    files = members(path)          # SHA256SUMS: its names are the members'; its hex digits mean nothing
    return "\n".join(list(files) + [text for name, text in files.items() if not name.endswith("/SHA256SUMS")])


def bundle(tmp_path: Path, host: str, files: dict, top: str = "") -> Path:
    top = top or f"flamediag-{host}-20261122T031500Z"
    files = {"perf/perf.script.gz": gzip.compress(hostile.PERF_SCRIPT.encode(), mtime=0),
             "system/sysctl.txt": b"vm.swappiness = 60\n", **files}
    return hostile.write_bundle(tmp_path / f"{top}.tar.gz", files=files, top=top, manifest_doc=hostile.manifest(host=host))


# -- the kernel string ------------------------------------------------------------------------
def test_a_host_name_inside_the_kernel_release_is_replaced():
    redactor = Redactor(hostnames=["vm"])            # a short, ordinary-word name: strict elsewhere
    out = redactor.text("Linux vm 5.15.0-vm-amd64 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n")
    assert not re.search(r"(?i)(?<![a-z])vm(?![a-z])", out), out
    assert "5.15.0-host-1-amd64" in out and "x86_64 GNU/Linux" in out
    assert redactor.text("vm.swappiness = 60 /proc/sys/vm/ kvm\n") == "vm.swappiness = 60 /proc/sys/vm/ kvm\n"
    perf_header = redactor.text("# os release : 5.15.0-vm\n")
    assert perf_header == "# os release : 5.15.0-host-1\n"


def test_the_manifest_kernel_field_loses_the_host_name_and_keeps_the_version():
    out = redact_manifest(Redactor(hostnames=["web1"]), {"host": "web1", "kernel": "5.15.0-web1-custom"})
    assert out["kernel"] == "5.15.0-host-1-custom" and out["host"] == "host-1"
    assert redact_manifest(Redactor(hostnames=["web1"]), {"kernel": "5.10.0.123"})["kernel"] == "5.10.0.123"


# -- the host's own domain ----------------------------------------------------------------------
DOMAIN_SOURCES = {
    "hostname -f": {"system/hostname-f.txt": b"web1.corp.example.com\n"},
    "resolv.conf": {"system/resolv.conf": b"# generated\nsearch corp.example.com\nnameserver 192.0.2.53\n"},
    "ss": {"snap/start/ss-tiepm.txt": b"ESTAB 0 0 web1.Corp.Example.com:ssh 192.0.2.9:51234\n"},
    "journal": {"system/journal.txt": b"Nov 22 03:15:01 web1.corp.example.com sshd[77]: session opened\n"},
}


@pytest.mark.parametrize("source", sorted(DOMAIN_SOURCES))
def test_the_domain_is_learned_from_the_bundle_and_redacted(tmp_path, source):
    files = {"system/uname.txt": b"Linux web1 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux\n",
             "system/dmesg-tail.txt": b"nfs: server nas7.corp.example.com OK\nrealm CORP.EXAMPLE.COM\n"
                                      b"backup from db9.CORP.example.com to nas7.corp.example.com\n",
             **DOMAIN_SOURCES[source]}
    out = tmp_path / "red.tar.gz"
    proc = redact_cli(bundle(tmp_path, "web1", files), out)
    text = everything(out)
    assert "example" not in text.lower() and "nas7" not in text and "db9" not in text.lower(), text
    mapping = json.loads(Path(f"{out}.map.json").read_text())
    assert list(mapping["domains"]) == ["corp.example.com"]
    assert {"nas7.corp.example.com", "db9.corp.example.com"} <= set(mapping["hostnames"])
    dmesg = next(v for k, v in members(out).items() if k.endswith("dmesg-tail.txt"))
    nas7 = mapping["hostnames"]["nas7.corp.example.com"]
    assert dmesg.count(nas7) == 2 and mapping["domains"]["corp.example.com"] in dmesg   # same value, same token
    counts = re.search(r"replaced: (\d+) host names, (\d+) domains", proc.stdout)
    assert counts and int(counts.group(1)) == len(mapping["hostnames"]) and int(counts.group(2)) == 1


def test_file_names_and_local_suffixes_are_not_taken_for_a_domain(tmp_path):
    files = {"system/uname.txt": b"Linux web1 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux\n",
             "system/notes.txt": b"web1.tar.gz web1.service web1.conf.d web1.svc.cluster.local app.tar.gz\n"}
    out = tmp_path / "red.tar.gz"
    redact_cli(bundle(tmp_path, "web1", files), out)
    notes = next(v for k, v in members(out).items() if k.endswith("notes.txt"))
    assert "app.tar.gz" in notes and ".service" in notes and "svc.cluster.local" in notes
    assert json.loads(Path(f"{out}.map.json").read_text())["domains"] == {}


# -- user names in every home-directory form ---------------------------------------------------
def test_users_in_domain_home_directories(tmp_path):
    files = {"system/uname.txt": b"Linux web1.corp.example.com 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux\n",
             "bpf/profile.folded": b"app;/home/CORP.EXAMPLE.COM/alice/bin/app;f 5\n"
                                   b"app;/home/corp/bob/lib/x.so;g 3\napp;/home/carol@corp/bin/y;h 2\n"
                                   b"app;/Users/erin@corp.example.com/z;i 1\napp;/home/dave/bin/w;j 1\n",
             "system/who.txt": b"alice pts/0\nbob pts/1\ncarol pts/2\nerin pts/3\ndave pts/4\n"}
    out = tmp_path / "red.tar.gz"
    redact_cli(bundle(tmp_path, "web1", files), out)
    text = everything(out)
    for secret in ("alice", "bob", "carol", "dave", "erin", "CORP", "corp"):
        assert not re.search(rf"(?<![A-Za-z]){secret}(?![A-Za-z])", text), secret
    users = json.loads(Path(f"{out}.map.json").read_text())["users"]
    assert sorted(users) == ["alice", "bob", "carol", "dave", "erin"]
    folded = next(v for k, v in members(out).items() if k.endswith("profile.folded"))
    assert f"/home/domain-1/{users['alice']}/bin/app" in folded and f"/home/{users['dave']}/bin/w" in folded
    assert "/bin/" in folded and "/lib/x.so" in folded                   # directories are not users


def test_home_forms_without_a_known_domain():
    redactor = Redactor(users=["bob"], domains=["corp"])          # corp: learned from /home/bob@corp
    assert redactor.text("/home/bob@corp/x") == "/home/user-1@domain-1/x"
    assert redactor.text("/home/corp/bob/x") == "/home/domain-1/user-1/x"
    assert redactor.text("/home/CORP/frank/x") == "/home/domain-1/user-2/x"   # one domain, any case
    assert redactor.text("/home/ACME/heidi/x") == "/home/domain-2/user-3/x"   # a NetBIOS name in upper case
    assert redactor.text("/home/grace/bin/x") == "/home/user-4/bin/x"


# -- IPv6 with an IPv4 inside ---------------------------------------------------------------------
def test_ipv6_with_an_embedded_ipv4_loses_prefix_and_address():
    redactor = Redactor()
    out = redactor.text("a 2001:db8:1:2::10.1.2.3 b [2001:db8:1:2::10.1.2.3]:443 c ::ffff:10.1.2.3 "
                        "d 64:ff9b::10.1.2.3 e 10.1.2.3 f 2001:db8:1:2::10.9.9.9\n")
    assert "2001:db8" not in out and "10.1.2.3" not in out and "10.9.9.9" not in out, out
    v4 = redactor.maps["ipv4"]["10.1.2.3"]
    words = out.split()
    assert words[1] == f"fd00:ff:1::{v4}" and words[3] == f"[fd00:ff:1::{v4}]:443"
    assert words[5] == f"::ffff:{v4}" and words[7] == f"64:ff9b::{v4}" and words[9] == v4
    assert words[11].startswith("fd00:ff:1::") and words[11] != words[1]      # same prefix, same token
    for word in (words[1], words[5], words[7], words[11]):
        ipaddress.IPv6Address(word)                                            # still an address


# -- numeric host names -------------------------------------------------------------------------
@pytest.mark.parametrize("host,replaced,kept", [
    # replaced: the name as a whole token, wherever the name stands (also a count that is exactly it)
    ("12345", ["host 12345 up", "Nov 22 03:15:01 12345 kernel: x", "ssh root@12345", "(12345)", "'12345'",
               "12345"],
     # kept: numbers that merely contain it or are written around it
     ["12345%", "12,345", "112345", "123456", "12345.5", "0.12345", "0:12345", "12345:00", "ip-12345", "v12345",
      "/proc/12345/stat", "12345-12350", "+12345"]),
    ("01", ["01 kernel: oom", "hostname 01"],
     ["03:15:01", "2026-11-01", "0.01", "cpu01", "01%", "eth0.01", "1.01.2"]),
])
def test_numeric_host_names_are_replaced_as_whole_tokens_only(host, replaced, kept):
    redactor = Redactor(hostnames=[host])
    for text in replaced:
        assert host not in redactor.text(text), text
    for text in kept:
        assert redactor.text(text) == text


def test_a_numeric_host_is_redacted_in_every_file_and_counted(tmp_path):
    files = {"system/uname.txt": b"Linux 12345 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux\n",
             "system/dmesg-tail.txt": b"[1.0] 12345 kernel: eth0 up; 12345 packets; 12345% no\n"}
    out = tmp_path / "red.tar.gz"
    proc = redact_cli(bundle(tmp_path, "12345", files), out)
    text = everything(out)
    assert "flamediag-12345" not in text and "Linux 12345 " not in text and "] 12345 kernel" not in text
    assert "12345%" in text                               # a percentage that equals it is not a name
    mapping = json.loads(Path(f"{out}.map.json").read_text())
    assert mapping["hostnames"] == {"12345": "host-1"}
    assert "replaced: 1 host names" in proc.stdout


# -- the block boundary of a long line ------------------------------------------------------------
SECRETS = ["10.1.2.3", "2001:db8::7", "52:54:00:12:34:56", "web1", "/home/alice", "2001:db8:1:2::10.1.2.3"]


@pytest.mark.parametrize("separator", [" ", ",", "\t", '"', "; "])
def test_no_identifier_survives_a_block_boundary_inside_a_long_line(monkeypatch, separator):
    monkeypatch.setattr(redact, "BLOCK", 64)           # 4 blocks = 256 bytes: the line is 100 times longer
    line = separator.join(f"{secret}{separator}pad{n}" for n in range(300) for secret in SECRETS).encode()
    redactor = Redactor(hostnames=["web1"], users=["alice"])
    blocks = list(text_blocks(io.BytesIO(line[100:]), 1 << 30, line[:100]))
    assert len(blocks) > 10 and b"".join(blocks) == line
    out = b"".join(redact_bytes(redactor, block) for block in blocks).decode()
    for secret in SECRETS:
        assert secret not in out.replace("10.255.", "").replace("fd00:ff", ""), secret
    assert out.count(redactor.maps["ipv4"]["10.1.2.3"]) == 600          # every one, with one token


def test_a_long_run_with_no_safe_place_to_cut_is_refused_not_split(monkeypatch):
    monkeypatch.setattr(redact, "BLOCK", 64)
    run = b"10.1.2.3:" * 200
    with pytest.raises(ValueError, match="cannot be redacted safely"):
        list(text_blocks(io.BytesIO(run), 1 << 30))
