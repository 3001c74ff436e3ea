"""read_paste on real and hand-written ticket pastes: formats, frames, ancestry, weights."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.errors import UserError  # noqa: E402
from flamediag.facts import build_facts_from_sections  # noqa: E402
from flamediag.paste import read_paste  # noqa: E402
from flamediag.paste.unwrap import unwrap  # noqa: E402

sys.path.insert(0, str(ROOT / "test" / "python"))

from paste_helpers import FIXTURES, ordered, paste  # noqa: E402


def stacks(result):
    """(names root->leaf, weight) per record, heaviest first."""
    return sorted(((r.names(), r.weight) for r in result.profile), key=lambda s: -s[1])


# --- the seed: RHEL 6 perf report TUI excerpt inside Japanese prose ------------------

def test_hadoop_blog_zone_reclaim_call_graph_read_inside_prose():
    result = paste("blog-hadoop-zone-reclaim-ja.txt")
    assert result.formats == ["perf-report-callgraph"]
    assert result.profile.ancestry is True
    top_names, top_weight = stacks(result)[0]
    assert ordered(top_names, "system_call_fastpath", "zone_reclaim", "shrink_inactive_list", "_spin_lock_irq")
    assert top_names[-1] == "_spin_lock_irq"
    # fractal (2.6.32 default) percentages: 33.01 x 98.89 % x 89.56 % x 79.46 % x 99.76 %
    assert top_weight == pytest.approx(33.01 * .9889 * .8956 * .7946 * .9976, abs=0.01)
    assert result.skipped_lines > 50                     # the Japanese prose
    assert any("skipped" in note for note in result.notes)


def test_hadoop_blog_branches_keep_their_whole_weight():
    result = paste("blog-hadoop-zone-reclaim-ja.txt")
    under_lock = sum(w for names, w in stacks(result) if names[-1] == "_spin_lock_irq")
    assert under_lock == pytest.approx(33.01, abs=0.02)
    folded = dict((names, w) for names, w in stacks(result) if len(names) == 1)
    assert folded[("_spin_lock",)] == pytest.approx(14.24)
    tcp = [names for names, _ in stacks(result) if names[0] == "tcp_sendmsg"]
    assert tcp and tcp[0][-1] == "_spin_lock_irq"      # `+ 17.54% tcp_sendmsg`: folded, root side unknown


def test_hadoop_blog_numactl_distances_become_evidence():
    result = paste("blog-hadoop-zone-reclaim-ja.txt")
    facts = build_facts_from_sections(result.sections)
    assert "node distances:" in result.sections["numactl.hardware"]
    assert facts.get("numa.max_distance") == 21


# --- perf report --stdio in every layout, real perf 6.1 output of one recording ------

GRAPHS = ["real-perf61-report-callee-futex.txt", "real-perf61-report-caller-futex.txt",
          "real-perf61-report-children-futex.txt", "real-perf61-report-fractal-futex.txt"]


@pytest.mark.parametrize("name", GRAPHS)
def test_call_graph_layouts_give_full_root_first_stacks(name):
    result = paste(name)
    assert result.formats == ["perf-report-callgraph"]
    assert result.profile.ancestry is True
    wake = [names for names, _ in stacks(result) if names[-1] == "_raw_spin_unlock_irqrestore"]
    assert any(ordered(n, "syscall", "entry_SYSCALL_64_after_hwframe", "__x64_sys_futex", "futex_wake",
                       "try_to_wake_up", "_raw_spin_unlock_irqrestore") for n in wake)
    user = [f for r in result.profile for f in r.frames if f.name == "syscall"]
    assert user and all(f.kind == "user" for f in user)


@pytest.mark.parametrize("name", GRAPHS)
def test_call_graph_self_time_equals_the_flat_report(name):
    """Samples ending in a symbol (its self time) add up to the flat report's Overhead."""
    flat = {r.frames[0].name: r.weight / 20 for r in paste("real-perf61-report-flat-futex.txt").profile}
    graph = Counter()
    for record in paste(name).profile:
        graph[record.frames[-1].name] += record.weight / 20        # "# Samples: 2K": weights are samples
    for symbol in ("finish_task_switch", "_raw_spin_unlock_irqrestore", "do_syscall_64", "futex_wake"):
        assert graph[symbol] == pytest.approx(flat[symbol], abs=0.06), symbol


def test_call_graph_weights_are_scaled_to_the_sample_count():
    result = paste("real-perf61-report-callee-futex.txt")    # "# Samples: 2K", entries sum to 43.92 %
    assert result.profile.total() == pytest.approx(2000 * 0.4392, rel=0.01)


def test_absolute_and_fractal_percentages_agree():
    absolute = dict(stacks(paste("real-perf61-report-callee-futex.txt")))
    fractal = dict(stacks(paste("real-perf61-report-fractal-futex.txt")))
    heaviest = max(absolute, key=absolute.get)
    assert fractal[heaviest] == pytest.approx(absolute[heaviest], rel=0.02)


@pytest.mark.parametrize("name,fmt", [("real-perf61-report-flat-futex.txt", "perf-report-flat"),
                                      ("real-perf61-report-flat-children-futex.txt", "perf-report-flat"),
                                      ("real-perf61-top-futex.txt", "perf-top"),
                                      ("html-br-perf61-top-futex.txt", "perf-top")])
def test_flat_profiles_have_no_ancestry(name, fmt):
    result = paste(name)
    assert result.formats == [fmt]
    assert result.profile.ancestry is False
    assert all(len(r.frames) == 1 for r in result.profile)
    assert any("no ancestry" in note for note in result.notes)
    names = {r.frames[0].name: r.frames[0] for r in result.profile}
    assert names["finish_task_switch"].kind == "kernel"       # `.isra.0` stripped, [k] kept as kind


def test_perf_top_reads_the_last_screen_only():
    result = paste("real-perf61-top-futex.txt")
    weights = {r.frames[0].name: r.weight for r in result.profile}
    assert weights["finish_task_switch"] == 13.15              # last screen; the first said 12.28
    assert "read perf top (last of 3 screens): 15 symbols" in result.notes


def test_flat_children_report_uses_the_self_column():
    weights = {r.frames[0].name: r.weight for r in paste("real-perf61-report-flat-children-futex.txt").profile}
    assert weights["finish_task_switch"] == pytest.approx(12.10 * 20)    # "# Samples: 2K": 12.10 % of 2000
    assert "entry_SYSCALL_64_after_hwframe" not in weights     # 0.00 % self


def test_perf_2632_fractal_callee_layout():
    result = paste("hand-perf2632-report-fractal-zone-reclaim.txt")
    weights = dict(stacks(result))
    write = [n for n in weights if n[0] == "0x3fda40e6fd"][0]
    assert ordered(write, "system_call_fastpath", "zone_reclaim", "_spin_lock_irq")
    assert weights[write] == pytest.approx(45.12 * .975 * .80 * 480, abs=1)   # old banner "# Events: 48K cycles"
    idle = [n for n in weights if n[-1] == "intel_idle"]
    assert ("start_secondary", "cpu_idle", "cpuidle_idle_call", "intel_idle") in idle


# --- other stack formats ------------------------------------------------------------

def test_bcc_profile_folded_with_delimiter_and_annotations():
    result = paste("hand-bcc-profile-folded-futex.txt")
    assert result.formats == ["bcc-profile-folded"]
    record = max(result.profile, key=lambda r: r.weight)
    assert record.comm == "futex_hammer"
    assert record.frames[0].name == "syscall" and record.frames[0].kind == "user"
    assert all(f.kind == "kernel" for f in record.frames[1:])
    assert "-" not in record.names() and not any(n.endswith("_[k]") for n in record.names())


def test_crlf_and_fence_do_not_change_the_bcc_reading():
    plain = sorted((r.names(), r.weight) for r in paste("hand-bcc-profile-folded-futex.txt").profile)
    wrapped = read_paste((FIXTURES / "crlf-fenced-bcc-profile-folded-futex.txt").read_bytes().decode())
    assert sorted((r.names(), r.weight) for r in wrapped.profile) == plain


def test_bpftrace_kstack_map():
    result = paste("real-bpftrace-kstack-futex.txt")
    assert result.formats == ["bpftrace-kstack"]
    top_names, top_weight = stacks(result)[0]
    assert top_weight == 44
    assert top_names[0] == "entry_SYSCALL_64_after_hwframe" and top_names[-1] == "_raw_spin_unlock_irqrestore"
    assert result.skipped_lines == 0                           # "Attaching 1 probe..." belongs to the map


def test_proc_pid_stack_counts_tasks():
    result = paste("real-proc-stack-futex.txt")
    assert result.formats == ["proc-stack"]
    waiting = [w for names, w in stacks(result) if names[-1] == "futex_do_wait"]
    assert waiting == [3.0]                                    # three threads show the same stack
    assert all(r.comm == "futex_hammer" for r in result.profile)
    assert result.skipped_lines == 0


def test_perf_script_excerpt_in_markdown():
    result = paste("md-fenced-perf-script-excerpt-futex.txt")
    assert result.formats == ["perf-script"]
    assert result.profile.total() == 12
    assert result.skipped_lines == 2                           # the two prose lines


# --- kernel traces ------------------------------------------------------------------

def test_crash_bt_a_drops_the_nmi_handler_and_uses_exception_rip():
    result = paste("hand-crash-bt-a-zone-reclaim-rhel6.txt")
    assert result.formats == ["crash-bt"]
    by_cpu = {r.cpu: r for r in result.profile}
    assert set(by_cpu) == {0, 3, 5}
    assert by_cpu[0].names()[-1] == "intel_idle"               # crash_nmi_callback .. nmi dropped
    assert ordered(by_cpu[3].names(), "system_call_fastpath", "zone_reclaim", "_spin_lock_irq")
    panic = by_cpu[5]                                          # soft-lockup panic: watchdog IRQ frames dropped
    assert panic.names()[-1] == "_spin_lock_irq" and "panic" not in panic.names()
    assert panic.context == "task"


def test_rule_ax1_arm64_crash_stop_ipi_and_interrupt_entry_are_dropped():
    """Rule AX1, motivated by case 1922 of realworld-probe-ax (arm64 interrupt entries mark hardirq
    context): crash's arm64 CPU-stop IPI (crash_save_cpu .. el1h_64_irq) is the reporter, not the
    task's work, so the task's own frames stay in task context."""
    text = (
        'crash> bt -a\n'
        'PID: 4242     TASK: ffff07ff8a1c2e00  CPU: 3    COMMAND: "worker"\n'
        ' #0 [ffff80008a2bfb10] crash_save_cpu at ffffa8b1e8b3c2a4\n'
        ' #1 [ffff80008a2bfcc0] handle_IPI at ffffa8b1e86247a8\n'
        ' #2 [ffff80008a2bfd20] ipi_handler at ffffa8b1e8624a0c\n'
        ' #3 [ffff80008a2bfd40] handle_percpu_devid_irq at ffffa8b1e86f61f0\n'
        ' #4 [ffff80008a2bfd80] generic_handle_domain_irq at ffffa8b1e86ee3c4\n'
        ' #5 [ffff80008a2bfdb0] gic_handle_irq at ffffa8b1e8610158\n'
        ' #6 [ffff80008a2bfe10] el1_interrupt at ffffa8b1e9158d14\n'
        ' #7 [ffff80008a2bfe30] el1h_64_irq_handler at ffffa8b1e9159844\n'
        ' #8 [ffff80008a2bfe40] el1h_64_irq at ffffa8b1e86112f4\n'
        ' #9 [ffff8000a41cbb90] osq_lock at ffffa8b1e86c1e28\n'
        '#10 [ffff8000a41cbbc0] rwsem_optimistic_spin at ffffa8b1e86c0a54\n'
        '#11 [ffff8000a41cbc20] rwsem_down_read_slowpath at ffffa8b1e9169a30\n'
        '#12 [ffff8000a41cbcc0] down_read at ffffa8b1e9169cb8\n'
        '#13 [ffff8000a41cbcd0] lock_mm_and_find_vma at ffffa8b1e87dc39c\n'
        '#14 [ffff8000a41cbd10] do_page_fault at ffffa8b1e86396b0\n'
    )
    result = read_paste(text)
    (record,) = list(result.profile)
    assert record.names()[-1] == "osq_lock"
    assert not {"gic_handle_irq", "crash_save_cpu", "el1h_64_irq"} & set(record.names())
    assert record.context == "task"


def test_rhel6_soft_lockup_ignores_stale_frames():
    result = paste("hand-soft-lockup-rhel6-zone-reclaim.txt")
    assert result.formats == ["oops"]
    (record,) = list(result.profile)
    assert record.comm == "java"
    assert record.names()[-1] == "_spin_lock_irq"              # the RIP line is the leaf
    assert "mem_cgroup_iter" not in record.names()             # `? mem_cgroup_iter` is stale
    assert ordered(record.names(), "page_fault", "zone_reclaim", "shrink_inactive_list", "_spin_lock_irq")


def test_modern_lockup_stall_and_hung_task():
    result = paste("hand-rcu-stall-soft-lockup-5x-node-reclaim.txt")
    records = {(r.comm, r.cpu): r for r in result.profile}
    lockup, stall = records[("postgres", 7)], records[("postgres", 3)]
    for record in (lockup, stall):
        assert record.names()[-1] == "native_queued_spin_lock_slowpath"
        assert ordered(record.names(), "asm_exc_page_fault", "node_reclaim", "_raw_spin_lock_irq")
        assert "watchdog_timer_fn" not in record.names() and "rcu_dump_cpu_stacks" not in record.names()
    # the hung task sleeps (its stack ends in the context switch): not CPU time, so left out
    assert ("kworker/u16:2", None) not in records
    assert any("left out 1 trace of blocked tasks" in note for note in result.notes)
    assert result.skipped_lines == 0


HUNG_TASK_5X = """\
[40213.883112] INFO: task java:81234 blocked for more than 122 seconds.
[40213.883250] task:java            state:D stack:    0 pid:81234 ppid:     1 flags:0x00000000
[40213.883260] Call Trace:
[40213.883265]  <TASK>
[40213.883270]  __schedule+0x203/0x560
[40213.883290]  schedule+0x43/0xb0
[40213.883301]  rwsem_down_read_slowpath+0x313/0x3b0
[40213.883315]  down_read+0x43/0x90
[40213.883327]  do_user_addr_fault+0x410/0x690
[40213.883339]  exc_page_fault+0x67/0x150
[40213.883350]  asm_exc_page_fault+0x1e/0x30
[40213.883380]  </TASK>
"""


def test_kernel_traces_that_end_in_the_context_switch_are_not_cpu_time():
    """Rule: a hung-task warning or a task dump (`task:... state:`) whose stack ends in __schedule
    shows where a task waits, not what a CPU runs; traces that are all like that are not a CPU
    profile. Motivated by the probe cases 629-none-hung-task-rwsem-io-schedule-slow-storage (tasks
    blocked in rwsem_down_read_slowpath behind NFS I/O) and 625-none-rcu-stall-kthread-starved-vcpu-preempted
    (the starved grace-period kthread's dump) of realworld-probe-new."""
    hung = read_paste(HUNG_TASK_5X)
    assert hung.profile.not_cpu and "blocked tasks" in hung.profile.not_cpu


def test_sysrq_l_leaves_out_the_writer_and_keeps_idle_cpus():
    result = paste("hand-sysrq-l-clocksource-hpet-6x.txt")
    assert result.formats == ["sysrq-l"]
    by_cpu = {r.cpu: r for r in result.profile}
    assert set(by_cpu) == {1, 2, 3}                            # cpu 0 ran `echo l`
    assert by_cpu[1].names()[-1] == "read_hpet" and "nmi_handle" not in by_cpu[1].names()
    assert by_cpu[3].names() == ("intel_idle",)


def test_html_pre_with_entities_and_br():
    html = paste("html-pre-soft-lockup-node-reclaim.txt")
    plain = paste("hand-rcu-stall-soft-lockup-5x-node-reclaim.txt")
    assert sorted(r.names() for r in html.profile) == sorted(r.names() for r in plain.profile)


def test_markdown_nested_quotes_and_fences():
    quoted = paste("md-quoted-fenced-perf61-report-callee-futex.txt")
    plain = paste("real-perf61-report-callee-futex.txt")
    assert dict(stacks(quoted)) == pytest.approx(dict(stacks(plain)))


# --- mixed pastes, evidence, failures ----------------------------------------------

def test_mixed_ticket_prefers_call_stacks_and_reads_the_metrics():
    result = paste("mixed-ticket-futex-top-report-metrics.txt")
    assert result.formats == ["perf-top", "perf-report-callgraph"]
    assert result.profile.source_format == "perf-report-callgraph"
    assert result.profile.ancestry is True
    assert any("ignored 1 flat profile" in note for note in result.notes)
    assert set(result.sections) == {"mpstat", "vmstat", "sysctl", "thp", "clocksource"}
    facts = build_facts_from_sections(result.sections)
    assert facts.get("sysctl.vm.zone_reclaim_mode") == 0
    assert facts.get("thp.enabled") == "madvise"
    assert facts.get("clocksource.current") == "tsc"
    assert facts.get("mpstat.sys_pct.avg") == pytest.approx(77.81, abs=0.5)


def test_no_stacks_is_a_data_error_listing_the_formats():
    with pytest.raises(UserError) as raised:
        paste("no-stacks-mpstat-prose.txt")
    assert raised.value.code == 65
    message = str(raised.value)
    assert message.startswith("no stacks found; understood formats:")
    for fmt in ("perf report", "perf top", "crash bt", "/proc/PID/stack", "bpftrace", "bcc profile"):
        assert fmt in message


@pytest.mark.parametrize("text", ["", "\n\n", "just words\n", "> quoted\n```\n```\n", "12.5% of nothing\n"])
def test_prose_alone_has_no_stacks(text):
    with pytest.raises(UserError):
        read_paste(text)


def test_unwrap_keeps_kernel_markers_but_drops_formatting():
    lines = unwrap("<p>x</p><pre><code>&lt;IRQ&gt;<br/> net_rx_action+0x1a/0x40<br>&lt;/IRQ&gt;</code></pre>")
    assert lines == ["", "x", "<IRQ>", " net_rx_action+0x1a/0x40", "</IRQ>"]
    assert unwrap("> > ```\r\n> >     12.10%  a  [k] b\r\n> > ```") == ["    12.10%  a  [k] b"]


def test_random_text_never_raises_anything_but_user_error():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list("-+|%.;:[]<>@#?()0123456789 \n\tabcfkx_") + ["--1.00%--", "[k] ", "Call Trace:\n",
                                                                                "@[\n", "]: 3\n", "---", " <IRQ>\n"])

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.lists(alphabet, max_size=80).map("".join))
    def never_crashes(text):
        reads_or_finds_no_stacks(text)

    never_crashes()


def reads_or_finds_no_stacks(text: str) -> None:
    """A paste is read into weighted stacks, or refused with exit code 65: nothing else."""
    try:
        result = read_paste(text)
    except UserError as error:
        assert error.code == 65
        return
    assert all(r.frames and r.weight >= 0 for r in result.profile)


def test_fuzz_long_whitespace_and_mixed_prefixes_never_raise():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    prefix = st.sampled_from(["", "> ", ">> ", "> > ", "| ", "> | ", "|", " | ", "\t"])
    body = st.sampled_from(["    12.50%  java  [kernel.kallsyms]  [k] _raw_spin_lock", "            |",
                            "            ---_raw_spin_lock", "               |--50.00%--futex_wake",
                            "--1.00%--x", " _raw_spin_lock+0x1e/0x30", "Call Trace:", "kernel: ", "x" * 80,
                            " => futex_wake", " 0)   0.1 us    |  f();", "    -   a (1)", "        3", ""])
    spaces = st.integers(min_value=0, max_value=3000).map(lambda n: " " * n)
    line = st.tuples(prefix, spaces, body, spaces).map("".join)

    @hypothesis.settings(max_examples=120, deadline=None)
    @hypothesis.given(st.lists(line, max_size=40).map("\n".join))
    def never_raises(text):
        reads_or_finds_no_stacks(text)

    never_raises()


def test_sort_cpu_column_gives_each_stack_its_cpu():
    result = paste("real-perf61-report-sort-cpu-pipes.txt")     # perf report --sort cpu,comm,dso,sym
    assert result.profile.cpus() == [0, 1]
    by_cpu = {(r.comm, r.cpu, r.names()[-1]) for r in result.profile}
    assert ("pingpong", 0, "_raw_spin_unlock_irqrestore") in by_cpu
    assert ("pingpong", 1, "_raw_spin_unlock_irqrestore") in by_cpu
    assert result.skipped_lines == 0                          # perf's own header lines belong to the report


def test_samples_column_is_not_a_cpu():
    line = "    13.51%           273  pingpong  [kernel.kallsyms]  [k] _raw_spin_unlock_irqrestore\n"
    record = next(iter(read_paste("# Overhead       Samples  Command  Shared Object  Symbol\n" + line).profile))
    assert record.cpu is None and record.comm == "pingpong"


@pytest.mark.parametrize("text", [
    "a;" + "b " * 20000 + "x\n",                       # folded-looking line without a count
    "a" + "; b" * 10000 + " z\n",
    "  12.5%  " + "[k " * 10000 + "\n",                 # entry-looking line without a symbol
    "Call Trace:\n" + " ?" * 20000 + "foo+0x1/0x2\n",
    "vm." + "a" * 20000 + " = " + "1 " * 10000 + "\n",
])
def test_long_hostile_lines_are_rejected_not_hung(text):
    with pytest.raises(UserError):
        read_paste(text)


def test_semicolon_in_a_graph_name_cannot_forge_a_frame():
    text = "    5.00%  a  [kernel.kallsyms]  [k] evil;frame\n            |\n            ---evil;frame\n               caller\n"
    names = [n for r in read_paste(text).profile for n in r.names()]
    assert "evil:frame" in names and "frame" not in names


# --- --children: an entry without a graph of its own takes the caller chains shown for it ---------

CHILDREN_GRAPHLESS_LEAF = """\
# Children      Self  Command          Shared Object      Symbol
# ........  ........  ...............  .................  .....................................
#
    24.31%     0.02%  cache-server     [kernel.kallsyms]  [k] task_work_run
            |
             --24.29%--task_work_run
                       task_numa_work
                       change_prot_numa
                       change_pte_range
    24.05%    19.82%  cache-server     [kernel.kallsyms]  [k] change_pte_range
     9.80%     9.77%  cache-server     cache-server       [.] lookup_entry
"""


def test_children_entry_without_graph_takes_caller_chains_from_callee_trees():
    """Rule: in a --children report an entry pasted without its own graph (folded in the TUI, cut
    by the author) still has its callers printed in the callee trees of the entries above it; its
    Self share runs along those chains, scaled down to Self. Motivated by the probe case
    606-numa-balancing-task-numa-work-children-rhel8 (also 609, 612 of realworld-probe-new)."""
    result = read_paste(CHILDREN_GRAPHLESS_LEAF)
    weights = {tuple(r.names()): r.weight for r in result.profile}
    chain = ("task_work_run", "task_numa_work", "change_prot_numa", "change_pte_range")
    assert chain in weights and ("change_pte_range",) not in weights
    total = sum(weights.values())
    assert weights[chain] / total == pytest.approx(19.82 / (19.82 + 9.77 + 0.02), rel=0.02)
    assert any("took caller chains" in note for note in result.notes)


# --- LKP (0-day kernel test robot) reports: the perf-profile rows ----------------------------

LKP_ROWS = """\
     13862           -69.4%       4243        netperf.Throughput_Mbps
      0.00           +20.3       20.31 \u00b1  4%  perf-profile.calltrace.cycles-pp.page_counter_try_charge.try_charge_memcg.mem_cgroup_charge_skmem.__sk_mem_raise_allocated.__sk_mem_schedule
      0.00           +25.1       25.08 \u00b1  3%  perf-profile.calltrace.cycles-pp.try_charge_memcg.mem_cgroup_charge_skmem.__sk_mem_raise_allocated.__sk_mem_schedule.tcp_sendmsg_locked
      0.00           +20.9       20.91 \u00b1  4%  perf-profile.children.cycles-pp.page_counter_try_charge
      0.00           +20.2       20.22 \u00b1  4%  perf-profile.self.cycles-pp.page_counter_try_charge
      1.20            -0.4        0.80        perf-profile.self.cycles-pp.reclaim_high.constprop.0
     30.85            -9.9       20.94 \u00b1  2%  perf-profile.self.cycles-pp.copy_user_enhanced_fast_string
"""


def test_lkp_perf_profile_rows_read_tested_commit_self_with_calltrace_callers():
    """Rule: an LKP report's `perf-profile.self.<event>.<sym>` rows are a flat profile of the
    tested commit (the last value column, `± N%` deviations and the change column skipped), and
    `perf-profile.calltrace` rows (callee first) give a self leaf its callers, stitched towards the
    root where one row continues another; GCC suffixes stay part of the name. Motivated by the probe
    case 601-memcg-charge-page-counter-netperf-lkp-perf-profile of realworld-probe-new."""
    result = read_paste(LKP_ROWS)
    assert result.formats == ["lkp-perf-profile"]
    weights = {tuple(r.names()): r.weight for r in result.profile}
    chain = ("tcp_sendmsg_locked", "__sk_mem_schedule", "__sk_mem_raise_allocated", "mem_cgroup_charge_skmem",
             "try_charge_memcg", "page_counter_try_charge")
    assert weights[chain] == pytest.approx(20.22, abs=0.01)
    assert weights[("copy_user_enhanced_fast_string",)] == pytest.approx(20.94)
    assert weights[("reclaim_high",)] == pytest.approx(0.80)        # one name, suffixes normalised away
    assert result.profile.ancestry is True


LKP_IMPROVEMENT_ROWS = """\
   2081344           +52.6%    3176129        vm-scalability.throughput
     61.22 \u00b1  2%     -47.9       13.31 \u00b1  5%  perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock.rmqueue_bulk
     60.98 \u00b1  2%     -47.8       13.18 \u00b1  5%  perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath
     12.40            +20.1       32.51        perf-profile.self.cycles-pp.clear_page_erms
      4.02            +6.3       10.33        perf-profile.self.cycles-pp.do_access
"""


def test_lkp_comparison_reads_the_column_with_more_busy_kernel_time():
    """Rule E6: an LKP comparison is a before/after pair in one table. The tested commit's column is
    read when it shows as much busy kernel time (a regression report, LKP_ROWS above); a fix's commit
    message quoting an improvement report shows the old kernel's cost in the parent's column, which is
    then read. Motivated by case 1006-lru-lock-folio-batch-large-folio-lkp-calltrace of
    realworld-probe-e."""
    result = read_paste(LKP_IMPROVEMENT_ROWS)
    weights = {tuple(r.names()): r.weight for r in result.profile}
    assert weights[("rmqueue_bulk", "_raw_spin_lock", "native_queued_spin_lock_slowpath")] == pytest.approx(60.98)
    assert weights[("clear_page_erms",)] == pytest.approx(12.40)
    assert any("the parent's column" in note for note in result.notes)
    regression = read_paste(LKP_ROWS)
    assert {tuple(r.names()): r.weight for r in regression.profile}[("copy_user_enhanced_fast_string",)] == \
        pytest.approx(20.94)
    assert not any("the parent's column" in note for note in regression.notes)


LKP_CALLTRACE_ONLY_ROWS = """\
     31.05 \u00b1  3%     +17.92       48.97 \u00b1  2%  perf-profile.calltrace.cycles-pp.shrink_page_list.shrink_inactive_list.shrink_lruvec.shrink_node.do_try_to_free_pages
     30.80 \u00b1  3%     +17.88       48.68 \u00b1  2%  perf-profile.calltrace.cycles-pp.do_try_to_free_pages.try_to_free_pages.__alloc_pages_slowpath.__alloc_pages_nodemask.pagecache_get_page
     12.44 \u00b1  4%      +8.07       20.51 \u00b1  3%  perf-profile.calltrace.cycles-pp.__remove_mapping.shrink_page_list.shrink_inactive_list.shrink_lruvec.shrink_node
      9.60 \u00b1  2%      +5.31       14.91 \u00b1  4%  perf-profile.calltrace.cycles-pp.native_queued_spin_lock_slowpath._raw_spin_lock_irqsave.__remove_mapping.shrink_page_list.shrink_inactive_list
     25.11 \u00b1  2%     -10.40       14.71 \u00b1  3%  perf-profile.calltrace.cycles-pp.copy_user_enhanced_fast_string.copyout.copy_page_to_iter.generic_file_buffered_read.xfs_file_buffered_aio_read
"""


def test_rule_ax3_lkp_calltrace_rows_are_inclusive_and_stitch_several_frames():
    """Rule AX3, motivated by case 1930 of realworld-probe-ax (a vm-scalability report listing only
    calltrace rows): each row is the time through its chain, so what a row holds beyond the rows
    directly below it stays on its own chain (shrink_page_list's 48.97 less __remove_mapping's 20.51),
    and a row that starts inside a chain and reaches several frames further stitches it towards the
    root (the lock under __remove_mapping reaches try_to_free_pages). A row with nothing left beyond
    the rows below it (do_try_to_free_pages) adds nothing."""
    result = read_paste(LKP_CALLTRACE_ONLY_ROWS)
    weights = {tuple(r.names()): r.weight for r in result.profile}
    lock = [names for names in weights if names[-1] == "native_queued_spin_lock_slowpath"]
    assert len(lock) == 1 and lock[0][0] == "pagecache_get_page" and "try_to_free_pages" in lock[0]
    assert weights[lock[0]] == pytest.approx(14.91)
    residual = [w for names, w in weights.items() if names[-1] == "shrink_page_list"]
    assert residual == [pytest.approx(48.97 - 20.51)]
    assert not [names for names in weights if names[-1] == "do_try_to_free_pages"]
    assert sum(weights.values()) == pytest.approx(14.91 + (20.51 - 14.91) + (48.97 - 20.51) + 14.71)


LKP_SELF_ROWS_AND_UNLISTED_CALLTRACE = """\
     21.53           +41.2%      30.40        autonuma-benchmark.numa02_SMT.seconds
      3.12 \u00b1  6%     +11.4       14.52 \u00b1  4%  perf-profile.calltrace.cycles-pp.do_numa_page.__handle_mm_fault.handle_mm_fault.do_user_addr_fault.exc_page_fault
      1.90 \u00b1  7%      +8.1       10.00 \u00b1  5%  perf-profile.calltrace.cycles-pp.migrate_misplaced_page.do_numa_page.__handle_mm_fault.handle_mm_fault.do_user_addr_fault
      0.84 \u00b1 10%      +5.4        6.24 \u00b1  6%  perf-profile.calltrace.cycles-pp.change_pte_range.change_p4d_range.change_protection.change_prot_numa.task_numa_work
      0.71 \u00b1 10%      +4.6        5.31 \u00b1  6%  perf-profile.self.cycles-pp.change_pte_range
     43.50            -0.3       43.20        perf-profile.self.cycles-pp.do_access
"""


def test_rule_bt1_lkp_calltrace_rows_of_unlisted_leaves_keep_their_chain():
    """Rule BT1, motivated by case 2345 of realworld-probe-bt (an autonuma-benchmark report whose
    self rows list only change_pte_range and the benchmark's own loop): a calltrace row whose first
    frame has no self row is time in functions below the listing's cut, so it keeps its chain, less
    the rows directly below it (do_numa_page's 14.52 less migrate_misplaced_page's 10.00), and the
    self leaves keep theirs (change_pte_range along its own calltrace row). Together such rows fill
    no more than what the self rows leave unlisted."""
    result = read_paste(LKP_SELF_ROWS_AND_UNLISTED_CALLTRACE)
    weights = {tuple(r.names()): r.weight for r in result.profile}
    by_leaf = {names[-1]: w for names, w in weights.items()}
    assert by_leaf["migrate_misplaced_page"] == pytest.approx(10.0)
    assert by_leaf["do_numa_page"] == pytest.approx(14.52 - 10.0)
    assert by_leaf["change_pte_range"] == pytest.approx(5.31)
    numa = [names for names in weights if names[-1] == "migrate_misplaced_page"][0]
    assert numa[-2:] == ("do_numa_page", "migrate_misplaced_page") and "handle_mm_fault" in numa
    assert sum(weights.values()) <= 100.0 + 1e-6


def test_rule_bt1_unlisted_calltrace_rows_fit_in_what_the_self_rows_leave():
    """Rule BT1's cap: self rows that already cover 90 % leave 10 points, so a 40-point calltrace
    row of an unlisted leaf is scaled down to them (no sample counted twice)."""
    text = ("     90.00            +1.0       90.00        perf-profile.self.cycles-pp.clear_page_erms\n"
            "     40.00            +1.0       40.00        perf-profile.calltrace.cycles-pp.do_anonymous_page."
            "__handle_mm_fault.handle_mm_fault.do_user_addr_fault.exc_page_fault\n")
    weights = {tuple(r.names()): r.weight for r in read_paste(text).profile}
    assert sum(weights.values()) == pytest.approx(100.0)
    assert weights[("exc_page_fault", "do_user_addr_fault", "handle_mm_fault", "__handle_mm_fault",
                    "do_anonymous_page")] == pytest.approx(10.0)


CHILDREN_GRAPHLESS_TWO_COMMANDS = """\
# Children      Self  Command  Shared Object      Symbol
# ........  ........  .......  .................  .....................................
#
    40.00%     0.10%  worker   [kernel.kallsyms]  [k] do_futex
            |
             --39.90%--do_futex
                       futex_wake
                       _raw_spin_lock
                       native_queued_spin_lock_slowpath
    30.00%    30.00%  worker   [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
    10.00%    10.00%  kswapd0  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
"""


def test_children_entry_without_graph_takes_caller_chains_of_its_own_command_only():
    """The rule above, per command (--sort comm,...): kswapd0's lock does not borrow the worker's
    futex chain. realworld-probe-new case 609 motivated the rule."""
    result = read_paste(CHILDREN_GRAPHLESS_TWO_COMMANDS)
    by_comm = {(r.comm, tuple(r.names())): r.weight for r in result.profile}
    assert by_comm[("worker", ("do_futex", "futex_wake", "_raw_spin_lock", "native_queued_spin_lock_slowpath"))] == \
        pytest.approx(30.0, rel=0.01)
    assert by_comm[("kswapd0", ("native_queued_spin_lock_slowpath",))] == pytest.approx(10.0)


# --- rule S1: perf diff is two runs in one table (realworld-probe-s cases 1301, 1302, 1312) ----------

PERF_DIFF = """# Event 'cycles'
#
# Baseline  {col}  Shared Object      Symbol
# ........  .........  .................  ........................
#
    40.00%  {a:>9}  [kernel.kallsyms]  [k] _raw_spin_lock
    20.00%  {b:>9}  app                [.] compute
            {c:>9}  [kernel.kallsyms]  [k] clear_page_erms
"""


def test_rule_s1_perf_diff_reads_the_run_with_more_busy_kernel_time_probe_s_1301():
    """Baseline holds the lock (the broken kernel diffed against the fix): the baseline is read."""
    result = read_paste(PERF_DIFF.format(col="Delta Abs", a="-35.00%", b="+10.00%", c="+2.00%"))
    assert result.formats == ["perf-diff"]
    weights = {r.names()[-1]: r.weight for r in result.profile}
    assert weights == {"_raw_spin_lock": 40.0, "compute": 20.0}      # the row only in the second run: not here
    assert not result.profile.ancestry
    assert any("diagnosed the baseline run" in n for n in result.notes)


def test_rule_s1_perf_diff_second_run_is_baseline_plus_delta_probe_s_1312():
    """The good kernel as baseline, the regression in the deltas: the second run is read."""
    result = read_paste(PERF_DIFF.format(col="Delta Abs", a="+30.00%", b="-15.00%", c="+2.00%"))
    weights = {r.names()[-1]: r.weight for r in result.profile}
    assert weights == pytest.approx({"_raw_spin_lock": 70.0, "compute": 5.0, "clear_page_erms": 2.0})
    assert any("diagnosed the second run (baseline + delta)" in n for n in result.notes)


def test_rule_s1_perf_diff_ratio_is_a_factor_not_a_command_probe_s_1302():
    result = read_paste(PERF_DIFF.format(col="    Ratio", a="0.100000", b="3.000000", c=""))
    weights = {r.names()[-1]: r.weight for r in result.profile}
    assert weights == {"_raw_spin_lock": 40.0, "compute": 20.0}      # baseline 40 vs 4 in the second run
    assert all(r.comm == "" for r in result.profile)


def test_rule_s1_perf_diff_weighted_diff_keeps_the_baseline_only():
    result = read_paste(PERF_DIFF.format(col="Weighted diff", a="-120034", b="+99120", c="+5000"))
    weights = {r.names()[-1]: r.weight for r in result.profile}
    assert weights == {"_raw_spin_lock": 40.0, "compute": 20.0}
    assert any("only the baseline has shares" in n for n in result.notes)


def test_rule_s4_typed_comparison_is_not_folded_and_reads_the_busier_column_probe_s_1309():
    """A comparison typed by hand: `symbol  share  share` rows under a `function  run  run` header."""
    from flamediag.folded import is_folded
    text = ("function                  baseline   per-vma\n"
            "rwsem_down_read_slowpath    27.3       0.4\n"
            "_raw_spin_lock_irq           9.8       0.6\n"
            "clear_page_erms              6.6      24.1\n")
    assert not is_folded(text.encode())
    result = read_paste(text)
    assert result.formats == ["typed-comparison"]
    assert {r.names()[-1]: r.weight for r in result.profile} == {
        "rwsem_down_read_slowpath": 27.3, "_raw_spin_lock_irq": 9.8, "clear_page_erms": 6.6}
    assert any("read baseline, the run with the most busy kernel time" in n for n in result.notes)


# --- where user code ends in a chain printed without kinds --------------------------------

def _kinds(names):
    from flamediag.paste.common import split_kernel_user
    return [frame.kind for frame in split_kernel_user(names)]


def test_a_kernel_mode_fault_under_a_syscall_leaves_the_syscall_kernel_code():
    chain = ["main", "read", "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_read",
             "copy_user_enhanced_fast_string", "asm_exc_page_fault", "exc_page_fault", "handle_mm_fault"]
    assert _kinds(chain) == ["user", "user"] + ["kernel"] * 7


def test_an_interrupt_taken_in_the_idle_loop_leaves_the_idle_loop_kernel_code():
    chain = ["secondary_startup_64", "start_secondary", "cpu_startup_entry", "do_idle", "default_idle",
             "asm_common_interrupt", "common_interrupt", "__irq_exit_rcu", "__do_softirq", "net_rx_action"]
    assert set(_kinds(chain)) == {"kernel"}


def test_an_arm64_el0_vector_splits_user_from_kernel():
    chain = ["start_thread", "worker", "__GI___pread64", "el0t_64_sync", "el0t_64_sync_handler", "el0_svc",
             "do_el0_svc", "invoke_syscall", "__arm64_sys_pread64", "filemap_read"]
    assert _kinds(chain) == ["user"] * 3 + ["kernel"] * 7


OLD_PERF_TOP_KSWAPD = """perf top -p $(pgrep kswapd0):

------------------------------------------------------------------------------
   PerfTop:    1001 irqs/sec  kernel:100.0%  exact:  0.0% [1000Hz cycles],{wrap}(target_pid: 47)
------------------------------------------------------------------------------

             samples  pcnt function                     DSO
             _______ _____ ____________________________ _________________

             3902.00 24.8% shrink_slab                  [kernel.kallsyms]
             2120.00 13.5% balance_pgdat                [kernel.kallsyms]
"""


@pytest.mark.parametrize("wrap", ["  ", "\n", "\n  "])
def test_rule_x3_perftop_banner_wrapped_by_mail_keeps_the_listing_whole_probe_x_1397(wrap):
    """A mail client wrapped the 2.6.3x PerfTop banner before its target `(target_pid: 47)`: the
    banner's tail is part of the banner, so the listing still starts at it and the command line
    above still says whose samples they are."""
    result = read_paste(OLD_PERF_TOP_KSWAPD.format(wrap=wrap))
    assert result.formats == ["perf-top"]
    assert {r.comm for r in result.profile} == {"kswapd0"}
    assert {r.names()[-1] for r in result.profile} == {"shrink_slab", "balance_pgdat"}


def test_rule_x4_lock_stat_rows_wrapped_by_mail_read_as_words_probe_x_1393():
    """A /proc/lock_stat table quoted in a cover letter (realworld-probe-x case 1393): the rows of
    200 columns that a mail client wrapped at 72 give the same lock classes, waits and callers as
    the table as printed; the spinning rwlock's sides keep their read / write spinning frame."""
    import textwrap
    case = next((FIXTURES.parent / "realworld-probe-x").glob("1393-*.txt"))
    table = case.read_text(encoding="utf-8").split("# ---\n", 1)[1]
    wrapped = "\n".join(piece for line in table.split("\n")
                        for piece in (textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False)
                                      if len(line) > 72 else [line]))
    read = [sorted((r.names(), round(r.weight)) for r in read_paste(text).profile) for text in (table, wrapped)]
    assert read[0] == read[1]
    assert read_paste(wrapped).formats == ["lock-stat"]
    leaves = {names[-2:] for names, _ in read[0]}
    assert ("ip6_pol_route", "_raw_write_lock") in leaves and ("ip6_ins_rt", "_raw_read_lock") in leaves


def test_rule_x4_lock_stat_class_that_sleeps_is_named_by_its_last_part():
    """A mutex's own wait_lock spins; mmap_sem, i_mutex_key#3 and s_umount_key#24 sleep."""
    from flamediag.paste.lockcon import read_lock_stat
    rows = ["lock_stat version 0.3"] + [
        f"   {name}:   10   10   0.10   5.00   {wait}   20   90   0.10   2.00   30.00"
        for name, wait in (("&lock->wait_lock", "400.00"), ("&mm->mmap_sem-W", "9000.00"),
                           ("&sb->s_type->i_mutex_key#3", "9000.00"), ("&type->s_umount_key#24", "9000.00"))]
    block = read_lock_stat(rows, 0)
    assert [(tuple(f.name for f in s[0]), s[1]) for s in block.stacks] == [(("_raw_spin_lock",), 400.0)]


# --- rule U3: a flat listing and the call graph of one of its entries --------------------------

_U3_FLAT = """  28.41%  mysqld  [kernel.kallsyms]  [k] isolate_freepages_block
  21.30%  mysqld  [kernel.kallsyms]  [k] _raw_spin_lock_irqsave
   7.95%  mysqld  [kernel.kallsyms]  [k] migrate_pages
   5.12%  mysqld  [kernel.kallsyms]  [k] clear_page_erms

and with perf report -g:

"""
_U3_GRAPH = """    {share}%  mysqld  [kernel.kallsyms]  [k] _raw_spin_lock_irqsave
            |
            ---_raw_spin_lock_irqsave
               |
               |--{share}%--try_to_wake_up
               |          wake_up_q
               |          futex_wake
"""


def test_rule_u3_a_graph_of_a_listed_entry_at_its_share_joins_the_listing_probe_u_1334():
    result = read_paste(_U3_FLAT + _U3_GRAPH.format(share="21.30"))
    assert any(note.startswith("joined the flat listing") for note in result.notes)
    leaves = {record.frames[-1].name for record in result.profile}
    assert {"isolate_freepages_block", "migrate_pages", "_raw_spin_lock_irqsave"} <= leaves
    assert result.profile.ancestry


def test_rule_u3_a_graph_at_another_share_is_another_run_and_is_not_joined():
    result = read_paste(_U3_FLAT + _U3_GRAPH.format(share="3.10"))
    assert not any(note.startswith("joined the flat listing") for note in result.notes)
    assert {record.frames[-1].name for record in result.profile} == {"_raw_spin_lock_irqsave"}


@pytest.mark.parametrize("indent", ["", "  "])
def test_rule_q2_callee_fragment_bare_head_is_the_chains_leaf_probe_q_1423(indent):
    """A callee fragment pasted in a mail without perf's `---` (realworld-probe-q case 1423): the bare
    names right above the first `|--NN%--` branch are the leaf and the callers every branch shares,
    so each chain ends in the spin lock; the prose line above them is no frame."""
    fragment = "\n".join(indent + line for line in (
        "native_queued_spin_lock_slowpath",
        "_raw_spin_lock_bh",
        "|--60.0%-- xs_tcp_data_recv",
        "|          tcp_read_sock",
        " --40.0%-- xprt_reserve_xprt_cong",
        "           xprt_reserve"))
    result = read_paste("and the slow path comes from:\n\n" + fragment + "\n")
    assert result.formats == ["perf-report-callgraph"]
    chains = sorted((r.names(), round(r.weight)) for r in result.profile)
    assert [names[-2:] for names, _ in chains] == [("_raw_spin_lock_bh", "native_queued_spin_lock_slowpath")] * 2
    assert {names[-3] for names, _ in chains} == {"xs_tcp_data_recv", "xprt_reserve_xprt_cong"}


def test_rule_q3_folded_chain_wrapped_from_its_share_probe_q_1434():
    """`perf report -g folded` quoted and wrapped at 72 by a mail client (realworld-probe-q case 1434):
    a chain has no spaces, so the client can only break it from its share; the share alone on a line
    takes the chain from the next one, and the report reads as before the wrap."""
    case = next((FIXTURES.parent / "realworld-probe-q").glob("1434-*.txt"))
    report = case.read_text(encoding="utf-8").split("# ---\n", 1)[1]
    import textwrap
    wrapped = "\n".join(piece for line in report.split("\n")
                        for piece in (textwrap.wrap("> " + line, 72, break_long_words=False, break_on_hyphens=False)
                                      if len(line) > 70 else ["> " + line]))
    assert "\n> 22.90%\nret_from_fork;" in wrapped
    read = [sorted((r.names(), round(r.weight, 2)) for r in read_paste(text).profile) for text in (report, wrapped)]
    assert read[0] == read[1]


# --- probe set AE: perf script without the DSO column; a cpupower line a mail client wrapped ----

def test_rule_ae1_perf_script_frames_without_dso_column_probe_ae_1551():
    """`perf script -F ...,ip,sym,symoff` (realworld-probe-ae case 1551) prints each frame as its
    address and symbol without `(dso)`: the samples read as perf script, the `ffff...` frames as
    kernel code and the lower addresses as user code, the same stacks as with perf's DSO column."""
    case = next((FIXTURES.parent / "realworld-probe-ae").glob("1551-*.txt"))
    ticket = case.read_text(encoding="utf-8").split("# ---\n", 1)[1]
    result = read_paste(ticket)
    assert result.formats == ["perf-script"]
    assert len(list(result.profile)) == 4
    assert all(frame.kind == "kernel" for record in result.profile for frame in record.frames)
    assert {r.comm for r in result.profile} == {"cc1plus", "ld"}
    with_dso = "\n".join(line + " ([kernel.kallsyms])" if line.startswith("\tffff") else line
                         for line in ticket.split("\n"))
    read = [sorted((r.names(), r.weight) for r in read_paste(text).profile) for text in (ticket, with_dso)]
    assert read[0] == read[1]
    user = read_paste("java 1 [000] 1.000001: cycles:\n\t    7f2a6c31a92d __lll_lock_wait+0x1d\n"
                      "\t    55d1c0a3b7e2 Store::commit+0x52\n")
    assert [[f.kind for f in r.frames] for r in user.profile] == [["unknown", "unknown"]]


def test_rule_ae2_cpupower_governor_line_cut_by_mail_wrap_probe_ae_1557():
    """cpupower's governor line (realworld-probe-ae case 1557) quoted and wrapped at 72: its last words
    went to the next line, and the line still names the governor from `may` on; prose that names a
    governor in the same words is not the tool's line."""
    from flamediag.paste.sections import find_sections
    for cut in ("may decide which speed to use", "may decide which speed to", "may"):
        sections, _ = find_sections(["analyzing CPU 0:", "  driver: intel_pstate",
                                     f'                  The governor "powersave" {cut}'])
        assert sections.get("cpufreq") == "cpu0: driver=intel_pstate governor=powersave"
    sections, _ = find_sections(['The governor "performance" may be better here'])
    assert "cpufreq" not in sections
# --- rule AG3: the workqueue's CPU-hog reports are counts, not CPU time (realworld-probe-ag case 1584) ---

def test_workqueue_hogged_cpu_reports_are_read_not_diagnosed_rule_ag3():
    """`workqueue: FUNC hogged CPU for >10000us N times, consider switching to WQ_UNBOUND` (6.5+)
    repeats a running count per work function, with any log prefix and a module after the name:
    each function is read once with its last count, and the block is not CPU time
    (realworld-probe-ag case 1584, a dmesg holding only these hints)."""
    result = paste("hand-dmesg-workqueue-hogged-cpu-reports-only-none.txt")
    assert result.formats == ["workqueue-cpu-hog-report"]
    assert sorted((names[-1], weight) for names, weight in stacks(result)) == [("gc_worker", 16.0),
                                                                              ("vmstat_update", 8.0)]
    assert all(names[:2] == ("worker_thread", "process_one_work") for names, _ in stacks(result))
    assert result.profile.not_cpu and "WQ_UNBOUND" not in result.profile.not_cpu


def test_workqueue_hog_report_tail_wrapped_away_is_still_read_rule_ag3():
    """A mail client wrapping the line after `times` leaves the count on the first line: still read."""
    result = read_paste("[ 12.0] workqueue: vmstat_shepherd hogged CPU for >10000us 4 times,\n"
                        "consider switching to WQ_UNBOUND\n")
    assert [(names[-1], weight) for names, weight in stacks(result)] == [("vmstat_shepherd", 4.0)]
    assert result.profile.not_cpu


# --- rule BH1: folded branches of a --children callee tree whose leaf entries were cut --------

CHILDREN_FOLDED_CUT = """\
> Children      Self  Command  Shared Object      Symbol
> -   52.61%     0.02%  tar      [kernel.kallsyms]  [k] mem_cgroup_try_charge
>    - 52.59% mem_cgroup_try_charge
>       - try_charge
>          - 51.98% try_to_free_mem_cgroup_pages
>             - do_try_to_free_pages
>                - shrink_node
>                   - 38.40% shrink_inactive_list
>                      + 27.11% shrink_page_list
>                      + 8.02% _raw_spin_lock_irq
>                   + 12.70% shrink_slab
> -   51.20%     0.00%  tar      [kernel.kallsyms]  [k] add_to_page_cache_lru
> [...]
"""

CHILDREN_FOLDED_LEAVES_PASTED = CHILDREN_FOLDED_CUT.replace("> [...]\n", """\
> +   30.05%    30.05%  tar      [kernel.kallsyms]  [k] shrink_page_list
> +   18.40%    18.40%  tar      [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath
""")


def test_rule_bh1_children_folded_branches_count_when_their_leaf_entries_were_cut():
    """Rule BH1: in a caller-ordered --children report the samples under a folded (`+`) branch end
    at leaves whose own entries (their Self) count them; a mail reply that quotes only the top
    Children entries cuts those entries off, so the folded branch is the only record left: it is
    counted as a stack ending at the folded frame, less the Self the pasted entries list. Motivated
    by the probe case 2129-memcg-reclaim-container-backup-limit-try-charge-children-quoted of
    realworld-probe-bh (also 2134)."""
    result = read_paste(CHILDREN_FOLDED_CUT)
    weights = {tuple(r.names()): r.weight for r in result.profile}
    chain = ("mem_cgroup_try_charge", "try_charge", "try_to_free_mem_cgroup_pages", "do_try_to_free_pages",
             "shrink_node", "shrink_inactive_list", "shrink_page_list")
    folded = 27.11 + 8.02 + 12.70
    assert weights[chain] == pytest.approx(27.11 * (folded - 0.02) / folded, rel=1e-3)
    assert weights[chain[:5] + ("shrink_slab",)] == pytest.approx(12.70 * (folded - 0.02) / folded, rel=1e-3)
    assert any("folded ('+') branches" in note for note in result.notes)


def test_rule_bh1_lookalike_folded_branches_stay_uncounted_when_the_leaf_entries_are_pasted():
    """Rule BH1's look-alike: the same tree with the leaves' own entries pasted below it. Their Self
    already counts every sample the folded branches hold, so no stack is taken from the branches
    (each sample counted once). Probe case 2129 of realworld-probe-bh with its leaves kept."""
    result = read_paste(CHILDREN_FOLDED_LEAVES_PASTED)
    names = [tuple(r.names()) for r in result.profile]
    assert not any(n[-1] in ("shrink_slab", "_raw_spin_lock_irq") for n in names)
    assert not any("folded ('+') branches" in note for note in result.notes)


# --- rule BH2: `| ` quoting around a message that quoted with `> ` and `| ` ----------------------

PIPE_AROUND_MIXED_QUOTE = """\
| On 05/21/2013 11:03 AM, a maintainer wrote:
| > On 05/21/2013 02:17 AM, a user wrote:
| > | perf top -C 0:
| > |
| > |    samples  pcnt function                     DSO
| > |    _______ _____ ____________________________ _________________
| > |
| > |   18402.00 24.1% ixgbevf_clean_rx_irq          [ixgbevf]
| > |    9311.00 12.2% __netif_receive_skb           [kernel.kallsyms]
| > |    7440.00  9.7% ip_rcv                        [kernel.kallsyms]
| >
| > Enable RPS in the guest.
"""


def test_rule_bh2_pipe_quote_around_a_mixed_quote_is_undone_level_by_level():
    """Rule BH2: a reply quoting with `| ` a message that itself quoted with `> ` and `| `
    (`| > | row`): the attribution lines carry fewer markers than the rows, so the outer `| `
    level is stripped first and the rows' inner `| ` level, empty quoted lines included, is the
    next run. Motivated by the probe case 2133-nic-softirq-ixgbevf-single-queue-ksoftirqd-pipe-
    and-angle-quote of realworld-probe-bh quoted once more with `| ` (test_paste_damage)."""
    plain = read_paste(PIPE_AROUND_MIXED_QUOTE.replace("| > | ", "").replace("| > |", "").replace("| > ", "")
                       .replace("| >", "").replace("| ", ""))
    result = read_paste(PIPE_AROUND_MIXED_QUOTE)
    assert result.formats == plain.formats == ["perf-top"]
    assert {tuple(r.names()): r.weight for r in result.profile} == {tuple(r.names()): r.weight for r in plain.profile}
    assert ("ixgbevf_clean_rx_irq",) in {tuple(r.names()) for r in result.profile}


def test_turbostat_table_beside_a_profile_is_evidence_and_alone_is_not_a_profile():
    """Rule CK1's reader: a pasted turbostat table (header line of column names, the `-` summary row,
    per-CPU rows, the `turbostat --interval 5` command above it) is the `turbostat` section, as mpstat
    is, never frames of the profile. Sample input::

        $ turbostat --interval 5 2>&1 | head -4
             CPU Avg_MHz   %Busy Bzy_MHz TSC_MHz     SMI  CPU%c1  CPU%c3  CPU%c6  CPU%c7 CoreTmp ...
               -     418   34.81    1201    2497       0   21.47    0.00   43.72    0.00      38 ...

    A paste holding only turbostat output has no stacks, and says so (exit 65), as before."""
    table = ["$ turbostat --interval 5 2>&1 | head -4",
             "     CPU Avg_MHz   %Busy Bzy_MHz TSC_MHz     SMI  CPU%c1  CPU%c3  CPU%c6  CPU%c7 CoreTmp",
             "       -     418   34.81    1201    2497       0   21.47    0.00   43.72    0.00      38",
             "       0     452   37.62    1201    2497       0   19.80    0.00   42.58    0.00      37"]
    listing = ["# Overhead  Symbol", "    34.17%  [k] intel_idle", "     5.12%  [.] row_search_for_mysql"]
    result = read_paste("\n".join(listing + [""] + table))
    assert result.sections["turbostat"].split("\n") == table
    assert {frame for record in result.profile for frame in record.names()} == {"intel_idle", "row_search_for_mysql"}
    facts = build_facts_from_sections(result.sections)
    assert (facts.get("turbostat.busy_pct"), facts.get("turbostat.bzy_mhz"), facts.get("turbostat.tsc_mhz")) == (34.81, 1201.0, 2497.0)
    with pytest.raises(UserError, match="no stacks found"):
        read_paste("\n".join(table))
