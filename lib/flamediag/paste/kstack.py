"""Kernel stack traces: oops / NMI backtrace / soft lockup / hung task / sysrq-l dumps from
dmesg, crash `bt` / `bt -a`, and /proc/PID/stack. Each trace is one task or CPU: weight 1.

    [  123.456789] NMI backtrace for cpu 1                       (dmesg, sysrq-l)
    [  123.456789] RIP: 0010:native_queued_spin_lock_slowpath+0x1a/0x40
    [  123.456789] Call Trace:
    [  123.456789]  <IRQ>                                         (context marker)
     <<EOE>>  [<ffffffff8113f2e0>] shrink_inactive_list+0x2f0/0x740   (2.6.32: end of the NMI stack)
    [  123.456789]  ? show_regs+0x..                              (`?`: stale, ignored)
    [  123.456789]  _raw_spin_lock+0x1e/0x30
     [<ffffffff8113f2e0>] shrink_inactive_list+0x2f0/0x740        (2.6.32)
     #6 [ffff8817f0f73d70] shrink_inactive_list at ffffffff8113f2e0 (crash bt)
    [<0>] kswapd+0x35f/0x370                                      (/proc/PID/stack)
     [<ffffffff80064b20>] .text.lock.spinlock+0x29/0x30           (2.6.9-2.6.18: out-of-line lock section)
     [<ffffffff8803a1c4>] :ext3:ext3_get_acl+0x34/0x180           (2.6.18 x86_64: `:module:` before a module's symbol)
    Call Trace:<ffffffff80178d8f>{__find_get_block+148} <ffffffff8017a6c9>{__getblk+36}   (2.6.9 x86_64, decimal offsets)

Frames are printed innermost first; the RIP line names the interrupted function, which is
the leaf. Frames printed before an inline RIP line (modern kernels print the interrupted
registers inside the trace) belong to the reporter — the watchdog or backtrace IPI — and
are dropped, as is everything on crash's NMI exception stack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Set, Tuple, Union

from ..kernelnames import ARM_IRQ_ENTRY, lock_caller, normalize
from ..offcpu import SWITCH_LEAVES
from .common import ELISION, REMARK, Block, Miss, finish, kernel_frames, plural

# A symbol as traces print it: `.text.lock.spinlock` (the out-of-line lock sections of 2.6.9-2.6.18)
# starts with a dot; 2.6.18 x86_64 puts a module's name before its symbols (`:ext3:ext3_get_acl`).
SYM = r"(?::[\w-]+:)?(?P<sym>\.?[A-Za-z_][\w.$]*)"
# 2.6.9 x86_64 (RHEL 4) prints several frames per line, offsets in decimal: `<ffffffff80178d8f>{__getblk+36}`.
OLD_FRAME = re.compile(r"<[0-9a-f]{8,16}>\{" + SYM + r"\+\d+\}")
# The time stamp before a log line's host and `kernel:` (rule N2): the traditional syslog one
# (`Nov 22 07:00:00`, with microseconds from `journalctl -o short-precise`), RFC 3339 / ISO 8601
# (rsyslog's file format, syslog-ng, `journalctl -o short-iso`: `2020-09-27T14:03:22.412345+02:00`)
# and the monotonic seconds of `journalctl -o short-monotonic` (`[ 3031.120412] host kernel:`).
LOG_STAMP = (r"(?:\w{3}\s+\d+\s+[\d:]+(?:\.\d+)?|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
             r"|\[\s*\d+\.\d+\])")
SYSLOG_HEAD = LOG_STAMP + r"\s+\S+\s+kernel:"
# `dmesg -T` prints the wall-clock time in brackets (`[Wed Mar  4 09:17:12 2020]`), `dmesg -x` the
# facility and level before it (`kern  :warn  : `).
DMESG_TIME = r"(?:\[\s*\d+\.\d+\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d+ [\d:]+ \d{4}\])"
DMESG_LEVEL = r"kern\s*:\s*(?:emerg|alert|crit|err|warn|notice|info|debug)\s*:"
PREFIX = re.compile(
    # a log quoted with an indent (git log's four spaces in a commit message, a mail's): the indent
    # belongs to the prefix when a syslog, printk level or dmesg time follows it
    r"^(?:\s+(?=(?:" + LOG_STAMP + r"\s+\S+\s+)?kernel:|<\d>|" + DMESG_TIME + "|" + DMESG_LEVEL + r"))?"
    r"(?:(?:" + LOG_STAMP + r"\s+\S+\s+)?kernel:\s*)?"  # syslog: "Nov 22 07:00:00 host kernel: ", "kernel: "
    r"(?:" + DMESG_LEVEL + r"\s*)?"
    r"(?:<\d>)?(?:" + DMESG_TIME + r"\s?)?(?:\[\s*[CT]\d+\]\s?)?"  # dmesg time, printk caller id
)
# PowerPC's show_stack (2.6.x-6.x, ppc64 and ppc64le) prints `[SP] [PC] sym+off/size`, the stack
# pointer and the return address in bare brackets, and marks the first frame ` (unreliable)`: its
# saved link register may predate the leaf, like x86's `?` entries (rule N1).
# s390 prints the first entry, the return register's address, in parentheses (`([<...>] sym+off/size)`):
# it may predate the leaf too (rule N4).
FRAME = re.compile(
    r"^\s*(?P<paren>\()?(?:\[<[0-9a-fx]+>\]\s*|\[[0-9a-f]{8,16}\]\s+\[[0-9a-f]{8,16}\]\s+)?(?P<stale>\?\s+)?(?:\[<[0-9a-fx]+>\]\s*)?"
    + SYM + r"\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?(?:\s+\[[\w.-]+\])?(?P<unreliable>\s+\(unreliable\)|(?(paren)\)))?"
    + REMARK + r"?\s*$"                 # an author's remark after the frame (rule W1)
)
PROC_STACK = re.compile(r"^\s*\[<[0-9a-fx]+>\]\s+" + SYM + r"\+0x[0-9a-f]+/0x[0-9a-f]+(?:\s+\[[\w.-]+\])?\s*$")
# `<<EOE>>` (2.6.2x-2.6.3x): the end of an exception stack (NMI, debug, double fault).
MARKER = re.compile(r"^\s*<(?P<close>/|<)?(?P<name>IRQ|EOI|NMI|TASK|SOFTIRQ|#DF|DB|MCE|VE|EOE)>?>\s*(?P<rest>.*)$")
# PowerPC names the interrupted instruction `NIP [c000000000123456] sym+off/size` (its register dump's
# `NIP: c000...` line carries no name), and inside a trace `--- interrupt: 901 at sym+off/size` (2.6.x-5.x;
# `--- Exception:` on 2.6.1x) where x86 prints an inline RIP: the frames above it are the interrupt.
# s390 names it in the PSW: `Krnl PSW : 0704c00180000000 000000000011a2b4 (arch_spin_lock_wait+0x54/0x98)` (rule N4).
RIP = re.compile(r"^\s*(?:(?:RIP|EIP|PC|pc)(?: is at)?\s*:?|NIP\s+\[[0-9a-f]+\]|---\s+(?:interrupt|Exception):\s+[0-9a-f]+\s+at"
                 r"|Krnl PSW\s*:\s*[0-9a-f]+\s+[0-9a-f]+\s+\()"
                 r"\s*(?:[0-9a-f]{4}:)?(?:\[<[0-9a-f]+>\]\s*)?"
                 r"(?:\[<[0-9a-f]+>\]\s*|<[0-9a-f]+>\{(?=[^}]+\+\d+\}))?" + SYM + r"\+(?:0x[0-9a-f]+|\d+\})")
# PowerPC's link register beside the NIP: `LR [c0000000001a5008] .shrink_inactive_list+0x488/0x7a0` in the
# register dump, `    LR = free_pcppages_bulk+0x98/0x3e0` under `--- interrupt:`. It confirms an
# `(unreliable)` first frame; the NIP's own function there is the leaf again, not its caller.
LINK_REGISTER = re.compile(r"^\s*LR(?:\s+\[[0-9a-f]+\]|\s*=)\s*" + SYM + r"\+0x[0-9a-f]+")
LAST_BREAK = re.compile(r"^\s*Last Breaking-Event-Address:\s*$")
# The end of a /proc/PID/stack dump on kernels before 4.x: `[<ffffffffffffffff>] 0xffffffffffffffff`.
PROC_STACK_END = re.compile(r"^\s*\[<f{16}>\]\s+0xf{16}\s*$")
# A task reported asleep: the hung-task watchdog's "blocked for more than N seconds" (a task in
# D state not scheduled for that long), and the `task:NAME state:D` line of 5.x+ dumps (hung task,
# sysrq-w) in a sleeping state. Its trace is where it sleeps, never CPU time.
BLOCKED = re.compile(r"INFO: task .+:\d+ blocked for more than|^\s*task:\S+\s+state:[DSIP]\b")
# The task line of 2.6.x-4.x task dumps (sysrq-t "Show State", sysrq-w, hung task): comm padded to
# 15, the state letter, the saved PC (or `running task`), stack, pid, parent. Only R is running.
TASK_STATE = re.compile(r"^(?P<comm>\S.{0,14}?)\s+(?P<state>[RSDTtZXxKWPIN])\s+(?:[0-9a-f]{8,16}|running task)"
                        r"\s+\d+\s+\d+\s+\d+(?:\s+0x[0-9a-f]+)?\s*$")
SOFT_LOCKUP = re.compile(r"BUG: soft lockup - CPU#\d+ stuck for \d+s! \[(?P<comm>.+):\d+\]")
# Where a CPU sleeps: the halt / mwait / hypervisor-yield instruction of the idle loop. A soft lockup
# interrupted there says the CPU was asleep, not looping: an idle CPU wakes for the watchdog's timer
# and runs its thread at once, so "stuck for 67s" means the clock jumped -- the (virtual) machine was
# stopped (host overcommit, snapshot or migration stun, a paused guest). `poll_idle` and `kvm_wait`
# (a paravirt spin lock's halt) are left out: the first executes, the second waits for a lock.
HALTED = frozenset(
    {"native_safe_halt", "pv_native_safe_halt", "safe_halt", "native_halt", "halt", "default_idle",
     "intel_idle", "intel_idle_irq", "intel_idle_ibrs", "mwait_idle", "mwait_idle_with_hints",
     "acpi_idle_enter", "acpi_processor_ffh_cstate_enter", "acpi_safe_halt", "amd_e400_idle",
     "xen_hypercall_sched_op", "xen_safe_halt", "hv_idle", "default_enter_idle"}
)
IDLE_TASKS = ("swapper", "idle", "init")
# The hard-lockup watchdog's report names the CPU that ran with interrupts off for seconds:
# `Watchdog detected hard LOCKUP on cpu 5` (2.6.36+), `NMI Watchdog detected LOCKUP on CPU 5` (2.6.9-2.6.18)
HARD_LOCKUP = re.compile(r"\bWatchdog detected (?:hard )?LOCKUP on cpu ?(?P<cpu>\d+)", re.IGNORECASE)
# Where a CPU waits for other CPUs to run a cross-CPU call (rule BR2): the sender spins in
# smp_call_function_many(_cond) / smp_call_function_single (csd_lock_wait, generic_exec_single)
# until every target has taken the IPI and run the function
IPI_WAITS = frozenset({"smp_call_function_many", "smp_call_function_many_cond", "smp_call_function_single",
                       "generic_exec_single", "csd_lock_wait", "smp_call_function"})
CALL_TRACE = re.compile(r"^\s*(?:Call Trace|Call trace|Backtrace|Exception stack)\b.*:")
HEADERS = (
    (re.compile(r"NMI backtrace for cpu (?P<cpu>\d+) skipped: idling at (?P<idle>[A-Za-z_][\w.$]*)"), "idle"),
    (re.compile(r"NMI backtrace for cpu (?P<cpu>\d+)"), None),
    (re.compile(r"BUG: soft lockup - CPU#(?P<cpu>\d+) stuck for \d+s! \[(?P<comm>.+):\d+\]"), None),
    (re.compile(r"INFO: task (?P<comm>.+):\d+ blocked for more than"), None),
    (re.compile(r"^\s*task:(?P<comm>\S+)\s+state:"), None),
    (re.compile(r"CPU: (?P<cpu>\d+) (?:UID: \d+ )?PID: \d+ Comm: (?P<comm>.+?)(?: Kdump: (?:loaded|not loaded))?(?: (?:Not )?[Tt]ainted|$)"), "cpu_line"),
    (re.compile(r"^\s*Pid: \d+, comm: (?P<comm>\S+)"), "cpu_line"),
    # PowerPC's register dump names the task: `TASK = c000000f28e1a8f0[18812] 'db2sysc' THREAD: ... CPU: 24`
    (re.compile(r"^\s*TASK = [0-9a-f]+\[\d+\] '(?P<comm>[^']+)' THREAD: [0-9a-f]+(?:\s+CPU: (?P<cpu>\d+))?"), "cpu_line"),
    (re.compile(r"(?:Oops|BUG: unable to handle|general protection fault|kernel BUG at|WARNING: CPU: (?P<cpu>\d+))"), None),
    (re.compile(r"INFO: rcu_\w+ (?:self-)?detected stall"), None),
    (re.compile(r"(?P<comm>\S+): page allocation stalls for \d+ms, order:\d+"), None),
    (re.compile(r"NMI Watchdog detected LOCKUP on CPU ?(?P<cpu>\d+)"), None),   # 2.6.9-2.6.18
    (re.compile(r"^\s*CPU(?P<cpu>\d+):\s*$"), None),                            # 2.6.18 sysrq-l: one per CPU
    (TASK_STATE, None),
)
# `SysRq : Show backtrace of all active CPUs` (2.6.27+, `sysrq:` from 5.x); 2.6.18 `SysRq : Show CPUs`.
SYSRQ = re.compile(r"(?i)sysrq\s*:\s*show (?:backtrace of all active cpus|cpus)\b")
# ARM's register dump is lower case (rule N3): arm64 `pstate: 80400089 (Nzcv daIf ...)`, `lr : sym+off/size`,
# `sp : ffff8000b2f4b9c0`, `x29: ffff... x28: ...`; 32-bit ARM `pc : [<c0..>]    lr : [<c0..>]    psr: 60000013`,
# `r10: ...`, `LR is at sym+off/size`. i386 (2.6.x) prints ` EFLAGS: 00000286    Not tainted  (2.6.24-19-server #1)`
# on its own line in show_regs, and its oops dump in lower case (`eax: 00000000   ebx: ...`, `ds: 007b   es: 007b`).
REGISTER = re.compile(r"^\s*(?:[A-Z][A-Z0-9]{1,3}:\s*[0-9a-fx]|Code:|GPR\d\d:|IRQMASK:|LR\s+\[[0-9a-f]+\]|LR = |LR is at |"
                      r"(?:pstate|psr|lr|sp|ip|fp|pc|x\d{1,2}|r\d{1,2})\s*:\s*(?:\[<)?[0-9a-f]|lr\s*:\s*" + SYM + r"\+0x|"
                      r"EFLAGS:\s*[0-9a-f]|(?:e[abcd]x|e[sd]i|e[bs]p|[cdefgs]s)\s*:\s*[0-9a-f]|"
                      # x86_64 3.x-4.13: `task: ffff88203f9a8000 ti: ffff88203f9b0000 task.ti: ...` / `task.stack:`
                      r"task: [0-9a-f]+ (?:ti|task\.stack):|"
                      # s390 (rule N4): `Krnl GPRS:`, `Krnl Code:` and its `#`/`>`-marked disassembly rows, the PSW bits
                      r"Krnl (?:GPRS|Code):|[#>]?[0-9a-f]{16}:\s|R:\d T:\d|"
                      r"Instruction dump:|TASK = [0-9a-f]+\[|(?:<?[0-9a-fX]{8}>?\s+){3,}<?[0-9a-fX]{8}>?\s*$|Modules linked in|Hardware name|FS:|CS:|CR2:|DR[0-7]:|"
                      r"Stack:|Pid:|---\[ end|Kernel panic|Not tainted|Tainted|PKRU|ORIG_RAX|\"echo 0 >|[Ss]ending NMI|"
                      r"(?:\w+\s+)?[Ss]tack:|CPU \d+:?\s*$|Workqueue:|rcu:|\(t=\d+ jiffies|Process \S+ \(pid:|INFO: lockdep|"
                      r"(?:<d>\s*)?[0-9a-f]{16}(?:\s+[0-9a-f]{16})*\s*$)")
# The interrupt's entry and the timer/IPI dispatch: frames every interrupt has, reporter or not. Above an
# inline RIP without a detector's frame (the watchdog, the RCU stall check, dump_stack, the NMI
# backtrace) they carry the interrupt that was running when the report was taken: the CFS bandwidth
# timer of a hard LOCKUP, a softirq's handler.
INTERRUPT_ENTRY = frozenset(
    {"__hrtimer_run_queues", "hrtimer_interrupt", "__sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt",
     "smp_apic_timer_interrupt", "local_apic_timer_interrupt", "__run_hrtimer", "apic_timer_interrupt",
     # the IPI that carried the dump before NMI backtraces (2.6.18-2.6.2x sysrq-l: showacpu)
     "smp_call_function_interrupt", "call_function_interrupt", "generic_smp_call_function_interrupt",
     "smp_call_function_single_interrupt", "call_function_single_interrupt",
     # arm64 (rule AX1): besides any interrupt's entries (kernelnames.ARM_IRQ_ENTRY), the per-CPU
     # dispatch and the IPI handler that carries crash's and the panic's CPU-stop request
     "generic_handle_domain_irq", "handle_percpu_devid_irq", "ipi_handler", "do_handle_IPI", "handle_IPI"}
) | ARM_IRQ_ENTRY
# The detectors and dumpers themselves (dump_stack, the NMI backtrace IPI, crash's NMI callback, the
# watchdogs).
DETECTORS = frozenset(
    {"dump_stack", "dump_stack_lvl", "show_stack", "show_regs", "show_trace_log_lvl", "__show_regs",
     "nmi_cpu_backtrace", "nmi_cpu_backtrace_handler", "nmi_trigger_cpumask_backtrace",
     "arch_trigger_cpumask_backtrace", "trigger_all_cpu_backtrace", "sysrq_handle_showallcpus",
     "showacpu", "sched_show_task", "show_state_filter", "crash_nmi_callback", "notifier_call_chain",
     "atomic_notifier_call_chain", "notify_die", "nmi_handle", "default_do_nmi", "do_nmi", "exc_nmi",
     "nmi", "end_repeat_nmi", "asm_exc_nmi", "kdump_nmi_callback", "__crash_kexec", "crash_kexec",
     "machine_kexec", "print_modules", "watchdog_timer_fn", "panic", "oops_end", "die",
     # arm64's crash and panic CPU stop (rule AX1): the stopped CPU saves its registers from the IPI
     "crash_save_cpu", "ipi_cpu_crash_stop", "local_cpu_stop", "ipi_cpu_stop",
     # the allocator's warnings (stall, failure) print the allocating task's stack from here
     "warn_alloc", "warn_alloc_show_mem",
     # the soft-lockup detector of 2.6.18-2.6.35 (kernel/softlockup.c), run from the timer tick: its
     # dump_stack() prints the tick's frames in <IRQ> above the interrupted code
     "softlockup_tick", "run_local_timers", "update_process_times", "smp_local_timer_interrupt",
     "tick_sched_timer", "tick_periodic", "tick_handle_periodic",
     # the RCU stall detector run from the tick (3.x-4.x print the stalled CPU's stack from there:
     # no inline RIP cuts its frames off), and the task dump it calls
     "rcu_check_callbacks", "rcu_sched_clock_irq", "rcu_pending", "check_cpu_stall", "print_cpu_stall",
     "print_other_cpu_stall", "rcu_dump_cpu_stacks", "dump_cpu_task", "tick_sched_handle"}
)
# Functions of the reporter and the interrupt it ran in: they sit at the leaf end of the traces
# they print and are not what the CPU was doing.
REPORTER = DETECTORS | INTERRUPT_ENTRY
# A trace holding these is the CPU that ran `echo l > /proc/sysrq-trigger`: it shows the
# reporter, not the load.
SYSRQ_WRITER = frozenset({"write_sysrq_trigger", "__handle_sysrq", "sysrq_handle_showallcpus"})
CRASH_TASK = re.compile(r'^\s*PID:\s*\d+\s+TASK:\s*[0-9a-f]+\s+CPU:\s*(?P<cpu>\d+)\s+COMMAND:\s*"(?P<comm>.*)"')
# 2.6.18 names the out-of-line lock loop `.text.lock.spinlock`; `(via NAME)`: NAME jumped into the
# frame's function (a tail call or the lock fast path's jump), so NAME is the caller in between.
CRASH_FRAME = re.compile(r"^\s*#\d+\s+\[[0-9a-f]+\]\s+(?P<sym>\.?[A-Za-z_][\w.$]*)\s+at\s+[0-9a-f]+(?:\s+\[[\w.-]+\])?"
                         r"(?:\s+\(via\s+(?P<via>\.?[A-Za-z_][\w.$]*)\))?" + REMARK + r"?\s*$")
CRASH_SECTION = re.compile(r"^\s*---\s*<(?P<what>[^>]+)>\s*---\s*$")
CRASH_EXCEPTION_RIP = re.compile(r"^\s*\[exception RIP:\s*(?P<sym>\.?[A-Za-z_][\w.$]*)(?:\+\d+)?\]")
CRASH_NOISE = re.compile(r"^\s*(?:[A-Z0-9]{2,6}:\s*[0-9a-f]+|ORIG_RAX|CS:|\[exception RIP|crash>|PANIC:|bt\b)")


@dataclass
class Trace:
    comm: str = ""
    cpu: Optional[int] = None
    frames: List[Tuple[str, str]] = field(default_factory=list)   # (name, section) innermost first
    stale: List[Tuple[str, str]] = field(default_factory=list)   # the `?` entries, (name, section)
    rip_stale_at: int = 0               # how many `?` entries came before that inline RIP
    blocked: bool = False               # a hung-task / sleeping-task dump: the task was not on a CPU
    soft_lockup: bool = False           # a soft-lockup watchdog report
    rip: Optional[str] = None
    rip_at: Optional[int] = None        # index into frames where an inline RIP cut the trace
    head_rip: Optional[str] = None      # the RIP of the register dump printed before `Call Trace:`
    in_call_trace: bool = False
    lr: Optional[str] = None            # PowerPC's link register at the interrupt: the leaf's caller
    after_last_break: bool = False      # s390's `Last Breaking-Event-Address:` entry follows the trace
    stall_order: Optional[int] = None   # `page allocation stalls for Nms, order:K` headed the trace
    nested: List[Tuple[str, int]] = field(default_factory=list)   # every inline RIP in the trace, (name, rip_at)

    def stack(self) -> Tuple[Tuple[str, ...], Optional[str]]:
        """Frames root first, and the leaf's context when a section marker says so."""
        frames = self.frames
        if not frames and self.stale:
            # every entry `?`: an unwinder without frame pointers (2.6.32 x86_64 distribution
            # kernels) marks each address it found on the stack; they are all the trace has
            cut = self.rip_stale_at if self.rip_at is not None else 0
            frames = self.stale[cut:]
        elif self.rip_at is not None and self._nested_under_reporter():
            # rule AA3: the reporter's tick interrupted an interrupt (a softirq running callbacks in
            # <IRQ>) that had interrupted the task: each inline RIP starts the code the next interrupt
            # entry below interrupted, so from the first RIP down it is one stack, nested
            frames = []
            for index, (rip, at) in enumerate(self.nested):
                end = self.nested[index + 1][1] if index + 1 < len(self.nested) else len(self.frames)
                part = self.frames[at:end]
                frames += [(rip, part[0][1] if part else "")] + part
            return self._rooted([f for f in frames if f[1] != "NMI"])
        elif self.rip_at is not None:
            above = [f for f in frames[:self.rip_at] if f[1] != "NMI"]
            if self.head_rip and above and not {normalize(n) for n, _ in above} & DETECTORS:
                # the register dump above `Call Trace:` names the leaf, the frames down to the inline RIP
                # are the interrupt that ran on top of the interrupted code (a hard LOCKUP in a timer):
                # one stack, not a reporter's frames above a task's
                below = frames[self.rip_at:]
                frames = [(self.head_rip, above[0][1])] + above + [(self.rip, below[0][1] if below else "")] + below
                return self._rooted([f for f in frames if f[1] != "NMI"])
            frames = frames[self.rip_at:]
        frames = [f for f in frames if f[1] != "NMI"]
        if self.rip:
            frames = [(self.rip, frames[0][1] if frames else "")] + frames
        return self._rooted(frames)

    def _nested_under_reporter(self) -> bool:
        """Two or more inline RIPs in the call trace, the first under a detector's frames (the RCU stall
        check, the watchdog) and each later one under an interrupt entry: nested interrupts, innermost
        first.

        >>> t = Trace(frames=[("rcu_check_callbacks", "IRQ"), ("apic_timer_interrupt", "IRQ"),
        ...     ("i_callback", "IRQ"), ("rcu_process_callbacks", "IRQ"), ("__do_softirq", "IRQ"),
        ...     ("apic_timer_interrupt", "IRQ"), ("dput", ""), ("do_unlinkat", "")],
        ...     rip="__d_drop", rip_at=6, nested=[("kmem_cache_free", 2), ("__d_drop", 6)])
        >>> t.stack()
        (('do_unlinkat', 'dput', '__d_drop', 'apic_timer_interrupt', '__do_softirq', 'rcu_process_callbacks', 'i_callback', 'kmem_cache_free'), 'softirq')
        """
        if len(self.nested) < 2 or self.nested[-1][1] != self.rip_at:
            return False
        first = self.nested[0][1]
        if not first or not {normalize(n) for n, _ in self.frames[:first]} & DETECTORS:
            return False
        return all(at and normalize(self.frames[at - 1][0]) in INTERRUPT_ENTRY for _, at in self.nested[1:])

    @staticmethod
    def _rooted(frames: List[Tuple[str, str]]) -> Tuple[Tuple[str, ...], Optional[str]]:
        while len(frames) > 1 and frames[0][0] in REPORTER:
            frames = frames[1:]
        if not frames:
            return (), None
        context = None
        if frames[0][1] == "IRQ":
            irq_names = {normalize(n) for n, s in frames if s == "IRQ"}
            soft = {"__do_softirq", "handle_softirqs", "net_rx_action", "do_softirq", "run_timer_softirq"}
            context = "softirq" if irq_names & soft else "hardirq"
        return tuple(n for n, _ in reversed(frames)), context


def read_kernel_log(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Oops / NMI / lockup / hung-task / sysrq-l traces from a dmesg or console paste."""
    traces: List[Trace] = []
    current: Optional[Trace] = None
    section = ""
    sysrq = False
    # the CPUs a hard-lockup report names (rule BR2); its first line may come before the trace's
    # first header (`CPU: 5 PID: 0 Comm: swapper/5`), with `Modules linked in:` between them
    stuck: Set[int] = {int(m["cpu"]) for m in map(HARD_LOCKUP.search, lines[max(0, start - 3):start]) if m}
    prefixed = False                               # the log's lines carry a syslog/dmesg prefix
    index = start
    while index < len(lines):
        text = PREFIX.sub("", lines[index])
        from_log = len(text) < len(lines[index])   # a dmesg/syslog line: part of the log even if unknown
        prefixed = prefixed or from_log
        header = _header(text)
        lockup = HARD_LOCKUP.search(text)
        if lockup:
            stuck.add(int(lockup["cpu"]))
        if SYSRQ.search(text):
            sysrq = True
        elif header is not None:
            comm, cpu, is_cpu_line = header
            if is_cpu_line == "idle":
                traces.append(Trace(comm="swapper", cpu=cpu, rip=comm))
                current = None
            elif current is None or not is_cpu_line or current.frames or current.rip:
                current = Trace()
                traces.append(current)
                section = ""
            if current is not None:
                stall = ALLOC_STALL.search(text)
                current.stall_order = int(stall["order"]) if stall else current.stall_order
                current.comm = comm or current.comm
                current.cpu = cpu if cpu is not None else current.cpu
                current.blocked = current.blocked or bool(BLOCKED.search(text))
                current.soft_lockup = current.soft_lockup or bool(SOFT_LOCKUP.search(text))
                state = TASK_STATE.match(text)
                if state:
                    current.blocked = state["state"] != "R"
        elif current is not None and _trace_line(text, current, section):
            section = _section_after(text, section)
        elif current is None and (FRAME.match(text) or CALL_TRACE.match(text) or OLD_FRAME.search(text)):
            current = Trace()
            traces.append(current)
            continue
        elif text.strip() == "" and current is not None and current.frames:
            current = None
        elif not (text.strip() == "" or REGISTER.match(text) or from_log or ELISION.match(text)
                  or (prefixed and _wrapped_tail(lines, index))):
            break
        index += 1
    writers = [t for t in traces if SYSRQ_WRITER & {n for n, _ in t.frames}]
    stacks = [(t, *_stalled(t, *t.stack())) for t in traces if t not in writers]
    stacks = [(t, names, ctx) for t, names, ctx in stacks if names]
    if not stacks:
        return Miss(max(index, start + 1))
    # A task that was not on a CPU when it was dumped shows where it waits, not CPU time: the
    # hung-task watchdog's report, a sleeping state letter in a task dump, a stack that ends in the
    # context switch (the dump of a starved RCU grace-period kthread, sysrq-w). Leave those out
    # beside on-CPU traces; when every trace is one, the paste holds no CPU time at all.
    asleep = [entry[0].blocked or _switched_out(entry[0], entry[1]) for entry in stacks]
    sleeping = sum(asleep)
    fmt = "sysrq-l" if sysrq else "oops"
    block = Block(fmt, start, index, unit="tasks")
    if any(entry[0].stall_order == 0 and entry[1][-len(STALLED_IN_RECLAIM):] == STALLED_IN_RECLAIM
           for entry in stacks):
        block.notes.append("a `page allocation stalls` warning of order 0: its trace ends in the allocator's slow "
                           "path, where an order-0 allocation only reclaims (it never compacts), so the stall is "
                           "read as direct reclaim under it")
    if sleeping and sleeping < len(stacks):
        stacks = [entry for entry, blocked in zip(stacks, asleep) if not blocked]
        block.notes.append(f"left out {plural(sleeping, 'trace')} of blocked tasks (hung-task warnings, sleeping "
                           "states in a task dump, stacks that end in the context switch): where a task waits, "
                           "not CPU time")
    elif sleeping:
        block.not_cpu = (f"these kernel traces show blocked tasks ({plural(sleeping, 'trace')}: hung-task warnings, "
                         "sleeping states in a task dump, or stacks that end in the context switch): where tasks "
                         "wait, not CPU time")
    holders = _lock_holders(stacks) if not block.not_cpu else []
    if holders:
        stacks = [entry for entry in stacks if entry not in holders]
        who = ", ".join(sorted({entry[0].comm or "?" for entry in holders}))
        block.notes.append(f"left out {plural(len(holders), 'trace')} ({who}) inside a walk that holds the lock another "
                           "reported CPU spins on (a list_lru walk runs its isolate callback under the list's spin "
                           "lock): the holder explains the waiters' spinning, the waiters name the lock")
    senders = _ipi_senders(stacks, stuck) if not block.not_cpu else []
    if senders:
        stacks = [entry for entry in stacks if entry not in senders]
        cpus = ", ".join(str(entry[0].cpu) for entry in senders)
        block.notes.append(f"left out {plural(len(senders), 'trace')} (CPU {cpus}) waiting in a cross-CPU call "
                           f"(smp_call_function_many / _single) beside the CPU the hard-lockup watchdog named "
                           f"({', '.join(map(str, sorted(stuck)))}): a CPU running with interrupts off cannot take the "
                           "IPI, so its senders spin behind it; the stuck CPU names the problem")
    halted = [t for t in traces if _halted_lockup(t)]
    if halted and not block.not_cpu:
        at = halted[0].head_rip or halted[0].rip
        block.not_cpu = (f"the soft-lockup watchdog reported {plural(len(halted), 'idle CPU')} stuck while halted "
                         f"(RIP {at}): an idle CPU wakes for the watchdog at once, so the clock jumped because the "
                         "whole (virtual) machine was stopped (host overcommit, snapshot or migration stun); the "
                         "traces show where each CPU happened to be, not CPU time")
    for trace, names, context in stacks:
        block.stacks.append((kernel_frames(names), 1.0, trace.comm, trace.cpu, context))
    what = "sysrq-l (all-CPU backtrace) dump" if sysrq else "kernel backtraces (oops/NMI/lockup/hung task)"
    block.notes.append(f"read {what}: {plural(len(stacks), 'stack')}, one per task or CPU; `?` frames ignored "
                       "(unless every entry of a trace is one)")
    if writers:
        block.notes.append("left out the CPU that ran `echo l > /proc/sysrq-trigger` (it shows the dump itself)")
    return block


# Walks that run a callback with a spin lock held, and the functions that take that lock (rule AC1):
# list_lru walks (4.0+) call the isolate callback (inode_lru_isolate, dentry_lru_isolate,
# shadow_lru_isolate ...) under the per-node / per-memcg list's lock, which list_lru_add / list_lru_del
# take for every object put on or off the list.
LOCK_HOLDING_WALKS = (
    (frozenset({"__list_lru_walk_one", "list_lru_walk_one", "list_lru_walk_one_irq", "list_lru_walk_node"}),
     frozenset({"list_lru_add", "list_lru_del", "list_lru_add_obj", "list_lru_del_obj", "__list_lru_walk_one",
                "list_lru_walk_one", "list_lru_walk_one_irq"})),
)
SPINNING = re.compile(r"spin_lock")          # the lock functions and slow paths of every era
# the walk itself, its callback or what the callback calls: deeper, a callback may have dropped the
# lock to do its work (inode_lru_isolate unlocks before invalidating a mapping and retries)
HOLDER_DEPTH = 3


def _lock_taker(names: Sequence[str]) -> Optional[str]:
    """The function that takes the spin lock a trace ends in (None when it does not end in one).

    >>> _lock_taker(["iput", "list_lru_add", "_raw_spin_lock", "native_queued_spin_lock_slowpath"])
    'list_lru_add'
    >>> _lock_taker(["prune_icache_sb", "__list_lru_walk_one", "inode_lru_isolate"]) is None
    True
    """
    return lock_caller(names, {name for name in names if SPINNING.search(name)})


def _lock_holders(stacks):
    """The on-CPU traces of a lockup report that sit inside a walk holding the spin lock another
    trace of the report spins on (rule AC1): a CPU stuck in a list_lru walk's isolate callback for
    seconds holds the list's lock all that time, and the CPUs adding to or removing from the list
    spin behind it. Such a holder is left out: the waiters name the lock.

    >>> waiter = (Trace(comm="nfsd"), ("nfsd", "iput", "list_lru_add", "_raw_spin_lock",
    ...                                "native_queued_spin_lock_slowpath"), None)
    >>> holder = (Trace(comm="kswapd1"), ("kswapd", "shrink_slab", "prune_icache_sb", "list_lru_walk_one",
    ...                                   "__list_lru_walk_one", "inode_lru_isolate"), None)
    >>> [entry[0].comm for entry in _lock_holders([waiter, holder])]
    ['kswapd1']
    >>> _lock_holders([holder])                       # nobody waits: the walk is the finding's own
    []
    >>> deeper = (Trace(comm="kswapd1"), holder[1] + ("invalidate_mapping_pages", "find_lock_entries",
    ...                                                "xas_find"), None)
    >>> _lock_holders([waiter, deeper])              # the callback's own work: the lock was dropped
    []
    >>> other = (Trace(comm="fio"), ("blk_mq_submit_bio", "_raw_spin_lock", "native_queued_spin_lock_slowpath"), None)
    >>> _lock_holders([other, holder])                # a waiter on another lock
    []
    """
    found = []
    names_of = [tuple(normalize(n) for n in entry[1]) for entry in stacks]
    taker_of = [_lock_taker(names) for names in names_of]
    takers = set(taker_of) - {None}
    for entry, names, taker in zip(stacks, names_of, taker_of):
        if taker is not None:
            continue                                   # it spins itself: a waiter
        near_leaf = set(names[-HOLDER_DEPTH:])
        if any(walks & near_leaf and lockers & takers for walks, lockers in LOCK_HOLDING_WALKS):
            found.append(entry)
    return found


def _ipi_senders(stacks, stuck: Set[int]):
    """Rule BR2: the traces of a hard-lockup report that wait in a cross-CPU call while the CPU the
    watchdog named runs something else. That CPU ran with interrupts disabled for seconds (a hard
    interrupt handler that never returns, a spin lock taken with interrupts off), so it cannot take
    the IPI a TLB flush, `perf_event_read` or `on_each_cpu` sends it: every sender spins in
    smp_call_function_many or csd_lock_wait until it does, and the NMI backtrace the watchdog asks
    for shows them there. They are the stuck CPU's victims, left out; the stuck CPU's trace names the
    problem. When the named CPU itself waits for an IPI (the answer is late elsewhere), nothing is
    left out.

    >>> stuck = (Trace(cpu=5), ("do_idle", "common_interrupt", "do_IRQ", "_base_interrupt"), "hardirq")
    >>> sender = (Trace(cpu=17), ("do_mprotect_pkey", "flush_tlb_mm_range", "native_flush_tlb_others",
    ...                           "smp_call_function_many"), None)
    >>> [entry[0].cpu for entry in _ipi_senders([stuck, sender], {5})]
    [17]
    >>> _ipi_senders([stuck, sender], set())                         # no hard-lockup report
    []
    >>> waits = (Trace(cpu=5), sender[1], None)
    >>> _ipi_senders([waits, sender], {5})                           # the stuck CPU waits itself
    []
    """
    if not stuck:
        return []
    waiting = [not IPI_WAITS.isdisjoint(normalize(n) for n in entry[1][-2:]) for entry in stacks]
    if not any(entry[0].cpu in stuck and not wait for entry, wait in zip(stacks, waiting)):
        return []
    return [entry for entry, wait in zip(stacks, waiting) if wait and entry[0].cpu not in stuck]


def _halted_lockup(trace: Trace) -> bool:
    """A soft lockup of the idle task interrupted at the halt itself (rule F4): the machine stopped.

    >>> _halted_lockup(Trace(comm="swapper/0", rip="native_safe_halt", soft_lockup=True))
    True
    >>> _halted_lockup(Trace(comm="swapper/0", rip="_raw_spin_lock", soft_lockup=True))   # softirq on an idle CPU
    False
    >>> _halted_lockup(Trace(comm="swapper/3", head_rip="native_queued_spin_lock_slowpath",
    ...                      rip="native_safe_halt", soft_lockup=True))   # 4.x: the halt is below </IRQ>
    False
    """
    interrupted = trace.head_rip or trace.rip          # the register dump the watchdog printed first
    return (trace.soft_lockup and interrupted in HALTED and trace.comm.split("/", 1)[0] in IDLE_TASKS
            and not any(section == "IRQ" for _, section in trace.frames))


def _switched_out(trace: Trace, names: Sequence[str]) -> bool:
    """The task was not on a CPU: its innermost frame is the context switch and no RIP line
    says it was interrupted elsewhere."""
    return (trace.rip is None or normalize(trace.rip) in SWITCH_LEAVES) and normalize(names[-1]) in SWITCH_LEAVES


def _wrapped_tail(lines: Sequence[str], index: int) -> bool:
    """In a log whose every line carries its prefix, a line without one between two that have
    it is the tail of the line above, wrapped by a mail client."""
    if not lines[index].strip() or index + 1 >= len(lines):
        return False
    following = lines[index + 1]
    return len(PREFIX.sub("", following)) < len(following)


# 4.10-4.14's warning that an allocation spent seconds in the slow path (rule U4); order 0 never compacts
ALLOC_STALL = re.compile(r"page allocation stalls for (?P<ms>\d+)ms, order:(?P<order>\d+)")
# the path an order-0 slow path reclaims through in the kernels that print the warning (4.10-4.14)
STALLED_IN_RECLAIM = ("__alloc_pages_direct_reclaim", "__perform_reclaim", "try_to_free_pages",
                      "do_try_to_free_pages", "shrink_zones", "shrink_node")


def _stalled(trace: Trace, names: Tuple[str, ...], context: Optional[str]):
    """An order-0 allocation stall's trace ends in the slow path (the warning's reporter trimmed):
    the seconds the warning counts were spent reclaiming there, since an order-0 allocation never
    compacts; the reclaim frames on the stack at the time are `?` entries, which traces leave out."""
    if trace.stall_order == 0 and names and normalize(names[-1]) == "__alloc_pages_slowpath":
        return names + STALLED_IN_RECLAIM, context
    return names, context


def _header(text: str):
    for pattern, kind in HEADERS:
        match = pattern.search(text)
        if match:
            groups = match.groupdict()
            cpu = groups.get("cpu")
            if kind == "idle":
                return normalize(groups["idle"]), int(cpu), "idle"
            return (groups.get("comm") or "").strip(), int(cpu) if cpu else None, kind == "cpu_line"
    return None


def _trace_line(text: str, trace: Trace, section: str) -> bool:
    if CALL_TRACE.match(text):
        trace.in_call_trace = True
        _old_frames(text, trace, section)
        return True
    rip = RIP.match(text)
    if rip:
        if not trace.in_call_trace:
            trace.head_rip = normalize(rip["sym"])
        trace.rip = normalize(rip["sym"])
        trace.rip_at = len(trace.frames) if trace.in_call_trace else None
        if trace.in_call_trace:
            trace.nested.append((trace.rip, len(trace.frames)))
        trace.rip_stale_at = len(trace.stale)
        trace.lr = None
        return True
    if LAST_BREAK.match(text):
        # s390's last branch before the PSW, printed after the trace: not a caller
        trace.after_last_break = True
        return True
    if trace.after_last_break:
        return bool(FRAME.match(text) or REGISTER.match(text))
    link = LINK_REGISTER.match(text)
    if link:
        trace.lr = normalize(link["sym"])
        return True
    marker = MARKER.match(text)
    if marker:
        rest = marker["rest"]
        if rest:
            _frame(rest, trace, _section_after(text, section))
        return True
    if _frame(text, trace, section):
        return True
    return bool(REGISTER.match(text))


def _frame(text: str, trace: Trace, section: str) -> bool:
    match = FRAME.match(text)
    if not match:
        return _old_frames(text, trace, section)
    name = normalize(match["sym"])
    if match["unreliable"] and name == trace.lr and name != trace.rip:
        # the first frame after the interrupted instruction, confirmed by the link register: the
        # leaf's caller (a leaf function had not saved its return address yet)
        trace.frames.append((name, section))
    elif match["stale"] or match["unreliable"] or match["paren"]:
        trace.stale.append((name, section))
    else:
        trace.frames.append((name, section))
    return True


def _old_frames(text: str, trace: Trace, section: str) -> bool:
    """A 2.6.9 x86_64 line of `<addr>{sym+off}` frames (after `Call Trace:` or on its own)."""
    body = CALL_TRACE.sub("", text, count=1)
    found = OLD_FRAME.findall(body)
    if not found or OLD_FRAME.sub("", body).strip():
        return False
    trace.frames.extend((normalize(sym), section) for sym in found)
    return True


def _section_after(text: str, section: str) -> str:
    marker = MARKER.match(text)
    if not marker:
        return section
    name, closing = marker["name"], bool(marker["close"])
    if name in ("EOI", "EOE") or closing:
        return ""
    return "" if name == "TASK" else "IRQ" if name in ("IRQ", "SOFTIRQ") else name


def read_proc_stack(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """Consecutive /proc/PID/stack dumps (`[<0>] func+0x../0x..`); a non-frame line ends one."""
    block = Block("proc-stack", start, start, unit="tasks")
    comm = _comm_hint(lines[start - 1]) if start else ""
    names: List[str] = []
    index = start
    while index < len(lines):
        match = PROC_STACK.match(lines[index])
        if match:
            names.append(normalize(match["sym"]))
        elif names and PROC_STACK_END.match(lines[index]):
            block.stacks.append((kernel_frames(names[::-1]), 1.0, comm or "", None, None))
            names, comm = [], ""
        elif names and (_comm_hint(lines[index]) is not None or not lines[index].strip()):
            block.stacks.append((kernel_frames(names[::-1]), 1.0, comm or "", None, None))
            names = []
            comm = _comm_hint(lines[index]) or ""
        elif not names and _comm_hint(lines[index]) is not None:
            comm = _comm_hint(lines[index]) or ""
        else:
            break
        index += 1
    if names:
        block.stacks.append((kernel_frames(names[::-1]), 1.0, comm or "", None, None))
    return finish(block, start, index, f"read /proc/PID/stack: {plural(len(block.stacks), 'task stack')}")


def _comm_hint(line: str) -> Optional[str]:
    """`# cat /proc/45/stack   (kswapd0)` or `==> /proc/45/stack <==`: a header between dumps."""
    if "/proc/" not in line or "stack" not in line:
        return None
    found = re.search(r"\(([^()]+)\)\s*$", line)
    return found[1] if found else ""


def read_crash_bt(lines: Sequence[str], start: int) -> Union[Block, Miss]:
    """crash `bt` / `bt -a`: `PID: .. TASK: .. CPU: .. COMMAND: ".."` then `#N [sp] func at addr`."""
    block = Block("crash-bt", start, start, unit="tasks")
    task = None
    index = start
    while index < len(lines):
        line = lines[index]
        header = CRASH_TASK.match(line)
        frame = CRASH_FRAME.match(line)
        section = CRASH_SECTION.match(line)
        if header:
            _flush_crash(block, task)
            task = {"comm": header["comm"], "cpu": int(header["cpu"]), "frames": [], "irq_until": None}
        elif task is not None and frame:
            name = normalize(frame["sym"])
            if not (task["frames"] and task["frames"][-1] == name and task.get("rip") == len(task["frames"])):
                task["frames"].append(name)      # (the exception RIP already named it)
            if frame["via"]:
                task["frames"].append(normalize(frame["via"]))
        elif task is not None and CRASH_EXCEPTION_RIP.match(line):
            # The function the exception interrupted: the next frame's callee, never listed itself.
            rip = normalize(CRASH_EXCEPTION_RIP.match(line)["sym"])
            if not task["frames"] or task["frames"][-1] != rip:
                task["frames"].append(rip)
                task["rip"] = len(task["frames"])
        elif task is not None and section:
            what = section["what"].upper()
            if "NMI" in what:
                task["frames"] = []            # crash's own NMI handler frames
            elif "IRQ" in what or "SOFTIRQ" in what:
                task["irq_until"] = len(task["frames"])
        elif not (line.strip() == "" or CRASH_NOISE.match(line) or ELISION.match(line)):
            break
        index += 1
    _flush_crash(block, task)
    return finish(block, start, index, f"read crash bt: {plural(len(block.stacks), 'task stack')}")


def _flush_crash(block: Block, task) -> None:
    if not task or not task["frames"]:
        return
    names = list(task["frames"])
    irq_frames = task["irq_until"] or 0
    while len(names) > 1 and names[0] in REPORTER:
        names.pop(0)
        irq_frames -= 1
    context = None
    if irq_frames > 0:
        context = "softirq" if {"__do_softirq", "net_rx_action", "handle_softirqs"} & set(names[:irq_frames]) else "hardirq"
    block.stacks.append((kernel_frames(names[::-1]), 1.0, task["comm"], task["cpu"], context))
