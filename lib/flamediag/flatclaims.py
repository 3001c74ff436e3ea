"""Flat profiles (perf top, `perf report -g none`): who owns a generic leaf, and what a listing left out.

A flat profile has no call chains, so a hot spin lock (`_raw_spin_lock 93 %`) names no lock: the
lock belongs to its caller. A kernel engineer reads the rest of the same command's top list: the
only contended path listed beside the lock is the one that takes it (`get_futex_key_refs` next to
`_raw_spin_lock` → the futex hash-bucket lock). A playbook states this in its signature:

    distinctive: [...]        # frames enough alone (they also identify the path)
    companions: [futex_ops]   # frames (or frame sets) that identify the path but are not enough alone
    claims: [spinlock]        # generic leaves the path ends in; theirs when identified

Rules, per command (all entries when the paste has no command column):
- a playbook identifies a command when one of its distinctive or companion frames is listed for it,
  its `comm` pattern (if any) matches the command, and none of its exclude patterns has all its
  elements listed for it (a reclaim lock beside `zone_reclaim` is zone reclaim, not direct reclaim:
  direct-reclaim excludes [zone_reclaim]); a top list shows every path that ran, so an excluding
  entry weighing less than a quarter of the playbook's own identifying entries is a side path, not
  the owner (LRU batching at 8 % beside `shrink_page_list` at 1 %: the LRU lock is the batches',
  rule U2);
- a claimable leaf of that command goes to the identifying playbook whose identifying frames weigh
  most there (to each of them when several are identified by the same frames: their checks decide,
  e.g. vm.zone_reclaim_mode between zone-reclaim and direct-reclaim); the others are named in the
  evidence as alternatives;
- a frame a playbook lists both as companion and as claim (direct-reclaim's `shrink`: the reclaim
  engine runs under kswapd, memcg limits, zone reclaim and allocators alike) identifies it like any
  companion, but is claimed only when one of the playbook's other frames is listed for the command
  too (`try_to_free_pages`, the allocator's slow path): the engine belongs to the entry beside it;
- a claimed leaf counts for its claimant only, never for another playbook's distinctive frames
  (so the `spinlock-contention` fallback keeps only the locks nobody claims);
- a softirq thread (`ksoftirqd/N`) runs softirq handlers and nothing else, so each of its entries
  that no playbook names (skb allocation, hashing, the driver's helpers) is claimed by the playbook
  whose frames weigh most in it (NET_RX frames -> nic-softirq, rcu_do_batch -> rcu-callback-flood);
  a kernel worker (`kworker/N:M`, 2.6.32's `events/N`) likewise runs work items and nothing else, so
  once a workqueue frame is listed for it, its unnamed entries (the work function's helpers, a
  driver's port reads) are the work's (kworker-storm, or the playbook a work function names); a
  `--no-children` listing never shows the workqueue frames (they have no self time), so when a
  kworker's entries identify nothing, its name stands for them (rule J3);
  a threaded interrupt handler (`irq/N-name`) likewise runs one line's handler and nothing else, so
  once its thread function (`irq_thread_fn`) is listed for it and names the heaviest path there,
  its unnamed entries (the driver's bus transfers, the lock it drops) are that interrupt's work
  (irq-storm); a handler running a NIC's NAPI poll (forced threading) is receive work, whose named
  frames count for nic-softirq as usual.

The same holds for the rows of a call-graph paste that came without any call chain (`--children`
TUI screens with one entry open and the rest folded, `+`): they are a flat listing beside the graphs
(`Profile.listed`): they are claimed by the path that the command's rows and chains identify, while
the stacks keep their ancestry.

A pasted listing shows only the top entries of all samples: `unlisted_busy` is the rest.

    >>> from flamediag.profile import Frame, Profile
    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> futex = parse_playbook(EXAMPLE.replace("id: demo", "id: futex").replace(
    ...     "patterns: [[lock, _spin_lock]]", "patterns: [[lock]]\\n  companions: [get_futex_key_refs]\\n"
    ...     "  claims: [lock]"), "futex.md")
    >>> prof = Profile(ancestry=False)
    >>> prof.add([Frame("_raw_spin_lock", "kernel")], 93, comm="radix_test")
    >>> prof.add([Frame("get_futex_key_refs", "kernel")], 0.3, comm="radix_test")
    >>> claims = flat_claims([futex], prof)
    >>> [(r.frames[0].name, claims[id(r)].playbooks) for r in prof if id(r) in claims]
    [('_raw_spin_lock', ('futex',))]
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from .kernelnames import identity
from .playbooks import Playbook
from .profile import Profile, is_idle


# Threads that run one kind of work and nothing else: softirq handlers, workqueue items.
SINGLE_PURPOSE = re.compile(r"^(?:ksoftirqd/\d+|kworker/[\w:+-]+|events/\d+)$")
WORKER = re.compile(r"^(?:kworker/[\w:+-]+|events/\d+)$")
WORKER_LOOP = ("worker_thread", "process_one_work", "run_workqueue")     # run_workqueue: 2.6.x
# How a claim names what identified its path (Claim.by): a frame listed for the command;
# `thread:frame`, a frame another thread lists (`_beside`); `command=frame`, a frame the command's own
# name stands for (a kworker's loop, rule J3). Thread names hold `:` (kworker/u16:2), frames never do.
STANDS_FOR = "="

# One interrupt line's threaded handler (`irq/51-DELL07E6`; perf cuts comms at 15 characters):
# single-purpose once the thread function that calls the handler is listed for it and identifies
# the heaviest path there (a NIC's NAPI poll run by the thread is receive work, not the line's).
IRQ_THREAD = re.compile(r"^irq/\d+-\S*$")
IRQ_THREAD_FUNCTIONS = frozenset({"irq_thread", "irq_thread_fn", "irq_forced_thread_fn"})


def _single_purpose(comm: str, weights: Dict[str, float]) -> bool:
    return bool(SINGLE_PURPOSE.match(comm)) or (bool(IRQ_THREAD.match(comm))
                                                 and not IRQ_THREAD_FUNCTIONS.isdisjoint(weights))


@dataclass(frozen=True)
class Claim:
    playbooks: Tuple[str, ...]        # the claimants: one, or several identified by the same weight
    by: Tuple[str, ...]               # the frames that identified the path
    rivals: Tuple[str, ...] = ()      # other playbooks that identified the same command, less


def _names(playbook: Playbook, elements: Sequence[str]) -> FrozenSet[str]:
    return frozenset(name for element in elements for name in playbook.expand(element))


def _excluded(playbook: Playbook, listed: FrozenSet[str], weights: Optional[Dict[str, float]] = None,
              own: float = 0.0, named: FrozenSet[str] = frozenset()) -> bool:
    """An exclude pattern applies by co-occurrence: every element has a frame listed; but frames that
    name no path (`named`: every playbook's distinctive frames) exclude only when they weigh at least
    a quarter of the playbook's own identifying frames (rule U2). A path's entry point
    (`try_to_free_pages`, `zone_reclaim`) has little self time and excludes at any weight.
    A pattern made only of the signature's `exclude_weighed` sets excludes only when its frames weigh
    at least as much as the playbook's own identifying frames, named or not (rule CH2: the receive
    softirq that a storm of NIC interrupts raises is listed beside the hardirq entries; it is the
    storm's by-product while the interrupt path outweighs it, the NIC's work once it does not).

    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> demo = parse_playbook(EXAMPLE.replace("patterns: [[lock, _spin_lock]]",
    ...     "patterns: [[irq]]\\n  distinctive: [irq]\\n  exclude: [[rx]]\\n  exclude_weighed: [rx]").replace(
    ...     "lock: [", "irq: [handle_irq_event_percpu]\\n  rx: [net_rx_action]\\n  lock: ["), "demo.md")
    >>> rows = {"handle_irq_event_percpu": 4.8, "net_rx_action": 2.9}
    >>> _excluded(demo, frozenset(rows), rows, 4.8, frozenset({"net_rx_action"}))
    False
    >>> rows = {"handle_irq_event_percpu": 1.1, "net_rx_action": 2.9}
    >>> _excluded(demo, frozenset(rows), rows, 1.1, frozenset({"net_rx_action"}))
    True
    """
    weighed = frozenset(playbook.signature.get("exclude_weighed") or [])
    for pattern in playbook.signature["exclude"]:
        found = [_names(playbook, [element]) & listed for element in pattern]
        if not all(found):
            continue
        against = frozenset().union(*found)
        if weights is not None and own > 0 and weighed.issuperset(pattern) \
                and own >= sum(weights[n] for n in against):
            continue
        if weights is not None and own > 0 and not (against & named) \
                and own >= 4 * sum(weights[n] for n in against):
            continue
        return True
    return False


def excluded_commands(playbook: Playbook, commands: Dict[str, Dict[str, float]],
                      identifying: Optional[FrozenSet[str]] = None) -> FrozenSet[str]:
    """Rule AY3: the commands of a flat listing (`commands`: its `by_command`) whose entries identify
    `playbook` by its distinctive frames while one of its exclude patterns is listed beside them
    (`_excluded`, with the quarter rule against those frames): the same top list that keeps a claim
    from the path keeps its distinctive frames from counting for it (a NIC poll listed for an
    application thread that is busy-polling its queue, `napi_busy_loop` beside it, is the
    application's own polling). For a listing with call chains, match passes no commands.
    `identifying`: the frames judged instead of the distinctive ones (rule BQ1: the `flat_weak`
    switching rows, which beside futex or lock-sleep rows are that wait's and wake's cost).

    >>> from flamediag.profile import Frame
    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> demo = parse_playbook(EXAMPLE.replace("patterns: [[lock, _spin_lock]]",
    ...     "patterns: [[poll]]\\n  distinctive: [poll]\\n  exclude: [[busy]]").replace(
    ...     "lock: [", "poll: [mlx5e_poll_rx_cq]\\n  busy: [napi_busy_loop]\\n  lock: ["), "demo.md")
    >>> prof = Profile(ancestry=False)
    >>> prof.add([Frame("mlx5e_poll_rx_cq", "kernel")], 18.7, comm="app")
    >>> prof.add([Frame("napi_busy_loop", "kernel")], 11.4, comm="app")
    >>> sorted(excluded_commands(demo, by_command(prof)))
    ['app']
    >>> prof = Profile(ancestry=False)
    >>> prof.add([Frame("mlx5e_poll_rx_cq", "kernel")], 48.7, comm="app")
    >>> prof.add([Frame("napi_busy_loop", "kernel")], 1.4, comm="app")
    >>> sorted(excluded_commands(demo, by_command(prof)))
    []
    """
    distinctive = identifying if identifying is not None else _names(playbook, playbook.signature.get("distinctive") or [])
    found = set()
    for comm, weights in commands.items():
        own = sum(w for name, w in weights.items() if name in distinctive)
        if own > 0 and _excluded(playbook, frozenset(weights), weights, own):
            found.add(comm)
    return frozenset(found)


def by_command(records, whole_stacks: bool = False) -> Dict[str, Dict[str, float]]:
    """comm -> {normalised leaf name -> weight} over busy flat entries; `whole_stacks`: every frame
    of each stack (a call-graph paste shows its paths in the chains), once per stack."""
    commands: Dict[str, Dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for record in records:
        if record.frames and not is_idle(record):
            names = {identity(f.name) for f in record.frames} if whole_stacks else {identity(record.frames[-1].name)}
            for name in names:
                commands[record.comm or ""][name] += record.weight
    return commands


def _shared(playbook: Playbook) -> FrozenSet[str]:
    """Companions it also claims: frames that identify a family of paths (the reclaim engine under
    every reclaim) but are this path's only beside one of its own entry frames."""
    sig = playbook.signature
    return _names(playbook, sig.get("companions") or []) & _names(playbook, sig["claims"])


def _identifiers(playbook: Playbook, weights: Dict[str, float]) -> Tuple[float, Tuple[str, ...]]:
    sig = playbook.signature
    wanted = _names(playbook, sig["distinctive"]) | _names(playbook, sig.get("companions") or [])
    wanted -= _names(playbook, sig["claims"]) - _shared(playbook)   # a lock names no path, not even the fallback's
    seen = sorted((name for name in weights if name in wanted), key=lambda n: -weights[n])
    return sum(weights[n] for n in seen), tuple(seen)


Owner = Tuple[float, Tuple[str, ...], Playbook]


def _runs_as(playbook: Playbook, comm: str) -> bool:
    """A playbook bound to some commands (kswapd-spin: '^kswapd') identifies only those."""
    pattern = playbook.signature.get("comm")
    return not pattern or re.search(pattern, comm) is not None


def _beside(playbook: Playbook, comm: str, commands: Dict[str, Dict[str, float]]) -> Tuple[float, Tuple[str, ...]]:
    """What other threads' entries say about this command's path (`beside_threads`): kswapd
    reclaiming in the same listing says the allocators' watermarks failed, which only the allocator's
    slow path (direct reclaim) wakes it for; a memcg limit or zone reclaim never does. Named
    `thread:frame`, so the engine frames they stand beside become this path's (see `_claims`)."""
    weight, seen = 0.0, []
    for pattern, elements in (playbook.signature.get("beside_threads") or {}).items():
        names = _names(playbook, elements)
        for other, weights in commands.items():
            if other != comm and other and re.search(pattern, other):
                for name in sorted(n for n in weights if n in names):
                    weight += weights[name]
                    seen.append(f"{other}:{name}")
    return weight, tuple(seen)


def _foreign_lockers_outweigh(playbook: Playbook, weights: Dict[str, float], identified: float) -> bool:
    """Rule S2: a call graph names a lock by its direct caller, and a playbook leaves the locks that
    other paths' functions take (`foreign_lockers`: the swap allocator's `swap_info_get`,
    `scan_swap_map` ... under reclaim). A flat listing shows no caller, but the command's own rows
    show whose lock code it runs: when the foreign lock takers listed for it weigh more than the
    frames that identify this playbook, the hot lock beside them is theirs, not this path's. With no
    lock listed for the command there is no lock to give away: the lock takers' rows are their own
    work (`ipt_do_table` walking a long chain took the x_tables lock only before 2.6.30).

    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> demo = parse_playbook(EXAMPLE.replace("patterns: [[lock, _spin_lock]]",
    ...     "patterns: [[lock]]\\n  claims: [lock]\\n  foreign_lockers: [swap_info_get, scan_swap_map]"), "demo.md")
    >>> lock = {"_raw_spin_lock": 30.0}
    >>> _foreign_lockers_outweigh(demo, {**lock, "swap_info_get": 2.9, "scan_swap_map": 2.2, "shrink_page_list": 1.9}, 1.9)
    True
    >>> _foreign_lockers_outweigh(demo, {**lock, "swap_info_get": 0.4, "shrink_page_list": 6.0}, 6.0)
    False
    >>> _foreign_lockers_outweigh(demo, {"swap_info_get": 2.9, "scan_swap_map": 2.2, "shrink_page_list": 1.9}, 1.9)
    False
    """
    signature = playbook.signature
    foreign = _names(playbook, signature.get("foreign_lockers") or [])
    locks = _names(playbook, signature.get("lock_frames") or signature.get("claims") or [])
    return (bool(foreign) and any(name in locks for name in weights)
            and sum(w for name, w in weights.items() if name in foreign) > identified)


def _through(weight: float, by: Sequence[str], through: Optional[Dict[str, float]], lock: float = 0.0) -> float:
    """Rule CD2: in a --children listing (`through`: normalised frame -> its Children, for one command)
    a frame's Children is the weight of every sample that ran through it. An identifying frame whose
    Children enclose the command's hottest lock the playbook claims (`lock`: that lock's Self) ran
    the lock under it, so the path weighs at least that Children (the largest such, never a sum: they
    may call each other). A lock taker at 0.4 % Self with 49.7 % Children ran the 48.7 % lock; a
    counter update at 2.6 % beside it did not, and neither did a caller whose Children (41 %) are
    less than the lock (71 %): only some of the lock's samples ran under it.

    >>> _through(2.9, ("folio_batch_move_lru", "folio_lruvec_lock_irqsave"),
    ...          {"folio_batch_move_lru": 51.9, "folio_lruvec_lock_irqsave": 49.7}, 48.7)
    51.9
    >>> _through(2.6, ("__mod_memcg_lruvec_state",), {"__mod_memcg_lruvec_state": 2.6}, 48.7)
    2.6
    >>> _through(0.1, ("do_numa_page",), {"do_numa_page": 41.0}, 71.3), _through(2.9, ("x",), None)
    (0.1, 2.9)
    """
    if not through:
        return weight
    return max([weight] + [through[name] for name in by if name in through and through[name] >= lock])


def _owners(playbooks: Sequence[Playbook], comm: str, weights: Dict[str, float],
            commands: Optional[Dict[str, Dict[str, float]]] = None,
            every: Optional[Sequence[Playbook]] = None,
            through: Optional[Dict[str, float]] = None) -> List[Owner]:
    """Playbooks identified in one command's entries, heaviest identification first (by Children
    in a --children listing, `_through`); a path the command's own entries identify may be
    confirmed by another thread's (`_beside`)."""
    listed = frozenset(weights)
    found = []
    runs = [p for p in playbooks if _runs_as(p, comm)]
    named = frozenset(n for p in (every or playbooks) if _runs_as(p, comm)
                      for n in _names(p, p.signature.get("distinctive") or []))
    for playbook in runs:
        weight, by = _identifiers(playbook, weights)
        if through:
            claimed = _names(playbook, playbook.signature.get("claims") or [])
            weight = _through(weight, by, through, max((w for n, w in weights.items() if n in claimed), default=0.0))
        if (by and not _excluded(playbook, listed, weights, weight, named)
                and not _foreign_lockers_outweigh(playbook, weights, weight)):
            extra, beside = _beside(playbook, comm, commands or {})
            found.append((weight + extra, by + beside, playbook))
    if not found and WORKER.match(comm):
        # a kernel worker runs worker_thread -> process_one_work and nothing else, frames with no
        # self time that a `--no-children` listing never shows: its name stands for them. Its entries
        # are then the work's (rule F5), so an exclude pattern listed beside them takes it only when
        # it weighs at least a quarter of them, as for identified paths (rules U2, AG4)
        implied = {name: 0.0 for name in WORKER_LOOP}
        entries = sum(weights.values())
        for playbook in (p for p in playbooks if _runs_as(p, comm)):
            weight, by = _identifiers(playbook, implied)
            if by and not _excluded(playbook, listed, weights, entries, named):
                found.append((0.0, (f"{comm}{STANDS_FOR}{by[0]}",), playbook))
    return sorted(found, key=lambda item: (-item[0], item[2].id))


def _claims(playbook: Playbook, leaf: str, identified_by: Sequence[str]) -> bool:
    """A claimed frame is the playbook's; one it shares with other paths (a companion it also claims)
    only when another of its frames identified it too."""
    if leaf not in _names(playbook, playbook.signature["claims"]):
        return False
    shared = _shared(playbook)
    return leaf not in shared or not set(identified_by) <= shared


def _claim(owners: List[Owner], leaf: str, single_purpose: bool, leaf_weight: float = 0.0):
    able = [(w, by, p) for w, by, p in owners
            if single_purpose or (_claims(p, leaf, by) and _outweighs(p, leaf, w, leaf_weight))]
    if not able:
        return None
    if single_purpose and any(leaf in _names(p, p.signature["distinctive"]) for _, _, p in owners):
        return None                   # a named frame counts for its own playbook as usual
    best = able[0][0]
    tied = tuple(p.id for w, _, p in able if w >= best)          # the same listed frames: checks decide
    return Claim(tied, able[0][1], tuple(p.id for w, _, p in able if w < best))


def _outweighs(playbook: Playbook, leaf: str, identified: float, leaf_weight: float) -> bool:
    """`claims_min_ratio` (rule AF3), per claimed frame set: a path whose own work comes with its
    locks (NUMA balancing's hinting faults and scans take the PTE and LRU locks they spin on) claims
    a listed lock only when the frames that identified it weigh at least that fraction of the lock: a
    NUMA scan at 1 % beside a lock at 34 % did not cause it. Other claims, and playbooks without it,
    claim at any weight (a futex hash-bucket lock at 93 % beside `get_futex_key_refs` at 0.3 %:
    waiting is the lock).

    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> demo = parse_playbook(EXAMPLE.replace("patterns: [[lock, _spin_lock]]",
    ...     "patterns: [[lock]]\\n  claims: [lock]\\n  claims_min_ratio: {lock: 0.25}"), "demo.md")
    >>> _outweighs(demo, "_raw_spin_lock", 8.0, 9.4), _outweighs(demo, "_raw_spin_lock", 1.5, 34.1)
    (True, False)
    >>> _outweighs(demo, "change_pte_range", 1.5, 34.1)
    True
    """
    for element, ratio in (playbook.signature.get("claims_min_ratio") or {}).items():
        if leaf in _names(playbook, [element]) and identified < ratio * leaf_weight:
            return False
    return True


def unlisted_busy(profile: Profile) -> float:
    """Busy weight a pasted report did not list: its percentages are of all samples, and a
    ticket shows only the top entries, so the rest happened too (its idle part is unknown, so it
    counts as busy; only listed idle entries are known to be idle). Without this a top-5 excerpt
    summing to 30 % would make each listed entry look three times its size. Scoring still considers
    a playbook whose frames are a noticeable part of the listed entries (min_share on those).
    The whole is `Profile.percent_of`, set by the reader when the paste says what its percentages
    are of (perf report / perf top: 100 %, or the pasted sample count); unknown: nothing is unlisted.

    >>> from flamediag.profile import Frame
    >>> prof = Profile(source_format="perf-top", ancestry=False, percent_of=100.0)
    >>> prof.add([Frame("_raw_spin_lock", "kernel")], 12.0); prof.add([Frame("intel_idle", "kernel")], 8.0)
    >>> unlisted_busy(prof)
    80.0
    """
    whole = profile.percent_of
    return max(0.0, whole - profile.total()) if whole else 0.0


def flat_claims(playbooks: Sequence[Playbook], profile: Profile) -> Dict[int, Claim]:
    """id(record) -> Claim, for flat profiles and the listing rows of a call-graph paste
    (`Profile.listed`); {} for stacks with ancestry."""
    records = [r for r in profile if r.frames and profile.is_listed(r)] if profile.ancestry else list(profile)
    if not records:
        return {}
    owners: Dict[str, List[Owner]] = {}
    # what identifies a path: the listing's rows, and in a call-graph paste every frame its chains show
    commands = by_command(profile, whole_stacks=profile.ancestry)
    single: Dict[str, bool] = {}
    claimers = [p for p in playbooks if p.signature.get("claims")]
    through: Dict[str, Dict[str, float]] = defaultdict(dict)       # a --children listing's Children
    for (comm, symbol), weight in profile.through.items():
        name = identity(symbol)
        through[comm][name] = max(through[comm].get(name, 0.0), weight)
    for comm, weights in commands.items():
        single[comm] = _single_purpose(comm, weights)
        owners[comm] = _owners(playbooks if single[comm] else claimers, comm, weights, commands, playbooks,
                               through.get(comm))
        if single[comm] and IRQ_THREAD.match(comm) and not (
                owners[comm] and not IRQ_THREAD_FUNCTIONS.isdisjoint(owners[comm][0][1])):
            # the handler runs another path's work (a NIC's NAPI poll under forced threading): its
            # named frames count for that path as usual, its helpers go to no one
            single[comm] = False
            owners[comm] = _owners(claimers, comm, weights, commands, playbooks, through.get(comm))
    claims: Dict[int, Claim] = {}
    for record in records:
        comm = record.comm or ""
        if not owners.get(comm) or not record.frames or is_idle(record):
            continue
        leaf = identity(record.frames[-1].name)
        claim = _claim(owners[comm], leaf, single[comm], commands[comm].get(leaf, record.weight))
        if claim is not None:
            claims[id(record)] = claim
    return claims
