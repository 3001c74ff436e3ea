"""Spike search: the seconds where the kernel share, the softirq share or a signature's share
rises well above the rest of the window (doc/timeline.md, "Spikes").

The rule, per series (share of busy samples per second):

1. the baseline is the series' median over the seconds that have busy samples;
2. a second is *hot* when it has at least MIN_BUSY busy samples and its share is above the
   baseline by at least MIN_RISE (20 percentage points) AND by SIGMAS (4) binomial standard
   errors, sqrt(p (1 - p) / n) with p the mean of the share and the baseline and n the
   second's busy samples: a few samples cannot make a spike;
3. hot seconds one cold second apart or less form one run; a run longer than half of the
   window is the window's steady state, not a spike;
4. runs of different series that overlap or touch are one spike; spikes are ranked by their
   largest rise, at most MAX_SPIKES kept. Windows shorter than MIN_WINDOW seconds have no spike.

    >>> flat = [0.1] * 60
    >>> spiky = [0.1] * 30 + [1.0] + [0.1] * 29
    >>> find([120.0] * 60, {"kernel": flat}), [(s.start, s.end, s.series) for s in find([120.0] * 60, {"kernel": spiky})]
    ([], [(30, 31, ['kernel'])])
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import Dict, List, Optional, Sequence, Tuple

MIN_RISE = 0.20
SIGMAS = 4.0
MIN_BUSY = 10
MAX_FRACTION = 0.5
MIN_WINDOW = 5
MAX_GAP = 1
MAX_SPIKES = 3


@dataclass
class Spike:
    start: int                                  # second index, inclusive
    end: int                                    # second index, exclusive
    series: List[str] = field(default_factory=list)
    peak: Dict[str, float] = field(default_factory=dict)       # series -> highest share in the spike
    baseline: Dict[str, float] = field(default_factory=dict)   # series -> the window's median

    @property
    def rise(self) -> float:
        return max((self.peak[s] - self.baseline[s] for s in self.series), default=0.0)

    def to_json(self) -> dict:
        return {"from": self.start, "to": self.end, "series": list(self.series),
                "peak": {s: round(v, 4) for s, v in self.peak.items()},
                "baseline": {s: round(v, 4) for s, v in self.baseline.items()}}


def _hot(share: Optional[float], baseline: float, busy: float) -> bool:
    if share is None or busy < MIN_BUSY:
        return False
    rise = share - baseline
    p = (share + baseline) / 2
    return rise >= MIN_RISE and rise >= SIGMAS * math.sqrt(p * (1 - p) / busy)


def _runs(hot: Sequence[bool]) -> List[Tuple[int, int]]:
    """[start, end) column runs of hot seconds, joining runs at most MAX_GAP cold seconds apart."""
    runs: List[List[int]] = []
    for column, is_hot in enumerate(hot):
        if not is_hot:
            continue
        if runs and column - runs[-1][1] <= MAX_GAP:
            runs[-1][1] = column + 1
        else:
            runs.append([column, column + 1])
    return [(a, b) for a, b in runs]


def _series_runs(name: str, busy: Sequence[float], shares: Sequence[Optional[float]], limit: float) -> List[Spike]:
    known = [s for s, b in zip(shares, busy) if s is not None and b > 0]
    if not known:
        return []
    baseline = median(known)
    hot = [_hot(s, baseline, b) for s, b in zip(shares, busy)]
    spikes = []
    for a, b in _runs(hot):
        if b - a > limit:
            continue
        peak = max(s for s in shares[a:b] if s is not None)
        spikes.append(Spike(a, b, [name], {name: peak}, {name: baseline}))
    return spikes


def _merge(spikes: List[Spike]) -> List[Spike]:
    merged: List[Spike] = []
    for spike in sorted(spikes, key=lambda s: (s.start, s.end)):
        if merged and spike.start <= merged[-1].end:
            last = merged[-1]
            last.end = max(last.end, spike.end)
            for name in spike.series:
                if name not in last.series:
                    last.series.append(name)
                last.peak[name] = max(last.peak.get(name, 0.0), spike.peak[name])
                last.baseline[name] = spike.baseline[name]
        else:
            merged.append(spike)
    return merged


def find(busy: Sequence[float], series: Dict[str, Sequence[Optional[float]]], first: int = 0) -> List[Spike]:
    """Spikes (second indexes offset by `first`) in the per-second shares of `series`."""
    with_data = sum(1 for b in busy if b > 0)
    if with_data < MIN_WINDOW:
        return []
    limit = MAX_FRACTION * with_data
    found = []
    for name, shares in series.items():
        found.extend(_series_runs(name, busy, shares, limit))
    spikes = sorted(_merge(found), key=lambda s: -s.rise)[:MAX_SPIKES]
    for spike in spikes:
        spike.start += first
        spike.end += first
        spike.series.sort(key=lambda s: -(spike.peak[s] - spike.baseline[s]))
    return sorted(spikes, key=lambda s: s.start)
