"""Stack matching: which busy samples carry a playbook's signature, and where they ran.

A pattern is a list of frame-set names (or literal frame names), root side first; it matches a
stack when each element appears in that order as ancestor -> descendant (not necessarily
adjacent). Names are compared whole, after `kernelnames.identity()` (normalize(), and `SyS_` read
as `sys_`); `*` matches any frame.

    >>> from flamediag.profile import Frame, Profile
    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> pb = parse_playbook(EXAMPLE, "demo.md")
    >>> prof = Profile()
    >>> prof.add([Frame("a", "kernel"), Frame("_raw_spin_lock+0x1a", "kernel"), Frame("_spin_lock", "kernel")], 3)
    >>> prof.add([Frame("_spin_lock", "kernel"), Frame("_raw_spin_lock", "kernel")], 1)
    >>> m = match_playbook(pb, prof)
    >>> m.matched, m.busy, sorted(m.frames)
    (3.0, 4.0, ['_raw_spin_lock', '_spin_lock'])
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from .flatclaims import Claim, by_command, excluded_commands, flat_claims, unlisted_busy
from .kernelnames import TEXT_LOCK, TEXT_LOCK_SPIN, identity, lock_caller, normalize
from .playbooks import Playbook
from .profile import Profile, StackRecord, command_of, is_idle

WILDCARD = "*"


@dataclass
class Match:
    """What one playbook's signature found in one profile (weights, not fractions)."""

    playbook: Playbook
    busy: float = 0.0
    matched: float = 0.0
    strong: float = 0.0
    flat: bool = False                                      # matched by distinctive frames only
    cpus: Counter = field(default_factory=Counter)
    comms: Counter = field(default_factory=Counter)
    stacks: Counter = field(default_factory=Counter)        # names tuple (root first) -> weight
    frames: Set[str] = field(default_factory=set)           # signature frames actually seen
    excluded: float = 0.0
    claimed: float = 0.0                                    # flat: generic leaves attributed to it
    claimed_by: Set[str] = field(default_factory=set)       # ... because these frames were listed
    rivals: Set[str] = field(default_factory=set)           # ... which these playbooks also identified
    unlisted: float = 0.0                                   # pasted listing: busy weight of entries left out
    kernel: float = 0.0                                     # busy weight whose leaf is a kernel frame (rule AR1)
    seconds: Counter = field(default_factory=Counter)       # second index -> matched weight (timed inputs)
    busy_thread: Optional[Tuple[str, float]] = None         # rule BY1: a background thread of the signature
                                                            # a pasted top / pidstat row shows at half a CPU
                                                            # or more (command, part of one CPU)

    @property
    def share(self) -> float:
        return self.matched / self.busy if self.busy else 0.0

    @property
    def listed_share(self) -> float:
        """Share of the entries a pasted listing shows (= share, unless entries were left out)."""
        listed = self.busy - self.unlisted
        return self.matched / listed if listed > 0 else 0.0

    @property
    def strong_share(self) -> float:
        return self.strong / self.busy if self.busy else 0.0

    def hottest_stack(self) -> Tuple[str, ...]:
        return self.stacks.most_common(1)[0][0] if self.stacks else ()

    def fractions(self, counter: Counter) -> Dict[str, float]:
        total = sum(counter.values())
        return {str(k): v / total for k, v in counter.most_common()} if total else {}


class _Compiled:
    """A playbook signature with its frame sets expanded to frozensets."""

    def __init__(self, playbook: Playbook):
        sig = playbook.signature
        self.patterns = [self._expand(playbook, p) for p in sig["patterns"]]
        # frames worth highlighting in a stack a pattern matched: every member of its frame sets
        self.highlight = [frozenset().union(*p) - {WILDCARD} for p in self.patterns]
        self.strong = set(sig["strong"])
        self.exclude = [self._expand(playbook, p) for p in sig["exclude"]]
        self.context = sig["context"]
        self.comm = re.compile(sig["comm"]) if sig["comm"] else None
        self.background = re.compile(sig["background"]) if sig.get("background") else None
        self.leaf_within = sig["leaf_within"]
        self.distinctive = frozenset(name for element in sig["distinctive"] for name in playbook.expand(element))
        in_strong = frozenset().union(*(h for i, h in enumerate(self.highlight) if i in self.strong))
        self.weak_only = frozenset().union(*(h for i, h in enumerate(self.highlight) if i not in self.strong)) - in_strong
        # rule BQ1: frames that a flat listing counts as the weak form although no distinctive frame is
        # listed with them (sched-overhead: the context-switch path's own functions, schedule ->
        # __switch_to / pick_next_task_fair -> enqueue_entity / dequeue_entity / update_curr); in a call
        # graph their stacks match the weak `switch` pattern, and a flat row is that stack's leaf
        self.flat_weak = frozenset(name for element in sig["flat_weak"]
                                   for name in playbook.expand(element)) - self.distinctive
        self.gate = self._gate(self.patterns)
        self.lock_leaves = frozenset(name for element in (sig["lock_frames"] or sig["claims"])
                                     for name in playbook.expand(element))
        self.foreign_lockers = frozenset(name for element in sig["foreign_lockers"]
                                         for name in playbook.expand(element))
        self.own_lockers = frozenset(name for element in sig["own_lockers"] for name in playbook.expand(element))
        # rule CA1: a lock taken inside a callback that one of `foreign_callbacks` dispatched to, with none
        # of this playbook's own frames between them, is the callback's (a shrinker's cache lock)
        self.foreign_callbacks = frozenset(name for element in sig["foreign_callbacks"]
                                           for name in playbook.expand(element))
        self.own_frames = frozenset().union(*self.highlight, self.distinctive) - {WILDCARD}
        self.own_leaves = own_leaves(playbook)
        self.foreign_leaves: FrozenSet[str] = frozenset()     # other playbooks' own_leaves (match_all)
        gap = sig.get("children_gap") or {}
        self.gap = {key: frozenset(name for element in gap[key] for name in playbook.expand(element))
                    for key in ("entry", "then", "waits")} if gap else None

    @staticmethod
    def _gate(patterns) -> Optional[FrozenSet[str]]:
        """Frames of which a stack needs one for any pattern to match: each pattern's narrowest
        element (None when a pattern is all wildcards: no shortcut)."""
        narrowest = []
        for pattern in patterns:
            elements = [e for e in pattern if WILDCARD not in e]
            if not elements:
                return None
            narrowest.append(min(elements, key=len))
        return frozenset().union(*narrowest)

    @staticmethod
    def _expand(playbook: Playbook, pattern: Sequence[str]) -> List[FrozenSet[str]]:
        return [frozenset(playbook.expand(element)) for element in pattern]


def _element_hits(names: Sequence[str], element: FrozenSet[str], start: int) -> Optional[int]:
    wildcard = WILDCARD in element
    for index in range(start, len(names)):
        if wildcard or names[index] in element:
            return index
    return None


def match_pattern(names: Sequence[str], pattern: Sequence[FrozenSet[str]],
                  leaf_within: Optional[int] = None) -> Optional[List[int]]:
    """Indexes of the frames matching each element (root first), or None.

    Earlier elements take their first (rootmost) occurrence, which leaves the most room for
    the rest; the last element takes its leafmost occurrence so `leaf_within` is fair.

    >>> match_pattern(["a", "b", "c", "b"], [frozenset({"a"}), frozenset({"b"})])
    [0, 3]
    >>> match_pattern(["b", "a"], [frozenset({"a"}), frozenset({"b"})]) is None
    True
    >>> match_pattern(["a", "b", "x", "y", "z"], [frozenset({"a"}), frozenset({"b"})], leaf_within=2) is None
    True
    """
    hits: List[int] = []
    position = 0
    for element in pattern[:-1]:
        index = _element_hits(names, element, position)
        if index is None:
            return None
        hits.append(index)
        position = index + 1
    last = pattern[-1]
    for index in range(len(names) - 1, position - 1, -1):
        if WILDCARD in last or names[index] in last:
            if leaf_within is not None and len(names) - 1 - index >= leaf_within:
                return None
            return hits + [index]
    return None


def own_leaves(playbook: Playbook) -> FrozenSet[str]:
    """The frames a playbook's `own_leaves` names: a stack ending in one is that playbook's cost."""
    return frozenset(name for element in playbook.signature["own_leaves"] for name in playbook.expand(element))


OWN_LEAF_DEPTH = 2          # an own leaf, or its caller when the leaf is what it calls


def _context_ok(compiled: _Compiled, record: StackRecord, ancestry: bool) -> bool:
    # a flat entry's context is unknown (no softirq/irq entry frame above it): its frame names it
    if ancestry and compiled.context != "any" and record.context != compiled.context:
        return False
    # a stack without a command is named by the kernel thread it runs in, if any (profile.command_of)
    return compiled.comm is None or bool(compiled.comm.search(command_of(record)))


def _possible(pattern: Sequence[FrozenSet[str]], present: FrozenSet[str]) -> bool:
    """Cheap pre-check (C-speed set ops): every element has some frame in the stack."""
    return all(WILDCARD in element or not element.isdisjoint(present) for element in pattern)


def _flat_strong(compiled: _Compiled, seen: Sequence[str]) -> bool:
    """A distinctive frame is the strong form unless it belongs only to weak patterns' frame sets
    (cpu-power-saving's idle governor, sched-overhead's plain switching: weak_share applies)."""
    return any(name not in compiled.weak_only for name in seen)


def _lock_in_foreign_callback(compiled: _Compiled, names: Sequence[str]) -> bool:
    """Rule CA1: the stack ends in a lock (`lock_leaves`) and the frames between the nearest dispatch
    frame (`foreign_callbacks`: shrink_slab, do_shrink_slab ...) and the lock are none of the
    playbook's own frames: the lock belongs to the callback that was called (a file system's or a
    driver's shrinker taking its cache's lock, which the cache's users take too), not to the path
    that dispatched to it. Own callbacks listed by the playbook (super_cache_scan, prune_icache_sb)
    keep their locks.

    >>> class C: pass
    >>> c = C(); c.lock_leaves = frozenset({"_raw_spin_lock"}); c.foreign_callbacks = frozenset({"shrink_slab"})
    >>> c.own_frames = frozenset({"kswapd", "shrink_slab", "super_cache_scan"})
    >>> _lock_in_foreign_callback(c, ["kswapd", "shrink_slab", "ext4_es_scan", "_raw_spin_lock"])
    True
    >>> _lock_in_foreign_callback(c, ["kswapd", "shrink_slab", "super_cache_scan", "_raw_spin_lock"])
    False
    >>> _lock_in_foreign_callback(c, ["kswapd", "shrink_slab", "ext4_es_scan"])
    False
    """
    caller = lock_caller(names, compiled.lock_leaves)
    if caller is None:
        return False
    end = len(names) - 1
    while names[end] in compiled.lock_leaves:
        end -= 1
    for index in range(end, -1, -1):
        name = names[index]
        if name in compiled.foreign_callbacks:
            return index < end
        if name in compiled.own_frames:
            return False
    return False


def _match_record(compiled: _Compiled, names: Sequence[str], ancestry: bool, present: FrozenSet[str]):
    """(matched frame names, strong?) for one stack, or None."""
    if not ancestry:
        seen = [n for n in names if n in compiled.distinctive]
        if not seen:                  # rule BQ1: a weak-form frame alone counts weak, never strong
            weak = [n for n in names if n in compiled.flat_weak]
            return (set(weak), False) if weak else None
        return (set(seen), _flat_strong(compiled, seen))
    if compiled.gate is not None and compiled.gate.isdisjoint(present):
        return None
    if compiled.foreign_leaves and not compiled.foreign_leaves.isdisjoint(names[-OWN_LEAF_DEPTH:]):
        return None                   # it ends in another playbook's own leaf: that cost is its
    if compiled.foreign_lockers and lock_caller(names, compiled.lock_leaves) in compiled.foreign_lockers:
        return None                   # the lock its direct caller takes is another path's
    if compiled.foreign_callbacks and _lock_in_foreign_callback(compiled, names):
        return None                   # the lock a dispatched callback takes is the callback's (rule CA1)
    # a lock taken directly by one of `own_lockers` is this playbook's even under an excluded path
    # (the conntrack lock spun on inside NET_RX is lock contention, not receive work)
    owned = bool(compiled.own_lockers) and lock_caller(names, compiled.lock_leaves) in compiled.own_lockers
    # ...and so is a stack that ends in one of `own_leaves` (or in what it calls: a clock read): the
    # cost is that function's whatever path led to it (PSI's per-cgroup accounting on a futex sleep)
    owned = owned or (bool(compiled.own_leaves) and not compiled.own_leaves.isdisjoint(names[-OWN_LEAF_DEPTH:]))
    if not owned and any(_possible(p, present) and match_pattern(names, p) is not None for p in compiled.exclude):
        return None
    strong, found = False, set()
    for index, pattern in enumerate(compiled.patterns):
        if not _possible(pattern, present):
            continue
        hits = match_pattern(names, pattern, compiled.leaf_within)
        if hits is not None:
            found.update(names[i] for i in hits)
            found.update(n for n in names if n in compiled.highlight[index])
            strong = strong or index in compiled.strong
    return (found, strong) if found else None


_normalize_cached = lru_cache(maxsize=1 << 16)(identity)   # normalize(), SyS_ read as sys_


def normalized_names(record: StackRecord) -> Tuple[str, ...]:
    return tuple(_normalize_cached(f.name) for f in record.frames)


def busy_records(profile: Profile) -> List[Tuple[StackRecord, Tuple[str, ...]]]:
    """Busy records with their normalised frame names, computed once per distinct stack: records
    of one stack (on other CPUs, commands, contexts) share the same names tuple."""
    names_of: Dict[tuple, Tuple[str, ...]] = {}
    interned: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
    busy = []
    for record in profile:
        if is_idle(record):
            continue
        names = names_of.get(record.frames)
        if names is None:
            names = normalized_names(record)
            names = names_of[record.frames] = interned.setdefault(names, names)
        busy.append((record, names))
    return busy


class _Busy(list):
    """(record, names, present) per busy record, in profile order, plus what every playbook reuses:
    the distinct stacks (id of the shared names tuple -> (names, present)), the busy weight, the
    part of it in kernel code, the stacks a call-graph paste listed without their chain (matched as
    flat entries), the busy weight a pasted listing left out, its Children per command, and a flat
    listing's leaf weights per command (rule AY3)."""

    def __init__(self, busy, profile: Profile):
        sets: Dict[int, Tuple[Tuple[str, ...], FrozenSet[str]]] = {}
        rows = []
        total = kernel = 0.0
        for record, names in busy:
            stack = sets.get(id(names))
            if stack is None:
                stack = sets[id(names)] = (names, frozenset(names))
            rows.append((record, names, stack[1]))
            total += record.weight
            kernel += record.weight if record.frames and record.frames[-1].kind == "kernel" else 0.0
        super().__init__(rows)
        self.stacks = sets
        self.total = total
        self.kernel = kernel
        self.listed = {id(names) for record, names in busy if profile.ancestry and profile.is_listed(record)}
        self.unlisted = unlisted_busy(profile)
        self.children = _children_by_name(profile.through) if profile.through else {}
        self.leaves_by_command = by_command(profile) if not profile.ancestry else {}


def _with_sets(busy, profile: Profile) -> _Busy:
    return busy if isinstance(busy, _Busy) else _Busy(busy, profile)


def _text_lock_shown(record: StackRecord, names: Tuple[str, ...]) -> Tuple[str, ...]:
    """The names of a matched stack as the report shows them: a `.text.lock.<file>` section compared
    as the generic spin (kernelnames.identity, rule K1) keeps its file, which says whose lock it is."""
    return tuple(normalize(frame.name) if name == TEXT_LOCK_SPIN else name
                 for frame, name in zip(record.frames, names))


def _claimed_hit(result: Match, claim: Claim, names: Sequence[str], weight: float):
    """A flat leaf a playbook claimed counts only for its claimants (flatclaims.py)."""
    if result.playbook.id not in claim.playbooks:
        return None
    result.claimed += weight
    result.claimed_by.update(claim.by)
    result.rivals.update(claim.rivals)
    return set(names[-1:]), True


def match_playbook(playbook: Playbook, profile: Profile, busy=None, claims=None,
                   foreign_leaves: FrozenSet[str] = frozenset()) -> Match:
    """Matches each distinct stack once, then walks the busy records in profile order (so ties
    keep their order) adding the weight of those whose stack matched and whose context fits;
    a flat leaf claimed by a path (flatclaims.py) counts for its claimants only, and so does a
    stack ending in a playbook's `own_leaves` (`foreign_leaves`: the other playbooks')."""
    compiled = _Compiled(playbook)
    compiled.foreign_leaves = frozenset(foreign_leaves) - compiled.own_leaves
    busy = _with_sets(busy if busy is not None else busy_records(profile), profile)
    claims = claims if claims is not None else flat_claims([playbook], profile)
    result = Match(playbook, flat=not profile.ancestry, unlisted=busy.unlisted)
    result.busy = busy.total + busy.unlisted
    result.kernel = busy.kernel
    hits = {}
    # a call-graph paste's rows pasted without their chain are a flat listing beside the graphs:
    # matched as flat entries (by distinctive frames) when no path claimed them
    for key, (names, present) in busy.stacks.items():
        hit = _match_record(compiled, names, profile.ancestry and key not in busy.listed, present)
        if hit is not None:
            hits[key] = hit
    if not hits and not claims and not profile.through:
        return result
    by_comm: Counter = Counter()
    children = busy.children if compiled.exclude else {}
    # rule AY3: a flat entry counted by a distinctive frame is another path's when an exclude pattern
    # is listed for its command as flatclaims.py judges it for claims (co-occurrence, a quarter)
    beside = excluded_commands(playbook, busy.leaves_by_command) if compiled.exclude else frozenset()
    quiet = _quiet_background(compiled, busy, profile.cpu_window, profile.thread_cpu)
    # rule BQ1: the same for the weak rows of `flat_weak`, judged against their own weight
    beside_weak = (excluded_commands(playbook, busy.leaves_by_command, compiled.flat_weak)
                   if compiled.exclude and compiled.flat_weak else frozenset())
    for record, names, _ in busy:
        if not _context_ok(compiled, record, profile.ancestry):
            continue
        if quiet and command_of(record) in quiet:
            continue
        claim = claims.get(id(record))
        hit = _claimed_hit(result, claim, names, record.weight) if claim else hits.get(id(names))
        if hit is None or (not claim and children
                           and _covered_by_exclude(compiled, children, record.comm or "", names)):
            continue
        if not claim and (record.comm or "") in beside:
            continue
        if not claim and not hit[1] and hit[0] <= compiled.flat_weak and (record.comm or "") in beside_weak:
            continue
        found, strong = hit
        result.matched += record.weight
        by_comm[record.comm or ""] += record.weight
        result.strong += record.weight if strong else 0
        if TEXT_LOCK_SPIN in names:              # rule K1: report the section's own name
            shown = _text_lock_shown(record, names)
            if shown != names:
                found = {n for n in found if n != TEXT_LOCK_SPIN} | {n for n in shown if n.startswith(TEXT_LOCK)}
                names = shown
        result.frames.update(found)
        if record.cpu is not None:
            result.cpus[record.cpu] += record.weight
        comm = command_of(record)
        if comm:
            result.comms[comm] += record.weight
        result.stacks[names] += record.weight
        if record.seconds:
            result.seconds.update(record.seconds)
    if profile.through:
        _children_totals(result, compiled, profile.through, by_comm)
    result.busy_thread = _busy_background(compiled, profile.thread_cpu, by_comm)
    return result


# Rule BR1: a background kernel thread is a problem when it is busy: half a CPU or more over the
# window (the threshold rules I2 and R5 give a `top` or `pidstat` row, paste.BUSY_CPU)
BUSY_THREAD = 0.5


def _quiet_background(compiled: _Compiled, busy, cpu_window: Optional[float],
                      thread_cpu: Optional[Dict[str, float]] = None) -> FrozenSet[str]:
    """Rule BR1: the threads of the signature's `background` regex (thp-compaction: kcompactd) that
    took less than BUSY_THREAD of one CPU over the profiled window. Such a thread's work delays no
    task (nobody waits for proactive or background compaction), so its cost is the CPU it takes;
    one thread takes at most one CPU, and a sampled profile whose banner gives its rate and length
    (`Sampling at 99 Hertz ... for 10 secs`: 990 samples for one CPU) says which part of it. Its
    samples are not the problem's then, whatever share of the few busy samples of an idle host they
    are. Without a known window nothing is left out.

    >>> from types import SimpleNamespace as NS
    >>> from flamediag.profile import StackRecord, Frame
    >>> c = NS(background=re.compile("^kcompactd"))
    >>> recs = [(StackRecord((Frame("compact_zone", "kernel"),), 71.0, comm="kcompactd0"), ()),
    ...         (StackRecord((Frame("clear_page_erms", "kernel"),), 141.0, comm="java"), ())]
    >>> sorted(_quiet_background(c, recs, 990.0)), sorted(_quiet_background(c, recs, 99.0))
    (['kcompactd0'], [])
    >>> _quiet_background(c, recs, None)
    frozenset()

    Rule BY1: without a window, a pasted `top` or `pidstat` row gives the same part of one CPU
    directly (its %CPU over 100): a thread of the regex shown under half a CPU is left out alike.

    >>> sorted(_quiet_background(c, recs, None, {"kcompactd0": 0.08})), sorted(_quiet_background(c, recs, None, {"kcompactd0": 0.9}))
    (['kcompactd0'], [])
    """
    if compiled.background is None:
        return frozenset()
    if not cpu_window:
        return frozenset(comm for comm, cpu in (thread_cpu or {}).items()
                         if compiled.background.search(comm) and cpu < BUSY_THREAD)
    taken: Counter = Counter()
    for record, *_ in busy:
        comm = command_of(record)
        if comm and compiled.background.search(comm):
            taken[comm] += record.weight
    return frozenset(comm for comm, weight in taken.items() if weight < BUSY_THREAD * cpu_window)


def _busy_background(compiled: _Compiled, thread_cpu: Optional[Dict[str, float]],
                     by_comm: Counter) -> Optional[Tuple[str, float]]:
    """Rule BY1: the thread of the signature's `background` regex that a pasted `top` or `pidstat`
    row shows taking half a CPU or more (BUSY_THREAD, the threshold of rules I2, R5 and BR1), when
    the signature matched entries of that thread or entries that name no command (a listing without
    a command column): the thread's cost is the CPU it takes, and that row measures it, whatever
    share of a many-CPU host's listing its one CPU is.

    >>> from types import SimpleNamespace as NS
    >>> c = NS(background=re.compile("^ksmd$"))
    >>> _busy_background(c, {"ksmd": 1.0, "kswapd0": 0.9}, Counter({"": 5.2}))
    ('ksmd', 1.0)
    >>> _busy_background(c, {"ksmd": 0.08}, Counter({"": 5.2})) is None             # under half a CPU
    True
    >>> _busy_background(c, {"ksmd": 1.0}, Counter({"qemu-kvm": 5.2})) is None      # the matched entries are a guest's
    True
    """
    if compiled.background is None or not thread_cpu:
        return None
    busy = [(comm, cpu) for comm, cpu in thread_cpu.items()
            if compiled.background.search(comm) and cpu >= BUSY_THREAD and (by_comm.get(comm) or by_comm.get(""))]
    return max(busy, key=lambda item: item[1], default=None)


def _children_by_name(through: Dict[Tuple[str, str], float]) -> Dict[str, Dict[str, float]]:
    """A --children listing's Children per command and normalised frame name."""
    children: Dict[str, Dict[str, float]] = defaultdict(dict)
    for (comm, symbol), weight in through.items():
        names = children[comm]
        name = _normalize_cached(symbol)
        names[name] = max(names.get(name, 0.0), weight)
    return children


def _covered_by_exclude(compiled: _Compiled, children: Dict[str, Dict[str, float]], comm: str,
                        names: Sequence[str]) -> bool:
    """A --children listing (rule Y1): a flat entry counted by a distinctive frame is another path's
    when an exclude pattern is listed for the same command and its frames' Children cover at least
    half of the entry's own Children (`children`: command -> normalised name -> Children): the
    samples that ran through the entry mostly ran through the excluded path too
    (`smp_call_function_many_cond` 52 % under `text_poke_bp` 53 %: the IPIs text patching sends,
    not a TLB shootdown's).

    >>> class C: exclude = [[frozenset({"text_poke_bp"})]]
    >>> c = {"": {"text_poke_bp": 53.4, "smp_call_function_many_cond": 52.1}}
    >>> _covered_by_exclude(C, c, "", ("smp_call_function_many_cond",))
    True
    >>> c = {"": {"text_poke_bp": 3.0, "smp_call_function_many_cond": 52.1}}
    >>> _covered_by_exclude(C, c, "", ("smp_call_function_many_cond",))
    False
    """
    listed = children.get(comm) or {}
    own = listed.get(names[-1])
    if not own:
        return False
    for pattern in compiled.exclude:
        weights = [max((w for name, w in listed.items() if name in element), default=0.0) for element in pattern]
        if weights and min(weights) >= own / 2:
            return True
    return False


def _gap_wait(compiled: _Compiled, names: Dict[str, float], cut: float) -> List[Tuple[float, str]]:
    """A --children listing (rule T5): a path entered at `entry` frames does its work in `then` once
    past a wait, so the entry's Children beyond `then`'s (beyond the listing's last entry when
    `then` is not listed) is spent before it; a `waits` frame listed with Children within that gap
    is this path's wait (a page fault's time before handle_mm_fault is spent taking mmap_lock).

    >>> class C: gap = {"entry": frozenset({"exc_page_fault"}), "then": frozenset({"handle_mm_fault"}),
    ...                 "waits": frozenset({"rwsem_down_read_slowpath"})}
    >>> _gap_wait(C, {"exc_page_fault": 51.9, "rwsem_down_read_slowpath": 38.4}, 3.1)
    [(38.4, 'rwsem_down_read_slowpath')]
    >>> _gap_wait(C, {"exc_page_fault": 51.9, "handle_mm_fault": 49.0, "rwsem_down_read_slowpath": 20.0}, 3.1)
    []
    """
    if not compiled.gap:
        return []
    entry = max((w for n, w in names.items() if n in compiled.gap["entry"]), default=0.0)
    then = max((w for n, w in names.items() if n in compiled.gap["then"]), default=cut)
    waits = [(w, n) for n, w in names.items() if n in compiled.gap["waits"]]
    if not entry or not waits:
        return []
    weight, name = max(waits)
    return [(weight, name)] if weight <= entry - then else []


def _children_totals(result: Match, compiled: _Compiled, through: Dict[Tuple[str, str], float],
                     by_comm: Counter) -> None:
    """A --children listing (rule T4 of doc/accuracy.md): a frame's Children is the weight of every
    sample that ran through it. A frame only this playbook's path runs (a distinctive frame of its
    strong form) listed with Children c says that c of the samples are that path's, whatever their
    leaves (the page copy of a migration, the scanner's TLB flush, a lock): per command, the path
    weighs at least its heaviest such frame's Children (the largest, never a sum: such frames may
    call each other), unless an exclude pattern is listed for the command too.

    >>> from flamediag.profile import Frame, Profile
    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> pb = parse_playbook(EXAMPLE.replace("patterns: [[lock, _spin_lock]]",
    ...     "patterns: [[lock, _spin_lock]]\\n  distinctive: [_spin_lock]"), "demo.md")
    >>> prof = Profile(ancestry=False, percent_of=100.0)
    >>> prof.add([Frame("copy_page", "kernel")], 10.0, comm="db"); prof.add([Frame("_spin_lock", "kernel")], 0.5, comm="db")
    >>> prof.through[("db", "_spin_lock")] = 22.0
    >>> match_playbook(pb, prof).matched
    22.0
    """
    listed: Dict[str, Dict[str, float]] = {}
    for (comm, symbol), weight in through.items():
        names = listed.setdefault(comm, {})
        name = _normalize_cached(symbol)
        names[name] = max(names.get(name, 0.0), weight)
    cut = min(through.values())                   # an entry not listed has less than the last one listed
    for comm, names in listed.items():
        if compiled.comm is not None and not compiled.comm.search(comm):
            continue
        if any(all(WILDCARD in element or not element.isdisjoint(names) for element in pattern)
               for pattern in compiled.exclude):
            continue
        own = [(weight, name) for name, weight in names.items()
               if name in compiled.distinctive and name not in compiled.weak_only]
        own += _gap_wait(compiled, names, cut)
        if not own:
            continue
        weight, name = max(own)
        extra = min(weight - by_comm[comm], result.busy - result.matched)
        if extra <= 0:
            continue
        result.matched += extra
        result.strong += extra
        result.frames.add(name)
        result.stacks[(name,)] += extra
        if comm:
            result.comms[comm] += extra


def with_frame_names(playbooks: Sequence[Playbook], profile: Profile) -> List[Playbook]:
    """Rule CU1: a frame set with a `frame_names` expression also holds every kernel frame of this
    profile whose name (kernelnames.identity) matches it whole. A kernel naming convention names a
    family the playbook cannot list by hand: RCU callbacks are named after what they free
    (`<object>_free_rcu`, `<object>_rcu_free`, `put_<object>_rcu`), one per object type in every
    subsystem. A playbook without the key is returned as it is.

    >>> from flamediag.profile import Frame
    >>> from flamediag.playbooks import parse_playbook, EXAMPLE
    >>> pb = parse_playbook(EXAMPLE.replace("frames:", "frame_names: {lock: '_raw_spin_lock\\\\w*'}\\nframes:"), "demo.md")
    >>> prof = Profile()
    >>> prof.add([Frame("_raw_spin_lock_irq", "kernel")], 1)
    >>> prof.add([Frame("_raw_spin_lock_bh", "user")], 1)
    >>> [sorted(p.frames["lock"]) for p in with_frame_names([pb], prof)]
    [['_raw_spin_lock', '_raw_spin_lock_irq']]
    """
    if not any(p.frame_names for p in playbooks):
        return list(playbooks)
    # each distinct frame once: a capture's records repeat a stack on every CPU and command
    distinct = set(chain.from_iterable({record.frames for record in profile}))
    names = {_normalize_cached(frame.name) for frame in distinct if frame.kind in ("kernel", "unknown")}
    out = []
    for playbook in playbooks:
        if not playbook.frame_names:
            out.append(playbook)
            continue
        frames = dict(playbook.frames)
        for key, pattern in playbook.frame_names.items():
            regex = re.compile(pattern)
            found = sorted(n for n in names if regex.fullmatch(n) and n not in frames[key])
            if found:
                frames[key] = list(frames[key]) + found
        out.append(replace(playbook, frames=frames) if frames != playbook.frames else playbook)
    return out


def match_all(playbooks: Sequence[Playbook], profile: Profile) -> List[Match]:
    """Every playbook's match; none at all when the weights are not CPU time (Profile.not_cpu)."""
    if profile.not_cpu:
        return []
    playbooks = with_frame_names(playbooks, profile)
    busy = _with_sets(busy_records(profile), profile)
    claims = flat_claims(playbooks, profile)
    own = {p.id: own_leaves(p) for p in playbooks}
    return [match_playbook(p, profile, busy, claims,
                           frozenset().union(*(leaves for pid, leaves in own.items() if pid != p.id)))
            for p in playbooks]


def concentration(match: Match, by: str, top_n: int) -> Optional[Tuple[float, List[str]]]:
    """(fraction of matched weight on the top N cpus/comms, their names), None if unknown."""
    counter = match.cpus if by == "cpu" else match.comms
    total = sum(counter.values())
    if not total:
        return None
    top = counter.most_common(top_n)
    return sum(w for _, w in top) / total, [str(k) for k, _ in top]
