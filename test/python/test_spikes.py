"""The spike rule (spikes.py) on per-second shares drawn like real samples: binomial noise around
a steady share never makes a spike; a short rise does, at its seconds; a long one does not."""
from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.spikes import find  # noqa: E402


def window(rng: random.Random, seconds: int, busy: int, share: float, rise=None):
    """(busy per second, share per second) with binomial sampling noise; rise = (start, end, share)."""
    shares = []
    for second in range(seconds):
        p = rise[2] if rise and rise[0] <= second < rise[1] else share
        shares.append(sum(rng.random() < p for _ in range(busy)) / busy)
    return [float(busy)] * seconds, shares


def test_noise_around_a_steady_share_is_no_spike():
    rng = random.Random(11)
    for trial in range(120):
        busy = rng.choice([10, 25, 60, 120, 400])
        share = rng.choice([0.0, 0.05, 0.3, 0.6, 0.9])
        counts, shares = window(rng, 60, busy, share)
        assert find(counts, {"kernel": shares}) == [], (trial, busy, share)


def test_a_short_rise_is_found_at_its_seconds():
    rng = random.Random(5)
    counts, shares = window(rng, 60, 120, 0.1, rise=(40, 43, 0.7))
    [spike] = find(counts, {"softirq": shares})
    assert (spike.start, spike.end, spike.series) == (40, 43, ["softirq"])
    assert spike.baseline["softirq"] < 0.2 and spike.peak["softirq"] > 0.5


def test_a_rise_over_most_of_the_window_is_its_steady_state():
    rng = random.Random(6)
    counts, shares = window(rng, 60, 120, 0.1, rise=(10, 50, 0.8))
    assert find(counts, {"kernel": shares}) == []


def test_few_samples_cannot_make_a_spike():
    counts = [4.0] * 60
    shares = [0.0] * 30 + [1.0] + [0.0] * 29          # 4 of 4 samples: below MIN_BUSY
    assert find(counts, {"kernel": shares}) == []


def test_overlapping_series_are_one_spike_ranked_by_rise():
    counts = [100.0] * 30
    kernel = [0.1] * 10 + [0.9, 0.9] + [0.1] * 18
    reclaim = [0.0] * 11 + [0.95, 0.95] + [0.0] * 17
    [spike] = find(counts, {"kernel": kernel, "zone-reclaim": reclaim})
    assert (spike.start, spike.end) == (10, 13) and spike.series == ["zone-reclaim", "kernel"]
