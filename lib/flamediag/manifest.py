"""The capture's manifest.json (doc/bundle-format.md), interpreted once: facts, diagnose and the
report all read the capture window, why it was cut short, the tools that failed, the state of the
kernel symbols and the lost perf chunks from here, so one report says each thing once.

Every field is checked against its documented type on read: a field of the wrong type (a string
where a number belongs, NaN or Infinity, `"collectors": 5`) is dropped with one data-quality
sentence, so nothing malformed reaches findings.json (strict JSON).

    >>> capture = interpret({"duration_requested": 30, "duration_actual": 12.4, "complete": False,
    ...                      "end_signal": "SIGINT", "cpus": "8", "perf": {"lost_chunks": 3}})
    >>> capture.window_seconds(), capture.cut_short()
    (12.4, 'capture interrupted after 12.4 of 30 s by SIGINT: the window may miss the spike')
    >>> capture.problems
    ['manifest.json: cpus is a string, not an integer: ignored']
    >>> capture.quality()[1:]
    ['capture interrupted after 12.4 of 30 s by SIGINT: the window may miss the spike', 'perf lost 3 chunks: some samples are missing (raise -m or lower -F)']
"""
from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Callable, Collection, Dict, List, Optional, Tuple

from .parsers import lost_without

UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
FAILED_STATUSES = ("missing", "failed", "timeout")


# -- field types ---------------------------------------------------------------------------------
def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value) -> bool:
    return isinstance(value, str)


def _utc(value) -> bool:
    try:
        datetime.strptime(value, UTC_FORMAT)
        return True
    except (TypeError, ValueError):
        return False


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


Check = Tuple[Callable[[Any], bool], str]
NUMBER: Check = (_number, "a finite number")
INTEGER: Check = (_integer, "an integer")
TEXT: Check = (_text, "a string")
FIELDS: Dict[str, Check] = {
    "schema": INTEGER, "flamediag_version": TEXT, "host": TEXT, "kernel": TEXT, "arch": TEXT,
    "cpus": INTEGER, "numa_nodes": INTEGER,
    "start_utc": (_optional(_utc), "a UTC time like 2026-11-22T03:15:00Z"),
    "end_utc": (_optional(_utc), "a UTC time like 2026-11-22T03:15:31Z"),
    "duration_requested": NUMBER, "duration_actual": (_optional(_number), "a finite number"),
    "frequency": NUMBER, "label": TEXT, "command_line": TEXT, "state": TEXT,
    "complete": (lambda v: isinstance(v, bool), "true or false"),
    "end_signal": (_optional(_text), "a signal name or null"),
    "root": (lambda v: isinstance(v, bool), "true or false"),
    "max_size_mb": (_optional(_number), "a finite number or null"),
    "notes": (_list_of(_text), "a list of strings"),
    "self_cpu_seconds": (_optional(_number), "a finite number or null"),
}
PERF_FIELDS: Dict[str, Check] = {
    "paranoid": (_optional(_integer), "an integer"), "kptr_restrict": (_optional(_integer), "an integer"),
    "max_sample_rate": (_optional(_integer), "an integer"), "mlock_kb": (_optional(_integer), "an integer"),
    "kernel_symbols": TEXT, "lost_chunks": INTEGER, "warnings": (_list_of(_text), "a list of strings"),
    "enabled_epoch": (_optional(_number), "a finite number or null"),
}
COLLECTOR_FIELDS: Dict[str, Check] = {
    "name": TEXT, "phase": (_optional(_text), "a string"), "instance": (_optional(_text), "a string or null"),
    "status": TEXT, "reason": (_optional(_text), "a string or null"), "fix": (_optional(_text), "a string or null"),
    "outputs": (_list_of(_text), "a list of paths"),
}


def _kind(value) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), "a number" if _number(value) else type(value).__name__)


def _checked(raw: dict, fields: Dict[str, Check], where: str, problems: List[str]) -> dict:
    """`raw` with every known field of the wrong type dropped (one sentence each); unknown kept."""
    clean = {}
    for key, value in raw.items():
        check = fields.get(key)
        if check is None or check[0](value):
            clean[key] = value
        else:
            problems.append(f"manifest.json: {where}{key} is {_kind(value)}, not {check[1]}: ignored")
    return clean


def _collectors(value, problems: List[str]) -> List[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"manifest.json: collectors is {_kind(value)}, not a list: ignored")
        return []
    entries = [entry for entry in value if isinstance(entry, dict)]
    if len(entries) < len(value):
        problems.append(f"manifest.json: {len(value) - len(entries)} collectors entries are not objects: ignored")
    return [_checked(entry, COLLECTOR_FIELDS, f"collector {entry.get('name')!r} ", problems) for entry in entries]


def _scrub(value):
    """Unknown fields kept as given, but without NaN/Infinity (findings.json is strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _scrub(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    return value


# -- the interpretation ------------------------------------------------------------------------
class Capture:
    """What the manifest says about the capture, every field of its documented type."""

    def __init__(self, fields: dict, problems: List[str]):
        self.fields = fields
        self.problems = problems
        self.perf: dict = fields.get("perf") or {}
        self.collectors: List[dict] = fields.get("collectors") or []

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    def __bool__(self) -> bool:
        return bool(self.fields)

    # -- window --------------------------------------------------------------------------
    def requested_seconds(self) -> Optional[float]:
        value = self.fields.get("duration_requested")
        return float(value) if value is not None and value > 0 else None

    def window_seconds(self, samples_span: Optional[Tuple[float, float]] = None) -> Optional[float]:
        """The window recorded: duration_actual, else end_utc - start_utc, else the first to the
        last sample's timestamp (`samples_span`); None when nothing says."""
        actual = self.fields.get("duration_actual")
        if actual is not None and actual > 0:
            return actual
        start, end = self.fields.get("start_utc"), self.fields.get("end_utc")
        if start and end:
            seconds = (datetime.strptime(end, UTC_FORMAT) - datetime.strptime(start, UTC_FORMAT)).total_seconds()
            if seconds > 0:
                return seconds
        if samples_span and samples_span[1] > samples_span[0]:
            return round(samples_span[1] - samples_span[0], 3)
        return None

    def interrupted(self) -> bool:
        return (self.fields.get("complete") is False or bool(self.fields.get("end_signal"))
                or self.fields.get("state") == "disk_full")

    def why_cut_short(self) -> str:
        """' by SIGINT', ' because its output directory filled up (ENOSPC)', or '' (cause unknown)."""
        if self.fields.get("end_signal"):
            return f" by {self.fields['end_signal']}"
        if self.fields.get("state") == "disk_full":
            return " because its output directory filled up (ENOSPC)"
        return ""

    def cut_short(self) -> Optional[str]:
        """One sentence when the window is shorter than asked for (interrupted, or short), else None."""
        seconds, requested = self.window_seconds(), self.requested_seconds()
        if self.interrupted():
            if seconds is None:
                return f"capture interrupted{self.why_cut_short()}: window length unknown"
            span = f"{seconds:g} of {requested:g} s" if requested else f"{seconds:g} s"
            return f"capture interrupted after {span}{self.why_cut_short()}: the window may miss the spike"
        if requested and seconds is not None and seconds < 0.8 * requested:
            return f"capture window {seconds:g} s is shorter than the requested {requested:g} s"
        return None

    # -- tools, perf ---------------------------------------------------------------------
    def not_captured(self, statuses: Optional[Tuple[str, ...]] = None) -> List[dict]:
        """Manifest entries whose status is not ok (or is one of `statuses`), one per collector name."""
        seen, found = set(), []
        for entry in self.collectors:
            status = entry.get("status")
            if (status in statuses if statuses else status != "ok") and entry.get("name") not in seen:
                seen.add(entry.get("name"))
                found.append(entry)
        return found

    def failed_collectors(self) -> List[dict]:
        """Manifest entries whose tool was missing, failed or timed out (one per collector name)."""
        return self.not_captured(FAILED_STATUSES)

    def tools_missing(self, read: Collection[str] = ()) -> List[str]:
        """'name: reason' for each failed collector, except those that matter (a parser's LOST_WITHOUT)
        and were not made up for by a fallback (`read`: the collectors the facts read): the facts say
        those once, with what is lost."""
        said_by_facts = set(lost_without()) - set(read)
        return [f"{e.get('name')}: {e.get('reason') or e.get('status')}" for e in self.failed_collectors()
                if e.get("name") not in said_by_facts]

    def kernel_symbols(self) -> Optional[str]:
        return self.perf.get("kernel_symbols")

    def lost_chunks(self) -> int:
        return self.perf.get("lost_chunks") or 0

    def quality(self) -> List[str]:
        """Data-quality sentences about the capture itself, each said once."""
        lines = list(self.problems)
        cut = self.cut_short()
        if cut:
            lines.append(cut)
        elif self.fields and self.window_seconds() is None:
            lines.append("capture window length unknown (no duration_actual / start_utc / end_utc): rates not computed")
        if self.lost_chunks():
            lines.append(f"perf lost {self.lost_chunks()} chunks: some samples are missing (raise -m or lower -F)")
        lines += [f"perf: {warning}" for warning in self.perf.get("warnings") or []]
        return lines


def interpret(raw) -> Capture:
    """The manifest as read from a bundle (any JSON value, or None when absent)."""
    if not isinstance(raw, dict):
        return Capture({}, [])
    problems: List[str] = []
    fields = _scrub(_checked({k: v for k, v in raw.items() if k not in ("perf", "collectors")}, FIELDS, "", problems))
    perf = raw.get("perf")
    if isinstance(perf, dict):
        fields["perf"] = _scrub(_checked(perf, PERF_FIELDS, "perf.", problems))
    elif perf is not None:
        problems.append(f"manifest.json: perf is {_kind(perf)}, not an object: ignored")
    if "collectors" in raw:
        fields["collectors"] = _scrub(_collectors(raw["collectors"], problems))
    return Capture(fields, problems)
