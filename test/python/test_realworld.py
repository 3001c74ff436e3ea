"""The real-world corpus (test/fixtures/realworld/): what other people pasted while chasing kernel CPU time.

Every case file in the directory is diagnosed twice - its ticket part alone, then with its
`# evidence:` part appended - and the top finding at medium or high confidence (or none) must be one
of the case's accepted ids and none of its must-not ids (labels.tsv). Evidence may raise confidence;
it must never turn a right answer into a wrong one. A case that is not right yet is listed in
pending.tsv beside the cases with the reason, and runs as a strict xfail: when a change makes it
right, the xfail fails, and its line must be removed.

The rules that made the cases right are tested below on small profiles, each naming the corpus case
that motivated it (doc/accuracy.md lists them with the kernel reasoning).
"""
from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import pytest

from diagnose_helpers import FIXTURES
from realworld import judge, load_cases

from flamediag.diagnose import load_playbooks, run_diagnosis
from flamediag.match import match_all
from flamediag.paste import read_paste
from flamediag.profile import Frame, Profile, is_idle
from flamediag.scoring import score_all

CORPUS = FIXTURES / "realworld"
RUNS = ("ticket", "evidence")


def pending():
    with open(CORPUS / "pending.tsv", encoding="utf-8") as handle:
        return {row["case-prefix"]: (set(row["runs"].split(",")), row["reason"])
                for row in csv.DictReader(handle, delimiter="\t")}


def corpus_params():
    waiting = pending()
    params = []
    for case in load_cases(CORPUS):
        for run in RUNS:
            runs, reason = waiting.get(case.prefix, (set(), ""))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if run in runs else []
            params.append(pytest.param(case, run, marks=marks, id=f"{case.prefix}-{run}"))
    return params


def test_every_case_is_labelled_and_every_pending_line_names_a_case():
    cases = load_cases(CORPUS)
    files = sorted(p.name.split("-", 1)[0] for p in CORPUS.glob("*.txt"))
    assert sorted(c.prefix for c in cases) == files, "a case file without a labels.tsv row"
    assert set(pending()) <= set(files), "pending.tsv names a case that does not exist"
    for prefix, (runs, reason) in pending().items():
        assert runs <= set(RUNS) and reason, f"pending.tsv {prefix}: runs must be ticket/evidence, with a reason"


@pytest.mark.parametrize("case,run", corpus_params())
def test_corpus_case(case, run, tmp_path):
    row = judge(case, tmp_path, with_evidence=(run == "evidence"))
    assert not row.error, f"{case.path.name}: not read: {row.error}"
    assert row.right, (f"{case.path.name} ({run}): top {row.got} ({row.confidence}); accepted "
                       f"{', '.join(case.accepted)}; must not be {', '.join(case.must_not) or '-'}")


# -- the rules, on small profiles (each names the corpus case that motivated it) -----------------
@lru_cache(maxsize=None)
def playbooks():
    return tuple(load_playbooks())


def flat(*entries):
    """perf top / perf report -g none: (comm, symbol, percent) one-frame entries, as the reader
    gives them (percentages of all samples: entries not listed still happened)."""
    profile = Profile(source_format="perf-report-flat", ancestry=False, percent_of=100.0)
    for comm, symbol, weight in entries:
        profile.add([Frame(symbol, "kernel")], weight, comm=comm)
    return profile


def folded(*entries):
    profile = Profile(source_format="folded")
    for comm, stack, weight in entries:
        profile.add([Frame(name, "kernel") for name in stack.split(";")], weight, comm=comm)
    return profile


def top(profile):
    findings, _ = score_all(match_all(list(playbooks()), profile), None, 0)
    confident = [f for f in findings if f.confidence in ("medium", "high")]
    return (confident[0].playbook.id, confident[0].confidence) if confident else (None, None)


def test_flat_spin_lock_belongs_to_the_path_listed_beside_it():
    """Case 108: 32 threads on one pthread mutex, flat: _raw_spin_lock 93 % next to get_futex_key_refs."""
    assert top(flat(("radix_test", "_raw_spin_lock", 93.2), ("radix_test", "get_futex_key_refs.isra.13", 0.32),
                    ("radix_test", "system_call_after_swapgs", 0.93))) == ("futex-contention", "medium")
    # the same lock with no path listed beside it is the fallback's, and a tiny one is nothing (case 109)
    assert top(flat(("app", "_raw_spin_lock", 60.0), ("app", "copy_page_rep", 2.0)))[0] == "spinlock-contention"
    assert top(flat(("radix_test", "radix_tree_find_alloc", 78.0), ("radix_test", "_raw_spin_lock", 0.28))) == (None, None)


def test_flat_lock_beside_an_excluded_path_goes_to_that_path():
    """Exclusion by co-occurrence: a reclaim lock listed beside memcg limit-reclaim frames is memcg-reclaim's,
    not direct-reclaim's (direct-reclaim excludes [memcg_reclaim])."""
    profile = flat(("java", "native_queued_spin_lock_slowpath", 50.0), ("java", "shrink_page_list", 5.0),
                   ("java", "try_to_free_mem_cgroup_pages", 0.5))
    assert top(profile)[0] == "memcg-reclaim"


def test_softirq_thread_time_is_the_softirq_its_frames_name():
    """Case 120: perf report -C 0 of ksoftirqd/0 forwarding at line rate: every entry is NET_RX softirq work."""
    profile = flat(("ksoftirqd/0", "enetc_pci_remove", 10.2), ("ksoftirqd/0", "eth_type_trans", 6.1),
                   ("ksoftirqd/0", "enetc_poll", 5.5), ("ksoftirqd/0", "kmem_cache_alloc", 5.0),
                   ("ksoftirqd/0", "dev_gro_receive", 4.6), ("ksoftirqd/0", "__siphash_aligned", 2.8))
    assert top(profile) == ("nic-softirq", "medium")


def test_flat_compaction_scanners_name_thp_compaction():
    """Case 151: isolate_freepages_block 59 % (3.18-rc2); case 114's flat list: pageblock_pfn_to_page 21 %."""
    assert top(flat(("", "isolate_freepages_block", 59.1), ("", "clear_page_c", 1.1)))[0] == "thp-compaction"
    assert top(flat(("postgres", "pageblock_pfn_to_page", 21.4), ("postgres", "ExecStoreMinimalTuple", 4.9)))[0] \
        == "thp-compaction"


def test_flat_ipi_wait_names_tlb_shootdown():
    """Case 136: smp_call_function_many_cond 94.5 % (csd_lock_wait inlined) in a flat cpu-clock profile."""
    assert top(flat(("", "smp_call_function_many_cond", 94.5), ("", "__do_softirq", 0.8))) == ("tlb-shootdown", "medium")


def test_iommu_frames_name_iommu_map():
    """Case 110: pktgen on ixgbe with the Intel IOMMU translating: map/unmap and IOVA frames dominate."""
    profile = flat(*[("kpktgend_0", s, w) for s, w in (
        ("xas_find", 32.0), ("pfn_to_dma_pte", 6.7), ("ixgbe_xmit_frame_ring", 5.6), ("dma_pte_clear_level", 4.8),
        ("__iommu_dma_unmap", 3.2), ("fq_ring_free_locked", 2.3), ("iommu_dma_alloc_iova", 1.8), ("__iommu_map", 1.8),
        ("iommu_pgsize.isra.0", 1.7), ("alloc_iova_fast", 1.6), ("_raw_spin_lock_irqsave", 1.6), ("ixgbe_poll", 1.2))])
    assert top(profile) == ("iommu-map", "medium")


def test_acpi_io_port_c_state_entry_is_not_idle():
    """Case 133: Zen3 tbench, 75 % in acpi_idle_do_entry (I/O-port C2 entry + PM-timer dummy wait)."""
    profile = flat(("swapper", "acpi_idle_do_entry", 74.8), ("tbench", "update_sd_lb_stats.constprop.0", 0.7))
    assert not is_idle(next(iter(profile)))
    assert top(profile)[0] == "cpu-power-saving"
    # the polling idle state chosen by a latency constraint stays idle (case 154: label none)
    assert top(flat(("swapper", "poll_idle", 98.6), ("swapper", "cpuidle_enter_state", 0.1))) == (None, None)


@pytest.mark.parametrize("banner,named", [
    ("", "cpu-power-saving"),                                     # event unknown: as case 133 (IBS)
    ("# Samples: 40K of event 'cycles'\n", "cpu-power-saving"),   # counts executed cycles only
    ("# Samples: 40K of event 'cpu-clock'\n", None),              # a timer samples halted CPUs too
    ("# Samples: 40K of event 'cpu-clock:ppp'\n", None),
    ("# Events: 40K task-clock\n", None),
])
def test_acpi_c_state_entry_sampled_by_a_timer_is_idle(banner, named):
    """acpi_idle_do_entry's own time is C-state entry cost only for an event that counts executed
    cycles; cpu-clock samples a halted CPU where it halted, so an idle AMD host recorded with it
    shows its idle time there (the limit case 133's rule had)."""
    text = banner + ("# Overhead  Command  Shared Object      Symbol\n"
                     "    74.76%  swapper  [kernel.kallsyms]  [k] acpi_idle_do_entry\n"
                     "     0.71%  tbench   [kernel.kallsyms]  [k] update_sd_lb_stats.constprop.0\n")
    profile = read_paste(text).profile
    profile.note_timer_event()
    assert top(profile)[0] == named


@pytest.mark.parametrize("event,named", [("cycles:ppp", "cpu-power-saving"), ("cpu-clock:ppp", None)])
def test_recorded_event_decides_whether_acpi_c_state_entry_is_idle(event, named, tmp_path):
    """The same rule for perf script / bundles: the event of every sample is in the input."""
    idle = ("\tffffffff81a0b2c5 acpi_idle_do_entry+0x25 ([kernel.kallsyms])\n"
            "\tffffffff81a0b3f0 acpi_idle_enter+0x80 ([kernel.kallsyms])\n"
            "\tffffffff81b0c3d1 cpuidle_enter_state+0x81 ([kernel.kallsyms])\n"
            "\tffffffff810d5c2e do_idle+0x1fe ([kernel.kallsyms])\n")
    work = "\t00005555555551a9 compute+0x19 (/usr/bin/app)\n"
    text = "".join(f"swapper     0 [00{n % 4}] {100 + n / 100:.6f}:   10101010 {event}: \n{idle}\n" for n in range(60))
    text += "".join(f"app      4242 [00{n % 4}] {100 + n / 100:.6f}:   10101010 {event}: \n{work}\n" for n in range(40))
    script = tmp_path / "idle-amd.perf-script.txt"
    script.write_text(text)
    diagnosis = run_diagnosis(str(script), loaded=list(playbooks()))
    confident = [f.playbook.id for f in diagnosis.findings if f.confidence in ("medium", "high")]
    assert (confident[0] if confident else None) == named


def test_generic_rwsem_spin_lock_under_faults_is_mmap_lock():
    """Case 104 (2.6.33): lib/rwsem-spinlock.c - the mmap_sem's internal spin lock under do_page_fault."""
    profile = folded(("multi-fault-all", "page_fault;do_page_fault;down_read_trylock;__down_read_trylock;"
                                         "_raw_spin_lock_irqsave", 49.0),
                     ("multi-fault-all", "page_fault;do_page_fault;up_read;__up_read;_raw_spin_lock_irqsave", 47.0))
    assert top(profile)[0] == "mmap-lock"


def test_plain_context_switching_needs_corroboration_or_dominance():
    """The hypervisor network-benchmark false alarm: spread switch frames at ~40 % are not scheduler overhead
    without a switch rate; case 141 (mm_cid lock inside __schedule, read as __schedule alone) dominates."""
    spread = folded(("netserver", "sys_recvfrom;tcp_recvmsg;sk_wait_data;schedule_timeout;schedule;__schedule;"
                                  "finish_task_switch", 25.0),
                    ("netperf", "sys_sendto;tcp_sendmsg;net_rx_action;process_backlog;tcp_v4_rcv;try_to_wake_up;"
                                "select_task_rq_fair", 15.0),
                    ("netperf", "sys_sendto;tcp_sendmsg;tcp_write_xmit;ip_finish_output2", 70.0))
    assert top(spread)[0] != "sched-overhead"
    assert top(folded(("hackbench", "__schedule", 7.7)))[0] == "sched-overhead"


def test_retransmit_under_the_nic_poll_is_tcp_retransmit():
    """Case 148: a fast retransmit decided in tcp_ack under xennet_poll / net_rx_action."""
    stack = ("xen_do_hypervisor_callback;xen_evtchn_do_upcall;irq_exit;do_softirq;call_softirq;__do_softirq;"
             "net_rx_action;xennet_poll;handle_incoming_queue;netif_receive_skb;__netif_receive_skb;ip_rcv;"
             "ip_local_deliver;tcp_v4_rcv;tcp_v4_do_rcv;tcp_rcv_established;tcp_ack;tcp_fastretrans_alert")
    assert top(folded(("sshd", stack, 1)))[0] == "tcp-retransmit"


def test_off_cpu_data_names_nothing():
    """Case 129: bcc offcputime -f stacks weigh blocked microseconds; the reader marks them off-CPU."""
    profile = folded(("bash", "entry_SYSCALL_64_fastpath;sys_wait4;do_wait;schedule", 699320),
                     ("kworker/0:2", "ret_from_fork;kthread;worker_thread;schedule", 4832023))
    assert top(profile)[0] == "sched-overhead"          # read as CPU samples it would be a false alarm
    profile.not_cpu = "bcc offcputime: blocked microseconds"
    assert match_all(list(playbooks()), profile) == []
    findings, ruled_out = score_all(match_all(list(playbooks()), folded(("x", "schedule", 1))), None, 0,
                                    not_cpu=profile.not_cpu)
    assert not findings and all("not a CPU profile" in r.reason for r in ruled_out)


def test_idle_governor_time_alone_is_not_power_saving():
    """The idle loop's own work (menu_select, tick_nohz_*) tops perf top on an idle host (the family of
    case 154, label none); alone it names cpu-power-saving only when it dominates the busy time."""
    profile = flat(("", "acpi_processor_ffh_cstate_enter", 38.9), ("", "native_sched_clock", 12.4),
                   ("", "menu_select", 6.1), ("", "cpuidle_enter_state", 4.8), ("", "_raw_spin_lock_irqsave", 3.3))
    assert top(profile) == (None, None)
    # the governor's frequency work is the strong form and still counts (cpu-power-saving-rhel6 sample)
    assert top(flat(("", "od_dbs_timer", 9.0), ("", "menu_select", 1.0), ("app", "do_work", 50.0)))[0] \
        == "cpu-power-saving"


# -- rules motivated by the held-out set's wrong cases, tested on fixtures of their own ---------
def test_change_pte_range_beside_hinting_faults_is_numa_balancing():
    """change_pte_range is the NUMA scanner's walk (change_prot_numa) and mprotect's: in a flat list it
    is NUMA balancing beside a hinting-fault or migration frame, never beside mprotect's frames.
    Fixtures: paste/hand-perf-top-rhel7-numa-change-pte-range, hand-perf61-top-6x-mprotect-*-not-numa."""
    numa = flat(("", "change_pte_range", 21.4), ("", "SpinPause", 8.1), ("", "do_numa_page", 1.3),
                ("", "migrate_misplaced_page", 0.9))
    assert top(numa) == ("numa-balancing", "medium")
    jit = flat(("", "change_pte_range", 19.6), ("", "mprotect_fixup", 2.1), ("", "do_numa_page", 0.3))
    assert top(jit)[0] != "numa-balancing"
    assert top(flat(("", "change_pte_range", 19.6), ("", "memcpy", 5.0)))[0] is None


def test_load_balancing_walk_names_sched_overhead_in_every_spelling():
    """The balancer's inner walk (find_busiest_group, update_sd_lb_stats, update_sg_lb_stats) and every
    era's entry (idle_balance, newidle_balance, sched_balance_newidle) are load balancing: a fifth of
    the busy time makes it medium; a spread, low share stays low without corroboration.
    Fixtures: paste/hand-perf-report-flat-sortsym-4x-idle-balance, hand-perf61-top-kvm-netperf-rr-newidle-not-sched."""
    assert top(flat(("", "update_sg_lb_stats", 11.4), ("", "find_busiest_group", 7.9), ("", "idle_balance", 4.9),
                    ("", "update_sd_lb_stats", 3.4), ("", "_raw_spin_lock", 2.6))) == ("sched-overhead", "medium")
    assert top(flat(("cc1", "update_sg_lb_stats", 12.0), ("cc1", "sched_balance_find_src_group", 6.0),
                    ("cc1", "sched_balance_newidle", 3.5))) == ("sched-overhead", "medium")
    spread = flat(("", "finish_task_switch", 4.8), ("", "__schedule", 4.0), ("", "newidle_balance", 2.9),
                  ("", "update_sg_lb_stats", 2.0), ("", "pick_next_task_fair", 1.7), ("", "load_balance", 1.2))
    assert top(spread) == (None, None)


def test_rule_cs1_cfs_inner_helpers_count_as_switch_rows_in_a_flat_listing():
    """Rule CS1 (realworld-probe-cs case 2704, InnoDB's spin loops ending in sched_yield, a --sort sym
    listing read as low): CFS's inner helpers that only the switch, wakeup and tick paths call
    (update_rq_clock, update_min_vruntime, __calc_delta / calc_delta_mine, clear_buddies,
    rcu_note_context_switch) count with the other switch rows as the weak form, never the strong one.
    Fixtures: paste/hand-perf-report-flat-sort-sym-rule-cs1-yield-loop-cfs-helper-rows-44 and its
    look-alike hand-perf-report-flat-sort-sym-rule-cs1-web-server-helper-rows-not-sched."""
    yield_loop = (("", "__schedule", 8.1), ("", "pick_next_task_fair", 5.0), ("", "update_curr", 4.2),
                  ("", "yield_task_fair", 3.5), ("", "sys_sched_yield", 3.0), ("", "pick_next_entity", 2.1),
                  ("", "put_prev_entity", 1.0), ("", "schedule", 1.0), ("app", "spin_wait_for_slot", 30.0))
    helpers = (("", "update_rq_clock", 2.6), ("", "__calc_delta", 1.9), ("", "clear_buddies", 1.8),
               ("", "update_min_vruntime", 1.5), ("", "rcu_note_context_switch", 1.3))
    assert top(flat(*yield_loop))[1] != "medium"
    assert top(flat(*yield_loop, *helpers)) == ("sched-overhead", "medium")
    # the helpers alone are the weak form: a blocking server's percent or two of each names nothing
    server = flat(("", "__schedule", 4.2), ("", "update_curr", 2.4), *helpers,
                  ("nginx", "ngx_http_parse_request_line", 11.2), ("", "tcp_sendmsg", 6.1),
                  ("", "copy_user_enhanced_fast_string", 7.8))
    assert top(server) == (None, None)
    assert top(flat(*helpers, ("app", "main", 60.0))) == (None, None)

def test_spin_lock_is_named_by_its_direct_caller():
    """Under release_pages, the lock free_pcppages_bulk takes is the zone lock (the fallback's), the
    lock release_pages takes itself is the LRU lock. Fixtures: signatures/spinlock-contention/
    kernel5-zone-lock-under-release-pages, rhel6-zone-lock-free-pcppages-bulk; lru-lock-contention/
    kernel4-release-pages-own-lock."""
    unmap = "entry_SYSCALL_64;do_syscall_64;__x64_sys_munmap;unmap_region;tlb_finish_mmu;release_pages"
    zone = folded(("t", unmap + ";free_unref_page_list;free_pcppages_bulk;_raw_spin_lock;"
                   "native_queued_spin_lock_slowpath", 60), ("t", "main", 40))
    assert top(zone)[0] == "spinlock-contention"
    lru = folded(("t", unmap + ";_raw_spin_lock_irqsave;native_queued_spin_lock_slowpath", 60), ("t", "main", 40))
    assert top(lru)[0] == "lru-lock-contention"
    old = folded(("t", "system_call_fastpath;sys_exit_group;do_exit;mmput;exit_mmap;release_pages;__pagevec_free;"
                  "free_hot_cold_page;free_pcppages_bulk;_spin_lock", 60), ("t", "main", 40))
    assert top(old)[0] == "spinlock-contention"
