"""Several profiles in one paste (a run before and after a fix, a flat list next to its call
graph, kernel traces next to a perf report, off-CPU output next to a CPU profile): which one
is diagnosed.

Weights of two profiles are never added: percentages of one run, sample counts of another and
one-per-task traces do not mix. Blocks form profiles:
- kernel traces (oops, lockups, crash bt, /proc/PID/stack, sysrq-l) together: each is one task;
- a perf report / perf top block that starts with its own header or banner, or under a perf
  report / perf top command line (rule AT2), starts a profile, one without (the same report cut
  by the author's prose) continues the report above it;
- any other block joins the previous profile of the same format, unless its tool's command
  line or banner stands right above it (`# ./profile -F 99`, `Tracing off-CPU time`,
  `Attaching 1 probe...`): then it is a run of its own.

The profile diagnosed is the first by these keys, in order:
1. CPU samples before data that is not CPU time (off-CPU time, function_graph durations);
2. a profile before a handful of samples (fewer than 10 perf script samples or folded counts
   pasted to show what a stack looks like: one sample is no share of anything);
3. sampled profiles before lock-wait tables (`perf lock contention` weighs the waits of the lock
   sites it traced, and a sleeping lock's waiters, who spin before they sleep, are not in it: the
   samples show where the CPUs are);
4. call stacks before flat lists (ancestry tells look-alikes apart);
5. sampled profiles before kernel traces (a profile covers the whole window, a trace one moment);
6. the most busy kernel time (share of the profile's weight whose leaf is a kernel frame
   outside the idle loop; of its whole run when the listing says what stands for every sample,
   rule AT1): of a before/after pair, the run that shows the kernel problem;
7. the first pasted.
Data quality names the profile used and why the others were left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Set, Tuple

from ..profile import StackRecord, context_of, is_idle
from ..text import pct_whole
from .common import Block, plural

TRACE_FORMATS = frozenset({"oops", "sysrq-l", "crash-bt", "proc-stack"})
WAIT_FORMATS = frozenset({"perf-lock-contention", "lock-stat"})
ILLUSTRATION_SAMPLES = 10
REPORT_FORMATS = frozenset({"perf-report-callgraph", "perf-report-flat", "perf-top", "perf-top-callgraph"})


@dataclass
class PasteProfile:
    blocks: List[Block] = field(default_factory=list)
    formats: List[str] = field(default_factory=list)
    flat: bool = True
    traces: bool = True
    number: int = 0                       # its place in the paste, from 1

    def add(self, block: Block) -> None:
        self.blocks.append(block)
        if block.fmt not in self.formats:
            self.formats.append(block.fmt)
        self.flat = self.flat and block.flat
        self.traces = self.traces and block.fmt in TRACE_FORMATS

    @property
    def not_cpu(self) -> Optional[str]:
        return next((b.not_cpu for b in self.blocks if b.not_cpu), None)

    @property
    def lock_waits(self) -> bool:
        """Lock wait times of traced lock sites (perf lock contention), not samples of the CPUs."""
        return all(b.fmt in WAIT_FORMATS for b in self.blocks)

    @property
    def illustration(self) -> bool:
        """A few samples pasted to show what a stack looks like, not a profile of the window; or a few
        lines of an event trace (interrupt events: rule AD3), pasted to show which events fire."""
        counted = [b for b in self.blocks if b.unit == "samples"]
        if counted and len(counted) == len(self.blocks):
            return sum(w for b in counted for _f, w, *_ in b.stacks) < ILLUSTRATION_SAMPLES
        traced = [b for b in self.blocks if b.events is not None]
        return bool(traced) and len(traced) == len(self.blocks) and \
            sum(b.events or 0 for b in traced) < ILLUSTRATION_SAMPLES

    @property
    def samples(self) -> Optional[int]:
        return next((b.samples for b in self.blocks if b.samples), None)

    def kernel_share(self) -> float:
        """Busy kernel time (kernel leaf, not the idle loop) as a share of the profile."""
        total = kernel = 0.0
        for block in self.blocks:
            for frames, weight, comm, cpu, context in block.stacks:
                total += weight
                if frames and frames[-1].kind == "kernel" and \
                        not is_idle(StackRecord(frames, weight, comm, cpu, context or context_of(frames))):
                    kernel += weight
        return kernel / total if total else 0.0

    def run_share(self) -> float:
        """Busy kernel time as a share of the whole run when every block says what weight stands
        for all its samples (a perf report or perf top listing: 100 %), else of the pasted weight
        (kernel_share). A listing cut to its top lines is not all of its run: its unlisted rest is
        neither kernel nor user time that the paste shows, so a patch's 'after' screen of five
        kernel rows (42 % of its run) is not busier in the kernel than the 'before' screen whose
        kernel rows make 75 % of its run (rule AT1).

        >>> from flamediag.profile import Frame
        >>> cut = PasteProfile()
        >>> cut.add(Block("perf-top", 0, 1, flat=True, whole=100.0,
        ...               stacks=[((Frame("clear_page_erms", "kernel"),), 23.2, None, None, None),
        ...                       ((Frame("vmx_vcpu_run", "kernel"),), 7.4, None, None, None)]))
        >>> round(cut.kernel_share(), 2), round(cut.run_share(), 3)
        (1.0, 0.306)
        """
        wholes = {block.whole for block in self.blocks}
        if len(wholes) != 1 or None in wholes or len({block.unit for block in self.blocks}) != 1:
            return self.kernel_share()
        whole = wholes.pop() or 0.0
        total = sum(weight for block in self.blocks for _f, weight, *_ in block.stacks)
        if whole <= 0 or total > whole * 1.05:      # weights that are not shares of that whole
            return self.kernel_share()
        return min(1.0, self.kernel_share() * total / whole)

    def describe(self) -> str:
        return (f"profile {self.number} ({'/'.join(self.formats)}, "
                f"{pct_whole(self.run_share())} busy in the kernel)")


def busiest_run(runs: List[Block]) -> int:
    """Of the runs one table holds (perf diff's baseline and second run, a typed comparison's
    columns: rules S1, S4), the index of the one with the most busy kernel time, in points of all
    samples (the rows are the same in each); the first on a tie. Like two pasted runs (key 6 above)."""
    best, best_busy = 0, -1.0
    for index, run in enumerate(runs):
        profile = PasteProfile()
        profile.add(run)
        busy = round(profile.kernel_share() * sum(weight for _f, weight, *_ in run.stacks), 3)
        if busy > best_busy:
            best, best_busy = index, busy
    return best


def group(blocks: List[Block]) -> List[PasteProfile]:
    """Blocks with stacks, gathered into the profiles they belong to (in paste order)."""
    profiles: List[PasteProfile] = []
    traces: Optional[PasteProfile] = None
    for block in (b for b in blocks if b.stacks):
        if block.fmt in TRACE_FORMATS:
            if traces is None:
                traces = PasteProfile()
                profiles.append(traces)
            traces.add(block)
            continue
        home = _continued(profiles, block)
        if home is None:
            home = PasteProfile()
            profiles.append(home)
        home.add(block)
    return _join_expansions(profiles)


SAME_SHARE = 0.05          # percentage points: two printings of one entry of one run (2 decimals)


def _join_expansions(profiles: List[PasteProfile]) -> List[PasteProfile]:
    """A call graph that expands entries of a flat listing pasted beside it, at the very same
    shares, is that run's ancestry for those entries, not another run (rule U3): a thread where the
    flat top lines are quoted and the reply adds `perf report -g` of the hottest. The two become one
    profile: the graph's stacks, and the listing's other entries as rows without their call chain.
    Two runs (before/after, two kernels) never print every expanded entry at the same share."""
    out = list(profiles)
    for graph in profiles:
        expanded = None if graph.flat or graph.traces else _leaf_shares(graph)
        if not expanded:
            continue
        for listing in out:
            shares = _leaf_shares(listing) if listing.flat and listing is not graph else None
            if shares and len(shares) > len(expanded) and all(
                    name in shares and abs(shares[name] - share) <= SAME_SHARE for name, share in expanded.items()):
                out[out.index(listing)] = _joined(listing, graph, set(expanded))
                out.remove(graph)
                break
    return out


def _leaf_shares(profile: PasteProfile) -> Optional[Dict[str, float]]:
    """Percent of the run per leaf, for a perf report / perf top profile in percentages."""
    if profile.not_cpu or not set(profile.formats) <= REPORT_FORMATS or \
            any(block.unit != "percent" for block in profile.blocks):
        return None
    shares: Dict[str, float] = {}
    for block in profile.blocks:
        for frames, weight, *_ in block.stacks:
            if frames:
                shares[frames[-1].name] = shares.get(frames[-1].name, 0.0) + weight
    return shares


def _joined(listing: PasteProfile, graph: PasteProfile, expanded: Set[str]) -> PasteProfile:
    joined = PasteProfile()
    for block in listing.blocks:
        rows = [stack for stack in block.stacks if not stack[0] or stack[0][-1].name not in expanded]
        notes = [note for note in block.notes if not note.startswith("flat profile: no ancestry")]
        joined.add(replace(block, stacks=rows, lone=set(range(len(rows))), notes=notes))
    for block in graph.blocks:
        joined.add(block)
    joined.blocks[0].notes.append(
        f"joined the flat listing with the call graph pasted beside it: the graph expands "
        f"{plural(len(expanded), 'entry') if len(expanded) == 1 else f'{len(expanded)} entries'} of the listing at "
        "the same shares (one run); the other entries keep no call chain")
    return joined


def _continued(profiles: List[PasteProfile], block: Block) -> Optional[PasteProfile]:
    if block.fmt in REPORT_FORMATS:
        last = next((p for p in reversed(profiles) if not p.traces), None)
        if block.header or last is None or not set(last.formats) <= REPORT_FORMATS:
            return None
        return last if last.flat == block.flat else None
    if block.header:
        return None                        # its tool's command line or banner: a run of its own
    return next((p for p in reversed(profiles) if p.formats == [block.fmt]), None)


def choose(profiles: List[PasteProfile]) -> Tuple[PasteProfile, List[str]]:
    """The profile to diagnose, and sentences on the ones left out."""
    for number, profile in enumerate(profiles, 1):
        profile.number = number
    ranked = sorted(enumerate(profiles), key=lambda item: _rank(item[1], item[0]))
    chosen = ranked[0][1]
    left = [p for p in profiles if p is not chosen]
    return chosen, _notes(chosen, left, len(profiles))


def _rank(profile: PasteProfile, order: int):
    return (profile.not_cpu is not None, profile.illustration, profile.lock_waits, profile.flat, profile.traces,
            -round(profile.run_share(), 3), order)


def _notes(chosen: PasteProfile, left: List[PasteProfile], count: int) -> List[str]:
    notes: List[str] = []
    shown = [p for p in left if p.illustration and not chosen.illustration]
    if shown:
        events = all(b.events is not None for p in shown for b in p.blocks)
        notes.append(f"left out {plural(len(shown), 'event excerpt' if events else 'sample excerpt')} of fewer than "
                     f"{ILLUSTRATION_SAMPLES} {'events' if events else 'samples'} "
                     f"({', '.join(p.describe() for p in shown)}): the pasted profile covers the window")
    waits = [p for p in left if p.lock_waits and not chosen.lock_waits and p not in shown]
    if waits:
        notes.append(f"ignored {plural(len(waits), 'lock-wait table')} (perf lock contention): the sampled profile "
                     "shows where the CPUs are")
    flat = [p for p in left if p.flat and not chosen.flat and p not in shown + waits]
    if flat:
        kinds = ", ".join(sorted({f for p in flat for f in p.formats}))
        notes.append(f"ignored {len(flat)} flat profile(s) ({kinds}): the pasted call stacks carry more")
    offcpu = [p for p in left if p.not_cpu and not chosen.not_cpu and p not in shown]
    if offcpu:
        notes.append(f"ignored {plural(len(offcpu), 'profile')} that {'is' if len(offcpu) == 1 else 'are'} not CPU "
                     f"time ({'; '.join(p.not_cpu or '' for p in offcpu)})")
    traces = [p for p in left if p.traces and not chosen.traces and p not in flat + offcpu + shown + waits]
    if traces:
        notes.append("ignored the pasted kernel traces: a sampled profile covers the whole window, a trace one moment")
    peers = [p for p in left if p not in flat + offcpu + traces + shown + waits]
    if peers:
        why = "the most busy kernel time" if any(p.run_share() < chosen.run_share() for p in peers) else "the first"
        notes.append(f"{count} profiles in this paste (e.g. before/after), never added together: diagnosed "
                     f"the one with {why}, {chosen.describe()}; not " + ", ".join(p.describe() for p in peers))
    return notes
