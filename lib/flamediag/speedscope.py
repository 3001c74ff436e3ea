"""A Profile as a speedscope file (the public format of https://www.speedscope.app, schema
https://www.speedscope.app/file-format-schema.json), so users get speedscope's left-heavy,
sandwich and time-order views of the same samples (doc/flamegraph.md, "speedscope").

Profiles in the file:
1. `busy samples (all CPUs)`: every busy stack, weight = samples, `comm` as the root frame;
   open first (sandwich and left-heavy views of the whole window).
2. With sample times (spanning at most an hour) and CPUs: one `CPU n` profile per CPU in time order, unit seconds. Each
   second of a CPU is laid out in order; within it the stacks of that second (aggregated: the
   profile keeps weights per second, not single samples) weigh their share of the CPU's samples
   in that second, so every second spans 1 s; idle samples and seconds without a sample are
   empty stacks (gaps). Without CPUs, one `all CPUs` time-order profile is built the same way.

Frames are shared; `file` says the frame's kind (`kernel`, `user`, `jit`, `context`).

    >>> from flamediag.profile import Frame, Profile
    >>> p = Profile()
    >>> p.add([Frame("main", "user"), Frame("write", "kernel")], 3, comm="app", cpu=0, seconds={0: 1, 1: 2})
    >>> p.add([Frame("do_idle", "kernel"), Frame("default_idle", "kernel")], 1, comm="swapper", cpu=0, pid=0,
    ...       seconds={0: 1})
    >>> doc = document(p, "demo")
    >>> [x["name"] for x in doc["profiles"]], doc["profiles"][1]["weights"], doc["profiles"][1]["samples"][0]
    (['busy samples (all CPUs)', 'CPU 0 (time order)'], [0.5, 0.5, 1.0], [])
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, Iterable, List, Optional, Tuple

from . import __version__
from .profile import Profile, StackRecord, is_idle

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"
MAX_SECONDS = 3600          # longer spans: the busy profile only (as the timeline, timeline.py)


class _Frames:
    """Frame table shared by every profile: (name, kind) -> index."""

    def __init__(self):
        self.index: Dict[Tuple[str, str], int] = {}
        self.table: List[dict] = []

    def of(self, name: str, kind: str) -> int:
        key = (name, kind)
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.table)
            self.table.append({"name": name, "file": kind})
        return found

    def stack(self, record: StackRecord) -> List[int]:
        root = [self.of(record.comm, "command")] if record.comm else []
        return root + [self.of(frame.name, frame.kind) for frame in record.frames]


def _busy_profile(profile: Profile, frames: _Frames) -> dict:
    stacks: Dict[Tuple[int, ...], float] = defaultdict(float)
    for record in profile:
        if not is_idle(record):
            stacks[tuple(frames.stack(record))] += record.weight
    ordered = sorted(stacks.items())
    total = sum(w for _, w in ordered)
    return {"type": "sampled", "name": "busy samples (all CPUs)", "unit": "none", "startValue": 0,
            "endValue": total, "samples": [list(s) for s, _ in ordered], "weights": [w for _, w in ordered]}


def _time_profile(name: str, records: Iterable[StackRecord], seconds: int, frames: _Frames) -> dict:
    per_second: Dict[int, Dict[Tuple[int, ...], float]] = defaultdict(lambda: defaultdict(float))
    for record in records:
        stack = () if is_idle(record) else tuple(frames.stack(record))
        for second, weight in record.seconds.items():
            per_second[second][stack] += weight
    samples: List[List[int]] = []
    weights: List[float] = []
    for second in range(seconds):
        stacks = per_second.get(second)
        total = sum(stacks.values()) if stacks else 0
        if not total:
            samples.append([])
            weights.append(1.0)
            continue
        for stack, weight in sorted(stacks.items()):
            samples.append(list(stack))
            weights.append(round(weight / total, 6))
    return {"type": "sampled", "name": name, "unit": "seconds", "startValue": 0, "endValue": seconds,
            "samples": samples, "weights": weights}


def document(profile: Profile, name: str, exporter: Optional[str] = None) -> dict:
    frames = _Frames()
    profiles = [_busy_profile(profile, frames)]
    seconds = profile.seconds()
    if 0 < seconds <= MAX_SECONDS:
        by_cpu: Dict[Optional[int], List[StackRecord]] = defaultdict(list)
        for record in profile:
            by_cpu[record.cpu].append(record)
        if None in by_cpu or not profile.cpus():
            profiles.append(_time_profile("all CPUs (time order)", profile, seconds, frames))
        else:
            profiles += [_time_profile(f"CPU {cpu} (time order)", by_cpu[cpu], seconds, frames)
                         for cpu in profile.cpus()]
    return {"$schema": SCHEMA_URL, "name": name, "exporter": exporter or f"flamediag {__version__}",
            "activeProfileIndex": 0, "shared": {"frames": frames.table}, "profiles": profiles}
