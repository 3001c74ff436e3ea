"""Evidence parsers against REAL output (recorded on the Debian 12 VM by
test/fixtures/parsers/record-fixtures.sh, or taken from the seeds) and the hand-written variants this
machine cannot produce (files named hand-*)."""
from __future__ import annotations

import pytest

from facts_helpers import fixture
from flamediag.parsers import (audit, clocksource, cpufreq, cpuidle, dmesg, ethtool, interrupts,
                               loadavg, lscpu, uname, memcg, meminfo, modparams, mpstat, nicirqs, numactl, numastat,
                               claims, parser_for, pidstat, pressure, procstat, procvmstat, schedknobs, softirqs,
                               softnet, ss, sysctl, thp, tuned, vmstat)

TEXT_MPSTAT = ["mpstat/c-24h.txt", "mpstat/en_US-12h.txt", "mpstat/de_DE-decimal-comma.txt",
               "mpstat/hand-sysstat9-no-gnice.txt"]


@pytest.mark.parametrize("name", TEXT_MPSTAT)
def test_mpstat_interval_mean_agrees_with_mpstats_own_average(name):
    result = mpstat.parse(fixture(name))
    assert result["notes"] == []
    assert result["intervals"], "no interval parsed"
    assert set(result["reported_average"]) == set(result["average"])
    for cpu, columns in result["reported_average"].items():
        for column, value in columns.items():
            assert result["average"][cpu][column] == pytest.approx(value, abs=0.5), (cpu, column)


def test_mpstat_12h_seed_keeps_am_pm_time_and_cpu0_softirq():
    result = mpstat.parse(fixture("mpstat/seed000-ixgbevf-12h-cpu0-soft59.txt"))
    assert result["intervals"][0]["time"] == "02:46:27 AM"
    assert result["average"]["0"]["soft"] == 59.09
    assert result["average"]["all"]["soft"] == 11.57
    assert sorted(result["average"]) == ["0", "1", "2", "3", "all"]


def test_mpstat_decimal_comma_locale_reads_numbers():
    result = mpstat.parse(fixture("mpstat/de_DE-decimal-comma.txt"))
    assert result["reported_average"]["all"]["sys"] == 82.44
    assert result["cpus"] == 2


def test_mpstat_sysstat9_has_no_gnice_column():
    result = mpstat.parse(fixture("mpstat/hand-sysstat9-no-gnice.txt"))
    assert "gnice" not in result["columns"]
    assert result["average"]["0"]["sys"] == 65.5
    assert len(result["intervals"]) == 2


def test_mpstat_json_matches_text_shape():
    result = mpstat.parse(fixture("mpstat/json.txt"))
    assert result["notes"] == []
    assert len(result["intervals"]) == 2
    assert set(result["average"]) == {"all", "0", "1"}
    assert {"usr", "sys", "soft", "idle"} <= set(result["average"]["all"])


def test_mpstat_unknown_section_is_a_note_not_a_crash():
    result = mpstat.parse("12:00:00  CPU  intr/s\n12:00:01  all  100.00\n")
    assert result["average"] == {}
    assert any("not CPU utilisation" in n for n in result["notes"])


def test_vmstat_wide_skips_since_boot_row():
    result = vmstat.parse(fixture("vmstat/c-wide.txt"))
    assert result["notes"] == []
    rows = result["rows"]
    assert len(rows) == 4 and "gu" in result["columns"]
    expected = sum(r["cs"] for r in rows[1:]) / 3
    assert result["average"]["cs"] == pytest.approx(expected, abs=0.01)


def test_vmstat_narrow_layout():
    result = vmstat.parse(fixture("vmstat/c-narrow.txt"))
    assert result["columns"][-1] == "st" and len(result["rows"]) == 3


@pytest.mark.parametrize("name", ["pidstat/c-u-w.txt", "pidstat/en_US-12h.txt"])
def test_pidstat_reads_cpu_and_switch_sections(name):
    result = pidstat.parse(fixture(name))
    assert result["notes"] == []
    assert result["cpu"] and result["switches"] and result["average_switches"]
    assert all(isinstance(r["cswch/s"], float) for r in result["switches"])
    assert result["intervals"] >= 1


def test_numastat_plain_and_m():
    plain = numastat.parse(fixture("numastat/plain.txt"))
    assert plain["nodes"] == ["node0"] and plain["unit"] == "pages"
    assert plain["totals"]["numa_hit"] == plain["rows"]["numa_hit"][0] > 0
    mem = numastat.parse(fixture("numastat/m.txt"))
    assert mem["notes"] == [] and mem["unit"] == "MB"
    assert mem["rows"]["MemTotal"] == [5338.21]


def test_numastat_two_nodes_sums_other_node():
    result = numastat.parse(fixture("numastat/hand-two-node.txt"))
    assert result["totals"]["other_node"] == 4185010285 + 61345624


def test_numactl_one_node_has_no_off_diagonal_distance():
    result = numactl.parse(fixture("numactl/one-node.txt"))
    assert result["nodes"] == 1 and result["max_distance"] is None
    assert result["node_cpus"][0] == [0, 1] and result["notes"] == []


@pytest.mark.parametrize("name", ["numactl/hand-two-node-distance21.txt", "numactl/seed003-distance21-excerpt.txt"])
def test_numactl_distance_21(name):
    result = numactl.parse(fixture(name))
    assert result["max_distance"] == 21 and result["nodes"] == 2


def test_ss_loopback_sockets():
    result = ss.parse(fixture("ss/loopback.txt"))
    assert result["notes"] == []
    assert [s["state"] for s in result["sockets"]] == ["ESTAB", "ESTAB"]
    assert {s["congestion"] for s in result["sockets"]} == {"bbr"}
    assert result["sockets"][0]["rto"] == 200.0 and result["sockets"][1]["cwnd"] == 18


def test_ss_retrans_and_lost():
    text = ("State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"
            "ESTAB 0 0 10.0.0.1:80 10.0.0.2:5555 users:((\"nginx\",pid=1,fd=3))\n"
            "\t cubic wscale:7,7 rto:408 rtt:200/100 cwnd:1 ssthresh:2 retrans:1/17 lost:2\n")
    sock = ss.parse(text)["sockets"][0]
    assert (sock["retrans_now"], sock["retrans_total"], sock["lost"], sock["process"]) == (1, 17, 2, "nginx")


@pytest.mark.parametrize("module,directory", [(procvmstat, "procvmstat"), (softirqs, "softirqs"),
                                               (interrupts, "interrupts"), (softnet, "softnet")])
def test_proc_snapshot_deltas_are_non_negative(module, directory):
    start = module.parse(fixture(f"{directory}/start.txt"))
    end = module.parse(fixture(f"{directory}/end.txt"))
    assert start["notes"] == [] and end["notes"] == []
    delta = module.delta(start, end)
    assert delta
    flat = []
    for value in delta.values():
        flat.extend(value["counts"] if isinstance(value, dict) else value if isinstance(value, list) else [value])
    if module is not procvmstat:  # gauges (nr_free_pages) may go down; event counters may not
        assert all(v >= 0 for v in flat)


def test_procvmstat_sums_zone_split_counters():
    start = procvmstat.parse("pgscan_direct_normal 10\npgscan_direct_dma32 5\nzone_reclaim_failed 1\n")
    end = procvmstat.parse("pgscan_direct_normal 110\npgscan_direct_dma32 25\nzone_reclaim_failed 41\n")
    delta = procvmstat.delta(start, end)
    assert delta["pgscan_direct"] == 120 and delta["zone_reclaim_failed"] == 40


def test_softirqs_net_rx_concentrated_on_cpu0():
    delta = softirqs.delta(softirqs.parse(fixture("softirqs/hand-netrx-cpu0-start.txt")),
                           softirqs.parse(fixture("softirqs/hand-netrx-cpu0-end.txt")))
    assert delta["NET_RX"] == [3000000, 100, 50, 50]
    assert "BLOCK_IOPOLL" in delta


def test_interrupts_named_and_numbered_rows():
    result = interrupts.parse(fixture("interrupts/start.txt"))
    assert result["cpus"] == ["CPU0", "CPU1"]
    assert result["rows"]["ERR"]["counts"] and len(result["rows"]["LOC"]["counts"]) == 2
    assert result["rows"]["LOC"]["name"] == "Local timer interrupts"
    assert any(row["name"].startswith("virtio") for label, row in result["rows"].items() if label.isdigit())


def test_softnet_counter_wrap():
    start = softnet.parse("ffffffff 00000000 00000000")
    end = softnet.parse("00000001 00000000 00000000")
    assert softnet.delta(start, end)["processed"] == 2


def test_meminfo_pressure_loadavg():
    assert meminfo.parse(fixture("meminfo/end.txt"))["kb"]["MemTotal"] > 0
    psi = pressure.parse(fixture("pressure/three.txt"))["resources"]
    assert set(psi) == {"cpu", "memory", "io"} and "avg10" in psi["io"]["full"]
    load = loadavg.parse(fixture("loadavg/end.txt"))
    assert load["1"] is not None and load["tasks"] > 0


def test_procstat_utilisation_and_series():
    start, end = procstat.parse(fixture("procstat/start.txt")), procstat.parse(fixture("procstat/end.txt"))
    util = procstat.utilisation(start, end)
    assert set(util) == {"all", "0", "1"}
    assert sum(util["all"].values()) == pytest.approx(100, abs=0.1)
    series_text = "--- 1700000000\n" + fixture("procstat/start.txt") + "--- 1700000001\n" + fixture("procstat/end.txt")
    series = procstat.parse_series(series_text)
    assert [epoch for epoch, _ in series] == [1700000000.0, 1700000001.0]


def test_sysctl_real_output():
    values = sysctl.parse(fixture("sysctl/c.txt"))["values"]
    assert values["vm.zone_reclaim_mode"] == 0
    assert isinstance(values["net.ipv4.tcp_rmem"], str) and len(values["net.ipv4.tcp_rmem"].split()) == 3


def test_thp_current_and_rhel6():
    assert thp.parse(fixture("thp/madvise.txt"))["settings"]["enabled"] == "madvise"
    rhel6 = thp.parse(fixture("thp/hand-rhel6-always.txt"))["settings"]
    assert rhel6 == {"enabled": "always", "defrag": "always", "khugepaged/defrag": "yes"}


def test_small_settings_files():
    assert clocksource.parse(fixture("clocksource/kvm.txt"))["current"] == "tsc"
    states = cpuidle.parse(fixture("cpuidle/vm.txt"))["states"]
    assert {s["name"] for s in states} == {"POLL", "haltpoll idle"}
    captured = cpuidle.parse(fixture("cpuidle/capture-haltpoll.txt"))
    assert (captured["driver"], captured["governor"], captured["notes"]) == ("haltpoll", "haltpoll", [])
    assert captured["states"][1]["usage"] > 0
    assert schedknobs.parse(fixture("schedknobs/proc.txt"))["knobs"]["sched_rr_timeslice_ms"] == 100
    assert tuned.parse(fixture("tuned/none.txt")) == {"profile": None, "notes": []}
    assert cpufreq.parse("")["policies"] == {}


@pytest.mark.parametrize("name,kind", [("ethtool/i-virtio.txt", "i"), ("ethtool/i-veth.txt", "i"),
                                       ("ethtool/c-virtio.txt", "c"), ("ethtool/l-virtio.txt", "l"),
                                       ("ethtool/l-veth.txt", "l"), ("ethtool/S-virtio.txt", "S"),
                                       ("ethtool/S-veth.txt", "S"), ("ethtool/hand-i-ixgbevf.txt", "i"),
                                       ("ethtool/hand-c-ixgbevf-rx-usecs1.txt", "c"),
                                       ("ethtool/hand-l-ixgbevf-two-queues.txt", "l")])
def test_ethtool_detects_its_option(name, kind):
    result = ethtool.parse(fixture(name))
    assert result["kind"] == kind and result["notes"] == []


def test_ethtool_values():
    assert ethtool.parse(fixture("ethtool/hand-i-ixgbevf.txt"))["values"]["driver"] == "ixgbevf"
    assert ethtool.parse(fixture("ethtool/c-virtio.txt"))["values"]["rx-usecs"] == 0
    assert ethtool.parse(fixture("ethtool/hand-l-ixgbevf-two-queues.txt"))["values"]["current"]["combined"] == 2
    assert ethtool.parse(fixture("ethtool/S-virtio.txt"))["values"]["stats"]["rx_kicks"] > 0


def test_ethtool_unsupported_is_a_note():
    result = ethtool.parse(fixture("ethtool/c-veth.txt"))
    assert result["kind"] is None and "Operation not supported" in result["notes"][0]


def test_nic_modparams_and_irqs():
    assert modparams.parse(fixture("modparams/hand-ixgbevf-itr1.txt"))["drivers"]["ixgbevf"]["InterruptThrottleRate"] == "1,1,1,1,1,1,1,1"
    assert modparams.parse(fixture("modparams/virtio_net.txt"))["drivers"]["virtio_net"]["napi_tx"] == "Y"
    assert nicirqs.parse(fixture("nicirqs/hand-ixgbevf-all-cpu0.txt"))["cpus"] == [0]
    assert nicirqs.parse(fixture("nicirqs/virtio.txt"))["cpus"] == [0, 1]


def test_memcg_v1_unlimited_and_v2_events():
    v1 = memcg.parse(fixture("memcg/v1.txt"))["cgroups"]["/"]
    assert v1["version"] == 1 and v1["limit"] is None and v1["failcnt"] == 0 and v1["usage"] > 0
    v2 = memcg.parse(fixture("memcg/hand-v2.txt"))["cgroups"]
    assert v2["/system.slice/hadoop-datanode.service"]["events"]["max"] == 1532
    assert v2["/user.slice"]["events"]["high"] == 12 and v2["/user.slice"]["limit"] is None


def test_audit_and_dmesg():
    assert audit.parse(fixture("audit/plain.txt"))["rules"] is None  # auditctl missing on this VM
    status = audit.parse(fixture("audit/hand-auditctl-s-42-rules.txt"))
    assert (status["enabled"], status["rules"]) == (1, 42)
    counts = dmesg.parse(fixture("dmesg/hand-tsc-unstable-soft-lockup.txt"))["counts"]
    assert counts["tsc_unstable"] == 1 and counts["soft_lockup"] == 1 and counts["hung_task"] == 1
    assert dmesg.parse(fixture("dmesg/tail.txt"))["counts"]["soft_lockup"] == 0


def test_every_parser_takes_empty_text_without_notes():
    for name in claims():
        result = parser_for(name)("")
        assert isinstance(result, dict) and result["notes"] == []


def test_cpufreq_vm_without_cpufreq_and_intel_pstate():
    assert cpufreq.parse(fixture("cpufreq/vm-none.txt")) == {"policies": {}, "notes": []}
    policies = cpufreq.parse(fixture("cpufreq/hand-intel-pstate-powersave.txt"))["policies"]
    assert policies["policy1"]["cur"] == 3400000 and policies["policy2"]["governor"] == "performance"


@pytest.mark.parametrize("name,columns", [("vmstat/c-wide-timestamp-cet.txt", 18), ("vmstat/c-active.txt", 17)])
def test_vmstat_timestamp_and_active_layouts(name, columns):
    result = vmstat.parse(fixture(name))
    assert result["notes"] == [] and len(result["columns"]) == columns
    assert result["rows"] and "cs" in result["average"]


def test_mpstat_json_cpu_load_all_key():
    text = fixture("mpstat/json.txt").replace('"cpu-load"', '"cpu-load-all"')
    assert mpstat.parse(text)["average"] == mpstat.parse(fixture("mpstat/json.txt"))["average"]


def test_pidstat_sysstat9_without_uid_column():
    result = pidstat.parse(fixture("pidstat/hand-sysstat9-no-uid-12h.txt"))
    assert result["notes"] == []
    assert [(r["time"], r["pid"], r["command"], r["%system"]) for r in result["cpu"]] == [
        ("02:46:27 PM", 2841, "java", 65.0), ("02:46:27 PM", 3112, "kswapd0", 3.0)]
    assert result["switches"][0]["cswch/s"] == 120.0 and result["average_switches"][1]["pid"] == 3112
    assert result["intervals"] == 1


def test_pidstat_12h_with_uid_keeps_time_apart_from_uid():
    row = pidstat.parse(fixture("pidstat/en_US-12h.txt"))["cpu"][0]
    assert row["time"].endswith(("AM", "PM")) and isinstance(row["pid"], int)


def test_ss_rhel6_iproute2_layout():
    sockets = ss.parse(fixture("ss/hand-rhel6-iproute2-2.6.32.txt"))["sockets"]
    assert [s["process"] for s in sockets] == ["iperf", "iperf"]
    assert sockets[1]["retrans_total"] == 9 and sockets[1]["lost"] == 3 and sockets[1]["rto"] == 1632.0
    assert sockets[0]["congestion"] == "cubic" and sockets[0]["peer"] == "10.12.101.23:43122"


def test_pidstat_threads_layout_counts_each_thread_once():
    # real `pidstat -u -w -t 1 2` during `stress-ng --futex 2` (sysstat 12, C locale)
    result = pidstat.parse(fixture("pidstat/c-u-w-t-futex-threads.txt"))
    assert result["notes"] == []
    futex_cpu = [r for r in result["cpu"] if r["command"] == "stress-ng-futex" and r["time"] == "08:49:37"]
    assert [r["pid"] for r in futex_cpu] == [2129, 2130, 2131, 2132]      # process rows only
    assert futex_cpu[0]["%CPU"] == 41.9
    futex_sw = [r for r in result["switches"] if r["command"] == "stress-ng-futex" and r["time"] == "08:49:37"]
    assert [r["pid"] for r in futex_sw] == [2129, 2130, 2131, 2132]       # thread rows, "|__" stripped
    assert futex_sw[1]["nvcswch/s"] == 7037.14                             # the thread's, not the process's


def test_pidstat_threads_layout_thread_shown_without_its_process():
    # excerpt of a real `pidstat -u -w -t 1` here: pid 1's thread 75 is printed alone (both ids)
    result = pidstat.parse(fixture("pidstat/c-u-w-t-thread-alone.txt"))
    assert result["notes"] == []
    assert [(r["pid"], r["%CPU"]) for r in result["cpu"]] == [(75, 0.99), (35, 0.99)]
    assert [(r["pid"], r["cswch/s"]) for r in result["switches"]] == [(75, 12.0), (35, 30.0)]


def test_uname_release_and_lscpu_cpus():
    assert uname.parse(fixture("uname/vm.txt"))["release"].startswith("6.")
    rhel6 = uname.parse(fixture("uname/hand-rhel6.txt"))
    assert (rhel6["release"], rhel6["version"], rhel6["notes"]) == ("2.6.32-431.11.2.el6.x86_64", [2, 6], [])
    vm = lscpu.parse(fixture("lscpu/vm.txt"))
    assert vm["cpus"] >= 1 and vm["notes"] == [] and "Architecture" in vm["values"]


def test_turbostat_reads_every_eras_columns_summary_rows_short_rows_and_intervals():
    """turbostat's table (read from pastes only: no collector captures it). Sample input, the 3.10-4.x
    layout, right-aligned, where a CPU that is not the first of its core leaves the package columns out::

        Core CPU Avg_MHz   %Busy Bzy_MHz TSC_MHz     SMI  CPU%c1  CPU%c3  CPU%c6  CPU%c7 CoreTmp  PkgTmp ...
           -   -      41    2.71    1512    2594       0    4.11    0.00   93.18    0.00      38      41 ...
           1   1      33    2.19    1508    2594       0    3.71    0.00   94.10    0.00      37

    Before 3.13 the columns were `%c0 GHz TSC` (GHz, read as MHz) and the summary row left the
    topology columns blank; 4.13+ separates columns by tabs and prints per-state counts (`C6`) beside
    residencies (`C6%`); a header printed once and a second `-` row start the next interval; a `--show`
    subset may leave out TSC_MHz and every topology column."""
    from flamediag.parsers import turbostat
    aligned = turbostat.parse(fixture("turbostat/hand-313-pct-busy-right-aligned-short-rows.txt"))
    (interval,) = aligned["intervals"]
    assert aligned["interval_s"] == 5.0 and aligned["notes"] == []
    assert interval["summary"]["Busy%"] == 2.71 and interval["summary"]["Pkg%pc6"] == 79.11
    assert interval["cpus"][1] == {"Core": 1.0, "CPU": 1.0, "Avg_MHz": 33.0, "Busy%": 2.19, "Bzy_MHz": 1508.0,
                                   "TSC_MHz": 2594.0, "SMI": 0.0, "CPU%c1": 3.71, "CPU%c3": 0.0, "CPU%c6": 94.1,
                                   "CPU%c7": 0.0, "CoreTmp": 37.0}
    old = turbostat.parse(fixture("turbostat/hand-312-pct-c0-ghz-blank-summary.txt"))["intervals"][0]
    assert old["summary"]["Bzy_MHz"] == 1640.0 and old["summary"]["TSC_MHz"] == 3390.0 and len(old["cpus"]) == 2
    assert old["cpus"][1]["%c6"] == 98.67 and "%pc6" not in old["cpus"][1]
    tabs = turbostat.parse(fixture("turbostat/hand-tab-separated-two-intervals-header-once-2023.txt"))["intervals"]
    assert [len(i["cpus"]) for i in tabs] == [2, 2] and tabs[1]["summary"]["Busy%"] == 96.2
    assert tabs[0]["cpus"][1]["C6"] == 601.0 and "PkgTmp" not in tabs[0]["cpus"][1]
    subset = turbostat.parse(fixture("turbostat/hand-show-subset-no-tsc-mhz.txt"))
    assert subset["intervals"][0]["cpus"] == [{"Busy%": 19.41, "Bzy_MHz": 3152.0, "C6%": 78.36}]
    assert turbostat.parse("") == {"intervals": [], "interval_s": None, "notes": []}


def test_rule_ck1_busy_clock_and_rule_ck2_average_stay_facts():
    """Rules CK1 and CK2 (realworld-probe-ce case 2514, realworld-probe-bu case 2369): the busy CPUs'
    clock is measured only where a CPU is at Busy% 80 or more (2514's 34.81 is not: a demand-based
    governor clocks such a CPU low), and counts as held low by a setting only when a temperature column
    is under 85 degrees and RAPL did not throttle; an idle state's average stay needs the interval of
    the pasted command (2369: 66015 C6 entries at 59.88 % of 5 s is 45 us on average)."""
    from flamediag.facts import build_facts_from_sections
    from flamediag.parsers import turbostat
    tabs = turbostat.parse(fixture("turbostat/hand-tab-separated-two-intervals-header-once-2023.txt"))["intervals"]
    assert turbostat.busy_clock(tabs) == {"cpus": 4, "ratio": 0.916, "hot": False, "limited": False}
    head = "CPU Busy% Bzy_MHz TSC_MHz CoreTmp PKG_%"
    facts = build_facts_from_sections({"turbostat": f"{head}\n- 96.0 1000 2100 44 0.00\n0 96.0 1000 2100 44 0.00"})
    assert facts.get("turbostat.busy_clock_pct_cool") == 47.6 and facts.source("turbostat.busy_clock_pct") == "pasted:turbostat"
    for hot in ("- 96.0 1000 2100 97 0.00\n0 96.0 1000 2100 97 0.00", "- 96.0 1000 2100 44 12.5\n0 96.0 1000 2100 44 12.5"):
        facts = build_facts_from_sections({"turbostat": f"{head}\n{hot}"})
        assert facts.get("turbostat.busy_clock_pct") == 47.6 and "turbostat.busy_clock_pct_cool" not in facts
    no_temperature = build_facts_from_sections({"turbostat": "CPU Busy% Bzy_MHz TSC_MHz\n- 96.0 1000 2100"})
    assert "turbostat.busy_clock_pct_cool" not in no_temperature
    light = build_facts_from_sections({"turbostat": "CPU Avg_MHz Busy% Bzy_MHz TSC_MHz CoreTmp\n- 418 34.81 1201 2497 38"})
    assert light.get("turbostat.busy_pct") == 34.81 and "turbostat.busy_clock_pct" not in light
    stays = build_facts_from_sections({"turbostat": "# turbostat --interval 5 --cpu 4\n"
                                       "Core\tCPU\tBusy%\tBzy_MHz\tPOLL\tC1\tC6\tPOLL%\tC1%\tC6%\n"
                                       "4\t4\t38.21\t2847\t3\t1102\t66015\t0.00\t0.61\t59.88"})
    assert stays.get("turbostat.deepest_state") == "C6" and stays.get("turbostat.deepest_avg_stay_us") == 45.4
    assert stays.get("turbostat.avg_stay_us.C1") == 27.7
