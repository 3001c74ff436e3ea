"""Stack matching: ancestry order, whole names, eras' suffixes, exclusions, context, comm, flat profiles."""
from __future__ import annotations

import pytest

import diagnose_helpers  # noqa: F401  (puts lib/ on sys.path)
from flamediag.match import match_all, match_pattern, match_playbook
from flamediag.playbooks import load_all, parse_playbook
from flamediag.profile import Frame, Profile

PLAYBOOK = """---
id: demo
title: Demo
summary: demo
eras: [any]
evidence: [stacks]
frames:
  reclaim: [zone_reclaim, node_reclaim]
  lock: [_spin_lock_irq, native_queued_spin_lock_slowpath]
  kswapd: [kswapd]
signature:
  patterns:
    - [reclaim, lock]
    - [reclaim]
  strong: [0]
  exclude:
    - [kswapd]
  distinctive: [zone_reclaim]
  {extra}
---
## Symptom & evidence
## Why it happens
## Confirm by hand
## Mitigate
## Verify the fix
## References
"""


def book(extra=""):
    return parse_playbook(PLAYBOOK.replace("{extra}", extra), "demo.md")


def kframes(stack):
    return [Frame(name, "kernel") for name in stack.split(";")]


def profile(*stacks, ancestry=True):
    prof = Profile(ancestry=ancestry)
    for stack, weight, kwargs in stacks:
        prof.add(kframes(stack), weight, **kwargs)
    return prof


def test_lock_under_reclaim_is_strong_reclaim_alone_is_weak():
    prof = profile(("a;zone_reclaim;shrink_zone;_spin_lock_irq", 6, {}), ("a;zone_reclaim;shrink_zone", 2, {}),
                   ("a;b;c", 2, {}))
    m = match_playbook(book(), prof)
    assert (m.matched, m.strong, m.busy) == (8, 6, 10)
    assert m.share == pytest.approx(0.8) and m.strong_share == pytest.approx(0.6)


def test_order_matters_lock_above_reclaim_is_not_the_strong_form():
    m = match_playbook(book(), profile(("_spin_lock_irq;zone_reclaim", 5, {})))
    assert m.matched == 5 and m.strong == 0


def test_whole_names_only():
    prof = profile(("zone_reclaimable_pages;_spin_lock_irq", 5, {}), ("my_zone_reclaim_x;_spin_lock_irq", 5, {}))
    assert match_playbook(book(), prof).matched == 0


@pytest.mark.parametrize("spelling", ["node_reclaim.isra.0", "node_reclaim+0x3f", "node_reclaim+0x3f/0x80",
                                      "node_reclaim_[k]", "node_reclaim.constprop.0.cold"])
def test_compiler_suffixes_and_offsets_are_ignored(spelling):
    m = match_playbook(book(), profile((f"x;{spelling};native_queued_spin_lock_slowpath+0x1a", 3, {})))
    assert m.strong == 3 and "node_reclaim" in m.frames


def test_exclusion_drops_the_sample():
    m = match_playbook(book(), profile(("kthread;kswapd;zone_reclaim;_spin_lock_irq", 4, {}),
                                       ("x;zone_reclaim;_spin_lock_irq", 1, {})))
    assert m.matched == 1 and m.busy == 5


def test_idle_samples_are_not_busy_but_softirq_on_idle_cpu_is():
    prof = profile(("cpu_idle;intel_idle", 90, {"comm": "swapper", "pid": 0}),
                   ("cpu_idle;intel_idle;do_IRQ;irq_exit;__do_softirq;zone_reclaim;_spin_lock_irq", 10,
                    {"comm": "swapper", "pid": 0}))
    m = match_playbook(book(), prof)
    assert m.busy == 10 and m.matched == 10


def test_context_restricts_matches():
    prof = profile(("x;__do_softirq;zone_reclaim", 3, {}), ("x;zone_reclaim", 7, {}))
    assert match_playbook(book("context: softirq"), prof).matched == 3
    assert match_playbook(book("context: task"), prof).matched == 7


def test_comm_regex_restricts_matches():
    prof = profile(("x;zone_reclaim", 3, {"comm": "ksoftirqd/0"}), ("x;zone_reclaim", 7, {"comm": "java"}))
    assert match_playbook(book("comm: '^ksoftirqd/'"), prof).matched == 3


def test_leaf_within_limits_depth_below_the_last_element():
    prof = profile(("zone_reclaim;a;b;c;d", 5, {}), ("zone_reclaim;a", 1, {}))
    assert match_playbook(book("leaf_within: 2"), prof).matched == 1


def test_per_cpu_and_command_breakdown_and_hottest_stack():
    prof = profile(("x;zone_reclaim;_spin_lock_irq", 6, {"cpu": 0, "comm": "java"}),
                   ("y;zone_reclaim", 2, {"cpu": 1, "comm": "dd"}))
    m = match_playbook(book(), prof)
    assert m.fractions(m.cpus) == {"0": 0.75, "1": 0.25}
    assert m.fractions(m.comms) == {"java": 0.75, "dd": 0.25}
    assert m.hottest_stack() == ("x", "zone_reclaim", "_spin_lock_irq")


def test_flat_profile_counts_only_distinctive_frames():
    flat = Profile(ancestry=False)
    flat.add([Frame("zone_reclaim", "kernel")], 5)
    flat.add([Frame("_spin_lock_irq", "kernel")], 5)   # a lock alone proves nothing
    flat.add([Frame("node_reclaim", "kernel")], 5)     # not declared distinctive in this playbook
    m = match_playbook(book(), flat)
    assert m.flat and m.matched == 5 and m.busy == 15


def test_rule_bq1_flat_weak_frames_count_as_the_weak_form_only():
    """Rule BQ1 (realworld-probe-bq case 2318, a quoted --sort sym listing of schedule / __switch_to /
    enqueue_entity / update_curr rows): `flat_weak` frames count in a flat listing, as the weak form,
    never as the strong one; a listed distinctive frame keeps counting as before; call graphs ignore it."""
    flat = Profile(ancestry=False)
    flat.add([Frame("zone_reclaim", "kernel")], 5)
    flat.add([Frame("node_reclaim", "kernel")], 5)     # a weak-form frame, not distinctive
    flat.add([Frame("_spin_lock_irq", "kernel")], 5)   # neither: still proves nothing
    m = match_playbook(book("flat_weak: [reclaim]"), flat)
    assert m.matched == 10 and m.strong == 5 and m.busy == 15
    assert match_playbook(book(), flat).matched == 5   # without the key: distinctive frames only
    graph = profile(("node_reclaim", 5, {}), ancestry=True)
    assert match_playbook(book("flat_weak: [reclaim]"), graph).strong == 0
    # ...and, as rule AY3 does for distinctive rows, a command whose weak rows are listed beside an
    # exclude pattern's (here kswapd; sched-overhead: futex wait/wake) at a quarter of them or more
    # is that path's: the paste fixture html-br-perf61-top-futex stays futex-contention first
    beside = Profile(ancestry=False)
    beside.add([Frame("node_reclaim", "kernel")], 5, comm="a")
    beside.add([Frame("kswapd", "kernel")], 2, comm="a")
    beside.add([Frame("node_reclaim", "kernel")], 5, comm="b")
    assert match_playbook(book("flat_weak: [reclaim]"), beside).matched == 5


def test_match_pattern_is_subsequence_not_adjacency():
    assert match_pattern(list("axbyc"), [frozenset("a"), frozenset("b"), frozenset("c")]) == [0, 2, 4]
    assert match_pattern(list("cba"), [frozenset("a"), frozenset("c")]) is None


def test_wildcard_canary_matches_every_busy_sample():
    books = load_all([str(diagnose_helpers.FIXTURES / "playbooks")], include_default=False)
    prof = profile(("a;b", 3, {}), ("cpu_idle;intel_idle", 5, {"comm": "swapper", "pid": 0}))
    by_id = {m.playbook.id: m for m in match_all(books, prof)}
    assert by_id["always-fires"].matched == 3 and by_id["never-fires"].matched == 0


def lock_and_receive_work(books, prof):
    """Samples of `prof` that spinlock-contention and nic-softirq each take: a lock spun on inside
    NET_RX is one's or the other's, never both."""
    return tuple(match_playbook(books[name], prof).matched for name in ("spinlock-contention", "nic-softirq"))


def test_lock_taken_by_conntrack_inside_net_rx_is_lock_contention_not_receive_work():
    """Rule A9 (realworld-probe-a case 703): a spin lock is named by its direct caller (rule 18), also
    inside NET_RX: spun on from __nf_conntrack_confirm it is the conntrack table's lock, contention
    between CPUs (spinlock-contention's own_lockers, nic-softirq's foreign_lockers); the driver's own
    receive work beside it stays nic-softirq's."""
    books = {b.id: b for b in load_all()}
    rx = "ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;ixgbe_clean_rx_irq;" \
         "napi_gro_receive;__netif_receive_skb_core;ip_rcv;nf_hook_slow;"
    prof = profile((rx + "ipv4_confirm;__nf_conntrack_confirm;_raw_spin_lock_bh;native_queued_spin_lock_slowpath",
                    6, {"comm": "ksoftirqd/7"}),
                   ("ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;ixgbe_clean_rx_irq",
                    4, {"comm": "ksoftirqd/7"}))
    assert lock_and_receive_work(books, prof) == (6, 4)
    # the look-alike: a lock the receive path takes for itself (no shared-state locker above it) is
    # still the receive work of nic-softirq, not the fallback's
    own = profile(("ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;"
                   "ixgbe_clean_rx_irq;napi_gro_receive;_raw_spin_lock", 5, {"comm": "ksoftirqd/7"}))
    assert lock_and_receive_work(books, own) == (0, 5)


def test_lock_taken_by_a_bpf_map_inside_net_rx_is_lock_contention_not_receive_work():
    """Rule G2 (realworld-probe-g case 1052: cilium's connection-tracking LRU map): a BPF map that a tc
    program updates on every CPU is shared state like the conntrack table (rule A9): spinning on its
    common LRU list lock (bpf_lru_pop_free) or a hash bucket lock inside NET_RX is contention on that
    map, not one CPU's receive work."""
    books = {b.id: b for b in load_all()}
    rx = "entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_connect;__sys_connect;tcp_v4_connect;" \
         "tcp_connect;__tcp_transmit_skb;ip_output;__dev_queue_xmit;__local_bh_enable_ip;do_softirq;" \
         "__do_softirq;net_rx_action;process_backlog;__netif_receive_skb_core;tcf_classify_ingress;" \
         "cls_bpf_classify;bpf_prog_c1d3e8c2b39c37d0_cil_from_contai;htab_lru_map_update_elem;"
    prof = profile((rx + "bpf_lru_pop_free;_raw_spin_lock;native_queued_spin_lock_slowpath", 35, {"comm": "nginx"}),
                   (rx + "htab_map_hash", 3, {"comm": "nginx"}))
    assert lock_and_receive_work(books, prof) == (35, 3)


def test_rule_ad1_bridge_fdb_and_ip_fragment_locks_inside_net_rx_are_lock_contention():
    """Rule AD1 (realworld-probe-ad case 1523: a bridge learning hundreds of thousands of source MACs):
    br_fdb_update takes the bridge-wide hash_lock to learn an address, and the IP fragment queues'
    hash and LRU list are shared the same way (case 1521); spinning there inside NET_RX is contention
    on that shared state (rule A9), not one CPU's receive work. The look-alike: the same bridge path
    without a lock leaf (the FDB lookup's own time) stays the receive work of nic-softirq."""
    books = {b.id: b for b in load_all()}
    rx = "ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;" \
         "ixgbe_clean_rx_irq;napi_gro_receive;__netif_receive_skb_core;br_handle_frame;br_handle_frame_finish;"
    prof = profile((rx + "br_fdb_update;_raw_spin_lock;queued_spin_lock_slowpath", 38, {"comm": "ksoftirqd/3"}),
                   (rx + "br_fdb_update;fdb_find_rcu", 7, {"comm": "ksoftirqd/3"}))
    assert lock_and_receive_work(books, prof) == (38, 7)
    frag = "ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;ixgbe_clean_rx_irq;" \
           "__netif_receive_skb;ip_rcv;ip_local_deliver;ip_defrag;"
    prof = profile((frag + "inet_frag_find;_raw_read_lock", 10, {"comm": "ksoftirqd/5"}),
                   (frag + "ip_frag_queue;_raw_spin_lock", 40, {"comm": "ksoftirqd/5"}))
    assert lock_and_receive_work(books, prof) == (50, 0)
    # the look-alike: bridge forwarding on one CPU whose FDB lookups are the hottest frames, no lock
    alone = profile((rx + "br_fdb_update;fdb_find_rcu", 20, {"comm": "ksoftirqd/3"}),
                    (rx + "br_forward;__br_forward;br_dev_queue_push_xmit;ixgbe_xmit_frame_ring", 10,
                     {"comm": "ksoftirqd/3"}))
    assert lock_and_receive_work(books, alone) == (0, 30)


def test_rule_aj1_netfilter_set_match_target_and_tc_action_locks_inside_net_rx_are_lock_contention():
    """Rule AJ1 (realworld-probe-aj case 1648: an iptables SET target adding every source to an ipset
    hash:ip set on 3.10): ip_set_add writes and ip_set_test reads the set under one rwlock that every
    CPU's receive softirq takes, like the conntrack table (rule A9); spinning there inside NET_RX is
    contention on that set, not one CPU's receive work. So is a tc police action's tcf_lock (case
    1659's lock, here under a full receive chain). The look-alike: the same set match without a lock
    leaf (the hash lookup's own time) stays the receive work of nic-softirq."""
    books = {b.id: b for b in load_all()}
    rx = "ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;" \
         "ixgbe_clean_rx_irq;napi_gro_receive;__netif_receive_skb_core;ip_rcv;nf_hook_slow;nf_iterate;" \
         "iptable_filter_hook;ipt_do_table;"
    prof = profile((rx + "set_target_v3;ip_set_add;_raw_write_lock_bh;__write_lock_failed", 40, {"comm": "ksoftirqd/5"}),
                   (rx + "set_match_v3;ip_set_test;_raw_read_lock_bh;__read_lock_failed", 20, {"comm": "ksoftirqd/5"}),
                   (rx + "set_match_v3;ip_set_test;hash_ip4_test", 6, {"comm": "ksoftirqd/5"}))
    assert lock_and_receive_work(books, prof) == (60, 6)
    police = "ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;mlx5e_napi_poll;mlx5e_poll_rx_cq;" \
             "napi_gro_receive;__netif_receive_skb_core;tcf_classify;mall_classify;tcf_action_exec;tcf_police_act;"
    prof = profile((police + "_raw_spin_lock;native_queued_spin_lock_slowpath", 50, {"comm": "ksoftirqd/9"}))
    assert lock_and_receive_work(books, prof) == (50, 0)
    # the look-alike: a receive CPU whose set lookups are the hottest frames, no lock spun on
    alone = profile((rx + "set_match_v3;ip_set_test;hash_ip4_test", 25, {"comm": "ksoftirqd/5"}),
                    (rx.rstrip(";"), 10, {"comm": "ksoftirqd/5"}))
    assert lock_and_receive_work(books, alone) == (0, 35)


def test_rule_aj2_nat_port_clash_search_inside_net_rx_is_not_receive_work():
    """Rule AJ2 (realworld-probe-aj case 1657: a soft lockup of ksoftirqd in NAT's port search on a
    masquerading gateway): nf_nat_l4proto_unique_tuple loops over the port range with one conntrack
    tuple lookup per port tried; time inside that loop is the NAT configuration's cost, not one CPU's
    receive work, so nic-softirq leaves it. The look-alike: the same gateway's receive path that sets
    up NAT for a new connection without searching (get_unique_tuple's first choice is free) stays
    nic-softirq's."""
    books = {b.id: b for b in load_all()}
    rx = "ret_from_fork;kthread;smpboot_thread_fn;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;" \
         "ixgbe_clean_rx_irq;napi_gro_receive;netif_receive_skb_internal;__netif_receive_skb_one_core;ip_rcv;" \
         "ip_forward;ip_output;nf_hook_slow;nf_nat_ipv4_out;nf_nat_ipv4_fn;ipt_do_table;masquerade_tg;" \
         "nf_nat_masquerade_ipv4;nf_nat_setup_info;get_unique_tuple;"
    prof = profile((rx + "tcp_unique_tuple;nf_nat_l4proto_unique_tuple;nf_nat_used_tuple;nf_conntrack_tuple_taken",
                    30, {"comm": "ksoftirqd/6"}))
    assert match_playbook(books["nic-softirq"], prof).matched == 0
    # the look-alike: the first choice of tuple is free, no search loop: receive work on that CPU
    plain = profile((rx + "nf_nat_used_tuple;nf_conntrack_tuple_taken", 12, {"comm": "ksoftirqd/6"}),
                    (rx.split("ip_rcv;")[0] + "ip_rcv;ip_forward;ip_output;ixgbe_xmit_frame_ring", 18,
                     {"comm": "ksoftirqd/6"}))
    assert match_playbook(books["nic-softirq"], plain).matched == 30


def test_rule_bw1_hv_netvsc_receive_handlers_are_receive_work_vmbus_ring_helpers_are_not():
    """Rule BW1 (realworld-probe-bw case 2414: a Hyper-V guest whose synthetic NIC ran one VMBus
    channel, perf top of that vCPU without a CPU column): hv_netvsc's receive handlers, which only its
    NAPI poll (or, before 4.12, its channel callback) calls, are the NIC's receive work in a flat
    listing, as other drivers' receive-clean routines are (rule S3). The look-alike: the VMBus
    ring-buffer helpers every VMBus device shares (storvsc's disk completions here) and
    netvsc_vf_handle_frame, which an accelerated-networking VF's own poll calls, stay unclaimed."""
    books = {b.id: b for b in load_all()}
    flat = Profile(ancestry=False)
    for name, weight in (("rndis_filter_receive", 8), ("netvsc_recv_callback", 7), ("netvsc_receive", 5),
                         ("rndis_filter_receive_data", 2), ("netvsc_process_raw_pkt", 1), ("tcp_v4_rcv", 4)):
        flat.add([Frame(name, "kernel")], weight)
    assert match_playbook(books["nic-softirq"], flat).matched == 23
    shared = Profile(ancestry=False)
    for name, weight in (("hv_pkt_iter_next", 9), ("hv_ringbuffer_read", 4), ("vmbus_chan_sched", 5),
                         ("storvsc_on_channel_callback", 8), ("netvsc_vf_handle_frame", 3)):
        shared.add([Frame(name, "kernel")], weight)
    assert match_playbook(books["nic-softirq"], shared).matched == 0


def test_a_kernel_threads_function_names_a_stack_without_a_command():
    """Rule B4 (realworld-probe-b case 806: `perf record -g -p $(pgrep kswapd0)`, report without a
    Command column): `kthread -> kswapd` is the kswapd thread, so the comm-bound kswapd-spin playbook
    judges it and direct-reclaim (`comm: '^(?!kswapd)'`) does not take its reclaim frames."""
    books = {b.id: b for b in load_all()}
    prof = Profile()
    chain = ["ret_from_fork", "kthread", "kswapd", "balance_pgdat", "shrink_node", "shrink_inactive_list",
             "shrink_page_list"]
    prof.add([Frame(n, "kernel") for n in chain], 90)
    prof.add([Frame(n, "kernel") for n in ["ret_from_fork", "kthread", "kswapd", "balance_pgdat",
                                           "shrink_slab", "super_cache_scan"]], 60)
    kswapd = match_playbook(books["kswapd-spin"], prof)
    assert kswapd.matched == 150 and dict(kswapd.comms) == {"kswapd": 150}
    assert match_playbook(books["direct-reclaim"], prof).matched == 0
    # the same frames under an allocating task's page fault stay direct reclaim's
    other = Profile()
    other.add([Frame(n, "kernel") for n in ["page_fault", "__alloc_pages_slowpath", "try_to_free_pages",
                                            "do_try_to_free_pages", "shrink_node", "shrink_page_list"]], 90)
    assert match_playbook(books["kswapd-spin"], other).matched == 0


def test_rule_ca1_lock_inside_an_unlisted_shrinker_callback_is_not_kswapds():
    """Rule CA1 (realworld-probe-ca case 2442, ext4's extent-status shrinker spinning on its LRU lock in
    kswapd while readdir lookups take the same lock): a lock spun on inside a shrinker callback that
    kswapd-spin does not list (`foreign_callbacks: [slab_dispatch]`) is the cache's lock, so the stack
    is not kswapd's (the cache's other lockers name the contention); below the VFS's own shrinker (super_cache_scan ->
    prune_dcache_sb, listed) the lock stays kswapd's, and so does an unlisted shrinker's own work."""
    books = {b.id: b for b in load_all()}
    kswapd = "ret_from_fork;kthread;kswapd;balance_pgdat;kswapd_shrink_node;shrink_node;shrink_slab;do_shrink_slab;"
    foreign = profile((kswapd + "mb_cache_scan;_raw_spin_lock;native_queued_spin_lock_slowpath", 10,
                       {"comm": "kswapd0"}))
    assert match_playbook(books["kswapd-spin"], foreign).matched == 0
    listed = profile((kswapd + "super_cache_scan;prune_dcache_sb;list_lru_walk_one;_raw_spin_lock", 10,
                      {"comm": "kswapd0"}))
    assert match_playbook(books["kswapd-spin"], listed).matched == 10
    own_work = profile((kswapd + "mb_cache_scan;mb_cache_entry_delete", 10, {"comm": "kswapd0"}))
    assert match_playbook(books["kswapd-spin"], own_work).matched == 10


def test_rule_cd1_kworker_spinning_on_a_sleeping_lock_owner_waits_for_the_lock():
    """Rule CD1 (realworld-probe-cd case 2492, io_uring's async kworkers writing one file, all spinning
    on its i_rwsem): a work item whose stack ends in a mutex / rwsem owner spin (osq_lock,
    rwsem_spin_on_owner, mutex_spin_on_owner) waits for that lock, so kworker-storm leaves those
    samples to mutex-spinning; the workers' own work beside them stays kworker-storm's."""
    books = {b.id: b for b in load_all()}
    work = "ret_from_fork;kthread;worker_thread;process_one_work;iomap_dio_complete_work;xfs_dio_write_end_io;"
    spin = work + "xfs_iomap_write_unwritten;xfs_ilock;down_write;rwsem_down_write_slowpath;rwsem_optimistic_spin;osq_lock"
    own = work + "xfs_iomap_write_unwritten;xfs_bmapi_write"
    prof = profile((spin, 40, {"comm": "kworker/12:1"}), (own, 10, {"comm": "kworker/7:0"}))
    assert match_playbook(books["kworker-storm"], prof).matched == 10
    assert match_playbook(books["mutex-spinning"], prof).matched == 40


def test_rule_cd2_children_listing_identifies_the_lock_taker_by_its_children():
    """Rule CD2 (realworld-probe-cd case 2491, a --children listing of will-it-scale page_fault1 with
    large folios): the lruvec lock taker (folio_lruvec_lock_irqsave, 0.4 % Self, 49.7 % Children)
    identifies its path by its Children, which enclose the 48.7 % spin lock, so the lock is
    lru-lock-contention's and not memcg-charge's, whose counter row beside it weighs 2.6 %."""
    from flamediag.flatclaims import flat_claims
    books = [b for b in load_all() if b.id in ("lru-lock-contention", "memcg-charge")]
    prof = Profile(ancestry=False, percent_of=100.0)
    rows = (("native_queued_spin_lock_slowpath", 48.66, 48.66), ("folio_lruvec_lock_irqsave", 0.37, 49.71),
            ("folio_batch_move_lru", 1.42, 51.88), ("__mod_memcg_lruvec_state", 2.61, 2.61))
    for name, own, children in rows:
        prof.add([Frame(name, "kernel")], own, comm="page_fault1_pro")
        prof.through[("page_fault1_pro", name)] = children
    claims = flat_claims(books, prof)
    lock = next(r for r in prof if r.frames[0].name == "native_queued_spin_lock_slowpath")
    assert claims[id(lock)].playbooks == ("lru-lock-contention",)
    prof.through.clear()                      # the same rows without their Children: Self decides
    claims = flat_claims(books, prof)
    assert claims[id(lock)].playbooks == ("memcg-charge",)


def test_rule_ca2_kworker_inside_the_610_aes_xts_code_is_encrypting_not_a_storm():
    """Rule CA2 (realworld-probe-ca case 2459, dm-crypt's kcryptd workers in aes_xts_decrypt_vaes_avx10_256
    on 6.9/6.10): the 6.10+ x86 AES-XTS / AES-GCM / AES-CTR routines are kworker-storm's `io_data`, as
    the older aesni_* names are; a small row of them beside a worker's other work does not excuse it."""
    books = {b.id: b for b in load_all()}
    crypt = Profile(ancestry=False)
    for name, weight in (("aes_xts_decrypt_vaes_avx10_256", 31.0), ("xts_crypt", 4.1), ("crypt_convert", 2.9),
                         ("process_one_work", 0.8)):
        crypt.add([Frame(name, "kernel")], weight, comm="kworker/u33:2+k")
    assert match_playbook(books["kworker-storm"], crypt).matched == 0
    storm = Profile(ancestry=False)
    for name, weight in (("acpi_ps_parse_loop", 14.9), ("acpi_ex_system_io_space_handler", 11.4),
                         ("acpi_os_execute_deferred", 3.9), ("process_one_work", 2.2),
                         ("aes_xts_encrypt_vaes_avx2", 1.7)):
        storm.add([Frame(name, "kernel")], weight, comm="kworker/0:2+kac")
    assert match_playbook(books["kworker-storm"], storm).matched > 30


def test_rule_ce1_kworker_inside_software_aes_is_encrypting_not_a_storm():
    """Rule CE1 (realworld-probe-ce case 2503, dm-crypt's kcryptd workers on an Atom NAS without AES-NI,
    3.16, in aes_encrypt / xts_crypt / blkcipher_walk_next): the software AES code (the generic C
    aes_encrypt / crypto_aes_encrypt, the x86 assembly aes_enc_blk behind crypto_aes_encrypt_x86, arm's
    and arm64's scalar __aes_arm*_encrypt) and the XTS template's tweak and walk helpers are
    kworker-storm's `io_data`, as the AES-NI names are; a small row of them beside a worker's other
    work does not excuse it."""
    books = {b.id: b for b in load_all()}
    for cipher in ("aes_encrypt", "aes_enc_blk", "crypto_aes_decrypt", "__aes_arm64_encrypt"):
        crypt = Profile(ancestry=False)
        for name, weight in ((cipher, 38.1), ("xts_crypt", 4.3), ("gf128mul_x_ble", 0.6),
                             ("blkcipher_walk_next", 1.8), ("crypt_convert", 1.0), ("process_one_work", 0.4)):
            crypt.add([Frame(name, "kernel")], weight, comm="kworker/u4:1")
        assert match_playbook(books["kworker-storm"], crypt).matched == 0, cipher
    storm = Profile(ancestry=False)
    for name, weight in (("i915_read32", 16.8), ("gmbus_wait_hw_status", 12.1), ("drm_do_probe_ddc_edid", 9.6),
                         ("output_poll_execute", 5.9), ("process_one_work", 2.4), ("aes_encrypt", 1.9)):
        storm.add([Frame(name, "kernel")], weight, comm="kworker/0:1")
    assert match_playbook(books["kworker-storm"], storm).matched > 30


def test_rule_cq1_kworker_inside_the_gcm_template_and_ghash_is_authenticating_not_a_storm():
    """Rule CQ1 (realworld-probe-cq case 2679, the CephFS kernel client's ceph-msgr kworkers decrypting
    msgr2 secure-mode messages): AES-GCM's authentication half is kworker-storm's `io_data` as its AES
    half is: the GCM template (crypto_gcm_decrypt and its gcm_hash_* continuations) and the GHASH
    implementations under it (ghash-generic's ghash_update / gf128mul_4k_lle, x86 clmul_ghash_*, arm64
    pmull_ghash_update_*). A messenger loop that only runs one small GHASH stack stays a storm."""
    books = {b.id: b for b in load_all()}
    work = [Frame(n, "kernel") for n in ("ret_from_fork", "kthread", "worker_thread", "process_one_work",
                                         "ceph_con_workfn", "ceph_con_v2_try_read", "decrypt_tail_msg",
                                         "gcm_crypt", "crypto_aead_decrypt")]
    for ghash in (["crypto_gcm_decrypt", "gcm_hash", "gcm_hash_update", "ghash_update", "gf128mul_4k_lle"],
                  ["crypto_gcm_decrypt", "gcm_hash_crypt_continue", "ghash_update", "clmul_ghash_update"],
                  ["crypto_gcm_decrypt", "gcm_hash_update", "ghash_update", "pmull_ghash_update_p64"]):
        crypt = Profile()
        crypt.add(work + [Frame(n, "kernel") for n in ghash], 60.0, comm="kworker/u8:2")
        crypt.add(work[:4] + [Frame("ceph_con_workfn", "kernel"), Frame("tcp_recvmsg", "kernel")], 8.0,
                  comm="kworker/u8:1")
        assert match_playbook(books["kworker-storm"], crypt).matched == 0, ghash[-1]
    loop = Profile()
    loop.add(work[:5] + [Frame("con_fault", "kernel"), Frame("ceph_con_reset_session", "kernel")], 40.0,
             comm="kworker/u8:2")
    loop.add(work[:5] + [Frame("ceph_tcp_connect", "kernel"), Frame("sk_alloc", "kernel")], 25.0,
             comm="kworker/u8:1")
    loop.add(work + [Frame("crypto_gcm_decrypt", "kernel"), Frame("ghash_update", "kernel")], 2.0,
             comm="kworker/u8:1")
    assert match_playbook(books["kworker-storm"], loop).matched == 65.0


def test_rule_bv1_time_syscall_rows_count_weak_for_slow_clocksource():
    """Rule BV1 (realworld-probe-bv case 2387, a 4.10 Hyper-V guest whose TSC-page clocksource had no
    vDSO mode yet, pasted as perf top): in a flat listing the time system call's own rows
    (SyS_clock_gettime, posix_ktime_get_ts, SyS_gettimeofday) are the fallen-back vDSO's cost beside
    the clock read, so they count for slow-clocksource as its weak form; the clock read stays the
    strong form, a generic timekeeping row (ktime_get_ts64) counts for nothing, and call graphs keep
    matching by their patterns only."""
    books = {b.id: b for b in load_all()}
    flat = Profile(ancestry=False)
    for name, weight in (("read_hv_clock_tsc", 10.4), ("posix_ktime_get_ts", 3.4), ("SyS_clock_gettime", 2.9),
                         ("SyS_gettimeofday", 1.8), ("ktime_get_ts64", 3.1), ("entry_SYSCALL_64_fastpath", 6.9)):
        flat.add([Frame(name, "kernel")], weight)
    m = match_playbook(books["slow-clocksource"], flat)
    assert m.matched == pytest.approx(10.4 + 3.4 + 2.9 + 1.8) and m.strong == pytest.approx(10.4)
    # the rows alone (no clock read listed) are the weak form only
    rows = Profile(ancestry=False)
    rows.add([Frame("__x64_sys_clock_gettime", "kernel")], 2.2)
    rows.add([Frame("posix_cpu_clock_get", "kernel")], 3.6)
    m = match_playbook(books["slow-clocksource"], rows)
    assert m.matched == pytest.approx(2.2) and m.strong == 0
    graph = profile(("entry_SYSCALL_64;__x64_sys_clock_gettime;posix_ktime_get_ts", 5, {}), ancestry=True)
    assert match_playbook(books["slow-clocksource"], graph).matched == 0


def test_rule_cb1_power_tce_table_lock_is_iommu_map():
    """Rule CB1 (realworld-probe-bv case 2390, a POWER7 LPAR whose multiqueue 10GbE adapter's queues
    serialised on the one TCE table lock before 3.7's IOMMU pools): POWER's DMA ops and TCE-table
    allocator (dma_iommu_map_page -> iommu_map_page -> iommu_alloc, iommu_free, iommu_range_alloc)
    and its TCE writes (tce_buildmulti_pSeriesLP) are iommu-map's frames, and a spin lock taken under
    iommu_alloc / iommu_free is the table's lock: iommu-map's, not the spin-lock fallback's or the NIC
    poll's, as the x86 IOVA lock under alloc_iova is. The same lock under a caller outside the IOMMU
    code stays the fallback's."""
    books = {b.id: b for b in load_all()}
    prof = profile(("sch_direct_xmit;dev_hard_start_xmit;be_xmit;dma_iommu_map_page;iommu_map_page;iommu_alloc;"
                    "_raw_spin_lock_irqsave", 58, {}),
                   ("__do_softirq;net_rx_action;be_poll;be_tx_compl_process;dma_iommu_unmap_page;iommu_free;"
                    "_raw_spin_lock_irqsave", 42, {"context": "softirq"}),
                   ("be_xmit;dma_iommu_map_page;iommu_map_page;tce_buildmulti_pSeriesLP", 5, {}))
    assert match_playbook(books["iommu-map"], prof).matched == pytest.approx(105)
    assert match_playbook(books["spinlock-contention"], prof).matched == 0
    assert match_playbook(books["nic-softirq"], prof).matched == 0
    other = profile(("sch_direct_xmit;__qdisc_run;_raw_spin_lock_irqsave", 50, {}))
    assert match_playbook(books["iommu-map"], other).matched == 0
    assert match_playbook(books["spinlock-contention"], other).matched == pytest.approx(50)


def test_rule_cc3_amd_gpio_handler_body_is_the_demux_of_its_lines():
    """Rule CC3 (realworld-probe-cc case 2472, the AMD GPIO pin left enabled after resume, as a flat
    perf top): since late 2021 (5.15-5.16) amd_gpio_irq_handler wraps do_amd_gpio_irq_handler, which
    the s2idle wake check calls too, so a flat profile lists the handler's time under the body's name;
    listed beside a flow handler it is the controller's interrupt work (rule AD3's demux), irq-storm's.
    Alone, without a flow handler beside it, it is not claimed."""
    books = {b.id: b for b in load_all()}
    storm = profile(("do_amd_gpio_irq_handler", 31, {}), ("__handle_irq_event_percpu", 12, {}),
                    ("handle_fasteoi_irq", 3, {}), ("firefox_main", 10, {}), ancestry=False)
    assert match_playbook(books["irq-storm"], storm).matched == pytest.approx(31 + 12)
    alone = profile(("do_amd_gpio_irq_handler", 31, {}), ("firefox_main", 10, {}), ancestry=False)
    assert match_playbook(books["irq-storm"], alone).matched == 0



def test_rule_ch1_port_table_bucket_locks_inside_net_rx_are_lock_contention():
    """Rule CH1 (realworld-probe-ch case 2541, tens of thousands of sockets bound to one port on
    distinct addresses, the bind-conflict walk that the bhash2 table shortened): the TCP bind hash
    bucket lock is shared by every CPU; inet_csk_get_port walks the bucket's owners under it in bind()
    and the receive softirq takes it in __inet_inherit_port for each accepted child, so spinning on a
    lock those functions (or the listening / established / UDP port hashes' own functions) take
    directly is contention on the port table (rule A9), not one CPU's receive work. The look-alike:
    a lock tcp_v4_rcv takes itself (one socket's own lock) stays the receive work of nic-softirq."""
    books = {b.id: b for b in load_all()}
    rx = "secondary_startup_64;cpu_startup_entry;do_idle;__do_softirq;net_rx_action;__napi_poll;process_backlog;" \
         "__netif_receive_skb_one_core;ipv6_rcv;ip6_input;ip6_protocol_deliver_rcu;tcp_v6_rcv;tcp_check_req;" \
         "tcp_v6_syn_recv_sock;"
    prof = profile((rx + "__inet_inherit_port;_raw_spin_lock;native_queued_spin_lock_slowpath", 30,
                    {"comm": "swapper/42", "context": "softirq"}),
                   ("entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_bind;__sys_bind;inet6_bind;"
                    "inet_csk_get_port;_raw_spin_lock_bh;native_queued_spin_lock_slowpath", 20, {"comm": "svc"}),
                   ("entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_bind;__sys_bind;inet_bind;"
                    "udp_lib_get_port;_raw_spin_lock_bh", 5, {"comm": "svc"}))
    assert lock_and_receive_work(books, prof) == (55, 0)
    own = profile(("ret_from_fork;kthread;run_ksoftirqd;__do_softirq;net_rx_action;ixgbe_poll;ixgbe_clean_rx_irq;"
                   "napi_gro_receive;__netif_receive_skb_core;ip_rcv;ip_local_deliver;tcp_v4_rcv;_raw_spin_lock",
                   8, {"comm": "ksoftirqd/0"}))
    assert lock_and_receive_work(books, own) == (0, 8)


def test_rule_ch2_interrupts_outweighing_the_receive_softirq_they_raise_are_irq_storm():
    """Rule CH2 (realworld-probe-ch case 2555, an out-of-tree igb with InterruptThrottleRate=0 and
    every queue vector on CPU 0, as a flat `perf report -C 0`): a flat listing shows the receive
    softirq the NIC's interrupts raise beside their hardirq entries; irq-storm's [net_rx] exclusion
    (`exclude_weighed`) takes the command only when net_rx_action weighs at least as much as the
    interrupt path's identifying frames. With NAPI batching the receive work outweighs the interrupts
    and nic-softirq keeps the listing (the look-alike); one interrupt a packet outweighs it."""
    books = {b.id: b for b in load_all()}
    storm = profile(("handle_edge_irq", 11.2, {"comm": "swapper"}), ("handle_irq_event_percpu", 4.8, {"comm": "swapper"}),
                    ("do_IRQ", 9.6, {"comm": "swapper"}), ("net_rx_action", 2.9, {"comm": "swapper"}),
                    ("igb_poll", 6.3, {"comm": "swapper"}), ancestry=False)
    assert match_playbook(books["irq-storm"], storm).matched == pytest.approx(4.8 + 9.6)
    napi = profile(("handle_edge_irq", 0.6, {"comm": "swapper"}), ("handle_irq_event_percpu", 0.4, {"comm": "swapper"}),
                   ("do_IRQ", 0.9, {"comm": "swapper"}), ("net_rx_action", 3.1, {"comm": "swapper"}),
                   ("ixgbe_clean_rx_irq", 21.0, {"comm": "swapper"}), ancestry=False)
    assert match_playbook(books["irq-storm"], napi).matched == 0
    assert match_playbook(books["nic-softirq"], napi).matched > 20


def test_rule_ch3_nic_hardirq_handlers_beside_a_flow_handler_are_the_vectors_interrupts():
    """Rule CH3 (realworld-probe-ch case 2555: igb_msix_ring at 15 % of CPU 0 beside handle_edge_irq):
    a NIC driver's own hardirq handler (per-queue MSI-X vector or legacy INTx/MSI handler) runs only in
    its vector's hardirq and schedules the NAPI poll, so listed beside a flow handler its time is that
    vector's interrupts (irq-storm claims it, like the entry code and rule BI1's host-controller
    handlers). Alone, without a flow handler or the interrupt path identified, it is not claimed."""
    books = {b.id: b for b in load_all()}
    storm = profile(("igb_msix_ring", 14.7, {}), ("handle_edge_irq", 11.2, {}), ("handle_irq_event_percpu", 4.8, {}),
                    ("md5_transform", 20.0, {}), ancestry=False)
    assert match_playbook(books["irq-storm"], storm).matched == pytest.approx(14.7 + 4.8)
    alone = profile(("ixgbe_msix_clean_rings", 3.0, {}), ("md5_transform", 20.0, {}), ancestry=False)
    assert match_playbook(books["irq-storm"], alone).matched == 0


def test_rule_cm1_gpu_hardirq_handlers_beside_a_flow_handler_are_the_lines_interrupts():
    """Rule CM1 (realworld-probe-cm case 2618: amdgpu's IH ring processing led a laptop's listing
    after resume, amdgpu_ih_process at 18 % beside handle_edge_irq): a GPU driver's own hardirq
    handler and the interrupt-ring processing it does in that hardirq (amdgpu, radeon, i915, nouveau,
    NVIDIA) run only in the hardirq of the GPU's line, so listed beside a flow handler their time is
    that line's interrupts (irq-storm claims them, like rule CH3's NIC vector handlers). Alone, without
    a flow handler or the interrupt path identified, they are not claimed."""
    books = {b.id: b for b in load_all()}
    storm = profile(("amdgpu_ih_process", 18.4, {}), ("amdgpu_irq_dispatch", 11.0, {}),
                    ("amdgpu_irq_handler", 7.8, {}), ("handle_edge_irq", 3.7, {}),
                    ("__handle_irq_event_percpu", 5.4, {}), ("gnome_shell_main", 20.0, {}), ancestry=False)
    assert match_playbook(books["irq-storm"], storm).matched == pytest.approx(18.4 + 11.0 + 7.8 + 5.4)
    alone = profile(("amdgpu_ih_process", 3.0, {}), ("gen11_irq_handler", 2.0, {}), ("game_main", 20.0, {}),
                    ancestry=False)
    assert match_playbook(books["irq-storm"], alone).matched == 0


def test_rule_cu1_rcu_callbacks_named_by_the_kernels_convention_are_rcu_batch_work():
    """Rule CU1 (realworld-probe-cu case 2749: a 2.6.29 firewall freeing one conntrack per call_rcu,
    opreport with nf_conntrack_free_rcu at 7 % beside __rcu_process_callbacks): a playbook's
    `frame_names` expression adds every kernel frame of the profile that follows a naming convention
    to a frame set. RCU callbacks are named after the object they free (`<object>_free_rcu`,
    `free_<object>_rcu`, `put_<object>_rcu`, `<object>_rcu_free`, `rcu_free_<object>`), so such a
    row counts as rcu-callback-flood's batch work although the playbook lists only a few of them.
    User-space RCU callbacks (liburcu) follow the same convention and do not count; neither does a
    name that merely contains `rcu` (`call_rcu`, `synchronize_rcu`, `kfree_call_rcu`)."""
    books = {b.id: b for b in load_all()}
    rcu = books["rcu-callback-flood"]
    named = profile(("nf_conntrack_free_rcu", 7.0, {}), ("free_fib_info_rcu", 3.0, {}),
                    ("rcu_free_slab", 2.0, {}), ("firewall_work", 20.0, {}), ancestry=False)
    assert match_playbook(rcu, named).matched == 0          # match_playbook alone: the listed names only
    assert {m.playbook.id: m.matched for m in match_all([rcu], named)}["rcu-callback-flood"] == pytest.approx(12.0)
    others = profile(("call_rcu", 7.0, {}), ("synchronize_rcu", 3.0, {}), ("kfree_call_rcu", 2.0, {}),
                     ("firewall_work", 20.0, {}), ancestry=False)
    assert match_all([rcu], others)[0].matched == 0
    user = Profile(ancestry=False)
    user.add([Frame("zone_contents_free_rcu", "user")], 9.0)
    user.add([Frame("udp_recvmsg", "kernel")], 7.0)
    assert match_all([rcu], user)[0].matched == 0
    with pytest.raises(Exception, match="frame_names"):
        parse_playbook(rcu_playbook_text().replace("rcu_free_\\\\w+\"", "rcu_free_\\\\w+|zzz\"")
                       .replace("sk_filter_release_rcu]\n\nframe_names", "sk_filter_release_rcu, call_rcu]\n\nframe_names"),
                       "rcu-callback-flood.md")


def rcu_playbook_text():
    from pathlib import Path
    return (Path(__file__).resolve().parents[2] / "playbooks" / "rcu-callback-flood.md").read_text(encoding="utf-8")
def test_rule_cv1_a_stateful_ruleset_beside_a_busier_nic_poll_is_receive_work():
    """Rule CV1 (realworld-probe-cv case 2778, an x86 router whose single-queue r8169 ports put all
    forwarding on CPU 0, its ordinary stateful firewall's nft_do_chain at 7 % beside the NIC poll and
    GRO): every forwarding host evaluates its ruleset per packet inside the receive softirq, so in a
    flat listing nic-softirq's [ruleset_eval] exclusion (rule AX4) is weighed (`exclude_weighed`): it
    takes the command only when the ruleset's frames weigh at least as much as the NIC's identifying
    frames. A long linear ruleset that outweighs the receive work stays the ruleset's (the look-alike)."""
    books = {b.id: b for b in load_all()}
    rows = (("rtl8169_poll", 13.8), ("nft_do_chain", 8.1), ("dev_gro_receive", 6.4), ("napi_gro_receive", 3.4),
            ("net_rx_action", 2.0), ("ip_forward", 3.1))
    router = profile(*((name, w, {"comm": "ksoftirqd/0"}) for name, w in rows), ancestry=False)
    # the softirq thread's rows go to the playbook whose frames identify it, the firewall's with them
    assert match_playbook(books["nic-softirq"], router).matched == pytest.approx(sum(w for _, w in rows))
    rows = (("nft_do_chain", 19.2), ("rtl8169_poll", 10.4), ("nft_payload_eval", 6.1), ("dev_gro_receive", 5.5),
            ("nft_cmp_eval", 4.7), ("napi_gro_receive", 3.0), ("net_rx_action", 1.8))
    blocklist = profile(*((name, w, {"comm": "ksoftirqd/0"}) for name, w in rows), ancestry=False)
    assert match_playbook(books["nic-softirq"], blocklist).matched == 0
