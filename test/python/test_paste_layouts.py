"""read_paste on the layouts tickets really carry: quoting, mail wrapping, TUI screens, extra
columns, other tools' stack formats, several profiles in one paste, off-CPU data, and the
last-resort reader. Each fixture is named after its quirk (test/fixtures/paste/README.md)."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))
sys.path.insert(0, str(ROOT / "test" / "python"))

from flamediag.cli import UserError  # noqa: E402
from flamediag.paste import read_paste  # noqa: E402
from flamediag.paste.rewrap import rejoin  # noqa: E402
from paste_helpers import ordered, paste, read_in_subprocess  # noqa: E402

REALWORLD = ROOT / "test" / "fixtures" / "realworld"
FIXTURES = ROOT / "test" / "fixtures" / "paste"


def reading(result):
    """What a reading amounts to: weight per (frames, comm, cpu)."""
    weights: Counter = Counter()
    for record in result.profile:
        weights[(record.names(), record.comm, record.cpu)] += round(record.weight, 6)
    return weights


def leaf_weights(result) -> Counter:
    weights: Counter = Counter()
    for record in result.profile:
        weights[record.names()[-1]] += record.weight
    return weights


# --- quoting and wrapping: the same output, read the same -------------------------------

@pytest.mark.parametrize("wrapped,plain", [
    ("pipe-quoted-perf61-report-sort-cpu-pipes.txt", "real-perf61-report-sort-cpu-pipes.txt"),
    ("mixed-prefix-quoted-perf61-report-callee-futex.txt", "real-perf61-report-callee-futex.txt"),
    ("mail-wrapped-72-perf61-report-caller-futex.txt", "real-perf61-report-caller-futex.txt"),
    ("hard-wrapped-80-perf61-report-flat-children-futex.txt", "real-perf61-report-flat-children-futex.txt"),
    ("comma-decimals-perf61-report-flat-futex.txt", "real-perf61-report-flat-futex.txt"),
    # rule K7 (realworld-probe-k case 1167): a quoted opreport -c whose dashed rules wrapped
    ("mail-wrapped-72-quoted-opreport-c-rules-direct-reclaim.txt",
     "hand-opreport-c-right-aligned-counts-shrink-active-list-direct-reclaim.txt"),
])
def test_wrapped_or_quoted_output_reads_like_the_plain_one(wrapped, plain):
    got, want = paste(wrapped), paste(plain)
    assert got.formats == want.formats
    assert reading(got) == reading(want)


def test_metric_table_is_taken_from_the_layout_that_reads_it_whole_rule_k6():
    """Rule K6 (realworld-probe-k case 1169): the stacks keep the paste as pasted, the mpstat rows
    a mail client cut in two are read from the layout with the words joined back."""
    got = paste("mail-wrapped-72-quoted-mpstat-sysstat7-opreport-e1000-nic-softirq.txt")
    want = paste("hand-mpstat-sysstat7-user-header-opreport-e1000-one-cpu-nic-softirq.txt")
    assert reading(got) == reading(want)
    assert "87.00" in got.sections["mpstat"] and "60118.00" in got.sections["mpstat"]


def test_wrapped_register_dump_keeps_the_rip_leaf_on_its_trace_rule_k9():
    """Rule K9 (realworld-probe-k case 1170): `knlGS:` and the task address of 2.6.x's `Process`
    line, wrapped to column 0, end the register-dump lines above them; the trace goes on to its
    Call Trace, so the RIP leaf stays on its stack."""
    def stacks(result):
        return Counter((record.names(), record.comm) for record in result.profile)
    got = paste("mail-wrapped-72-soft-lockup-rhel6-register-dump-process-line-shrink-slab.txt")
    want = paste("hand-soft-lockup-rhel6-register-dump-process-line-shrink-slab.txt")
    assert stacks(got) == stacks(want) and len(stacks(want)) == 2
    assert rejoin(["FS:  00007f2a7cb4f700(0000) GS:ffff880c3fc20000(0000)", "knlGS:0000000000000000"]) == \
        ["FS:  00007f2a7cb4f700(0000) GS:ffff880c3fc20000(0000) knlGS:0000000000000000"]
    assert rejoin(["Process java (pid: 30117, threadinfo ffff8806305d0000, task", "ffff880c2f2b2aa0)"]) == \
        ["Process java (pid: 30117, threadinfo ffff8806305d0000, task ffff880c2f2b2aa0)"]


def test_mail_wrapped_branches_go_back_under_their_parent():
    """A branch cut after its rails lost its column: the separator line above gives it back."""
    text = "\n".join(["   |--51.81%--inode_permission", "   |          |",
                      "   |           --51.36%--kernfs_iop_permission", "   |                     |",
                      "   |", "--50.41%--down_write", "   |                                |",
                      "   |", "--49.31%--osq_lock"])
    (record,) = [r for r in read_paste(text).profile if r.names()[-1] == "osq_lock"]
    assert record.names() == ("inode_permission", "kernfs_iop_permission", "down_write", "osq_lock")
    assert record.weight == pytest.approx(49.31)


def test_mail_wrapped_syslog_soft_lockup():
    result = paste("mail-wrapped-syslog-kernel-prefix-soft-lockup-rhel7-futex.txt")
    assert result.formats == ["oops"]
    (record,) = list(result.profile)
    assert (record.comm, record.cpu) == ("java", 12)
    assert record.names()[-1] == "native_queued_spin_lock_slowpath"      # the wrapped RIP line
    assert ordered(record.names(), "system_call_fastpath", "SyS_futex", "futex_wake", "_raw_spin_lock")


def test_mail_wrapped_lkp_rows_take_their_metric_back():
    """Rule M1 (realworld-probe-m case 1219: LKP perf-profile.children / .self rows with no prose
    around them, wrapped at 72 columns): a `perf-profile.` metric never starts a row, so alone at
    column 0 under a line of values it is that row's tail."""
    rows = ["      0.00           +41.2       41.18        perf-profile.children.cycles-pp.osq_lock",
            "      0.00           +40.9       40.86 ±  3%  perf-profile.self.cycles-pp.osq_lock",
            "      4.52            -2.7        1.81        perf-profile.self.cycles-pp.zap_pte_range"]
    wrapped = "\n".join(part for row in rows for part in (row[:row.index("perf-profile")].rstrip(),
                                                           row[row.index("perf-profile"):]))
    got, want = read_paste(wrapped), read_paste("\n".join(rows))
    assert got.formats == want.formats == ["lkp-perf-profile"]
    assert reading(got) == reading(want)


def test_html_crash_bt_with_elided_frames_keeps_both_ends_of_each_stack():
    result = paste("html-br-crash-bt-a-elided-frames-zone-reclaim-rhel6.txt")
    assert result.formats == ["crash-bt"]
    by_cpu = {r.cpu: r.names() for r in result.profile}
    assert set(by_cpu) == {0, 3, 5}
    assert ordered(by_cpu[3], "system_call_fastpath", "vfs_write", "zone_reclaim", "_spin_lock_irq")
    assert "ext4_da_write_begin" not in by_cpu[3]                      # cut by the author: "..."


# --- perf report / perf top in their other shapes ---------------------------------------------

def test_tui_screen_with_scroll_bar_glyphs_and_fold_markers():
    result = paste("real-perf61-report-tui-screen-scrollbar-futex.txt")
    assert result.formats == ["perf-report-callgraph"]
    names = {n for r in result.profile for n in r.names()}
    assert not any("\u2592" in n or "\u25c6" in n for n in names)
    graph = [r.names() for r in result.profile if len(r.names()) > 1]
    assert graph == [("schedule", "__schedule", "finish_task_switch")]   # `+ schedule`: callers folded
    folded = leaf_weights(result)
    assert folded["_raw_spin_unlock_irqrestore"] == pytest.approx(10.41 * 10)   # `+` entry, "Samples: 1K"


def test_tui_dump_of_children_report_counts_each_sample_once():
    result = paste("real-perf61-report-tui-dump-children-futex.txt")
    assert result.formats == ["perf-report-callgraph"]
    stacks = {r.names(): r.weight for r in result.profile}
    wake = ("syscall", "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_futex", "do_futex",
            "futex_wake", "wake_up_q", "try_to_wake_up", "_raw_spin_unlock_irqrestore")
    assert stacks[wake] == pytest.approx(9.81)
    assert sum(stacks.values()) <= 60.06 + 0.01                          # never more than the top entry's Children


def test_perf_top_g_tui_screen_leaves_what_the_screen_cut_unattributed():
    result = paste("real-perf61-top-g-tui-screen-futex.txt")
    assert result.formats == ["perf-top-callgraph"]
    leaves = leaf_weights(result)
    # `- 23.42% entry_SYSCALL_64_after_hwframe` is the last line: its subtree is off screen.
    assert leaves["entry_SYSCALL_64_after_hwframe"] < 1
    assert leaves["_raw_spin_unlock_irqrestore"] > 0


def test_perf_top_stdio_g_reads_the_last_screen():
    result = paste("real-perf61-top-stdio-g-futex.txt")
    assert result.formats == ["perf-top-callgraph"]
    assert any("last of 3 screens" in note for note in result.notes)
    assert any(ordered(r.names(), "futex_wake", "try_to_wake_up", "_raw_spin_unlock_irqrestore") for r in result.profile)


def test_children_entries_whose_stack_starts_at_a_raw_address():
    result = paste("real-perf61-report-children-hex-roots-futex.txt")
    hex_rooted = [r for r in result.profile if r.frames[0].name.startswith("0x")]
    assert any(r.names()[-1] == "_PyEval_EvalFrameDefault" for r in hex_rooted)
    assert all(r.frames[0].kind == "user" for r in hex_rooted)
    assert leaf_weights(result)["_raw_spin_unlock_irqrestore"] == pytest.approx(10.41 * 10, abs=0.5)


def test_entries_without_a_symbol_column_are_read_with_their_graph():
    result = paste("real-perf61-report-sort-comm-futex.txt")     # perf report --sort comm
    assert result.formats == ["perf-report-callgraph"]
    hammer = [r for r in result.profile if r.comm == "futex_hammer"]
    # the branches shown (--percent-limit 5 hid the rest of the entry's 63.21 %, whose frames are unknown)
    assert sum(r.weight for r in hammer) == pytest.approx((12.96 + 10.41 + 6.86 + 6.56) * 10, abs=1)
    assert any(r.names()[-1] == "finish_task_switch" and ordered(r.names(), "futex_wait", "schedule") for r in hammer)


def test_folded_call_chains_under_each_entry():
    result = paste("real-perf61-report-g-folded-futex.txt")                 # perf report -g folded
    assert result.formats == ["perf-report-callgraph"]
    stacks = {r.names(): r.weight for r in result.profile}
    wake = ("syscall", "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__x64_sys_futex", "do_futex",
            "futex_wake", "wake_up_q", "try_to_wake_up", "_raw_spin_unlock_irqrestore")
    assert stacks[wake] == pytest.approx(22.23 * 10)
    assert leaf_weights(result)["_raw_spin_unlock_irqrestore"] == pytest.approx(23.45 * 10)   # the entry keeps its whole share


def test_srcline_column_is_not_part_of_the_symbol():
    result = paste("real-perf61-report-srcline-futex.txt")
    assert {r.names()[0] for r in result.profile} >= {"finish_task_switch", "_raw_spin_unlock_irqrestore"}


def test_a_one_cpu_recording_gives_its_samples_that_cpu():
    text = ("perf record -e cycles -C 0 sleep 10 && perf report\n"
            "    10.17%  ksoftirqd/0  [kernel.kallsyms]  [k] enetc_poll\n"
            "     6.13%  ksoftirqd/0  [kernel.kallsyms]  [k] eth_type_trans\n")
    assert read_paste(text).profile.cpus() == [0]
    assert read_paste(text.replace("-C 0", "-C 0-3")).profile.cpus() == []     # a list: CPUs unknown


def test_a_one_process_command_line_names_the_command_of_its_samples():
    """Probe case 303 (perf top -p $(pgrep kswapd0) on 4.4): a listing restricted to one process has
    no Command column; the pasted command line names it, so comm-bound playbooks can judge it."""
    rows = ("Overhead  Shared Object       Symbol\n"
            "  18.42%  [kernel]            [k] shrink_slab\n"
            "   5.71%  [kernel]            [k] balance_pgdat\n")
    app_rows = rows.replace("balance_pgdat", "do_try_to_free_pages")
    assert {r.comm for r in read_paste("$ sudo perf top -p $(pgrep kswapd0)\n" + rows).profile} == {"kswapd0"}
    assert {r.comm for r in read_paste("# perf record -g -p `pidof -s mysqld`\n" + rows).profile} == {"mysqld"}
    assert {r.comm for r in read_paste("$ perf report --comms java --stdio\n" + rows).profile} == {"java"}
    for other in ("$ perf top -p 4242\n", "$ perf top -c 10000\n", "$ perf record -c 2000 -a\n"):
        assert {r.comm for r in read_paste(other + app_rows).profile} == {""}     # a pid or a count names nothing
    # rule AM1 (probe AM case 1703): kernel rows only, with kswapd's main loop, are kswapd's listing,
    # unless the command line says it is system-wide
    for other in ("$ perf top -p 4242\n", "$ perf top -c 10000\n", ""):
        assert {r.comm for r in read_paste(other + rows).profile} == {"kswapd"}
    assert {r.comm for r in read_paste("$ perf record -c 2000 -a\n" + rows).profile} == {""}


KSWAPD_TOP = ("    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
              "     98 root      20   0       0      0      0 R  99.7   0.0 912:40.12 kswapd0\n"
              "   4410 mysql     20   0   31.2g  20.1g  14232 S   4.3  64.0 300:11.02 mysqld\n\n")
CHILDREN_ROWS = ("  Children      Self  Shared Object        Symbol\n"
                 "+   93.10%     0.00%  [kernel]             [k] kswapd\n"
                 "+   60.20%     0.10%  [kernel]             [k] shrink_slab\n"
                 "+   58.00%    57.10%  [kernel]             [k] _raw_spin_lock\n"
                 "+    4.30%     3.90%  mysqld               [.] buf_page_get_gen\n")


@pytest.mark.parametrize("above", [KSWAPD_TOP, "$ sudo perf top --children -p $(pgrep kswapd0)\n"])
def test_a_named_commandless_listing_keeps_its_children_totals_with_its_samples(above):
    """Rules I2 and 303 (probe cases 1124 and 303) name a commandless listing's entries; the
    --children totals of those entries take the same name (rule T4 weighs a comm-bound path by
    them per command: left commandless, kswapd's 93 % counted for nobody)."""
    result = read_paste(above + CHILDREN_ROWS)
    comms = {comm for comm, _ in result.profile.through}
    kswapd = {sym for comm, sym in result.profile.through if comm == "kswapd0"}
    assert {"kswapd", "shrink_slab", "_raw_spin_lock"} <= kswapd
    if above is KSWAPD_TOP:                     # a busy kernel thread owns the kernel entries only
        assert ("", "buf_page_get_gen") in result.profile.through and comms == {"kswapd0", ""}
    else:                                       # a one-process command line owns them all
        assert comms == {"kswapd0"}


def test_old_events_banner_gives_the_sample_count():
    result = paste("hand-perf2632-report-fractal-zone-reclaim.txt")    # "# Events: 48K cycles"
    assert any("48000 samples" in note for note in result.notes)


def test_old_perf_top_columns_samples_pcnt_function_dso():
    result = paste("hand-perf2632-top-futex.txt")           # perf top of 2.6.31-2.6.35
    assert result.formats == ["perf-top"] and result.profile.ancestry is False
    weights = {(r.names()[-1], r.frames[-1].kind): r.weight for r in result.profile}
    assert weights[("_spin_lock", "kernel")] == pytest.approx(48.9)      # the pcnt column, not samples
    assert weights[("__lll_lock_wait", "user")] == pytest.approx(3.2)     # a library path: user space
    assert weights[("std::_Rb_tree_increment(std::_Rb_tree_node_base*)", "user")] == pytest.approx(1.9)   # a symbol with spaces


def old_top_leaves(text):
    """(leaf, kind, weight) of each row of a pasted 2.6.3x perf top / kerneltop screen."""
    result = read_paste(text)
    assert result.formats == ["perf-top"]
    return {(r.names()[-1], r.frames[-1].kind, r.weight) for r in result.profile}


def test_old_perf_top_without_dso_column_is_kernel_only():
    text = ("             samples    pcnt         RIP          kernel function\n"
            "  ______     _______   _____   ________________   _______________\n\n"
            "             1286.00 - 11.1% - ffffffff8100c6f6 : native_safe_halt\n"
            "              386.00 -  3.3% - ffffffff8103e1e1 : _spin_lock\n")
    assert old_top_leaves(text) == \
        {("native_safe_halt", "kernel", 11.1), ("_spin_lock", "kernel", 3.3)}


def test_kerneltop_events_pcnt_columns_rule_al2():
    """realworld-probe-al case 1687: kerneltop, perf top's forerunner in the perfcounters
    announcements, heads the same rows with `events` instead of `samples`."""
    text = ("------------------------------------------------------------------------------\n"
            "   PerfTop:   19562 irqs/sec  kernel:37.1% [100000 cycles],  (all, 16 CPUs)\n"
            "------------------------------------------------------------------------------\n\n"
            "             events    pcnt         RIP          kernel function\n"
            "             ______   ______   _____________   _______________\n\n"
            "            14762.00 - 18.7% - ffffffff8103a9d0 : clear_page_c\n"
            "             6235.00 -  7.9% - ffffffff8122d7e0 : copy_user_generic_string\n")
    assert old_top_leaves(text) == \
        {("clear_page_c", "kernel", 18.7), ("copy_user_generic_string", "kernel", 7.9)}


def test_first_kerneltop_event_counts_without_pcnt_rule_ba1():
    """realworld-probe-ba case 1983: the kerneltop of the first perfcounters announcements had a
    `KernelTop:` banner and no pcnt column; each row's event count is its weight (samples of the
    listed rows), and the RIP is not part of the symbol."""
    text = ("------------------------------------------------------------------------------\n"
            " KernelTop:   23561 irqs/sec  kernel:93.7% [NMI, 10000 cycles],  (all, 4 CPUs)\n"
            "------------------------------------------------------------------------------\n\n"
            "             events         RIP          kernel function\n"
            "             ______   ________________   _______________\n\n"
            "              21472 - ffffffff8034c6e0 : clear_user\n"
            "               4818 - ffffffff8034c330 : copy_user_generic_string\n"
            "                337 - ffffffff80243d40 : _spin_lock\n")
    assert old_top_leaves(text) == \
        {("clear_user", "kernel", 21472), ("copy_user_generic_string", "kernel", 4818), ("_spin_lock", "kernel", 337)}
    assert not any("percentages" in note for note in read_paste(text).notes)


def test_quoted_opreport_whose_every_row_wrapped_rule_al1():
    """realworld-probe-al case 1692: an opreport in timer mode (short banner) quoted and wrapped at
    72 columns moves every row's symbol to the next line, so no line is a mail's width any more;
    the rows with their carried words back give the width, and the listing reads as unwrapped."""
    rows = [("210476   27.8931  vmlinux                  vmlinux", "do_gettimeoffset_pm"),
            ("61024     8.0872  vmlinux                  vmlinux", "do_gettimeofday"),
            ("40877     5.4172  vmlinux                  vmlinux", "sys_gettimeofday"),
            ("31455     4.1685  vmlinux                  vmlinux", "system_call")]
    head = ["CPU: CPU with timer interrupt, speed 0 MHz (estimated)", "Profiling through timer interrupt",
            "samples  %        image name               app name"]
    plain = "\n".join(head[:2] + [head[2] + "                 symbol name"]
                      + [row + "                  " + symbol for row, symbol in rows]) + "\n"
    wrapped = "\n".join(["> " + head[0], "> " + head[1], "> " + head[2], "symbol name"]
                        + [line for row, symbol in rows for line in ("> " + row, symbol)]) + "\n"
    assert reading(read_paste(wrapped)) == reading(read_paste(plain))
    assert leaf_weights(read_paste(wrapped))["do_gettimeoffset_pm"] > 0


def test_short_table_rows_before_prose_are_not_joined_rule_al1():
    """The look-alike: padded rows followed by short prose lines at column 0 that are no wrap
    (fewer than three, or not wider joined than the rest) stay apart."""
    from flamediag.paste.rewrap import rejoin_words
    lines = ["CPU: CPU with timer interrupt, speed 0 MHz (estimated)",
             "210476   27.8931  vmlinux                  vmlinux",
             "done", "ok"]
    assert rejoin_words(lines) == lines


@pytest.mark.parametrize("fixture,whole", [
    ("hand-perf2632-top-futex.txt", 100.0),                       # percentages of all samples
    ("real-perf61-report-flat-futex.txt", 2000.0),                # scaled to the pasted sample count
    ("real-perf61-report-callee-futex.txt", 2000.0),
    ("hand-perf2632-report-fractal-zone-reclaim.txt", 48000.0),
    ("real-perf61-report-children-futex.txt", None),
    ("hand-bcc-profile-folded-futex.txt", None),                  # counts: no whole
])
def test_a_listing_says_what_its_percentages_are_of(fixture, whole):
    assert paste(fixture).profile.percent_of == whole


def test_a_graph_fragment_leaves_the_whole_unknown():
    text = ("         |--60.00%-- futex_wait_setup\n"
            "         |          do_futex\n"
            "          --40.00%-- futex_wake\n"
            "                     do_futex\n")
    assert read_paste("--- _raw_spin_lock\n" + text).profile.percent_of is None


# --- other tools --------------------------------------------------------------------------------

def test_perf_c2c_pareto_weighs_rows_by_the_line_counts():
    result = paste("hand-perf-c2c-pareto-futex-hash-bucket.txt")
    assert result.formats == ["perf-c2c"] and result.profile.ancestry is False
    weights = leaf_weights(result)
    # RmtHitm, LclHitm, L1 Hit, L1 Miss shares times the line's 765, 1452, 2741, 62
    assert weights["_raw_spin_lock"] == pytest.approx(.6105 * 765 + .5854 * 1452 + .5582 * 2741 + .4839 * 62)
    assert weights["futex_wake"] == pytest.approx(.0536 * 765 + .0524 * 1452)


def test_bcc_multiline_stacks_with_delimiter():
    result = paste("hand-bcc-profile-multiline-delimited-futex.txt")
    assert result.formats == ["bcc-stacks"] and result.profile.not_cpu is None
    top = max(result.profile, key=lambda r: r.weight)
    assert top.comm == "futex_hammer" and top.names()[-1] == "_raw_spin_unlock_irqrestore"
    assert top.frames[0].name == "syscall" and top.frames[0].kind == "user"      # below `--`
    assert all(f.kind == "kernel" for f in top.frames[1:])


def test_old_bcc_profile_with_addresses_takes_kinds_from_them():
    ticket = (REALWORLD / "127-none-bcc-profile-default-format-idle-dd.txt").read_text().split("# ---\n", 1)[1]
    result = read_paste(ticket)
    assert result.formats == ["bcc-stacks"]
    dd = [r for r in result.profile if r.comm.startswith("dd")][0]
    assert dd.weight == 4 and dd.names()[-1] == "__clear_user"
    assert dd.frames[0].kind == "user" and dd.frames[-1].kind == "kernel"


def test_ftrace_stack_traces_one_per_event_without_the_tracer_frames():
    result = paste("real-ftrace-stacktrace-trigger-sched-wakeup-futex.txt")
    assert result.formats == ["ftrace-stack"]
    assert result.profile.total() == 12                                  # 12 events
    assert all(r.comm == "futex_hammer" and r.cpu in (0, 1) for r in result.profile)
    leaves = {r.names()[-1] for r in result.profile}
    assert leaves <= {"try_to_wake_up", "ttwu_do_activate"}               # not __traceiter_sched_wakeup
    assert all(ordered(r.names(), "futex_wake", "wake_up_q") for r in result.profile)


def test_bpftrace_map_keyed_by_perf_kstack_and_comm():
    result = paste("real-bpftrace-kstack-perf-comm-futex.txt")           # bpftrace's own ERROR line included
    assert result.formats == ["bpftrace-kstack"]
    assert {r.comm for r in result.profile} == {"futex_hammer"}
    assert any(r.names()[-2:] == ("_raw_spin_lock", "__pv_queued_spin_lock_slowpath") for r in result.profile)


def test_off_cpu_data_is_recognised_by_the_tool_header():
    result = paste("hand-bcc-offcputime-multiline-futex.txt")
    assert result.formats == ["bcc-stacks"]
    assert result.profile.not_cpu.startswith("this is off-CPU time")


def test_off_cpu_data_is_recognised_by_its_frames():
    """offcputime -f without its command line: every stack ends where its task was switched out."""
    ticket = (REALWORLD / "129-none-bcc-offcputime-folded-offcpu-trap.txt").read_text().split("# ---\n", 1)[1]
    without_prompt = "\n".join(line for line in ticket.split("\n") if not line.startswith("#"))
    result = read_paste(without_prompt)
    assert "switched out" in result.profile.not_cpu
    switches = paste("real-bpftrace-sched-switch-kstack-futex.txt")      # @[kstack] at sched:sched_switch
    assert switches.formats == ["bpftrace-kstack"] and "switched out" in switches.profile.not_cpu
    assert read_paste(paste_text("real-bpftrace-kstack-futex.txt")).profile.not_cpu is None   # profile:hz:99


def test_offwaketime_separator_marks_off_cpu_data():
    folded = ("bash;entry_SYSCALL_64;do_syscall_64;do_wait;schedule;--;try_to_wake_up;do_notify_parent;do_exit;sleep 1200\n"
              "sshd;entry_SYSCALL_64;do_select;schedule_hrtimeout_range;--;hrtimer_wakeup;__hrtimer_run_queues;swapper/0 8000\n")
    assert "off-CPU" in read_paste(folded).profile.not_cpu


def paste_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8", errors="replace")


def test_function_graph_is_read_but_is_not_cpu_time():
    result = paste("hand-ftrace-function-graph-futex-wait.txt")
    assert result.formats == ["ftrace-function-graph"]
    assert "function_graph" in result.profile.not_cpu
    stacks = {r.names(): r.weight for r in result.profile}
    lock = ("futex_wait", "__futex_wait", "futex_wait_setup", "futex_q_lock", "_raw_spin_lock")
    assert stacks[lock] == pytest.approx(0.180 + 12.806)
    assert not any(names[-1] == "schedule" for names in stacks)          # a leaf that slept is no CPU time


# --- several profiles, unknown layouts ----------------------------------------------------------

def test_before_after_diagnoses_the_run_with_the_kernel_problem():
    result = paste("before-after-two-perf61-reports-futex-quiet.txt")
    assert {r.names()[-1] for r in result.profile} >= {"_raw_spin_unlock_irqrestore"}
    assert "pv_native_safe_halt" not in {r.names()[-1] for r in result.profile}     # the "after" run
    assert any(note.startswith("2 profiles in this paste") and "profile 1" in note for note in result.notes)


def test_profiles_are_never_added_together():
    before = "# Samples: 1K of event 'cycles'\n# Overhead  Command  Shared Object  Symbol\n" \
             "    60.00%  a  [kernel.kallsyms]  [k] _raw_spin_lock\n"
    after = "# Samples: 1K of event 'cycles'\n# Overhead  Command  Shared Object  Symbol\n" \
            "    10.00%  a  [kernel.kallsyms]  [k] _raw_spin_lock\n    80.00%  a  a  [.] main\n"
    result = read_paste(before + "\n" + after)
    assert result.profile.total() == pytest.approx(600)


def test_runs_introduced_by_their_command_line_are_separate_profiles():
    run = "# ./profile -f -F 99 5\njava;start_thread;run;-;entry_SYSCALL_64_[k];futex_wait_[k];_raw_spin_lock_[k] {}\n" \
          "java;start_thread;run {}\n"
    result = read_paste("Before the patch:\n" + run.format(900, 100) + "\nAfter:\n" + run.format(50, 950))
    assert result.profile.total() == 1000                      # one run, not both
    assert max(result.profile, key=lambda r: r.weight).names()[-1] == "_raw_spin_lock"
    split = read_paste("Before the patch:\n" + run.format(900, 100) + "\nand the rest of it:\n"
                       + run.format(50, 950).split("\n", 1)[1])
    assert split.profile.total() == 2000                       # one run cut by prose


def test_a_single_sample_next_to_a_report_illustrates_it():
    report = ("# Samples: 2K of event 'cpu-cycles:k'\n# Overhead  Command  Shared Object  Symbol\n"
              "    98.56%  swapper  [kernel.kallsyms]  [k] poll_idle\n     0.05%  swapper  [kernel.kallsyms]  [k] do_idle\n")
    sample = ("\nswapper       0 [007] 1203865.059685:    6998090 cpu-cycles:k:\n"
              "        ffffffff994d32f8 poll_idle+0x58 ([kernel.kallsyms])\n"
              "        ffffffff994d16b4 cpuidle_enter_state+0x84 ([kernel.kallsyms])\n")
    result = read_paste(report + sample)
    assert result.profile.source_format == "perf-report-flat"
    assert any(note.startswith("left out 1 sample excerpt") for note in result.notes)


def test_last_resort_reads_symbols_of_an_unknown_layout():
    result = paste("unrecognised-layout-dashboard-top-functions-futex.txt")
    assert result.formats == ["unrecognised-layout"] and result.profile.ancestry is False
    weights = leaf_weights(result)
    assert weights["_raw_spin_lock"] == pytest.approx(12.0)
    assert any(note.startswith("layout not recognised") for note in result.notes)


def test_prose_without_frame_like_lines_still_has_no_stacks():
    with pytest.raises(UserError):
        paste("no-stacks-mpstat-prose.txt")


def test_every_real_world_case_is_read_by_a_layout_reader():
    """No real ticket paste ends in "no stacks found", nor needs the last-resort reader."""
    import realworld

    for case in realworld.load_cases(REALWORLD):
        ticket, _ = case.parts()
        result = read_paste(ticket)
        assert "unrecognised-layout" not in result.formats, case.path.name


# --- linear reading (hostile input, issue 18 defect 6) ------------------------------------------

def test_oops_then_many_event_lines_is_read_in_one_pass(tmp_path):
    """An oops then 30000 `java 1 1.5: xN` lines (perf script without -g): each line was
    rescanned to the end of the run (2.3 / 9.5 / 28.9 s for 2000 / 4000 / 8000 lines)."""
    text = ("BUG: soft lockup - CPU#3 stuck for 22s! [java:1234]\nCall Trace:\n _raw_spin_lock+0x1e/0x30\n"
            + "".join(f"java 1 1.5: x{i}\n" for i in range(30000)))
    done = read_in_subprocess(text, tmp_path, timeout=60)
    assert done.stdout.strip() == "oops", done.stderr


@pytest.mark.parametrize("text", [
    "Call Trace:\n" + " ? f+0x1/0x2\n" * 30000,                     # frames a trace reader drops
    "    foo_bar\n" * 30000,                                        # bcc-like frames without a count
    "# cat /proc/1/stack\n" * 30000,
    'PID: 1 TASK: ffff8 CPU: 0 COMMAND: "x"\n' * 30000,
    ("x" * 70 + "\n" + "--1.0%--a\n") * 15000,                      # graph fragments between prose
    (" " * 5000 + "|\n") * 300,                                     # long whitespace runs
    "    12.00%" + " " * 100000 + "x\n",
    ">" * 20000 + " | " * 20000 + "  12.00%  a  [k] b\n",
])
def test_long_runs_are_read_in_one_pass(text, tmp_path):
    done = read_in_subprocess(text, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr


def test_perf_lock_contention_reads_spinning_waits_under_their_callers():
    """Rule B5 (realworld-probe-b case 818: `perf lock contention -ab` on futex hash buckets). A spin
    lock's wait is CPU spent spinning: the row is `caller -> lock entry` weighed by its total wait (us);
    a `-v` chain under a row is its stack (innermost first); sleeping locks' waits are left out, and a
    listing of only those is not CPU time."""
    text = ("$ perf lock contention -ab -- sleep 5\n"
            " contended   total wait     max wait     avg wait         type   caller\n\n"
            "     12000     90.00 ms     40.00 us      7.50 us     spinlock   futex_wake+0x8d\n"
            "      3000      2.50 s      40.00 us      5.00 us     spinlock   futex_q_lock+0x2a\n"
            "                        0xffffffff81f1f2a4  native_queued_spin_lock_slowpath+0x184\n"
            "                        0xffffffff81f1e8c9  _raw_spin_lock+0x19\n"
            "                        0xffffffff8113e5a7  futex_q_lock+0x2a\n"
            "                        0xffffffff8113f001  futex_wait_setup+0x71\n"
            "        10    800.00 ms    400.00 us    200.00 us     rwsem:R    do_user_addr_fault+0x3a1\n")
    result = read_paste(text)
    assert result.profile.source_format == "perf-lock-contention"
    assert reading(result) == {
        (("futex_wake", "_raw_spin_lock"), "", None): 90000.0,
        (("futex_wait_setup", "futex_q_lock", "_raw_spin_lock", "native_queued_spin_lock_slowpath"), "", None):
            2500000.0,
    }
    assert result.profile.not_cpu is None
    sleeping = read_paste(" contended   total wait     max wait     avg wait         type   caller\n\n"
                          "        10    800.00 ms    400.00 us    200.00 us     mutex      pipe_read+0x5a\n")
    assert sleeping.profile.not_cpu and "sleeping locks" in sleeping.profile.not_cpu


def test_workqueue_execute_start_events_read_as_work_items_not_cpu():
    """Rule C2, motivated by probe case 920 (a perf script of workqueue:workqueue_execute_start events
    on a PostgreSQL host): each event is one work item started by that kworker, read as
    worker_thread -> process_one_work -> <function>; the counts are work items, not CPU time."""
    text = (
        "$ perf script\n"
        " kworker/5:1   312 [005] 881203.331021: workqueue:workqueue_execute_start: work struct 0xffff9e8c3f75a8e0: function lru_add_drain_per_cpu\n"
        " kworker/6:1   318 [006] 881203.331022: workqueue:workqueue_execute_start: work struct 0xffff9e8c3f79a8e0: function lru_add_drain_per_cpu\n"
        "     kworker/8:1-330   [008] d..1 881203.331185: workqueue_execute_start: work struct ffff9e8c3f81a8e0: function vmstat_update\n"
    )
    result = read_paste(text)
    assert result.formats == ["ftrace-workqueue-events"]
    weights = reading(result)
    assert weights[(("worker_thread", "process_one_work", "lru_add_drain_per_cpu"), "kworker/5:1", 5)] == 1
    assert weights[(("worker_thread", "process_one_work", "vmstat_update"), "kworker/8:1", 8)] == 1
    assert "workqueue_execute_start events" in result.profile.not_cpu


def test_tcp_retransmit_skb_tracepoint_events_without_stacks_are_retransmissions():
    """Rule O2, motivated by probe case 1245 (bonding balance-rr reordering; the tracepoint recorded
    without -g): a perf script or trace_pipe line of the tcp:tcp_retransmit_skb tracepoint is one
    retransmitted segment, read as tcp_retransmit_skb with its task and CPU, like a tcpretrans line
    (rule G4). Other TCP tracepoints' lines say nothing about retransmission and are not read so."""
    text = (
        "$ perf record -e tcp:tcp_retransmit_skb -a -- sleep 5; perf script\n"
        "           rsync 21407 [004] 1184522.031877: tcp:tcp_retransmit_skb: sport=873 dport=50122 saddr=10.20.0.11 daddr=10.20.0.42\n"
        "           rsync 21407 [004] 1184522.031912: tcp:tcp_retransmit_skb: sport=873 dport=50122 saddr=10.20.0.11 daddr=10.20.0.42\n"
        "          <idle>-0     [007] ..s1 1184522.032204: tcp_retransmit_skb: skbaddr=00000000a1b2c3d4 sport=873 dport=50118\n"
    )
    result = read_paste(text)
    assert result.formats == ["tcp-retransmit-events"]
    assert reading(result) == {(("tcp_retransmit_skb",), "rsync", 4): 2.0, (("tcp_retransmit_skb",), "<idle>", 7): 1.0}
    probes = ("           iperf3  4242 [002] 1184522.031877: tcp:tcp_probe: src=10.20.0.11:5201 dest=10.20.0.42:50122 snd_cwnd=10\n"
              "           iperf3  4242 [002] 1184522.031912: tcp:tcp_probe: src=10.20.0.11:5201 dest=10.20.0.42:50122 snd_cwnd=10\n")
    with pytest.raises(UserError):
        read_paste(probes)


def test_rule_ad2_retransmissions_against_the_segment_counters_are_ordinary_loss_below_one_in_a_thousand():
    """Rule AD2, motivated by probe AD case 1538 (nine tcpretrans lines on a web server that nstat
    says sent 2.9 million segments): a retransmission listing beside the host's segment counters
    (nstat TcpOutSegs / TcpRetransSegs, or netstat -s) is read and drawn, but below one retransmitted
    segment in a thousand it is the ordinary loss of the paths and is not diagnosed. The look-alike:
    the same listing beside counters at 2 % (probe AC case 1512's rate) stays a retransmission storm,
    and a listing without the sent count keeps its old reading."""
    rows = ("$ sudo /usr/share/bcc/tools/tcpretrans\n"
            "TIME     PID    IP LADDR:LPORT          T> RADDR:RPORT          STATE\n"
            "14:02:11 0      4  192.0.2.10:443       R> 198.51.100.23:53211  ESTABLISHED\n"
            "14:02:27 0      4  192.0.2.10:443       R> 198.51.100.190:61008 ESTABLISHED\n")
    rare = read_paste("$ nstat -az TcpOutSegs TcpRetransSegs\n#kernel\n"
                      "TcpOutSegs                      2873190            0.0\n"
                      "TcpRetransSegs                  9                  0.0\n\n" + rows)
    assert rare.formats == ["bcc-tcpretrans"]
    assert "9 of 2873190 segments sent" in rare.profile.not_cpu
    old_netstat = read_paste(rows + "\n$ netstat -s | grep segments\n    48113902 segments send out\n"
                                    "    2210 segments retransmited\n")
    assert "2210 of 48113902" in old_netstat.profile.not_cpu
    storm = read_paste("TcpOutSegs                      18811203           0.0\n"
                       "TcpRetransSegs                  412093             0.0\n\n" + rows)
    assert storm.profile.not_cpu is None
    assert reading(storm) == {(("tcp_retransmit_skb",), "", None): 2.0}
    assert read_paste(rows + "\n$ netstat -s | grep -i retrans\n    184211 segments retransmitted\n").profile.not_cpu is None


def test_rule_cq2_retransmissions_sent_mostly_by_the_timer_are_not_ordinary_loss():
    """Rule CQ2, motivated by realworld-probe-cq case 2668 (a Ceph node behind a switch port left at
    MTU 1500 on a jumbo-frame network: 9113 of 18.2 million segments retransmitted, 5201 of them by
    timeout): rule AD2's one-in-a-thousand rate does not excuse a listing whose counters say that at
    least half of the retransmissions (and at least a hundred) were sent by the retransmission timer,
    in nstat's TcpExtTCPTimeouts or netstat's `other TCP timeouts` / `TCPTimeouts:` spellings. The
    look-alike: the same rate with the timer behind a tenth of them stays ordinary loss, as do a
    few dozen timeouts."""
    rows = ("$ sudo /usr/share/bcc/tools/tcpretrans\n"
            "TIME     PID    IP LADDR:LPORT          T> RADDR:RPORT          STATE\n"
            "09:14:02 0      4  10.40.2.13:6806      R> 10.40.2.17:52114     ESTABLISHED\n"
            "09:14:03 0      4  10.40.2.13:45920     R> 10.40.2.17:6802      ESTABLISHED\n")
    counters = ("TcpOutSegs                      18226301           0.0\n"
                "TcpRetransSegs                  9113               0.0\n")
    rto = read_paste(rows + "\n" + counters + "TcpExtTCPTimeouts               5201               0.0\n")
    assert rto.profile.not_cpu is None
    assert reading(rto) == {(("tcp_retransmit_skb",), "", None): 2.0}
    old = read_paste(rows + "\n    4412870 segments send out\n    2131 segments retransmited\n"
                            "    1702 other TCP timeouts\n")
    assert old.profile.not_cpu is None
    ext = read_paste(rows + "\n    4412870 segments sent out\n    2131 segments retransmitted\n"
                            "TcpExt:\n    TCPTimeouts: 1702\n")
    assert ext.profile.not_cpu is None
    fast = read_paste(rows + "\n" + counters + "TcpExtTCPTimeouts               911                0.0\n")
    assert "9113 of 18226301 segments sent" in fast.profile.not_cpu
    few = read_paste(rows + "\n    4412870 segments send out\n    61 segments retransmited\n"
                            "    48 other TCP timeouts\n")
    assert "61 of 4412870" in few.profile.not_cpu


def test_rule_co1_perf_tools_tcpretrans_header_with_dashes_is_read_and_its_s_form_left_to_ftrace():
    """Rule CO1, motivated by realworld-probe-co case 2651 (perf-tools' tcpretrans on a server whose
    ICMP frag-needed messages reached a sibling behind ECMP): the ftrace-based perf-tools script
    prints its direction column as `--` where bcc prints `T>`, then the same rows, one per
    retransmitted segment. Read as the tcpretrans rows. The look-alike: with -s each row is
    followed by its kernel stack in ftrace's `=>` lines, and the ftrace reader keeps that form."""
    rows_only = read_paste((FIXTURES / "hand-perftools-tcpretrans-rule-co1-dash-dash-header-rows-only-"
                                       "tcp-retransmit-318.txt").read_text())
    assert rows_only.formats == ["bcc-tcpretrans"]
    assert reading(rows_only) == {(("tcp_retransmit_skb",), "", None): 9.0}
    with_stacks = read_paste((FIXTURES / "hand-perftools-tcpretrans-rule-co1-dash-dash-header-stacks-s-"
                                         "left-to-ftrace-318.txt").read_text())
    assert with_stacks.formats == ["ftrace-stack"]
    assert sum(leaf_weights(with_stacks).values()) == 2


def test_rule_ad3_a_few_interrupt_event_lines_beside_a_sampled_profile_are_an_excerpt():
    """Rule AD3, motivated by probe AD case 1526 (eight trace_pipe lines of a GPIO interrupt above a
    `perf top -C 0` of 38K samples): fewer than ten interrupt event lines are pasted to show which
    line fires, like a few perf script samples (an illustration): the sampled profile beside them is
    diagnosed. The look-alike: a trace of more events keeps its place ahead of a flat listing, and
    the few lines alone are still read."""
    def events(count):
        out = []
        for n in range(count // 2):
            ts = 4721.118203 + n * 0.000030
            out.append(f"          <idle>-0       [000] d.h1  {ts:.6f}: irq_handler_entry: irq=7 name=pinctrl_amd")
            out.append(f"          <idle>-0       [000] d.h1  {ts + 0.000004:.6f}: irq_handler_exit: irq=7 ret=handled")
        return "\n".join(out) + "\n"
    top = ("\n# perf top -C 0\n"
           "Samples: 38K of event 'cycles', 4000 Hz, Event count (approx.): 14219011874 lost: 0/0 drop: 0/0\n"
           "Overhead  Shared Object       Symbol\n"
           "  22.16%  [kernel]            [k] amd_gpio_irq_handler\n"
           "   5.06%  [kernel]            [k] __handle_irq_event_percpu\n"
           "   2.98%  [kernel]            [k] handle_fasteoi_irq\n"
           "   2.44%  [kernel]            [k] common_interrupt\n")
    few = read_paste(events(8) + top)
    assert few.profile.source_format == "perf-top"
    assert any(note.startswith("left out 1 event excerpt of fewer than 10 events") for note in few.notes)
    many = read_paste(events(24) + top)
    assert many.profile.source_format == "irq-events"
    assert read_paste(events(8)).profile.source_format == "irq-events"


def test_proc_softirqs_read_twice_is_a_window_of_per_cpu_deltas():
    """Rule O3, motivated by probe cases 1241 (all NIC queues on CPU 0: NET_RX grepped twice) and
    1254 (a healthy receiver whose profile has no CPU column): /proc/softirqs pasted twice is the
    collector's start and end snapshot, so the nic-softirq check sees which CPUs ran NET_RX in the
    window; a reading without the CPU header takes the other's; one reading is no window."""
    text = ("# grep -E 'CPU|NET_RX' /proc/softirqs; sleep 1; grep NET_RX /proc/softirqs\n"
            "                CPU0       CPU1       CPU2\n"
            "      NET_RX: 2918843127      15220      14873\n"
            "      NET_RX: 2919031344      15220      14874\n"
            "\n"
            "    19.20%  [k] igb_clean_rx_irq\n"
            "    11.02%  [k] __netif_receive_skb_core\n")
    sections = read_paste(text).sections
    assert sections["proc.softirqs@start"].split("\n") == ["                CPU0       CPU1       CPU2",
                                                          "      NET_RX: 2918843127      15220      14873"]
    assert sections["proc.softirqs"].split("\n")[1] == "      NET_RX: 2919031344      15220      14874"
    from flamediag.facts import build_facts_from_sections
    facts = build_facts_from_sections(sections)
    assert facts.get("softirq.delta.NET_RX.top_cpu") == 0 and facts.get("softirq.delta.NET_RX.top_share") > 0.99
    once = read_paste(text.replace("      NET_RX: 2919031344      15220      14874\n", ""))
    assert "proc.softirqs" not in once.sections


SOFT_LOCKUP_529 = """watchdog: BUG: soft lockup - CPU#11 stuck for 22s! [php-fpm7.4:30411]
CPU: 11 PID: 30411 Comm: php-fpm7.4 Not tainted 5.4.0-14-generic #17-Ubuntu
RIP: 0010:shrink_node+0x1a2/0x4c0
RSP: 0018:ffffb3c2c7a2fcb8 EFLAGS: 00000282 ORIG_RAX: ffffffffffffff13
Call Trace:
 do_try_to_free_pages+0xc9/0x360
 try_to_free_mem_cgroup_pages+0xf0/0x1b0
 reclaim_high.constprop.0+0x8e/0xd0
 mem_cgroup_handle_over_high+0x47/0x80
 exit_to_usermode_loop+0xa4/0x100"""


@pytest.mark.parametrize("prefix", [
    "Mar  4 09:17:12 web07 kernel: [ 3031.120412] ",         # traditional syslog, as before
    "Mar 04 09:17:12.123456 web07 kernel: ",                 # journalctl -o short-precise
    "2020-03-04T09:17:12.123456+01:00 web07 kernel: ",       # rsyslog file format, RFC 3339
    "2020-03-04T09:17:12+0100 web07 kernel: ",               # journalctl -o short-iso
    "[ 3031.120412] web07 kernel: ",                         # journalctl -o short-monotonic
    "[Wed Mar  4 09:17:12 2020] ",                           # dmesg -T
    "kern  :warn  : [ 3031.120412] ",                        # dmesg -x
])
def test_rule_n2_any_log_time_stamp_is_a_kernel_log_prefix_probe_n_1224_1226_1229(prefix):
    """Rule N2 (realworld-probe-n cases 1224, 1226, 1229 with other log tools' stamps): the trace
    is read as one stack with its CPU and task, not as stray symbols by the last-resort reader."""
    text = "\n".join(prefix + line for line in SOFT_LOCKUP_529.split("\n"))
    result = read_paste(text)
    assert result.formats == ["oops"]
    [(names, comm, cpu)] = reading(result)
    assert (comm, cpu) == ("php-fpm7.4", 11)
    assert names[-1] == "shrink_node" and "reclaim_high" in names


def test_rule_n1_powerpc_trace_reads_nip_frames_and_unreliable_first_frame_probe_n_1233():
    """Rule N1 (realworld-probe-n case 1233 on a POWER console): `[SP] [PC] .sym+off/size` frames,
    `NIP [addr] sym` as the leaf, an `(unreliable)` first frame that only repeats the NIP's function
    dropped, and `--- interrupt: 901 at sym` cutting the timer's frames off with `LR = sym`
    confirming the unreliable frame below it as the leaf's caller."""
    result = read_paste((FIXTURES / "hand-soft-lockup-ppc64-nip-sp-pc-frames-zone-reclaim.txt").read_text())
    [(names, comm, cpu)] = reading(result)
    assert (comm, cpu) == ("db2sysc", 24)
    assert names[-3:] == ("zone_reclaim", "shrink_zone", "shrink_inactive_list")
    result = read_paste((FIXTURES / "hand-rcu-stall-ppc64le-interrupt-at-zone-lock-free-pcppages.txt").read_text())
    [(names, comm, _)] = reading(result)
    assert comm == "worker"
    assert names[-3:] == ("free_unref_page_list", "free_pcppages_bulk", "_raw_spin_lock")
    assert "hrtimer_interrupt" not in names and "sched_show_task" not in names


def test_rule_n3_arm_lower_case_register_dump_stays_in_the_trace_probe_n_1228():
    """Rule N3 (the arm64 console form of realworld-probe-n case 1228): `pstate:`, `lr :`, `sp :` and
    `x29:` rows between the CPU line and `Call trace:` do not end the trace, so its one stack keeps
    the CPU and the ksoftirqd/2 task the header named."""
    name = "hand-soft-lockup-arm64-console-lowercase-registers-ksoftirqd-mvpp2-nic-softirq.txt"
    [(names, comm, cpu)] = reading(read_paste((FIXTURES / name).read_text()))
    assert (comm, cpu) == ("ksoftirqd/2", 2)
    assert names[-1] == "fib_table_lookup" and "mvpp2_poll" in names


def test_rule_n3_i386_eflags_line_stays_in_the_register_dump_probe_n_1221_1233():
    """Rule N3 (the i386 console form of realworld-probe-n's 2.6-era soft lockups): ` EFLAGS: ...
    Not tainted` on its own line does not end the trace, so `EIP is at _spin_lock` is the leaf of the
    frames printed below the register dump, one stack of java on CPU 1."""
    name = "hand-soft-lockup-i386-console-eflags-line-direct-reclaim-lru-lock.txt"
    [(names, comm, cpu)] = reading(read_paste((FIXTURES / name).read_text()))
    assert (comm, cpu) == ("java", 1)
    assert names[-3:] == ("shrink_zone", "shrink_active_list", "_spin_lock")


def test_rule_n3_x86_task_ti_line_stays_in_the_register_dump_probe_n_1232():
    """Rule N3 (the console form of realworld-probe-n case 1232): `task: <addr> ti: <addr>` does not
    end the trace, so the RIP's change_protection_range is the leaf of java's one stack on CPU 87."""
    name = "hand-soft-lockup-console-x86-task-ti-line-numa-balancing.txt"
    [(names, comm, cpu)] = reading(read_paste((FIXTURES / name).read_text()))
    assert (comm, cpu) == ("java", 87)
    assert names[-2:] == ("change_protection", "change_protection_range")


def test_rule_n4_s390_psw_paren_frame_and_last_breaking_event_probe_n_1222():
    """Rule N4 (the s390x form of realworld-probe-n case 1222): the PSW names the leaf, the
    parenthesised first entry is left out like a `?` one, the breaking-event entry is no caller."""
    name = "hand-soft-lockup-s390x-psw-paren-frame-last-breaking-event-zone-lock.txt"
    [(names, comm, cpu)] = reading(read_paste((FIXTURES / name).read_text()))
    assert (comm, cpu) == ("java", 2)
    assert names[-2:] == ("free_pcppages_bulk", "arch_spin_lock_wait")
    assert names.count("arch_spin_lock_wait") == 1


# --- rules AK1-AK2: what ticket systems and chat tools leave around a paste ----------------------
AK_FLAT = """# Samples: 240K of event 'cycles'
#
# Overhead  Command      Shared Object      Symbol
# ........  ...........  .................  ..............................
#
    47.36%  purge_worker  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
     6.12%  purge_worker  [kernel.kallsyms]  [k] ext4_orphan_add
     5.48%  purge_worker  [kernel.kallsyms]  [k] ext4_orphan_del
     1.44%  purge_worker  libc-2.17.so       [.] __GI___libc_unlink"""
AK_ROWS = [line.split() for line in AK_FLAT.split("\n")[5:]]
AK_UNCOUNTED = "\n".join(AK_FLAT.split("\n")[2:])     # a table carries no `# Samples:` line


def _ak_leaves(text):
    result = read_paste(text)
    assert result.formats == ["perf-report-flat"], result.formats
    return {name: round(weight, 2) for name, weight in leaf_weights(result).items()}


def test_rule_ak1_html_table_rows_are_columns_probe_ak_1664_1678():
    """Rule AK1, motivated by probe AK cases 1664 and 1678 (a flat report in a Confluence page's
    HTML table): a `<tr>` is a row, its `<td>`/`<th>` cells two spaces apart, as a Markdown table."""
    head = "<tr><th class=\"confluenceTh\">Overhead</th><th>Command</th><th>Shared&nbsp;Object</th><th>Symbol</th></tr>"
    rows = "".join(f"<tr><td class=\"confluenceTd\">{p}</td><td>{c}</td><td>{d}</td><td>{k} {s}</td></tr>\n"
                   for p, c, d, k, s in AK_ROWS)
    html = f"<p>Profile:</p>\n<table class=\"confluenceTable\"><tbody>\n{head}\n{rows}</tbody></table>\n"
    assert _ak_leaves(html) == _ak_leaves(AK_UNCOUNTED)


def test_rule_ak1_jira_table_and_inline_markup_probe_ak_1665_1672():
    """Rule AK1, motivated by probe AK cases 1665 (perf top as a Jira `||header||` table) and 1672
    (rows coloured with `{color:red}...{color}` inside `{code:java}`): the markup is not output."""
    table = "h4. perf\n\n||Overhead||Command||Shared Object||Symbol||\n" + "\n".join(
        f"|{p}|{c}|{d}|{k} {s}|" for p, c, d, k, s in AK_ROWS) + "\n\nThe box has free memory.\n"
    assert _ak_leaves(table) == _ak_leaves(AK_UNCOUNTED)
    lines = AK_FLAT.split("\n")
    coloured = "{code:java}\n" + "\n".join(lines[:5] + ["{color:red}" + lines[5] + "{color}"] + lines[6:]) + "\n{code}"
    assert _ak_leaves(coloured) == _ak_leaves(AK_FLAT)


def _aq_rows(text):
    result = read_paste(text)
    assert result.formats == ["perf-report-flat"], result.formats
    return sorted((record.comm, record.names()[-1], round(record.weight, 2)) for record in result.profile)


@pytest.mark.parametrize("delimiter", ["-- | -- | -- | --", "- | - | - | -", "|:-|--|-:|--|"])
def test_rule_aq1_table_delimiter_of_one_or_two_dashes_probe_aq_1783(delimiter):
    """Rule AQ1, found varying probe AQ case 1783 (a Kafka broker's flat report in a tracker
    comment): GFM allows a delimiter cell of a single dash, and GitHub writes `-- | --` for a
    table pasted from a spreadsheet or a web page; such a table is read as columns like `---`
    (the Command column holds `purge_worker`, not `| purge_worker | [kernel.kallsyms]`)."""
    rows = "\n".join(f"{p} | {c} | {d} | {k} {s}" for p, c, d, k, s in AK_ROWS)
    table = "Profile:\n\nOverhead | Command | Shared Object | Symbol\n{}\n" + rows + "\n\nThe box has free memory.\n"
    assert _aq_rows(table.format(delimiter)) == _aq_rows(table.format("--- | --- | --- | ---"))
    assert {comm for comm, _, _ in _aq_rows(table.format(delimiter))} == {"purge_worker"}


@pytest.mark.parametrize("gutter", [
    lambda n: f"{n:6d}\t",                 # cat -n, nl
    lambda n: f"{n}.".ljust(4),            # a pastebin's numbered view
    lambda n: f"{n:4d}   \u2502 ",         # bat
])
def test_rule_ak2_line_number_gutters_probe_ak_1663_1673_1674(gutter):
    """Rule AK2, motivated by probe AK cases 1663 (`cat -n`), 1673 (a pastebin's `12.` rows) and
    1674 (`bat`): consecutive line numbers in front of every line are a gutter, not a column."""
    numbered = "\n".join(gutter(8 + index) + line for index, line in enumerate(AK_FLAT.split("\n")))
    assert _ak_leaves(numbered) == _ak_leaves(AK_FLAT)


def test_rule_ak2_chat_log_prefixes_probe_ak_1662():
    """Rule AK2, motivated by probe AK case 1662 (an IRC log: `[14:02:19] <nick> ` before every row)."""
    chat = "[14:02:11] <mh> here it is\n" + "\n".join(f"[14:02:19] <mh> {line}" for line in AK_FLAT.split("\n"))
    assert _ak_leaves(chat) == _ak_leaves(AK_FLAT)


def test_rule_ak2_look_alikes_keep_their_numbers_and_markers():
    """Rule AK2's look-alikes: `/proc/interrupts` rows (`0:`), a short numbered run, a count column
    that only happens to grow, and the kernel's `<IRQ>` markers after a time stamp stay as they are."""
    from flamediag.paste.unwrap import unwrap
    interrupts = ["  0:         36   IO-APIC   2-edge      timer", "  1:          9   IO-APIC   1-edge      i8042",
                  "  2:          0   XT-PIC    cascade", "  3:          0   IO-APIC   3-edge", "  4:       1208   IO-APIC   4-edge  ttyS0"]
    assert unwrap("\n".join(interrupts)) == interrupts
    short = ["1. perf record -a", "2. perf report", "3. read the top", "4. fix it"]
    assert unwrap("\n".join(short)) == short
    counts = ["     3 kworker/0:1", "     9 kswapd0", "    14 java", "    20 sshd", "    31 java"]
    assert unwrap("\n".join(counts)) == counts
    cpus = ["CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE"] + [f"  {n}    0      0    {n} {n}:{n}:{n}:0          yes" for n in range(6)]
    assert unwrap("\n".join(cpus)) == cpus
    ps = ["  PID TTY          TIME CMD"] + [f"{n:5d} ?        00:00:0{n} {c}" for n, c in
                                             enumerate(["systemd", "kthreadd", "rcu_gp", "rcu_par_gp", "kworker/0:0H"], 1)]
    assert unwrap("\n".join(ps)) == ps
    trace = ["[12:01:02] <IRQ>", "[12:01:02]  net_rx_action+0x1a/0x40", "[12:01:02] <EOI>", "[12:01:02] <TASK>"]
    assert unwrap("\n".join(trace)) == trace


# --- rule BD1: a perf TUI row after `| ` is a quoted report, not a call graph's rail ----------------
BD_TUI = """    While the GC is compacting, the app's threads queue on mmap_lock:

    -   19.47%  HeapTaskDaemon  [kernel.kallsyms]  [k] rwsem_down_read_slowpath
         rwsem_down_read_slowpath
         down_read
         mfill_atomic
         userfaultfd_ioctl
    -   12.06%  RenderThread  [kernel.kallsyms]  [k] rwsem_down_write_slowpath
         rwsem_down_write_slowpath
         down_write_killable
         __do_sys_mprotect
    +    7.92%  app_main  [kernel.kallsyms]  [k] rwsem_down_read_slowpath"""


def test_rule_bd1_pipe_quoted_tui_rows_probe_bd_2051_2060():
    """Rule BD1, motivated by probe BD cases 2051 and 2060 (callee graphs of perf's TUI, `-   19.47%
    comm` rows, indented in a commit message): quoted with `| `, every quoted line starts with blanks,
    so none showed that the bar is a quote marker and the graph was read with the bars as rails. A
    fold marker, blanks and a percentage is a report row that never hangs off a rail: the run is quoted."""
    from flamediag.paste.unwrap import unwrap
    quoted = "\n".join("| " + line for line in BD_TUI.split("\n"))
    assert unwrap(quoted) == unwrap(BD_TUI)
    assert reading(read_paste(quoted)) == reading(read_paste(BD_TUI))


def test_rule_bd1_look_alike_graph_rails_at_column_0_stay():
    """Rule BD1's look-alike: a `--stdio` call graph pasted from its rails on, at column 0; its
    branches are `--21.30%--frame` (no blank after the dashes) and its frames start with blanks:
    the bars are rails and stay."""
    from flamediag.paste.unwrap import unwrap
    graph = ["|", "|--21.30%--futex_q_lock", "|          futex_wait_setup", "|          __futex_wait",
             "|", " --15.22%--futex_wake", "           do_futex"]
    assert unwrap("\n".join(graph)) == graph


PROBE_BG = ROOT / "test" / "fixtures" / "realworld-probe-bg"


def _probe_bg_ticket(prefix: str) -> str:
    path = next(PROBE_BG.glob(prefix + "-*.txt"))
    return path.read_text().split("# ---\n", 1)[1]


def test_rule_bg1_bpftrace_empty_kstack_entry_is_user_space_samples():
    """Rule BG1 (probe BG case 2102): `@[` + `]: N` (or `@[]: N`) counts the samples whose kernel
    stack was empty, taken in user space: busy time the map's shares include."""
    result = read_paste(_probe_bg_ticket("2102"))
    assert result.formats == ["bpftrace-kstack"]
    user = [r for r in result.profile if r.names() == ("[unknown]",)]
    assert [r.weight for r in user] == [7455] and user[0].frames[0].kind == "user"
    assert result.profile.total() == 41 + 58 + 97 + 120 + 212 + 7455
    oneline = read_paste("# bpftrace -e 'profile:hz:99 { @[kstack] = count(); }'\nAttaching 1 probe...\n\n"
                         "@[\n    futex_wake+140\n    do_futex+1048\n]: 40\n@[]: 960\n")
    assert oneline.profile.total() == 1000
    assert {r.names()[-1]: r.weight for r in oneline.profile} == {"futex_wake": 40, "[unknown]": 960}


def test_rule_bg2_bcc_frames_keep_cplusplus_parameters_and_symbol_versions():
    """Rule BG2 (probe BG case 2109): bcc prints demangled C++ frames with their parameter list
    (`os_event::wait_low(long)`) and glibc's versioned symbols (`pthread_cond_wait@@GLIBC_2.3.2`);
    the multi-line reader reads every stack of an offcputime listing, so it is known as off-CPU."""
    result = read_paste(_probe_bg_ticket("2109"))
    assert result.formats == ["bcc-stacks"] and len(list(result.profile)) == 4
    assert result.profile.not_cpu.startswith("this is off-CPU time")
    names = {n for r in result.profile for n in r.names()}
    assert any(n.startswith("pthread_cond_wait") for n in names)
    assert any(n.startswith("os_event::wait_low") for n in names)


def test_rule_br1_bcc_profile_banner_gives_one_cpus_samples_over_the_window():
    """Rule BR1 (probe BG case 2105): bcc profile's banner `Sampling at 99 Hertz ... for 10 secs`
    says one CPU gives 990 samples over the run; without `for N secs` (ended at Ctrl-C) the window
    is unknown, and a percentage listing has none."""
    assert read_paste(_probe_bg_ticket("2105")).profile.cpu_window == 990.0
    stack = "    compact_zone\n    kcompactd\n    kthread\n    -                kcompactd0 (38)\n        31\n"
    ctrl_c = read_paste("Sampling at 49 Hertz of all threads by kernel stack... Hit Ctrl-C to end.\n^C\n" + stack)
    assert ctrl_c.formats == ["bcc-stacks"] and ctrl_c.profile.cpu_window is None
    timed = read_paste("Sampling at 49 Hertz of all threads by kernel stack for 20 secs.\n" + stack)
    assert timed.profile.cpu_window == 980.0
    assert read_paste((FIXTURES / "real-perf61-top-futex.txt").read_text()).profile.cpu_window is None


def test_rule_bz2_bpftrace_script_with_an_exiting_interval_gives_one_cpus_samples_over_the_window():
    """Rule BZ2 (for rule BZ1; the idle-host class of a variant of probe BX case 2428 in bpftrace's
    layout): `profile:hz:99 { @[kstack] = count(); } interval:s:20 { exit(); }` quoted above the map
    says one CPU gives 1980 samples over the run. A script ended by hand (no exiting interval), or one
    with another probe whose counts are events, gives no window."""
    idle = read_paste((FIXTURES / "hand-bpftrace-kstack-rule-bz2-idle-host-nic-interrupts-515.txt").read_text())
    assert idle.formats == ["bpftrace-kstack"] and idle.profile.cpu_window == 1980.0
    busy = read_paste((FIXTURES / "hand-bpftrace-kstack-rule-bz2-one-rx-queue-saturates-one-cpu-515.txt").read_text())
    assert busy.profile.cpu_window == 1980.0
    stack = "@[\n    net_rx_action+314\n    __do_softirq+214\n]: 40\n"
    by_hand = read_paste("# bpftrace -e 'profile:hz:99 { @[kstack] = count(); }'\nAttaching 1 probe...\n^C\n\n" + stack)
    assert by_hand.formats == ["bpftrace-kstack"] and by_hand.profile.cpu_window is None
    events = read_paste("# bpftrace -e 'kprobe:napi_complete_done { @[kstack] = count(); } "
                        "profile:hz:99 { @n = count(); } interval:s:5 { exit(); }'\nAttaching 3 probes...\n\n" + stack)
    assert events.profile.cpu_window is None


def test_rule_br2_hard_lockup_ipi_senders_behind_the_stuck_cpu_left_out():
    """Rule BR2 (probe BK case 2190): the hard-lockup watchdog names CPU 5, stuck in the HBA's
    interrupt handler; the NMI backtraces of CPUs 17 and 29 wait in smp_call_function_many for the
    IPI it cannot take and are left out. When the named CPU is itself such a sender nothing is."""
    path = next((ROOT / "test" / "fixtures" / "realworld-probe-bk").glob("2190-*.txt"))
    result = read_paste(path.read_text().split("# ---\n", 1)[1].split("# evidence:", 1)[0])
    assert [(r.cpu, r.names()[-1]) for r in result.profile] == [(5, "_base_process_reply_queue")]
    assert any("waiting in a cross-CPU call" in note for note in result.notes)
    sender = read_paste((FIXTURES / "hand-hard-lockup-stuck-cpu-waits-in-tlb-flush-ipi-rule-br2-tlb-shootdown.txt").read_text())
    assert sorted(r.cpu for r in sender.profile) == [7, 19]


def test_rule_by1_top_or_pidstat_row_gives_a_background_threads_part_of_one_cpu():
    """Rule BY1 (probe BI case 2151): a pasted `top` row of a kernel thread (VIRT, RES, SHR 0) or a
    `pidstat -u` row without user time gives the part of one CPU the thread takes (%CPU / 100).
    ksmd at 100 % of one CPU of 40 is the ksm-scanning playbook's background thread, busy: its
    compare rows at 5 % of a guest-heavy perf top name the problem at medium. The look-alike: ksmd
    at 8 % of one CPU in top, its rows most of a quiet host's few busy samples, is left out."""
    from flamediag.match import match_playbook
    from flamediag.playbooks import load_all
    from flamediag.scoring import busy_background
    ksm = next(b for b in load_all() if b.id == "ksm-scanning")
    path = next((ROOT / "test" / "fixtures" / "realworld-probe-bi").glob("2151-*.txt"))
    ticket = read_paste(path.read_text().split("# ---\n", 1)[1].split("# evidence:", 1)[0])
    assert ticket.profile.thread_cpu == {"ksmd": 1.0}
    busy = match_playbook(ksm, ticket.profile)
    assert busy.busy_thread == ("ksmd", 1.0) and "100 % of one CPU" in busy_background(busy).text
    quiet = read_paste((FIXTURES / "hand-top-perftop-comm-ksmd-eight-pct-of-one-cpu-rule-by1-none-61.txt").read_text())
    assert quiet.profile.thread_cpu["ksmd"] == 0.08
    left = match_playbook(ksm, quiet.profile)
    assert left.busy_thread is None and left.matched == 0


def _assert_kswapd_listing_named_by_top(quiet_fixture: str, cpu_share: float, generic_fixture: str):
    """The quiet paste's listing is kswapd0's, at cpu_share of one CPU, and matches nothing of
    kswapd-spin; the look-alike's keeps the name of kswapd's main loop and matches."""
    from flamediag.match import match_playbook
    from flamediag.playbooks import load_all
    kswapd = next(b for b in load_all() if b.id == "kswapd-spin")
    quiet = paste(quiet_fixture)
    assert {r.comm for r in quiet.profile} == {"kswapd0"}
    assert quiet.profile.thread_cpu["kswapd0"] == pytest.approx(cpu_share)
    assert match_playbook(kswapd, quiet.profile).matched == 0
    generic = paste(generic_fixture)
    assert {r.comm for r in generic.profile} == {"kswapd"}
    assert match_playbook(kswapd, generic.profile).matched > 0


def test_rule_cc1_a_one_process_listing_is_the_task_of_the_top_row_with_its_pid_probe_cc_2479():
    """Rule CC1 (realworld-probe-cc case 2479, whose kswapd at an eighth of a CPU pasted as `perf top`
    of that one thread): a listing of one process (`(target_pid: 97)` in perf top's header) is the task
    of the pasted `top` row with that PID, also when the table comes after the listing; kswapd0 at
    12.6 % of one CPU is then a quiet background thread (rule BY1). The look-alike: the top rows pasted
    are of other PIDs, so the listing keeps the name of its main loop's thread (rule AB3)."""
    _assert_kswapd_listing_named_by_top(
        "hand-perf-top-target-pid-top-row-below-rule-cc1-kswapd0-eighth-of-cpu-none-515.txt", 0.126,
        "hand-perf-top-target-pid-other-pid-in-top-rule-cc1-kswapd-spin-515.txt")


def test_rule_cc2_top_rows_cut_out_by_grep_are_top_rows_probe_cc_2479():
    """Rule CC2 (realworld-probe-cc case 2479's `top -b -n1 | grep kswapd`): rows of top's task table
    that grep cut out from their header, under the `top ... | grep` command line that cut them, give
    each kernel thread's part of one CPU as the table would (rule BY1). The look-alike: `ps aux | grep`
    rows, whose %CPU is the average since the thread started, are not read."""
    grepped = paste("hand-top-grep-rows-rule-cc2-kswapd0-eighth-of-cpu-sort-comm-sym-none-515.txt")
    assert grepped.profile.thread_cpu == {"kswapd0": pytest.approx(0.129), "nfsd": pytest.approx(0.013)}
    ps = paste("hand-ps-aux-grep-rule-cc2-lifetime-cpu-not-top-kswapd-spin-515.txt")
    assert ps.profile.thread_cpu == {}


def test_rule_ci1_a_kswapd_loop_listing_is_the_one_kswapd_thread_top_shows_probe_ci_2573():
    """Rule CI1 (realworld-probe-ci case 2573, kswapd0's ordinary background reclaim during a large copy,
    pasted as `top` and a kernel-only `perf report --sort sym` of kswapd): a one-thread listing named by
    its main loop (balance_pgdat: kswapd, rule AB3) is the thread of that family the pasted `top` rows
    show, when they show one: kswapd0 at 17 % of one CPU is then a quiet background thread (rule BY1).
    The look-alike: top shows kswapd0 and kswapd1, so the listing could be either node's and keeps the
    loop's name."""
    _assert_kswapd_listing_named_by_top(
        "hand-top-perf-report-sort-sym-rule-ci1-kswapd0-sixth-of-cpu-kernel-rows-none-419.txt", 0.169,
        "hand-top-perf-report-sort-sym-rule-ci1-kswapd0-kswapd1-two-nodes-stays-generic-kswapd-spin-419.txt")


def test_rule_cw1_htop_task_table_is_read_as_tops():
    """Rule CW1: htop's task table (PID USER PRI NI VIRT RES SHR S CPU% MEM% TIME+ Command, htop 3's
    sort mark, sizes with units, the tree view's glyphs, whole command lines) gives the same rows as
    top's: a kernel-only listing of kswapd's loop is the one kswapd thread htop shows (rule CI1),
    kswapd0 at 17 % of one CPU, a quiet background thread (rule BY1). A process's row keeps its
    program's base name (`rsync -a ...` is rsync). The look-alike: htop's meter bars and header summary
    alone (`0[|||...100.0%]`, `Tasks:`, `Load average:`) are no rows, and the listing stays kswapd's."""
    from flamediag.paste import TaskTables
    quiet = "hand-htop-tree-perf-report-sort-sym-rule-cw1-kswapd0-sixth-of-cpu-none-61.txt"
    rows = TaskTables.read((FIXTURES / quiet).read_text().splitlines()).top
    assert [(r.comm, r.cpu, r.kernel) for r in rows if r.cpu] == [
        ("rsync", 31.4, False), ("kswapd0", 16.9, True), ("kworker/u16:1-flush-8:32", 2.6, True)]
    assert {r.comm for r in rows} >= {"init", "sshd", "bash", "kthreadd"}
    _assert_kswapd_listing_named_by_top(
        quiet, 0.169, "hand-htop-meters-perf-report-sort-sym-rule-cw1-meter-bars-no-rows-kswapd-spin-61.txt")
    assert paste("hand-htop-meters-perf-report-sort-sym-rule-cw1-meter-bars-no-rows-kswapd-spin-61.txt").profile.thread_cpu == {}


def test_rule_cw2_perf_report_pid_is_a_one_process_listing():
    """Rule CW2: `perf report --pid 97` (perf-report(1): `--pid`, `--tid`, a comma-separated list) shows
    one process's samples, so the top row with PID 97 names the listing (rule CC1): kswapd0 at 12.6 % of
    one CPU, where top's two kswapd threads left rule CI1 no choice. The look-alike: `--pid 97,98` is two
    processes, and the listing keeps the name of kswapd's main loop (rule AB3)."""
    _assert_kswapd_listing_named_by_top(
        "hand-perf-report-pid-rule-cw2-kswapd0-of-two-nodes-eighth-of-cpu-none-515.txt", 0.126,
        "hand-perf-report-pid-list-rule-cw2-two-pids-not-one-process-kswapd-spin-515.txt")


def test_rule_cb2_an_entry_listed_then_shown_with_its_graph_counts_once_probe_bv_2390():
    """Rule CB2 (realworld-probe-bv case 2390, a commit message quoting the flat rows and then the
    top entry again with its call graph): an entry printed a second time with every column equal (share
    to the hundredth, command, object, symbol) and a graph below it is the same samples, counted once
    with their graph; an entry of another run at another share (a patch's after run) is not dropped."""
    result = paste("hand-perf-report-flat-then-graph-rule-cb2-top-entry-shown-twice-futex-415.txt")
    total = sum(r.weight for r in result.profile)
    assert total == pytest.approx(45.12 + 6.80 + 4.35 + 3.90 + 3.10 + 2.75 + 1.95, abs=0.1)
    assert not [r for r in result.profile if r.names() == ["_raw_spin_lock"]]
    assert any(ordered(r.names(), "futex_wake", "_raw_spin_lock") for r in result.profile)
    runs = paste("hand-perf-report-before-after-graphs-rule-cb2-same-symbol-other-share-two-runs.txt")
    assert sum(r.weight for r in runs.profile) == pytest.approx(4.08 + 31.40, abs=0.1)


def test_rule_cf2_an_unbound_kworkers_pool_id_bounds_the_cpu_count():
    """Rule CF2 (realworld-probe-bw case 2416: a healthy 1 Gbit/s download whose `top` gives 3.6 % si
    and whose `--sort comm,sym` listing names `kworker/u24:3`, nic-softirq at medium before): the
    kernel numbers its worker pools per-CPU first, two for each possible CPU (four from 6.9), so an
    unbound worker's pool id is at least twice the CPUs: 12 at most, and 3.6 % of 12 CPUs is 43 % of
    one CPU of softirq in all (rule CF1's cap). Per-CPU kworkers (`kworker/3:1H`), `ksoftirqd/N` and
    2.6.36-3.8's `kworker/u:0` bound nothing; printed counts win over the pool's bound, and of two the
    larger is kept."""
    from flamediag.paste.irqtime import cpu_bound
    none = read_paste((FIXTURES / "hand-top-perf-report-comm-rule-cf2-unbound-kworker-bounds-cpus-rss-download-none-515.txt").read_text())
    assert round(none.profile.interrupt_cpus[0], 3) == 0.192 and "pool u16" in none.profile.interrupt_cpus[1]
    busy = read_paste((FIXTURES / "hand-top-perf-report-comm-rule-cf2-unbound-kworker-one-queue-saturates-one-cpu-nic-softirq-515.txt").read_text())
    assert round(busy.profile.interrupt_cpus[0], 3) == 0.976
    path = next((ROOT / "test" / "fixtures" / "realworld-probe-bw").glob("2416-*.txt"))
    ticket = read_paste(path.read_text().split("# ---\n", 1)[1].split("# evidence:", 1)[0])
    assert ticket.profile.interrupt_cpus[1].startswith("top's %Cpu(s) line gives 3.6 %") and "12 CPUs at most" in ticket.profile.interrupt_cpus[1]
    assert cpu_bound(["kworker/3:1H", "ksoftirqd/11", "kworker/u:0"]) is None
    assert cpu_bound(["kworker/u24:3-f", "kworker/u25:0"]) == (12, "an unbound kworker's pool u24")
    assert cpu_bound(["kworker/u24:3", "PerfTop: 100 irqs/sec  (all, 16 CPUs)"]) == (16, "perf top's header")
