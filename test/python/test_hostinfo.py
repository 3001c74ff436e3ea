"""hostinfo.py (Python) and test/lib/host.bash (bats, live lab) answer alike on this host: the
suites of both languages assert the same thing about the machine they run on."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import hostinfo

ROOT = Path(__file__).resolve().parents[2]
HOST_BASH = ROOT / "test" / "lib" / "host.bash"
COLLECTORS = sorted(hostinfo.SOURCES) + ["uname", "perf.script"]


def bash(call: str) -> str:
    proc = subprocess.run(["bash", "-c", f'source "{HOST_BASH}"; {call}'], capture_output=True, text=True, timeout=60)
    assert proc.stderr == "", proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize("name", COLLECTORS)
def test_collector_status_agrees(name):
    assert hostinfo.collector_status(name) == bash(f"host_collector_status {name}")


def test_host_facts_agree():
    assert str(hostinfo.numa_nodes()) == bash("host_numa_nodes")
    assert hostinfo.memcg_version() == bash("host_memcg_version")
    assert [str(c) for c in hostinfo.online_cpus()] == bash("host_online_cpus").split()
    assert hostinfo.physical_nics() == bash("host_physical_nics").split()
    assert hostinfo.kernel_symbols_as_root() == bash("host_kernel_symbols_as_root")
    assert hostinfo.perf_open_to_users() == (bash("host_perf_open_to_users && echo yes") == "yes")
    assert hostinfo.bcc_has_headers() == (bash("host_bcc_has_headers && echo yes") == "yes")


def test_online_cpus_are_the_ones_mpstat_reports():
    assert hostinfo.online_cpus(), "no cpuN line in /proc/stat"
    assert len(hostinfo.online_cpus()) == len(set(hostinfo.online_cpus()))
