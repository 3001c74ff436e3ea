"""Summarise many captures at once: one row per capture, hosts grouped by top finding, a headline.

The reduce step of a fleet capture (doc/fleet.md): DIR holds what the fleet playbook fetched —
bundles, diagnosis directories (findings.json + report.md, maybe facts.json) or findings.json files,
in any layout. Bundles are diagnosed in parallel with the ordinary pipeline
(`diagnose.run_diagnosis`); what was already diagnosed is only read.

    inputs = find_inputs(Path("fleet"))
    summary = summarise(inputs, Path("fleet"), jobs=2)
    summary.headline                 # 'zone-reclaim on 27/30 hosts; 3 healthy'
    write_summary(summary, Path("fleet"))      # summary.md, summary.json

Classification of one capture (doc/summary.md):

    >>> classify({"findings": [{"id": "zone-reclaim", "confidence": "high"}], "data_quality": []})
    ('finding', {'id': 'zone-reclaim', 'confidence': 'high'})
    >>> classify({"findings": [{"id": "x", "confidence": "low"}],
    ...           "samples": {"total": 1000, "busy": 80, "kernel": 20}, "data_quality": []})
    ('healthy', None)
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import __version__
from .errors import UserError
from .workerproc import default_signals

SCHEMA_VERSION = 1
HEALTHY_KERNEL_SHARE = 0.10        # kernel samples / all samples below this, with no finding: healthy
MAX_JSON_BYTES = 16 << 20          # a findings.json or facts.json larger than this is refused
TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar")
FINDINGS_NAMES = ("findings.json",)
OWN_OUTPUTS = ("summary.md", "summary.json")
DIAGNOSES_DIR = "diagnoses"        # where summary writes the diagnoses of the bundles it was given
SYS_FACT, SOFT_FACT = "mpstat.sys_pct.avg", "mpstat.soft_pct.avg"


@dataclass(frozen=True)
class Candidate:
    path: Path          # absolute
    rel: str            # relative to DIR, for display
    kind: str           # bundle | diagnosis | findings


@dataclass
class Capture:
    """One summarised capture (a row of the table)."""
    host: str
    input: str
    kind: str
    status: str                     # finding | healthy | unexplained | inconclusive
    finding: Optional[str]
    title: Optional[str]
    confidence: Optional[str]
    share: Optional[float]
    sys_pct: Optional[float]
    soft_pct: Optional[float]
    kernel_share: Optional[float]
    hotspot: Optional[str]
    start: Optional[str]
    seconds: Optional[float]
    headline: Optional[str]
    label: Optional[str]
    report: Optional[str]

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Refused:
    input: str
    reason: str
    code: int

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Summary:
    directory: str                  # DIR as the user gave it
    out_dir: Optional[Path] = None  # where summary.md goes: report links are relative to it
    captures: List[Capture] = field(default_factory=list)
    refused: List[Refused] = field(default_factory=list)
    skipped: List[Dict[str, str]] = field(default_factory=list)

    @property
    def hosts(self) -> List[str]:
        return sorted({c.host for c in self.captures})

    def groups(self) -> List[dict]:
        return group_captures(self.captures)

    @property
    def headline(self) -> str:
        return headline(self.groups(), len(self.hosts), len(self.refused))


# -- discovery ---------------------------------------------------------------------------------
def kind_of_file(name: str) -> Optional[str]:
    """bundle | findings | None, from a file name inside the summarised directory.

    >>> kind_of_file("flamediag-web1-20261122T031500Z.tar.gz"), kind_of_file("web1.findings.json")
    ('bundle', 'findings')
    >>> kind_of_file("report.md") is None
    True
    """
    lower = name.lower()
    if lower.endswith(TARBALL_SUFFIXES):
        return "bundle"
    if lower in FINDINGS_NAMES or lower.endswith(".findings.json"):
        return "findings"
    return None


def kind_of_dir(path: Path) -> Optional[str]:
    if (path / "manifest.json").is_file():
        return "bundle"
    if (path / "findings.json").is_file():
        return "diagnosis"
    return None


def bundle_stem(name: str) -> str:
    """The bundle's name without its archive suffix (what `diagnose` names its output after)."""
    lower = name.lower()
    for suffix in TARBALL_SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def find_inputs(root: Path, skip: Sequence[Path] = ()) -> Tuple[List[Candidate], List[Dict[str, str]]]:
    """Every bundle, diagnosis directory and findings.json under ROOT, and what was skipped and why.

    Symbolic links are never followed. A bundle whose diagnosis already sits beside it
    (`<name>-diagnosis/`, the name `diagnose` and `capture --diagnose` give it) is read from there.
    ROOT itself may be one bundle or diagnosis directory.
    """
    if kind_of_dir(root):
        return [Candidate(root, root.name, kind_of_dir(root))], []
    scan = _Scan(root, {p.resolve() for p in skip})
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [name for name in sorted(dirnames) if scan.directory(here / name)]
        for name in sorted(filenames):
            scan.file(here / name)
    return drop_already_diagnosed(scan.found, scan.skipped)


class _Scan:
    """What find_inputs collects while walking: inputs found, and what was skipped with why."""

    def __init__(self, root: Path, skip: set):
        self.root, self.skip = root, skip
        self.found: List[Candidate] = []
        self.skipped: List[Dict[str, str]] = []

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def directory(self, path: Path) -> bool:
        """Take an input directory; True when the walk should descend into it."""
        if path.is_symlink():
            self.skipped.append({"input": self.rel(path), "reason": "symbolic link: not followed"})
            return False
        if path.resolve() in self.skip:
            return False
        kind = kind_of_dir(path)
        if kind:
            self.found.append(Candidate(path, self.rel(path), kind))
        return kind is None

    def file(self, path: Path) -> None:
        kind = kind_of_file(path.name)
        if kind is None or path.name in OWN_OUTPUTS:
            return
        if path.is_symlink():
            self.skipped.append({"input": self.rel(path), "reason": "symbolic link: not followed"})
        else:
            self.found.append(Candidate(path, self.rel(path), kind))


def drop_already_diagnosed(found: List[Candidate], skipped: List[Dict[str, str]]):
    diagnosed = {c.path for c in found if c.kind == "diagnosis"}
    kept = []
    for cand in found:
        twin = cand.path.parent / f"{bundle_stem(cand.path.name)}-diagnosis"
        if cand.kind == "bundle" and twin in diagnosed:
            skipped.append({"input": cand.rel, "reason": f"already diagnosed in {twin.name}/"})
        else:
            kept.append(cand)
    return sorted(kept, key=lambda c: c.rel), skipped


# -- one capture -------------------------------------------------------------------------------
def top_finding(doc: dict) -> Optional[dict]:
    """The first finding at medium or high confidence (findings are ranked; low never heads)."""
    for finding in doc.get("findings") or []:
        if isinstance(finding, dict) and finding.get("confidence") in ("high", "medium"):
            return finding
    return None


def kernel_share(doc: dict) -> Optional[float]:
    samples = doc.get("samples") if isinstance(doc.get("samples"), dict) else {}
    total, kernel = samples.get("total"), samples.get("kernel")
    if not isinstance(total, (int, float)) or not isinstance(kernel, (int, float)) or total <= 0:
        return None
    return round(kernel / total, 4)


def symbols_restricted(doc: dict) -> bool:
    return any("kernel symbols restricted" in str(line) for line in doc.get("data_quality") or [])


def classify(doc: dict) -> Tuple[str, Optional[dict]]:
    top = top_finding(doc)
    if top:
        return "finding", top
    if symbols_restricted(doc):
        return "inconclusive", None
    share = kernel_share(doc)
    if share is not None and share < HEALTHY_KERNEL_SHARE:
        return "healthy", None
    return "unexplained", None


def _number(value, digits: int = 2) -> Optional[float]:
    return round(float(value), digits) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value) -> Optional[str]:
    return str(value) if value not in (None, "") else None


def cpu_pct(doc: dict, facts: Dict[str, object], fact: str, key: str) -> Optional[float]:
    """Percent from the fact, else from findings.json's `cpu` object (schema 2: fractions)."""
    value = facts.get(fact)
    cpu = doc.get("cpu") if isinstance(doc.get("cpu"), dict) else {}
    if value is None and isinstance(cpu.get(key), (int, float)):
        value = cpu[key] * 100
    return _number(value)


def host_from_path(rel: str) -> str:
    """The first directory under DIR (the playbook fetches into DIR/<inventory host>/), else the name."""
    parts = Path(rel).parts
    return parts[0] if len(parts) > 1 else bundle_stem(parts[-1])


def capture_row(doc: dict, facts: Dict[str, object], cand: Candidate, report: Optional[str]) -> Capture:
    status, top = classify(doc)
    hotspots = doc.get("hotspots") or []
    window = doc.get("window") if isinstance(doc.get("window"), dict) else {}
    return Capture(
        host=_text(doc.get("host")) or host_from_path(cand.rel), input=cand.rel, kind=cand.kind,
        status=status, finding=top and _text(top.get("id")), title=top and _text(top.get("title")),
        confidence=top and _text(top.get("confidence")), share=top and _number(top.get("share"), 4),
        sys_pct=cpu_pct(doc, facts, SYS_FACT, "system"), soft_pct=cpu_pct(doc, facts, SOFT_FACT, "softirq"),
        kernel_share=kernel_share(doc),
        hotspot=_text(hotspots[0].get("frame")) if hotspots and isinstance(hotspots[0], dict) else None,
        start=_text(window.get("start")), seconds=_number(window.get("seconds")),
        headline=_text(doc.get("headline")), label=_text(doc.get("label")), report=report)


def read_json(path: Path) -> dict:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise UserError(f"{path.name}: larger than {MAX_JSON_BYTES >> 20} MiB: not a findings.json")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise UserError(f"{path.name}: unreadable JSON ({err}): rerun flamediag diagnose on the bundle")
    if not isinstance(doc, dict):
        raise UserError(f"{path.name}: not a JSON object: not a findings.json")
    return doc


def read_findings(path: Path) -> dict:
    doc = read_json(path)
    if not isinstance(doc.get("findings"), list):
        raise UserError(f"{path.name}: no 'findings' list: not a findings.json written by flamediag diagnose")
    return doc


def facts_beside(findings_path: Path, doc: dict) -> Dict[str, object]:
    """%sys/%soft: from facts.json beside findings.json (`flamediag facts --format json`), else from
    a `facts` object inside findings.json; absent otherwise (never re-parsed from raw files)."""
    inline = doc.get("facts") if isinstance(doc.get("facts"), dict) else {}
    beside = findings_path.parent / "facts.json"
    if findings_path.name == "findings.json" and beside.is_file():
        try:
            facts = read_json(beside).get("facts")
        except UserError:
            facts = None
        if isinstance(facts, dict):
            return {**inline, **facts}
    return inline


def read_diagnosis(cand: Candidate) -> Capture:
    findings_path = cand.path / "findings.json" if cand.kind == "diagnosis" else cand.path
    doc = read_findings(findings_path)
    report = findings_path.parent / "report.md"
    shown = str(report) if cand.kind == "diagnosis" and report.is_file() else None
    return capture_row(doc, facts_beside(findings_path, doc), cand, shown)


# -- bundles, diagnosed in worker processes ------------------------------------------------------
_BOOKS = None


def _load_books(extra_dirs: Sequence[str], min_share: Optional[float]) -> None:
    global _BOOKS
    from .diagnose import load_playbooks

    _BOOKS = load_playbooks(extra_dirs, min_share)


def _start_worker(extra_dirs: Sequence[str], min_share: Optional[float]) -> None:
    default_signals()
    _load_books(extra_dirs, min_share)


def diagnose_bundle(cand: Candidate, reports_root: Optional[str]) -> Capture:
    from .diagnose import run_diagnosis, write_outputs

    diagnosis = run_diagnosis(str(cand.path), loaded=_BOOKS)
    report = None
    if reports_root is not None:
        dest = Path(reports_root) / DIAGNOSES_DIR / bundle_stem(cand.rel)
        report = str(write_outputs(diagnosis, dest)["report.md"])
    facts = diagnosis.input.facts
    values = {name: facts.get(name) for name in (SYS_FACT, SOFT_FACT)}
    doc = diagnosis.findings_json()
    doc.setdefault("headline", diagnosis.headline)
    doc.setdefault("label", diagnosis.input.manifest.get("label"))
    return capture_row(doc, values, cand, report)


def _work(cand: Candidate, reports_root: Optional[str]):
    """(Capture, None) or (None, Refused): never raises, so one bad input spoils nothing else."""
    try:
        if cand.kind == "bundle":
            return diagnose_bundle(cand, reports_root), None
        return read_diagnosis(cand), None
    except UserError as err:
        return None, Refused(cand.rel, reason_without_path(str(err), cand.path), err.code)
    except MemoryError:
        return None, Refused(cand.rel, "out of memory while diagnosing: diagnose it alone", 1)
    except OSError as err:
        return None, Refused(cand.rel, f"cannot read or write ({err.strerror or err})", 1)


def reason_without_path(reason: str, path: Path) -> str:
    """The refusal without the leading path the table already shows in its input column."""
    prefix = f"{path}: "
    return reason[len(prefix):] if reason.startswith(prefix) else reason


def summarise(candidates: Sequence[Candidate], directory: str, out_dir: Optional[Path] = None, jobs: int = 1,
              write_reports: bool = True, extra_dirs: Sequence[str] = (), min_share: Optional[float] = None,
              progress: Optional[Callable[[int, int, str, str], None]] = None) -> Summary:
    """Diagnose the bundles on up to `jobs` processes, read the rest; results in input order.

    With `write_reports`, each bundle's diagnosis goes to OUT_DIR/diagnoses/<bundle path>/."""
    summary = Summary(directory, out_dir)
    out = str(out_dir) if out_dir is not None and write_reports else None
    results: Dict[str, tuple] = {}

    def done(cand: Candidate, result) -> None:
        results[cand.rel] = result
        if progress:
            progress(len(results), len(candidates), cand.rel, outcome(result))

    bundles = [c for c in candidates if c.kind == "bundle"]
    if bundles:
        _load_books(extra_dirs, min_share)      # a broken playbook stops here, with its reason
    for cand in candidates:
        if cand.kind != "bundle":
            done(cand, _work(cand, out))
    if bundles and jobs > 1 and len(bundles) > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(bundles)), initializer=_start_worker,
                                 initargs=(tuple(extra_dirs), min_share)) as pool:
            futures = {pool.submit(_work, cand, out): cand for cand in bundles}
            try:
                for future in as_completed(futures):
                    done(futures[future], future.result())
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    else:
        for cand in bundles:
            done(cand, _work(cand, out))
    for cand in candidates:
        capture, refused = results[cand.rel]
        if capture:
            summary.captures.append(capture)
        else:
            summary.refused.append(refused)
    return summary


def outcome(result) -> str:
    capture, refused = result
    if refused:
        return f"refused: {refused.reason}"
    if capture.status == "finding":
        return f"{capture.finding} ({capture.confidence})"
    return capture.status


def drop_duplicates(summary: Summary) -> None:
    """The same capture reached twice (a bundle and a copy of its diagnosis): keep the first."""
    seen: Dict[tuple, str] = {}
    kept = []
    for capture in summary.captures:
        key = (capture.host, capture.start)
        if capture.start and key in seen:
            summary.skipped.append({"input": capture.input, "reason": f"same capture as {seen[key]}"})
            continue
        seen[key] = capture.input
        kept.append(capture)
    summary.captures = kept


# -- grouping and headline ---------------------------------------------------------------------
STATUS_ORDER = ("unexplained", "inconclusive", "healthy")
STATUS_WORDS = {"unexplained": "with no known problem", "inconclusive": "inconclusive", "healthy": "healthy"}


def group_key(capture: Capture) -> str:
    return capture.finding if capture.status == "finding" else capture.status


def group_captures(captures: Iterable[Capture]) -> List[dict]:
    """Groups by top finding (most hosts first), then unexplained, inconclusive, healthy."""
    groups: Dict[str, dict] = {}
    for capture in captures:
        key = group_key(capture)
        group = groups.setdefault(key, {"key": key, "status": capture.status, "title": capture.title,
                                        "hosts": set(), "captures": 0})
        group["hosts"].add(capture.host)
        group["captures"] += 1
    ordered = sorted(groups.values(), key=lambda g: (g["status"] != "finding", STATUS_ORDER.index(g["status"])
                                                     if g["status"] in STATUS_ORDER else -1,
                                                     -len(g["hosts"]), g["key"]))
    return [{**g, "hosts": sorted(g["hosts"])} for g in ordered]


def headline(groups: Sequence[dict], host_count: int, refused_count: int) -> str:
    """'zone-reclaim on 27/30 hosts; 3 healthy' (a host with two captures may count in two groups).

    >>> headline([{"key": "zone-reclaim", "status": "finding", "hosts": ["a", "b"]},
    ...           {"key": "healthy", "status": "healthy", "hosts": ["c"]}], 3, 1)
    'zone-reclaim on 2/3 hosts; 1 healthy; 1 input refused'
    """
    parts = [f"{g['key']} on {len(g['hosts'])}/{host_count} host{'s' if host_count != 1 else ''}"
             for g in groups if g["status"] == "finding"]
    text = ", ".join(parts)
    for g in groups:
        if g["status"] != "finding":
            text += ("; " if text else "") + f"{len(g['hosts'])} {STATUS_WORDS[g['status']]}"
    if not groups:
        text = "no capture could be summarised"
    if refused_count:
        text += f"; {refused_count} input{'s' if refused_count != 1 else ''} refused"
    return text


def start_spread(captures: Sequence[Capture]) -> Optional[float]:
    """Seconds between the earliest and the latest window start (how simultaneous the fleet was)."""
    from datetime import datetime

    starts = []
    for capture in captures:
        try:
            starts.append(datetime.fromisoformat(str(capture.start).replace("Z", "+00:00")).timestamp())
        except ValueError:
            continue
    return round(max(starts) - min(starts), 3) if len(starts) > 1 else None


# -- outputs -----------------------------------------------------------------------------------
def to_json(summary: Summary) -> dict:
    groups = summary.groups()
    return {
        "schema": SCHEMA_VERSION,
        "flamediag_version": __version__,
        "directory": summary.directory,
        "headline": summary.headline,
        "hosts": len(summary.hosts),
        "start_spread_seconds": start_spread(summary.captures),
        "groups": [{"key": g["key"], "status": g["status"], "title": g["title"], "hosts": g["hosts"],
                    "captures": g["captures"]} for g in groups],
        "captures": [dict(c.to_json(), report=relative_to(c.report, summary.out_dir))
                     for c in sorted(summary.captures, key=row_order(groups))],
        "refused": [r.to_json() for r in summary.refused],
        "skipped": summary.skipped,
    }


def relative_to(path: Optional[str], out_dir: Optional[Path]) -> Optional[str]:
    if path is None or out_dir is None:
        return path
    return os.path.relpath(path, out_dir)


def row_order(groups: Sequence[dict]):
    rank = {g["key"]: index for index, g in enumerate(groups)}
    return lambda c: (rank[group_key(c)], c.host, c.start or "", c.input)


def write_summary(summary: Summary, out_dir: Path) -> Dict[str, Path]:
    from .summary_report import render_markdown

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"summary.md": out_dir / "summary.md", "summary.json": out_dir / "summary.json"}
    paths["summary.json"].write_text(json.dumps(to_json(summary), indent=2) + "\n", encoding="utf-8")
    paths["summary.md"].write_text(render_markdown(to_json(summary)), encoding="utf-8")
    return paths
