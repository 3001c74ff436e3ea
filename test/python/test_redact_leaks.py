"""Identifiers that redaction used to leave in place (doc/redact.md): host names with `_`, a host
that is not a string or is numeric in the manifest, MACs written with dashes, Cisco's dotted form
and InfiniBand's 20 bytes, IPv4 in tcpdump's host.port and in ranges."""
from __future__ import annotations

import pytest

from flamediag.redact import Redactor, expand_hostnames, redact_manifest


@pytest.mark.parametrize("text,secret", [
    ("host db_primary_01 up", "db_primary_01"),
    ("flamediag-db_primary_01-20261122T031500Z", "db_primary_01"),
    ("ether 00-1A-2B-3C-4D-5E brd", "00-1A-2B-3C-4D-5E"),
    ("mac address 001a.2b3c.4d5e dynamic", "001a.2b3c.4d5e"),
    ("link/infiniband 80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:c3 brd", "c9:03:00:a1:b2:c3"),
    ("IP 10.1.2.3.22 > 10.1.2.4.443: Flags", "10.1.2.3"),
    ("IP 10.1.2.3.22 > 10.1.2.4.443: Flags", "10.1.2.4"),
    ("allow 10.0.0.1-10.0.0.9", "10.0.0.9"),
])
def test_identifier_is_replaced(text, secret):
    assert secret not in Redactor(hostnames=["db_primary_01"]).text(text)


@pytest.mark.parametrize("text", ["kernel 2.6.32.431.11", "vm.swappiness = 60", "time 12:34:56",
                                  "00:00:00:00:00:00", "ver 1.2.3.4"])
def test_look_alikes_are_kept(text):
    assert Redactor(hostnames=["db_primary_01"]).text(text) == text


def test_host_names_with_underscores_are_found():
    assert expand_hostnames(["db_primary_01.corp.example"]) == ["db_primary_01", "db_primary_01.corp.example"]


@pytest.mark.parametrize("host", [12345, "12345", ["web1"]])
def test_the_manifest_host_never_survives(host):
    out = redact_manifest(Redactor(), {"host": host})
    assert out["host"] != host and "web1" not in str(out["host"]) and "12345" not in str(out["host"])
