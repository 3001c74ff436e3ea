"""read_paste on what tickets of the 2.6 era hold: OProfile's opreport and readprofile, the kernel
trace spellings of 2.6.9-2.6.32, plus perf's `--header` preamble and `-g folded` chains pasted
alone. A paste with frame-like lines never ends in "no stacks found". Fixtures are named after
their quirk (test/fixtures/paste/README.md)."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "test" / "python"))

from flamediag.errors import UserError  # noqa: E402
from flamediag.paste import read_paste  # noqa: E402
from flamediag.paste.oprofile import is_kernel_image  # noqa: E402
from paste_helpers import ordered, paste, read_in_subprocess  # noqa: E402

# The two lines a RHEL 4/5 ticket quoted: opreport -l's header and its top row.
OPREPORT_TOP = ("samples  %        image name               app name                 symbol name\n"
                "2345678  41.2345  vmlinux                  vmlinux                  .text.lock.spinlock\n")


def by_leaf(result) -> Counter:
    weights: Counter = Counter()
    for record in result.profile:
        weights[record.names()[-1]] += record.weight
    return weights


# --- OProfile ----------------------------------------------------------------------------------

def test_opreport_header_and_one_row_is_read_with_its_sample_count():
    result = read_paste(OPREPORT_TOP)
    assert result.formats == ["oprofile"]
    (record,) = list(result.profile)
    assert (record.names(), record.frames[-1].kind, record.weight) == ((".text.lock.spinlock",), "kernel", 2345678)
    assert result.profile.percent_of == pytest.approx(2345678 * 100 / 41.2345)   # what the 41 % is of
    assert not result.profile.ancestry


def test_opreport_image_and_app_columns_give_kind_and_command():
    result = paste("hand-oprofile-opreport-l-image-app-text-lock-spinlock-rhel5.txt")
    records = {r.names()[-1]: r for r in result.profile}
    assert records[".text.lock.spinlock"].frames[-1].kind == "kernel"
    assert records["ext3_get_acl"].frames[-1].kind == "kernel"          # a module image (ext3.ko)
    assert records["kcbgtcr"].frames[-1].kind == "user"                 # the oracle binary
    assert records["memcpy"].comm == "oracle" and records["kcbgtcr"].comm == ""   # app == image: unknown
    assert records["copy_user_generic"].weight == 12                    # 2.1e-04 %, still its count
    assert dict(result.profile.events) == {"CPU_CLK_UNHALTED": 1}


@pytest.mark.parametrize("image,kernel", [
    ("vmlinux", True), ("vmlinux-2.6.18-194.el5", True), ("/usr/lib/debug/lib/modules/2.6.9-89.ELsmp/vmlinux", True),
    ("no-vmlinux", True), ("ext3.ko", True), ("/lib/modules/2.6.18-194.el5/kernel/fs/ext3/ext3.ko", True),
    ("oracle", False), ("libc-2.5.so", False), ("/usr/java/jdk1.6.0_31/jre/lib/amd64/server/libjvm.so", False),
])
def test_kernel_images(image, kernel):
    assert is_kernel_image(image) is kernel


def test_opreport_two_events_weighs_by_the_first():
    result = paste("hand-oprofile-opreport-l-two-event-columns-compaction-rhel6.txt")
    assert by_leaf(result)["compaction_alloc"] == 912345                # not the LLC_MISSES 3210
    assert result.profile.percent_of == pytest.approx(2201234, rel=1e-5)


def test_opreport_separate_cpu_counts_each_row_on_its_cpu():
    result = paste("hand-oprofile-opreport-l-separate-cpu-columns-futex-rhel5.txt")
    on_cpu = Counter()
    for record in result.profile:
        on_cpu[(record.names()[-1], record.cpu)] += record.weight
    assert on_cpu[(".text.lock.spinlock", 0)] == 201234 and on_cpu[(".text.lock.spinlock", 3)] == 9
    assert on_cpu[("default_idle", 2)] == 12345 and ("default_idle", 0) not in on_cpu     # 0 samples: no stack


def test_opreport_linenr_column_and_no_location():
    leaves = by_leaf(paste("hand-oprofile-opreport-lg-linenr-info-zone-reclaim-rhel5.txt"))
    assert leaves["zone_reclaim"] == 154321 and leaves["ksliwat"] == 98765


def test_opreport_right_aligned_counts_are_symbol_rows_rule_f1():
    """Rule F1 (probe-f case 1046): without dashed rules an indent that right-aligns the samples
    column is alignment, not a call-graph callee; `.text.lock.futex` is futex.c's lock spin."""
    leaves = by_leaf(paste("hand-opreport-l-right-aligned-counts-text-lock-futex-rhel5.txt"))
    assert leaves[".text.lock.futex"] == 930112 and leaves["futex_wake"] == 402277
    assert leaves["__lll_mutex_lock_wait"] == 40118
    nested = read_paste("samples  %        symbol name\n"
                        "2345678  41.2345  .text.lock.spinlock\n"
                        "  12345     0.5000  shrink_zone\n")
    assert [r.names()[-1] for r in nested.profile] == [".text.lock.spinlock"]   # shifted: not a row


def test_opreport_callgraph_splits_a_function_over_its_callers():
    result = paste("hand-oprofile-opreport-callgraph-callers-self-zone-reclaim-rhel5.txt")
    stacks = {r.names(): r.weight for r in result.profile}
    spin = 1205357
    assert stacks[("shrink_zone", ".text.lock.spinlock")] == pytest.approx(spin * 812345 / (812345 + 393012))
    assert stacks[("zone_reclaim", ".text.lock.spinlock")] == pytest.approx(spin * 393012 / (812345 + 393012))
    assert stacks[("zone_reclaim", "shrink_zone")] == 402345            # [self] and callees add nothing
    assert not result.profile.ancestry                                  # one level of callers is no chain


def test_opreport_callgraph_right_aligned_counts_function_is_the_row_shifted_least_rule_k3():
    """Rule K3 (realworld-probe-k case 1167): a retyped `opreport -c` with right-aligned counts
    indents every row; the function of a block is the row whose percentage ends leftmost."""
    result = paste("hand-opreport-c-right-aligned-counts-shrink-active-list-direct-reclaim.txt")
    stacks = {r.names(): r.weight for r in result.profile}
    assert stacks[("shrink_active_list", "page_referenced_one")] == 1320875
    assert stacks[("shrink_zone", "shrink_active_list")] == 655210
    assert stacks[("try_to_free_pages", "shrink_zone")] == 512291
    assert stacks[("__alloc_pages", "try_to_free_pages")] == 301122


def test_text_lock_section_of_any_file_is_a_spin_lock_spin_rule_k1():
    """Rule K1 (realworld-probe-k case 1173): `.text.lock.<file>` is the out-of-line spin of a lock
    taken inline in <file>.c; the report keeps its name, signatures read it as the generic spin."""
    from flamediag.kernelnames import identity
    result = paste("hand-opreport-l-rhel5-text-lock-kernel-lock-bkl-fcntl-spinlock.txt")
    assert by_leaf(result)[".text.lock.kernel_lock"] == 602113
    assert identity(".text.lock.kernel_lock") == ".text.lock.spinlock"
    assert identity(".text.lock.futex") == ".text.lock.futex"          # futex-contention names it


def test_sysstat7_mpstat_user_header_is_mpstat_rule_k2():
    """Rule K2 (realworld-probe-k case 1169): sysstat 5-8 head the user column `%user`."""
    from flamediag.facts import build_facts_from_sections
    result = paste("hand-mpstat-sysstat7-user-header-opreport-e1000-one-cpu-nic-softirq.txt")
    assert "mpstat" in result.sections
    facts = build_facts_from_sections(result.sections)
    assert facts.get("mpstat.soft_pct.max") == pytest.approx(87.0)


def test_systemtap_timer_profile_counts_are_samples_only_below_a_sampling_probe_rule_k4():
    """Rule K4 (realworld-probe-k case 1168): `function count` rows below a stap command that
    probes timer.profile are a flat profile; below a call-counting script they are not CPU time."""
    result = paste("hand-systemtap-timer-profile-probefunc-counts-read-hpet-slow-clocksource.txt")
    assert result.formats == ["systemtap-profile"]
    leaves = by_leaf(result)
    assert leaves["read_hpet"] == 38110 and leaves["_spin_lock"] == 601
    assert all(r.frames[-1].kind == "kernel" for r in result.profile)          # `!user_mode()` samples
    calls = ("# stap -e 'global c; probe kernel.function(\"vfs_*\") { c[probefunc()]++ }\n"
             "    probe timer.s(5) { foreach (f in c- limit 3) printf(\"%-20s %d\\n\", f, c[f]); exit() }'\n"
             "vfs_read             41872\nvfs_write             3391\nvfs_getattr           2210\n")
    with pytest.raises(UserError):
        read_paste(calls)


def test_opcontrol_and_operf_lines_belong_to_the_report():
    timer = paste("hand-opcontrol-session-opreport-l-vmlinux-only-timer-mode-rhel4.txt")
    assert timer.skipped_lines == 2                                     # only the fixture's own two lines
    assert dict(timer.profile.events) == {"timer": 1}
    assert all(r.frames[-1].kind == "kernel" for r in timer.profile)    # `opreport -l .../vmlinux`
    operf = paste("hand-operf-session-opreport-l-modules-no-symbols-el7.txt")
    assert operf.skipped_lines == 3
    assert "(no symbols)" not in by_leaf(operf) and by_leaf(operf)["xfs_perag_get"] == 154321


def test_timer_mode_samples_a_halted_cpu_in_the_idle_loop():
    result = paste("hand-opcontrol-session-opreport-l-vmlinux-only-timer-mode-rhel4.txt")
    result.profile.note_timer_event()
    assert all(record.timer_sampled for record in result.profile)


# --- readprofile -------------------------------------------------------------------------------

def test_readprofile_weighs_ticks_of_the_total():
    result = paste("hand-readprofile-sort-nr-text-lock-spinlock-rhel4.txt")
    assert result.formats == ["readprofile"] and result.skipped_lines == 3
    assert "total" not in by_leaf(result) and by_leaf(result)[".text.lock.spinlock"] == 1843
    assert result.profile.percent_of == 8386
    verbose = paste("hand-readprofile-v-addresses-futex-rhel6.txt")
    assert by_leaf(verbose)["_spin_lock"] == 3412 and verbose.profile.percent_of is None


def test_a_prose_line_with_numbers_is_not_readprofile():
    with pytest.raises(Exception, match="no stacks found"):
        read_paste("We saw 12 spikes in 3.5000 hours\n")


# --- the last resort ---------------------------------------------------------------------------

def test_rows_ending_in_a_kernel_symbol_are_read_with_their_counts():
    result = paste("unrecognised-layout-profiler-rows-symbol-last-text-lock.txt")
    assert result.formats == ["unrecognised-layout"]
    assert by_leaf(result) == {".text.lock.spinlock": 2345678, "find_get_page": 412345,
                               "__find_get_block": 198765, "radix_tree_lookup": 154321}
    assert any(note.startswith("layout not recognised") for note in result.notes)


def test_the_quoted_row_alone_is_read_by_the_last_resort():
    result = read_paste(OPREPORT_TOP.splitlines()[1])
    assert by_leaf(result) == {".text.lock.spinlock": 2345678}


# --- perf --------------------------------------------------------------------------------------

def test_perf_report_header_preamble_is_part_of_the_report():
    result = paste("real-perf61-report-header-sort-sym-g-none.txt")
    assert result.formats == ["perf-report-flat"] and result.skipped_lines == 0
    assert dict(result.profile.events) == {"cpu-clock:ppp": 1000}


def test_header_event_names_the_event_when_no_banner_does():
    text = ("# ========\n# captured on    : Tue Nov 24 02:47:46 2026\n"
            "# event : name = cpu-clock:ppp, , id = { 26322, 26323 }, type = 1, size = 128\n"
            "# event : name = dummy:HG, , id = { 26324, 26325 }, type = 1, size = 128\n# ========\n#\n"
            "# Overhead  Symbol\n#\n    41.23%  [k] _raw_spin_lock\n")
    assert dict(read_paste(text).profile.events) == {"cpu-clock:ppp": 1}


def test_perf_top_tui_snapshot_without_graphs():
    """`perf top -E 3` (4.x-6.x TUI, no -g): the header with `Event count (approx.)` gives the samples."""
    text = ("Samples: 12K of event 'cycles', 4000 Hz, Event count (approx.): 3084750000 lost: 0/0 drop: 0/0\n"
            "Overhead  Shared Object       Symbol\n"
            "  41.23%  [kernel]            [k] native_queued_spin_lock_slowpath\n"
            "   7.46%  [kernel]            [k] clear_page_erms\n"
            "   3.10%  libc-2.17.so        [.] __memcpy_ssse3_back\n")
    result = read_paste(text)
    assert result.formats == ["perf-top"] and result.profile.percent_of == 12000
    assert by_leaf(result)["native_queued_spin_lock_slowpath"] == pytest.approx(4947.6)
    assert dict(result.profile.events) == {"cycles": 12000}


def test_folded_chains_without_their_entries():
    result = paste("grepped-perf61-report-g-folded-chains-futex.txt")
    assert result.formats == ["perf-report-callgraph"] and result.profile.ancestry
    (wake,) = [r for r in result.profile if r.names()[-1] == "_raw_spin_unlock_irqrestore"]
    assert wake.weight == pytest.approx(22.23)
    assert ordered(wake.names(), "syscall", "do_syscall_64", "futex_wake", "try_to_wake_up")


# --- kernel traces of 2.6.x --------------------------------------------------------------------

def test_sysrq_show_cpus_of_2618_drops_the_ipi_and_reads_lock_sections():
    result = paste("hand-sysrq-l-show-cpus-ipi-text-lock-futex-rhel5.txt")
    assert result.formats == ["sysrq-l"]
    stacks = {r.cpu: r.names() for r in result.profile}
    assert set(stacks) == {1, 2, 3}
    assert stacks[2][-2:] == ("futex_wake", ".text.lock.spinlock")      # showacpu's IPI frames dropped
    assert ordered(stacks[3], "ext3_dirty_inode", "journal_start", "start_this_handle")   # `:jbd:` prefix gone


def test_eoe_closes_the_nmi_stack_of_2632():
    result = paste("hand-sysrq-l-nmi-eoe-zone-reclaim-rhel6.txt")
    assert result.formats == ["sysrq-l"]
    for record in result.profile:
        assert ordered(record.names(), "system_call_fastpath", "zone_reclaim", "shrink_inactive_list", "_spin_lock_irq")
        assert "do_nmi" not in record.names()


def test_269_brace_frames_several_to_a_line():
    (record,) = list(paste("hand-nmi-watchdog-lockup-brace-frames-direct-reclaim-rhel4.txt").profile)
    assert (record.comm, record.cpu) == ("oracle", 3)
    assert record.names() == ("system_call", "__pollwait", "__get_free_pages", "__alloc_pages", "try_to_free_pages",
                              "shrink_caches", "shrink_zone", "shrink_cache", ".text.lock.spinlock")


def test_proc_stack_terminator_ends_each_dump():
    result = paste("hand-proc-stack-old-terminator-zone-reclaim-rhel6.txt")
    assert result.formats == ["proc-stack"] and result.skipped_lines == 3
    (record,) = list(result.profile)                                    # the two identical dumps add up
    assert record.weight == 2 and record.names()[-1] == "_spin_lock_irq"


# --- SystemTap and crash bt of 2.6.18 (probe cases 329, 330) -----------------------------------

STAP_STACK = (" 0xffffffff8116a9a6 : memcmp_pages+0x56/0x80 [kernel]\n"
              " 0xffffffff8116bfb7 : ksm_scan_thread+0x47/0xe0 [kernel]\n"
              " 0xffffffffa03ad8b6 : vmx_vcpu_run+0x4e6/0x700 [kvm_intel]\n"
              " 0x00000039c8a0e4e4 : __lll_lock_wait+0x24/0x40 [/lib64/libpthread-2.12.so]\n")


def test_systemtap_stacks_take_the_count_printed_after_them():
    result = read_paste("Pass 5: starting run.\n" + STAP_STACK + "\t812\n" + STAP_STACK + "\t3\n")
    assert result.formats == ["systemtap"]
    (record,) = list(result.profile)                                    # identical stacks add up
    assert record.weight == 815
    assert record.names() == ("__lll_lock_wait", "vmx_vcpu_run", "ksm_scan_thread", "memcmp_pages")
    assert [f.kind for f in record.frames] == ["user", "kernel", "kernel", "kernel"]   # a path: user


def test_systemtap_inexact_frames_are_frames():
    text = STAP_STACK.replace("[kernel]\n", "[kernel] (inexact)\n", 1)
    (record,) = list(read_paste(text + "\t5\n").profile)
    assert record.names()[-1] == "memcmp_pages" and record.weight == 5


def test_systemtap_counts_printed_before_their_stacks():
    """Probe case 329: `printf("%d\\n", @count(s[bt])); print_stack(bt)`."""
    other = STAP_STACK.replace("memcmp_pages+0x56/0x80", "calc_checksum+0x34/0x50")
    result = read_paste("11873\n" + STAP_STACK + "6021\n" + other)
    assert by_leaf(result) == {"memcmp_pages": 11873, "calc_checksum": 6021}


def test_crash_bt_2618_text_lock_frames_and_via():
    """Probe case 330: `.text.lock.spinlock at ... (via _spin_lock)`: _spin_lock jumped into the
    lock loop, so it is the frame between; the exception RIP is not repeated."""
    result = paste("hand-crash-bt-a-rhel5-text-lock-via-futex.txt")
    assert result.formats == ["crash-bt"]
    stacks = {r.cpu: r.names() for r in result.profile}
    assert stacks[0] == ("system_call", "tracesys", "sys_futex", "do_futex", "futex_wake", "_spin_lock",
                         ".text.lock.spinlock")
    assert set(stacks) == {0, 1, 2}                                     # equally long lines: not a hard wrap


def test_2618_soft_lockup_tick_frames_are_the_reporter():
    """Rule 27: kernel/softlockup.c (2.6.18-2.6.35) dumps the stack from the timer tick, so its own
    frames (softlockup_tick, update_process_times, ... apic_timer_interrupt) sit at the leaf end."""
    result = paste("hand-soft-lockup-rhel5-softlockup-tick-text-lock-futex.txt")
    stacks = {r.cpu: r.names() for r in result.profile}
    assert stacks == {3: ("tracesys", "sys_futex", "do_futex", "futex_wake", ".text.lock.spinlock"),
                      5: ("tracesys", "sys_futex", "do_futex", "futex_wait", ".text.lock.spinlock")}
    assert result.skipped_lines == 0                                   # `CPU 3:` belongs to the trace


def test_310_rcu_stall_tick_frames_are_the_reporter():
    """Rule 27: 3.x-4.x print a self-detected RCU stall from the tick, without an inline RIP."""
    (record,) = list(paste("hand-rcu-stall-rhel7-tick-dump-zone-reclaim.txt").profile)
    assert record.comm == "postgres" and record.names()[-1] == "shrink_inactive_list"
    assert not {"rcu_check_callbacks", "dump_cpu_task", "update_process_times"} & set(record.names())


def test_interrupt_above_an_inline_rip_is_the_leaf_end_of_one_stack():
    """Rule A5 (realworld-probe-a case 711): a hard LOCKUP's register dump names the leaf before
    `Call Trace:`; the <IRQ> frames down to the inline RIP hold no detector's frame, so they are the
    bandwidth timer running on top of the interrupted read(), not a reporter to drop."""
    (record,) = list(paste("hand-dmesg-hard-lockup-cfs-bandwidth-timer-irq-above-inline-rip-419.txt").profile)
    names = record.names()
    assert record.comm == "java" and record.cpu == 7                   # `Kdump: loaded` is not the comm
    assert names[0] == "entry_SYSCALL_64_after_hwframe" and names[-1] == "distribute_cfs_runtime"
    assert names.index("copy_user_enhanced_fast_string") < names.index("sched_cfs_period_timer")
    # the look-alike: tick and RCU stall frames above an inline RIP are still the reporter
    stall = read_paste("[  1.0] rcu: INFO: rcu_sched self-detected stall on CPU\n"
                       "[  1.0] Call Trace:\n[  1.0]  <IRQ>\n[  1.0]  rcu_dump_cpu_stacks+0x9/0x1\n"
                       "[  1.0]  rcu_sched_clock_irq+0x9/0x1\n[  1.0]  update_process_times+0x9/0x1\n"
                       "[  1.0]  </IRQ>\n[  1.0] RIP: 0010:shrink_page_list+0x9/0x1\n"
                       "[  1.0]  shrink_inactive_list+0x9/0x1\n[  1.0]  kswapd+0x9/0x1\n")
    (record,) = list(stall.profile)
    assert record.names() == ("kswapd", "shrink_inactive_list", "shrink_page_list")


def test_task_dump_keeps_running_tasks_and_leaves_sleepers_out():
    """Rule 20 (probe case 324): a task line's state letter says whether it ran; only `R` is CPU time."""
    text = ("java          R  running task        0  8812      1 0x00000080\n"
            "Call Trace:\n"
            " [<ffffffff8150cfde>] _spin_lock+0x1e/0x30\n"
            " [<ffffffff810aeec0>] futex_wake+0x10c/0x140\n"
            "java          S 0000000000000003     0  8813      1 0x00000080\n"
            "Call Trace:\n"
            " [<ffffffff810ae3ac>] futex_wait_queue_me+0xbc/0xf0\n"
            " [<ffffffff810aeec0>] futex_wait+0x1c0/0x310\n")
    result = read_paste(text)
    assert [r.names()[-1] for r in result.profile] == ["_spin_lock"]
    assert not result.profile.not_cpu
    assert read_paste(text.replace(" R  running task       ", " D 0000000000000005")).profile.not_cpu


# --- one pass over long runs -------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "samples  %        symbol name\n" * 20000,                          # headers without rows
    "CPU: Core 2, speed 2394 MHz (estimated)\n" * 20000 + "x\n",
    "Daemon started.\n" * 20000,
    "   12 total  0.0046\n" * 20000,                                    # readprofile rows without a function
    "2345678  41.2345  vmlinux  vmlinux  x\n" * 20000,                  # a table without a symbol
    "samples  %        symbol name\n" + ("1  2" + " " * 100000 + "x y\n") * 3,   # long whitespace in a row
])
def test_long_runs_of_era_lines_are_read_in_one_pass(text, tmp_path):
    done = read_in_subprocess(text, tmp_path)
    assert done.returncode == 0, done.stderr
