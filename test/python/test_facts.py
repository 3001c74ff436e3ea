"""facts.build_facts over real directory/tar bundles built from the parser fixtures, and
build_facts_from_sections over pasted text."""
from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from facts_helpers import fixture, real_machine_files, write_bundle
from flamediag.bundle import open_bundle
from flamediag.facts import build_facts, build_facts_from_sections

DOC = Path(__file__).resolve().parents[2] / "doc" / "facts.md"
FIXTURES_BUNDLE = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "bundle" / "capture-vm-futex"


def facts_for(tmp_path, files, manifest=None, tamper=None):
    top = write_bundle(tmp_path / "flamediag-vm-20261122T070000Z", files, manifest, tamper)
    return build_facts(open_bundle(top))


def zone_reclaim_files():
    vmstat_start = "zone_reclaim_failed 100\npgscan_direct_normal 1000\nallocstall 5\ncompact_stall 0\n"
    vmstat_end = "zone_reclaim_failed 4100\npgscan_direct_normal 91000\nallocstall 905\ncompact_stall 0\n"
    numastat_end = fixture("numastat/hand-two-node.txt").replace("4185010285", "4185510285")
    return {
        ("sysctl", "once", None): "vm.zone_reclaim_mode = 1\nkernel.numa_balancing = 0\n",
        ("numactl.hardware", "once", None): fixture("numactl/hand-two-node-distance21.txt"),
        ("numastat", "start", None): fixture("numastat/hand-two-node.txt"),
        ("numastat", "end", None): numastat_end,
        ("proc.vmstat", "start", None): vmstat_start,
        ("proc.vmstat", "end", None): vmstat_end,
        ("mpstat", "window", None): fixture("mpstat/hand-sysstat9-no-gnice.txt"),
        ("thp", "once", None): fixture("thp/hand-rhel6-always.txt"),
    }


def nic_softirq_files():
    return {
        ("mpstat", "window", None): fixture("mpstat/seed000-ixgbevf-12h-cpu0-soft59.txt"),
        ("proc.softirqs", "start", None): fixture("softirqs/hand-netrx-cpu0-start.txt"),
        ("proc.softirqs", "end", None): fixture("softirqs/hand-netrx-cpu0-end.txt"),
        ("ethtool.i", "once", "eth0"): fixture("ethtool/hand-i-ixgbevf.txt"),
        ("ethtool.l", "once", "eth0"): fixture("ethtool/hand-l-ixgbevf-two-queues.txt"),
        ("ethtool.c", "once", "eth0"): fixture("ethtool/hand-c-ixgbevf-rx-usecs1.txt"),
        ("nic.irqs", "once", None): fixture("nicirqs/hand-ixgbevf-all-cpu0.txt"),
        ("nic.modparams", "once", None): fixture("modparams/hand-ixgbevf-itr1.txt"),
        ("proc.interrupts", "start", None): fixture("interrupts/hand-ixgbevf-cpu0-start.txt"),
        ("proc.interrupts", "end", None): fixture("interrupts/hand-ixgbevf-cpu0-end.txt"),
    }


def test_real_machine_bundle(tmp_path):
    facts = facts_for(tmp_path, real_machine_files(), {"duration_actual": 3.0, "duration_requested": 3})
    assert facts.data_quality == []
    assert facts.get("kernel.release") == "6.18.44-fc-v657" and facts.get("kernel.version") == [6, 18]
    assert facts.get("sysctl.vm.zone_reclaim_mode") == 0
    assert facts.get("thp.enabled") == "madvise" and facts.get("thp.khugepaged.defrag") == 1
    assert facts.get("numa.nodes") == 1 and not facts.has("numa.max_distance")
    assert facts.get("nic.eth0.driver") == "virtio_net" and facts.get("nic.drivers") == ["virtio_net"]
    assert facts.get("nic.irqs.single_cpu") is False
    assert facts.source("mpstat.sys_pct.0") == "metrics/mpstat.txt"
    assert facts.source("softirq.delta.TIMER.total") == "snap/end/proc-softirqs.txt"
    assert facts.get("window.seconds") == 3.0
    rate = facts.get("vmstat.rate.pgfault")
    assert rate == pytest.approx(facts.get("vmstat.delta.pgfault") / 3.0, abs=0.001)
    assert set(facts.series["mpstat"]) == {"all", "0", "1"}
    assert not any(facts.unverified(name) for name, _ in facts.items())


def test_tar_bundle_gives_the_same_facts(tmp_path):
    top = write_bundle(tmp_path / "flamediag-vm-20261122T070000Z", real_machine_files())
    archive = tmp_path / "flamediag-vm-20261122T070000Z.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(str(top / "manifest.json"), arcname=f"{top.name}/manifest.json")  # first member
        for path in sorted(top.rglob("*")):
            if path.is_file() and path.name != "manifest.json":
                tar.add(str(path), arcname=f"{top.name}/{path.relative_to(top).as_posix()}")
    from_dir = build_facts(open_bundle(top)).as_dict()
    from_tar = build_facts(open_bundle(archive)).as_dict()
    assert from_tar == from_dir and len(from_tar) > 100


def test_zone_reclaim_facts(tmp_path):
    facts = facts_for(tmp_path, zone_reclaim_files(), {"kernel": "2.6.32-431.11.2.el6.x86_64", "cpus": 4})
    assert facts.get("sysctl.vm.zone_reclaim_mode") == 1
    assert facts.get("numa.max_distance") == 21 and facts.get("numa.nodes") == 2
    assert facts.get("vmstat.delta.zone_reclaim_failed") == 4000
    assert facts.get("vmstat.delta.pgscan_direct") == 90000 and facts.get("vmstat.delta.allocstall") == 900
    assert facts.get("vmstat.rate.zone_reclaim_failed") == 400.0
    assert facts.get("numastat.delta.other_node") == 500000
    assert facts.get("kernel.version") == [2, 6] and facts.get("thp.enabled") == "always"
    assert facts.get("mpstat.sys_pct.avg") == pytest.approx(62.18, abs=0.2)


def test_nic_softirq_facts(tmp_path):
    facts = facts_for(tmp_path, nic_softirq_files(), {"cpus": 4})
    assert facts.get("mpstat.soft_pct.max") == 59.09 and facts.get("mpstat.soft_pct.max_cpu") == 0
    assert facts.get("mpstat.soft_pct.concentration") == pytest.approx(59.09 / (59.09 / 4), abs=0.01)
    assert facts.get("mpstat.soft_pct.vs_rest") > 10     # CPU0 59 %, the others ~0: unbounded by the CPU count
    assert facts.get("mpstat.soft_pct.avg") == 11.57
    assert facts.get("softirq.delta.NET_RX.top_cpu") == 0
    assert facts.get("softirq.delta.NET_RX.concentration") == pytest.approx(4 * 3000000 / 3000200, abs=0.001)
    assert facts.get("softirq.delta.TIMER.concentration") < 1.1
    assert facts.get("softirq.delta.NET_RX.top_share") == pytest.approx(3000000 / 3000200, abs=1e-4)
    assert facts.get("nic.eth0.driver") == "ixgbevf" and facts.get("nic.eth0.rx_queues") == 2
    assert facts.get("nic.eth0.rx_usecs") == 1
    assert facts.get("nic.irqs.cpus") == [0] and facts.get("nic.irqs.single_cpu") is True
    assert facts.get("modparam.ixgbevf.InterruptThrottleRate") == "1,1,1,1,1,1,1,1"
    assert facts.get("nic.irqs.delta.total") == 2100000 + 1900000
    assert (facts.get("nic.irqs.delta.top_cpu"), facts.get("nic.irqs.delta.top_share")) == (0, 1.0)
    assert facts.get("interrupts.delta.eth0-TxRx-0.total") == 2100000


def test_even_softirq_spread_has_low_concentration(tmp_path):
    facts = facts_for(tmp_path, {("mpstat", "window", None): fixture("mpstat/c-24h.txt")})
    assert facts.get("mpstat.sys_pct.concentration") < 1.1


def test_tampered_file_marks_its_facts_unverified(tmp_path):
    facts = facts_for(tmp_path, real_machine_files(), tamper="system/sysctl.txt")
    assert facts.unverified("sysctl.vm.zone_reclaim_mode")
    assert not facts.unverified("thp.enabled")
    assert facts.source("sysctl.vm.zone_reclaim_mode") == "system/sysctl.txt"


def test_missing_collectors_that_matter_are_reported_once(tmp_path):
    """Absent ones here; the ones the manifest says failed are the capture's sentences (test_manifest)."""
    files = {("thp", "once", None): fixture("thp/madvise.txt")}
    manifest = {"collectors": [{"name": "mpstat", "phase": "window", "status": "missing",
                                "reason": "mpstat not installed", "fix": "apt-get install sysstat"}]}
    facts = facts_for(tmp_path, files, manifest)
    quality = " | ".join(facts.data_quality)
    assert "mpstat not captured (missing: mpstat not installed)" in quality
    absent = next(s for s in facts.data_quality if s.startswith("not in the bundle: "))
    assert "sysctl (kernel settings" in absent and "thp (" not in absent and "mpstat (" not in absent


def test_parse_notes_reach_data_quality_and_the_window_is_left_to_the_manifest(tmp_path):
    files = {("mpstat", "window", None): fixture("mpstat/c-24h.txt") + "12:00:01 all garbage\n"}
    manifest = {"complete": False, "end_signal": "SIGINT", "duration_actual": 12.0}
    facts = facts_for(tmp_path, files, manifest)
    assert any(s.startswith("metrics/mpstat.txt: mpstat:") for s in facts.data_quality)
    assert not any("interrupted" in s for s in facts.data_quality)
    assert facts.get("window.seconds") == 12.0


def test_rates_fall_back_to_manifest_timestamps(tmp_path):
    files = {("proc.vmstat", "start", None): "compact_stall 0\n", ("proc.vmstat", "end", None): "compact_stall 31\n"}
    facts = facts_for(tmp_path, files, {"duration_actual": None, "start_utc": "2026-11-22T07:00:00Z",
                                        "end_utc": "2026-11-22T07:00:31Z"})
    assert facts.get("window.seconds") == 31.0 and facts.get("vmstat.rate.compact_stall") == 1.0


def test_procstat_fallback_without_sysstat(tmp_path):
    files = {("proc.stat", "start", None): fixture("procstat/start.txt"),
             ("proc.stat", "end", None): fixture("procstat/end.txt")}
    facts = facts_for(tmp_path, files)
    assert facts.has("mpstat.sys_pct.0") and facts.source("mpstat.sys_pct.0") == "snap/end/proc-stat.txt"
    assert not any("mpstat not captured" in s or "mpstat (per-CPU" in s for s in facts.data_quality)
    assert any(s.startswith("not in the bundle: ") and "sysctl (" in s for s in facts.data_quality)


def test_memcg_v2_and_settings(tmp_path):
    files = {("memcg", "once", None): fixture("memcg/hand-v2.txt"),
             ("audit", "once", None): fixture("audit/hand-auditctl-s-42-rules.txt"),
             ("dmesg", "once", None): fixture("dmesg/hand-tsc-unstable-soft-lockup.txt"),
             ("cpufreq", "once", None): "policy0: driver=intel_pstate governor=performance\n"
                                        "policy1: driver=intel_pstate governor=performance\n",
             ("tuned", "once", None): "Current active profile: throughput-performance\n",
             ("sched.debug", "once", None): "base_slice_ns: 3000000\nsched_min_granularity_ns: 750000\n"}
    facts = facts_for(tmp_path, files)
    assert facts.get("memcg.events.max") == 1532 and facts.get("memcg.events.high") == 12
    assert facts.get("memcg.events.oom") == 2
    assert facts.get("memcg.top.path") == "/system.slice/hadoop-datanode.service"
    assert facts.get("memcg.max_usage_ratio") == pytest.approx(8455716864 / 8589934592, abs=1e-4)
    assert (facts.get("audit.rules"), facts.get("audit.enabled")) == (42, 1)
    assert facts.get("dmesg.tsc_unstable") is True
    assert facts.get("cpufreq.governor") == "performance" and facts.get("tuned.profile") == "throughput-performance"
    assert facts.get("sched.base_slice_ns") == 3000000 and facts.get("sched.min_granularity_ns") == 750000


class BrokenReader:
    unverified = None

    def read_text(self, name, phase=None, instance=None):
        if name == "sysctl":
            raise OSError("disk on fire")
        return "\x00\xff garbage" if name == "thp" else None

    def instances(self, name):
        raise RuntimeError("no instances")

    @property
    def manifest(self):
        return {"kernel": "5.15.0-1-amd64", "collectors": 42, "duration_actual": "x"}

    def source(self, name, phase=None, instance=None):
        return None


def test_a_broken_reader_costs_only_its_facts():
    facts = build_facts(BrokenReader())
    assert facts.get("kernel.version") == [5, 15]
    assert any("sysctl: could not be read (OSError: disk on fire)" in s for s in facts.data_quality)
    assert any(s.startswith("thp: line(s)") for s in facts.data_quality)


def test_pasted_sections_give_single_snapshot_facts():
    facts = build_facts_from_sections({
        "mpstat": fixture("mpstat/seed000-ixgbevf-12h-cpu0-soft59.txt"),
        "numactl.hardware": fixture("numactl/seed003-distance21-excerpt.txt"),
        "sysctl": "vm.zone_reclaim_mode = 1",
        "thp": "enabled: [always] madvise never\ndefrag: always [madvise] never",
        "vmstat": fixture("vmstat/c-narrow.txt"),
    })
    assert facts.get("mpstat.soft_pct.max_cpu") == 0 and facts.get("mpstat.soft_pct.0") == 59.09
    assert facts.get("numa.max_distance") == 21 and facts.get("sysctl.vm.zone_reclaim_mode") == 1
    assert (facts.get("thp.enabled"), facts.get("thp.defrag")) == ("always", "madvise")
    assert facts.has("vmstat.window.cs")
    assert not any(name.startswith(("vmstat.delta", "softirq.delta")) for name, _ in facts.items())
    assert facts.source("thp.enabled") == "pasted:thp"
    assert facts.data_quality == []


def _documented_fact_patterns():
    names = []
    for line in DOC.read_text().splitlines():
        match = re.match(r"^\| (`[^|]+`(?:,\s*`[^|]+`)*) \|", line)
        if match:
            for name in re.findall(r"`([^`]+)`", match.group(1)):
                if name.startswith(".") and names:  # `a.b.top_cpu`, `.top_share` shorthand
                    name = names[-1].rsplit(".", 1)[0] + name
                names.append(name)
    patterns = []
    for name in names:
        regex = re.escape(name)
        regex = re.sub(r"<[^>]+>", r"[^ ]+", regex.replace("\\<", "<").replace("\\>", ">"))
        patterns.append((name, re.compile("^" + regex + "$")))
    return patterns


def test_every_documented_fact_is_produced(tmp_path):
    files = dict(real_machine_files())
    files.update(zone_reclaim_files())
    files.update(nic_softirq_files())
    files.update({("memcg", "once", None): fixture("memcg/hand-v2.txt") + fixture("memcg/v1.txt"),
                  ("audit", "once", None): fixture("audit/hand-auditctl-s-42-rules.txt"),
                  ("cpufreq", "once", None): "policy0: driver=intel_pstate governor=performance\n",
                  ("tuned", "once", None): "Current active profile: virtual-guest\n",
                  ("ethtool.S", "start", "eth0"): fixture("ethtool/S-virtio.txt"),
                  ("ethtool.S", "end", "eth0"): fixture("ethtool/S-virtio.txt").replace("rx_drops: 0", "rx_drops: 3")})
    produced = [name for name, _ in facts_for(tmp_path, files).items()]
    # turbostat is read from pastes only (no collector captures it): its facts come from a pasted table
    pasted = build_facts_from_sections({"turbostat": "# turbostat --interval 5\n" + fixture("turbostat/hand-tab-separated-two-intervals-header-once-2023.txt")})
    produced += [name for name, _ in pasted.items()]
    patterns = _documented_fact_patterns()
    assert len(patterns) > 50
    missing = [doc for doc, regex in patterns if not any(regex.match(name) for name in produced)]
    assert missing == []


def test_cpufreq_most_common_governor(tmp_path):
    files = {("cpufreq", "once", None): fixture("cpufreq/hand-intel-pstate-powersave.txt")}
    facts = facts_for(tmp_path, files)
    assert (facts.get("cpufreq.governor"), facts.get("cpufreq.driver")) == ("powersave", "intel_pstate")
    assert not facts_for(tmp_path / "vm", {("cpufreq", "once", None): ""}).has("cpufreq.governor")


def test_nic_statistics_deltas_keep_packets_and_moving_trouble_counters(tmp_path):
    start = fixture("ethtool/S-virtio.txt")
    end = start.replace("rx_drops: 0", "rx_drops: 17").replace("rx_kicks: 1451", "rx_kicks: 1999")
    files = {("ethtool.S", "start", "eth0"): start, ("ethtool.S", "end", "eth0"): end}
    facts = facts_for(tmp_path, files)
    assert facts.get("nic.eth0.delta.rx_drops") == 17
    assert not facts.has("nic.eth0.delta.rx_kicks") and not facts.has("nic.eth0.delta.tx_tx_timeouts")
    assert facts.source("nic.eth0.delta.rx_drops") == "snap/end/ethtool-S-eth0.txt"


def test_mpstat_covering_little_of_the_window_is_reported(tmp_path):
    files = {("mpstat", "window", None): fixture("mpstat/c-24h.txt")}
    facts = facts_for(tmp_path, files, {"duration_actual": 30.0})
    assert any("mpstat covers 3 s of the 30 s window" in s for s in facts.data_quality)
    assert len(facts.series["mpstat.intervals"]) == 3
    assert not any("mpstat covers" in s for s in facts_for(tmp_path / "b", files, {"duration_actual": 4.0}).data_quality)


def test_real_capture_bundle_from_this_vm():
    """A bundle `flamediag capture` wrote on this VM during the futex lab (perf/ removed to keep it small)."""
    bundle = open_bundle(Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "bundle" / "capture-vm-futex")
    facts = build_facts(bundle)
    assert facts.data_quality == []
    assert facts.get("kernel.version") == [6, 18] and facts.get("cpus") == 2
    assert facts.get("mpstat.sys_pct.avg") > 30 and facts.source("mpstat.sys_pct.avg") == "metrics/mpstat.txt"
    assert facts.get("thp.enabled") == "madvise" and facts.get("nic.eth0.driver") == "virtio_net"
    assert facts.get("memcg.max_failcnt") == 0 and facts.has("softirq.delta.SCHED.total")
    assert facts.get("window.seconds") == bundle.manifest["duration_actual"]
    assert len(facts) > 500


class MutatingReader:
    """The real capture bundle, every text with one digit swapped for a look-alike."""

    def __init__(self, bundle, digit, odd):
        self.bundle, self.digit, self.odd = bundle, digit, odd
        self.manifest, self.unverified = bundle.manifest, bundle.unverified

    def read_text(self, name, phase=None, instance=None):
        text = self.bundle.read_text(name, phase=phase, instance=instance)
        return None if text is None else text.replace(self.digit, self.odd)

    def instances(self, name):
        return self.bundle.instances(name)

    def source(self, name, phase=None, instance=None):
        return self.bundle.source(name, phase, instance)


@pytest.mark.parametrize("odd", ["\u00b2", "\u0661", "nan", "-1"])
def test_no_fact_builder_breaks_on_mutated_real_evidence(odd):
    bundle = open_bundle(Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "bundle" / "capture-vm-futex")
    for digit in "0123456789":
        facts = build_facts(MutatingReader(bundle, digit, odd))
        broken = [s for s in facts.data_quality if s.startswith("facts:")]
        assert broken == [], (digit, odd)


def test_kernel_and_cpus_fall_back_to_uname_and_lscpu(tmp_path):
    bundle = FIXTURES_BUNDLE
    files = {("uname", "once", None): bundle.joinpath("system/uname.txt").read_text(),
             ("lscpu", "once", None): bundle.joinpath("system/lscpu.txt").read_text()}
    facts = facts_for(tmp_path, files, {"kernel": None, "cpus": None})
    assert facts.get("kernel.release") == "6.18.44-fc-v657" and facts.source("kernel.release") == "system/uname.txt"
    assert facts.get("cpus") == 2 and facts.source("cpus") == "system/lscpu.txt"


def test_cpuidle_deepest_enabled_state_and_disabled_deep_states(tmp_path):
    facts = facts_for(tmp_path, {("cpuidle", "once", None): fixture("cpuidle/hand-intel-idle-c6-disabled.txt")})
    assert (facts.get("cpuidle.driver"), facts.get("cpuidle.governor")) == ("intel_idle", "menu")
    assert facts.get("cpuidle.states") == 4 and facts.get("cpuidle.disabled") == ["C6"]
    assert facts.get("cpuidle.deepest_enabled") == "C1E" and facts.get("cpuidle.max_enabled_latency_us") == 10
    assert facts.get("cpuidle.deep_states_disabled") is True
    assert facts.source("cpuidle.max_enabled_latency_us") == "system/cpuidle.txt"
    vm = facts_for(tmp_path / "vm", {("cpuidle", "once", None): fixture("cpuidle/capture-haltpoll.txt")})
    assert vm.get("cpuidle.deepest_enabled") == "haltpoll idle" and vm.get("cpuidle.max_enabled_latency_us") == 1
    assert vm.get("cpuidle.deep_states_disabled") is False and vm.get("cpuidle.disabled") == []
    assert not any("cpuidle" in sentence for sentence in vm.data_quality)  # the driver line is understood


def test_meminfo_end_snapshot_and_available_ratio(tmp_path):
    files = {("proc.meminfo", "start", None): fixture("meminfo/start.txt"),
             ("proc.meminfo", "end", None): fixture("meminfo/end.txt")}
    facts = facts_for(tmp_path, files)
    total, available = facts.get("meminfo.MemTotal"), facts.get("meminfo.MemAvailable")
    assert total == 24684092 and facts.has("meminfo.Dirty") and facts.has("meminfo.Active_anon")
    assert facts.get("meminfo.available_ratio") == round(available / total, 4)
    assert facts.source("meminfo.MemFree") == "snap/end/proc-meminfo.txt"
    rhel6 = "MemTotal:       8061084 kB\nMemFree:         101224 kB\nDirty:            91232 kB\n"
    old = facts_for(tmp_path / "old", {("proc.meminfo", "end", None): rhel6})
    assert old.get("meminfo.Dirty") == 91232 and not old.has("meminfo.available_ratio")  # no MemAvailable before 3.14


def test_rx_queue_aggregates_name_the_nic_with_the_fewest(tmp_path):
    two = fixture("ethtool/hand-l-ixgbevf-two-queues.txt")
    files = {("ethtool.l", "once", "eth0"): two,
             ("ethtool.l", "once", "eth1"): fixture("ethtool/l-virtio.txt"),  # 1 combined queue
             ("ethtool.l", "once", "eth2"): two.replace("Combined:\t2", "Combined:\t8"),
             ("ethtool.l", "once", "eth3"): fixture("ethtool/l-virtio.txt")}
    facts = facts_for(tmp_path, files)
    assert [facts.get(f"nic.eth{n}.rx_queues") for n in range(4)] == [2, 1, 8, 1]
    assert facts.get("nic.rx_queues.min") == 1 and facts.get("nic.rx_queues.min_nic") == "eth1"  # first on a tie
    assert facts.get("nic.rx_queues.max") == 8 and facts.source("nic.rx_queues.max") == "net/ethtool-l-eth2.txt"
    assert facts.source("nic.rx_queues.min") == "net/ethtool-l-eth1.txt"
