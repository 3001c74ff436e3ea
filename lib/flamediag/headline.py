"""The headline: one sentence a person can act on, and the CPU split of the window behind it.

With a finding: its id, confidence, share of busy samples, where (CPUs, commands) and the first
fix. Without one, the window's CPU split says what kind of problem it is not:

    >>> split = CpuSplit(user=0.9, system=0.04, softirq=0.01, idle=0.05, source="mpstat")
    >>> str(without_finding(split, 0.92, {"java": 0.6}, None, 22))
    'Not a kernel-time problem: 92 % of busy samples in user space (java 60 %): profile the application, not the kernel'
    >>> str(without_finding(CpuSplit(0.05, 0.03, 0.02, 0.9, "mpstat"), 0.5, {}, None, 22))
    'CPUs 90 % idle in this window: the spike may be over; capture again while %sys is high'
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict, List, Optional

from .profile import Profile, is_idle
from .report import Prose, pct, where_commands, where_cpus

IDLE_OVER = 0.80          # CPUs this idle: the spike is not in the window
USER_BOUND = 0.70         # this much of the busy samples in user space: not a kernel problem
TOP_COMMANDS = 3


@dataclass
class CpuSplit:
    """Fractions of the window's CPU time (mpstat averages), or of the samples when mpstat is absent."""

    user: float
    system: float
    softirq: float
    idle: float
    source: str               # "mpstat" (or the file the mpstat facts came from) | "samples"

    def to_json(self) -> dict:
        return {key: (round(value, 4) if isinstance(value, float) else value) for key, value in asdict(self).items()}


def cpu_split(facts, samples: Dict[str, int]) -> Optional[CpuSplit]:
    """From the mpstat averages when captured, else from the samples (idle = not busy)."""
    averages = {col: _fact(facts, f"mpstat.{col}_pct.avg") for col in ("usr", "sys", "soft", "idle", "irq")}
    if averages["idle"] is not None and averages["sys"] is not None:
        source = _source(facts, "mpstat.idle_pct.avg") or "mpstat"
        part = {col: (value or 0.0) / 100 for col, value in averages.items()}
        return CpuSplit(part["usr"], part["sys"] + part["irq"], part["soft"], part["idle"], source)
    total = samples.get("total") or 0
    if not total:
        return None
    busy, kernel, softirq = samples.get("busy", 0), samples.get("kernel", 0), samples.get("softirq", 0)
    return CpuSplit((busy - kernel) / total, max(kernel - softirq, 0) / total, softirq / total,
                    (total - busy) / total, "samples")


def _fact(facts, name: str) -> Optional[float]:
    try:
        value = facts.get(name) if facts is not None and name in facts else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _source(facts, name: str) -> str:
    getter = getattr(facts, "source", None)
    return (getter(name) if callable(getter) else "") or ""


def busy_commands(profile: Profile, limit: int = TOP_COMMANDS) -> Dict[str, float]:
    """The busiest commands as fractions of busy samples, heaviest first."""
    weights: Dict[str, float] = {}
    busy = 0.0
    for record in profile:
        if is_idle(record):
            continue
        busy += record.weight
        if record.comm:
            weights[record.comm] = weights.get(record.comm, 0.0) + record.weight
    top = sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return {comm: weight / busy for comm, weight in top} if busy else {}


def user_share(samples: Dict[str, int]) -> float:
    busy = samples.get("busy") or 0
    return (busy - samples.get("kernel", 0)) / busy if busy else 0.0


def with_finding(finding_json: dict, mitigation: str) -> Prose:
    where: List[object] = []
    if finding_json["cpus"]:
        where.append(where_cpus(finding_json["cpus"]))
    if finding_json["commands"]:
        where += ["; " if where else "", where_commands(finding_json["commands"])]
    parts: List[object] = [Prose.code(finding_json["id"]), f" ({finding_json['confidence']} confidence): ",
                           finding_json["title"], f", in {pct(finding_json['share'])} of busy samples"]
    if where:
        parts += [" (", *where, ")"]
    if mitigation:
        parts += ["; fix: ", mitigation]
    return Prose.of(*parts)


def without_finding(split: Optional[CpuSplit], user: float, commands: Dict[str, float],
                    hotspot: Optional[dict], playbooks_checked: int) -> Prose:
    if split is not None and split.idle >= IDLE_OVER:
        return Prose.of(f"CPUs {pct(split.idle)} idle in this window: the spike may be over; "
                        "capture again while %sys is high")
    if user >= USER_BOUND:
        top = [" (", where_commands(commands), ")"] if commands else []
        return Prose.of(f"Not a kernel-time problem: {pct(user)} of busy samples in user space", *top,
                        ": profile the application, not the kernel")
    parts: List[object] = [f"No known problem matched ({playbooks_checked} playbooks checked): "
                           f"{pct(1 - user)} of busy samples in the kernel"]
    if hotspot:
        parts += [", hottest kernel frame ", Prose.code(hotspot["frame"]), f" ({pct(hotspot['self'])} self)"]
    parts.append("; see the top kernel hotspots")
    return Prose.of(*parts)


RESTRICTED = Prose.of("Inconclusive: kernel symbols were restricted in this capture, so kernel signatures could not "
                      "be checked; recapture as root with ", Prose.code("kernel.kptr_restrict=0"))
