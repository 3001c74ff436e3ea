"""Clock time of the profile's seconds: perf's sample timestamps mapped to UTC.

perf stamps samples with its own clock (usually seconds since boot), not wall time. Second 0
of a Profile is its first sample (`profile.origin`); this module finds the UTC epoch of that
second from what the input records, best first (doc/timeline.md, "Clock"):

| source | when | precision |
|---|---|---|
| `realtime` | sample times are >= 1e9 s: `perf record -k CLOCK_REALTIME` (watch bundles) | exact |
| `perf-enable` | manifest `perf.enabled_epoch`: when perf acknowledged "enable" | ~0.05 s |
| `window-end` | manifest `end_utc` (whole seconds, taken right after perf stopped) minus the samples' span, never before `start_utc` | ~1 s |
| `window-start` | manifest `start_utc` alone | a few s |
| `none` | no timestamps, or no manifest and boot-time stamps | seconds from the start only |

A host up for 1e9 s (31 years) does not exist, so a larger timestamp is wall-clock time.

    >>> c = Clock(1443150900.0, "perf-enable")
    >>> c.stamp(30), c.stamp(30.5, seconds=False), Clock(None, "none").stamp(30)
    ('03:15:30', '03:15', '+30 s')
    >>> c.range_text(30, 31)
    '03:15:30-03:15:31'
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import List, Optional, Tuple

REALTIME_FLOOR = 1e9
LAST_EPOCH = 253402300799.0      # 9999-12-31T23:59:59Z: later "times" are not times
PRECISION = {"realtime": "exact", "perf-enable": "±0.1 s", "window-end": "±1 s", "window-start": "a few s",
             "none": "no clock"}
QUARTER_HOUR = 900


@dataclass(frozen=True)
class Clock:
    origin: Optional[float]     # UTC epoch seconds of second 0, None without a clock
    source: str = "none"

    @property
    def known(self) -> bool:
        return self.origin is not None

    def epoch(self, second: float) -> Optional[float]:
        return None if self.origin is None else self.origin + second

    def _moment(self, second: float) -> Optional[datetime]:
        if self.origin is None:
            return None
        try:
            return datetime.fromtimestamp(math.floor(self.origin + second + 1e-6), timezone.utc)
        except (ValueError, OverflowError, OSError):
            return None

    def stamp(self, second: float, seconds: bool = True) -> str:
        """HH:MM:SS (UTC) of a second index, or `+N s` without a clock."""
        moment = self._moment(second)
        if moment is None:
            return f"+{second:g} s"
        return moment.strftime("%H:%M:%S" if seconds else "%H:%M")

    def iso(self, second: float) -> Optional[str]:
        moment = self._moment(second)
        return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def range_text(self, start: float, end: float) -> str:
        """`03:15:30-03:15:31` (UTC), or `seconds 30-31` without a clock."""
        if self.origin is None:
            return f"seconds {start:g}-{end:g}"
        return f"{self.stamp(start)}-{self.stamp(end)}"

    def describe(self) -> str:
        if self.origin is None:
            return "no clock: times are seconds from the first sample"
        how = {"realtime": "perf sample times are wall-clock (CLOCK_REALTIME)",
               "perf-enable": "perf's start acknowledgement in the manifest",
               "window-end": "the manifest's end_utc and the samples' span",
               "window-start": "the manifest's start_utc"}[self.source]
        return f"UTC from {how} ({PRECISION[self.source]})"

    def to_json(self) -> dict:
        return {"source": self.source, "precision": PRECISION[self.source]}


def parse_utc(text) -> Optional[float]:
    """Epoch seconds of an ISO 8601 UTC time like `2015-09-25T03:15:00Z`, else None.

    >>> parse_utc("1970-01-01T00:01:00Z"), parse_utc("soon")
    (60.0, None)
    """
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _number(value) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def clock_for(time_span: Optional[Tuple[float, float]], origin: Optional[float], manifest: dict) -> Clock:
    """The best clock the input offers (table in the module docstring)."""
    if origin is None or time_span is None:
        return Clock(None, "none")
    if REALTIME_FLOOR <= origin <= LAST_EPOCH:
        return Clock(origin, "realtime")
    perf = manifest.get("perf") if isinstance(manifest.get("perf"), dict) else {}
    enabled = _number(perf.get("enabled_epoch"))
    if enabled is not None and REALTIME_FLOOR <= enabled <= LAST_EPOCH:
        return Clock(enabled, "perf-enable")
    start, end = parse_utc(manifest.get("start_utc")), parse_utc(manifest.get("end_utc"))
    if end is not None:
        estimate = end - (time_span[1] - origin)
        return Clock(max(estimate, start) if start is not None else estimate, "window-end")
    if start is not None:
        return Clock(start, "window-start")
    return Clock(None, "none")


# -- mpstat rows: the host's local time of day --------------------------------------------------
_TIME_OF_DAY = re.compile(r"^\s*(\d{1,2}):(\d{2}):(\d{2})(?:\s*([AaPp])[Mm])?\s*$")


def time_of_day(text: str) -> Optional[int]:
    """Seconds since midnight of `03:15:01`, `02:46:27 AM` or `12:00:01 AM`, else None.

    >>> time_of_day("03:15:01"), time_of_day("02:46:27 PM"), time_of_day("12:00:01 AM"), time_of_day("x")
    (11701, 53187, 1, None)
    """
    found = _TIME_OF_DAY.match(text or "")
    if not found:
        return None
    hour, minute, second = int(found.group(1)), int(found.group(2)), int(found.group(3))
    if found.group(4):
        hour = hour % 12 + (12 if found.group(4).lower() == "p" else 0)
    if hour > 23 or minute > 59 or second > 60:
        return None
    return hour * 3600 + minute * 60 + second


def _wrap_day(delta: float) -> float:
    return (delta + 43200) % 86400 - 43200


def local_offset(first_row: int, window_start: float) -> int:
    """The host's UTC offset in seconds: mpstat's first row is printed 1 s after the window
    starts, in local time; the offset is that difference rounded to a quarter hour.

    >>> local_offset(3 * 3600 + 15 * 60 + 1, 1443150900.0), local_offset(5 * 3600 + 15 * 60 + 3, 1443150900.0)
    (0, 7200)
    """
    utc_of_day = (window_start + 1) % 86400
    return int(round(_wrap_day(first_row - utc_of_day) / QUARTER_HOUR) * QUARTER_HOUR)


def row_seconds(times: List[str], clock: Clock, window_start: Optional[float] = None) -> List[Optional[int]]:
    """Second index of each interval row stamped with local time of day `T` (the row covers
    T-1 .. T), or None when the row's time is unreadable or there is no clock.

    >>> row_seconds(["03:15:01", "03:15:02", "bad"], Clock(1443150900.0, "perf-enable"))
    [0, 1, None]
    """
    if clock.origin is None:
        return [None] * len(times)
    of_day = [time_of_day(t) for t in times]
    first = next((t for t in of_day if t is not None), None)
    if first is None:
        return [None] * len(times)
    offset = local_offset(first, window_start if window_start is not None else clock.origin)
    origin_of_day = clock.origin % 86400
    return [None if t is None else int(round(_wrap_day(t - offset - origin_of_day) - 1)) for t in of_day]


def epoch_seconds(epochs: List[Optional[float]], clock: Clock) -> List[Optional[int]]:
    """Second index of each procstat snapshot interval ending at an epoch (covering the second before)."""
    if clock.origin is None:
        return [None] * len(epochs)
    return [None if e is None else int(round(e - clock.origin - 1)) for e in epochs]


# -- --from / --to ----------------------------------------------------------------------------
_SECONDS = re.compile(r"^\+?\d+(?:\.\d+)?s?$")


class TimeError(ValueError):
    """A --from/--to value that cannot be read or placed."""


def parse_point(text: str, clock: Clock, seconds_total: int) -> float:
    """A --from/--to value as a second index: `30`, `30.5`, `+30s` (seconds from the first
    sample), `03:15:30` (UTC time of day, inside the window) or `2015-09-25T03:15:30Z`.

    >>> c = Clock(1443150900.0, "perf-enable")
    >>> parse_point("30", c, 60), parse_point("03:15:30", c, 60), parse_point("2015-09-25T03:15:45Z", c, 60)
    (30.0, 30.0, 45.0)
    """
    text = text.strip()
    if _SECONDS.match(text):
        return float(text.lstrip("+").rstrip("s"))
    absolute = parse_utc(text) if "T" in text or "-" in text else None
    of_day = time_of_day(text) if absolute is None else None
    if absolute is None and of_day is None:
        raise TimeError(f"{text!r}: give seconds from the start (30), a UTC time of day (03:15:30) "
                        "or an ISO time (2015-09-25T03:15:30Z)")
    if clock.origin is None:
        raise TimeError(f"{text!r}: this input has no clock time; give seconds from the first sample (e.g. 30)")
    if absolute is not None:
        return _stamped(absolute - clock.origin)
    origin_of_day = clock.origin % 86400
    candidates = [of_day - origin_of_day + day * 86400 for day in (-1, 0, 1)]
    return _stamped(min(candidates, key=lambda s: abs(s - seconds_total / 2)))


def _stamped(offset: float) -> float:
    """The second index that `stamp()` prints as the clock time `offset` seconds after second 0
    (stamps are floored, so 03:15:03 is the second starting within 03:15:02.x-03:15:03)."""
    return float(math.ceil(offset - 1e-6))
