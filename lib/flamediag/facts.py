"""The facts engine: runs the fact builders the parser modules declare, over one bundle reader (or pasted
sections), into one flat `name -> value` mapping.

Playbook checks read facts, never raw files (doc/facts.md lists every name). Each parser module of
flamediag.parsers owns its facts (`@builds`, see parsers/_builder.py); this module only orders the
builders (collectors.tsv order, each after the builders it `uses`), runs each one guarded, remembers
which file every fact came from and whether that file failed SHA256SUMS, and turns parser notes, an
unusable window and missing collectors that matter into `data_quality` sentences.

    facts = build_facts(bundle)              # bundle: flamediag.bundle.Bundle or anything duck-typed
    facts.get("sysctl.vm.zone_reclaim_mode")   # 1
    facts.source("mpstat.soft_pct.0")          # 'metrics/mpstat.txt'
    facts.series["mpstat"]                      # {cpu: {col: pct}} per-CPU window averages

Examples:
    >>> f = build_facts_from_sections({"sysctl": "vm.zone_reclaim_mode = 1",
    ...     "numactl.hardware": "available: 2 nodes (0-1)\\nnode distances:\\nnode 0 1\\n 0: 10 21\\n 1: 21 10"})
    >>> f.get("sysctl.vm.zone_reclaim_mode"), f.get("numa.max_distance"), f.source("numa.nodes")
    (1, 21, 'pasted:numactl.hardware')
"""
from __future__ import annotations

import functools
import heapq
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from . import collectors, parsers
from .manifest import Capture, interpret
from .parsers import lost_without
from .parsers._builder import Builder, builds


class Facts:
    """Flat facts with provenance. Absent facts stay absent (a check then says "not captured")."""

    def __init__(self, unverified_paths: Iterable[str] = ()) -> None:
        self._values: Dict[str, Any] = {}
        self._sources: Dict[str, Optional[str]] = {}
        self._unverified: set = set()
        self.unverified_paths = frozenset(unverified_paths)   # bundle files failing SHA256SUMS
        self.data_quality: List[str] = []
        self.series: Dict[str, Any] = {}
        self.collectors_read: set = set()  # collector names that yielded facts
        self.made_by: Dict[str, str] = {}  # fact name -> the builder that made it (module.function)

    def set(self, name: str, value: Any, source: Optional[str], unverified: bool = False) -> None:
        if value is None:
            return
        self._values[name] = value
        self._sources[name] = source
        if unverified or source in self.unverified_paths:
            self._unverified.add(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name, default)

    def has(self, name: str) -> bool:
        return name in self._values

    def source(self, name: str) -> Optional[str]:
        return self._sources.get(name)

    def unverified(self, name: str) -> bool:
        return name in self._unverified

    def items(self) -> Iterator[Tuple[str, Any]]:
        return iter(sorted(self._values.items()))

    def as_dict(self) -> Dict[str, Any]:
        return dict(sorted(self._values.items()))

    def names(self) -> set:
        return set(self._values)

    def __contains__(self, name: str) -> bool:
        return self.has(name)

    def __len__(self) -> int:
        return len(self._values)

    def warn(self, sentence: str) -> None:
        if sentence not in self.data_quality:
            self.data_quality.append(sentence)


class Source:
    """What a fact builder reads through: one collector at a time, parsed, with provenance and notes.

    `shared` carries data between builders (declared with `shares=` / `uses=`)."""

    def __init__(self, reader, facts: Facts, pasted: bool = False, capture: Optional[Capture] = None):
        self.reader = reader
        self.facts = facts
        self.pasted = pasted
        self.capture = capture if capture is not None else interpret(getattr(reader, "manifest", None))
        self.shared: Dict[str, Any] = {}

    @property
    def manifest(self) -> dict:
        """The manifest's fields of their documented types (manifest.py)."""
        return self.capture.fields

    def parsed(self, name: str, parse, phase: Optional[str] = None, instance: Optional[str] = None):
        """(parsed result, source path, unverified) or (None, None, False) when not captured."""
        try:
            text = self.reader.read_text(name, phase=phase, instance=instance)
        except Exception as err:  # a broken reader must not take the diagnosis down
            self.facts.warn(f"{name}: could not be read ({type(err).__name__}: {err})")
            return None, None, False
        if text is None:
            return None, None, False
        path = self.path(name, phase, instance)
        result = parse(text)
        for note in result.get("notes", []) if isinstance(result, dict) else []:
            self.facts.warn(note if path == name else f"{path}: {note}")
        return result, path, self._is_unverified(path)

    def pair(self, name: str, parse):
        """Parsed start and end snapshots, the end path, unverified flag; Nones if either is missing."""
        start, _, start_bad = self.parsed(name, parse, phase="start")
        end, path, end_bad = self.parsed(name, parse, phase="end")
        if start is None or end is None:
            return None, None, None, False
        return start, end, path, start_bad or end_bad

    def instances(self, name: str) -> List[str]:
        try:
            return [str(i) for i in (self.reader.instances(name) or [])]
        except Exception:
            return []

    def path(self, name: str, phase: Optional[str] = None, instance: Optional[str] = None) -> str:
        """The bundle path a collector's data came from (`pasted:NAME` for pastes)."""
        if self.pasted:
            return f"pasted:{name}"
        try:
            path = self.reader.source(name, phase, instance)
        except Exception:
            path = None
        return path or name

    def seen(self, name: str) -> None:
        """Mark a collector that matters (a parser's LOST_WITHOUT) as read."""
        self.facts.collectors_read.add(name)

    def window_seconds(self) -> Optional[float]:
        """The capture window from the manifest (None for pastes and manifests without one)."""
        return self.capture.window_seconds()

    def _is_unverified(self, path: Optional[str]) -> bool:
        try:
            return bool(path) and path in (getattr(self.reader, "unverified", None) or set())
        except TypeError:
            return False


# --- the builders, in order ---------------------------------------------------------------------

@builds("perf.kernel_symbols", "perf.lost_chunks", "window.seconds")
def capture_facts(src: Source) -> None:
    """What the manifest says about the capture itself (manifest.py interprets it)."""
    seconds = src.window_seconds()
    src.facts.set("perf.kernel_symbols", src.capture.kernel_symbols(), "manifest.json")
    src.facts.set("perf.lost_chunks", src.capture.perf.get("lost_chunks"), "manifest.json")
    src.facts.set("window.seconds", None if seconds is None else float(seconds), "manifest.json")


def declared() -> List[Builder]:
    """Every builder: the engine's own (manifest facts) first, then the parsers' in run order."""
    return [capture_facts.builder] + list(plan())


@functools.lru_cache(maxsize=None)
def plan() -> Tuple[Builder, ...]:
    """The parser modules' builders in run order (see `order`)."""
    return order(parsers.builders())


def order(found: Sequence[Builder]) -> Tuple[Builder, ...]:
    """Builders in collectors.tsv order of what their module reads (then as given), each after every
    builder that provides a name it `uses`. A missing provider or a cycle is a programming error,
    raised here (the tests run it)."""
    found = list(found)
    after = [_providers(builder, found) for builder in found]
    waiting = [len(providers) for providers in after]
    ready = [(_table_rank(builder), index) for index, builder in enumerate(found) if not after[index]]
    heapq.heapify(ready)
    ordered: List[Builder] = []
    while ready:
        _, index = heapq.heappop(ready)
        ordered.append(found[index])
        for other, providers in enumerate(after):
            if found[index] in providers:
                waiting[other] -= 1
                if waiting[other] == 0:
                    heapq.heappush(ready, (_table_rank(found[other]), other))
    if len(ordered) != len(found):
        stuck = sorted(builder.label for builder in found if builder not in ordered)
        raise RuntimeError(f"fact builders depend on each other in a cycle: {', '.join(stuck)}")
    return tuple(ordered)


def _providers(builder: Builder, found: Sequence[Builder]) -> List[Builder]:
    providers = []
    for name in builder.uses:
        given = [other for other in found if other is not builder and other.provides(name)]
        if not given:
            raise RuntimeError(f"fact builder {builder.label} uses {name!r}, which no builder makes or shares")
        providers.extend(p for p in given if p not in providers)
    return providers


def _table_rank(builder: Builder) -> int:
    table = list(collectors.table())
    module = sys.modules[builder.function.__module__]
    ranks = [table.index(name) for name in getattr(module, "COLLECTORS", ()) if name in table]
    return min(ranks) if ranks else len(table)


# --- running them ----------------------------------------------------------------------------

def build_facts(reader, capture: Optional[Capture] = None) -> Facts:
    """All facts from a bundle reader (duck-typed like flamediag.bundle.Bundle); `capture` is its
    interpreted manifest (manifest.interpret(reader.manifest) when not given)."""
    facts = Facts(_unverified_paths(reader))
    src = Source(reader, facts, capture=capture)
    _run(capture_facts.builder, src)
    for builder in plan():
        _run(builder, src)
    _guarded(_missing_collectors, src, "missing collector check")
    return facts


def _unverified_paths(reader) -> set:
    try:
        return set(getattr(reader, "unverified", None) or ())
    except TypeError:
        return set()


def build_facts_from_sections(sections: Dict[str, str]) -> Facts:
    """Facts from pasted ticket text: {"mpstat": text, "sysctl": text, ...}. Single snapshots, no deltas."""
    facts = Facts()
    src = Source(_SectionReader(sections or {}), facts, pasted=True)
    for builder in plan():
        _run(builder, src)
    return facts


class _SectionReader:
    """Reader over pasted sections: every phase but `start` sees the pasted text (so no deltas)."""

    manifest: dict = {}
    unverified: set = set()

    def __init__(self, sections: Dict[str, str]):
        self.sections = {k: v for k, v in sections.items() if isinstance(v, str)}

    def read_text(self, name, phase=None, instance=None):
        # a collector pasted twice (/proc/softirqs before and after a sleep) has its first reading
        # as `NAME@start`; any other has only the one reading, no start
        return self.sections.get(f"{name}@start") if phase == "start" else self.sections.get(name)

    def instances(self, name):
        return []

    def source(self, name, phase=None, instance=None):
        return f"pasted:{name}" if name in self.sections else None


def _run(builder: Builder, src: Source) -> None:
    """Run one builder guarded, and remember which facts it made (facts.made_by)."""
    before = src.facts.names()
    _guarded(builder.function, src, builder.function.__name__.strip("_"))
    for name in src.facts.names() - before:
        src.facts.made_by[name] = builder.label


def _guarded(step, src: Source, label: str) -> None:
    try:
        step(src)
    except Exception as err:  # one broken collector must not cost the other facts
        src.facts.warn(f"facts: {label} failed ({type(err).__name__}: {err}); those facts are missing")


# --- what is missing ----------------------------------------------------------------------------

def why_cut_short(manifest: dict) -> str:
    """' by SIGINT', ' because its output directory filled up (ENOSPC)', or '' (manifest.py's rule)."""
    return interpret(manifest).why_cut_short()


def _missing_collectors(src: Source) -> None:
    """One sentence per collector that matters (each parser's LOST_WITHOUT) the manifest says was not
    captured, with its reason; one sentence for all those simply absent from the bundle."""
    not_captured = {entry.get("name"): entry for entry in src.capture.not_captured()}
    absent = []
    for name, loss in lost_without().items():
        if name in src.facts.collectors_read:
            continue
        entry = not_captured.get(name)
        if entry:
            why = f"{entry.get('status')}: {entry.get('reason') or 'no reason given'}"
            src.facts.warn(f"{name} not captured ({why}): {loss}")
        else:
            absent.append(f"{name} ({loss})")
    if absent:
        src.facts.warn("not in the bundle: " + "; ".join(absent))
