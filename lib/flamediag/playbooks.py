"""Load and validate playbooks: `playbooks/<id>.md`, YAML front matter + runbook body.

The front matter is the signature as data (doc/playbook-format.md); the loader checks it
against `schemas/playbook.schema.json` plus the rules a schema cannot say (id = file name,
`strong` indexes in range, the fixed body sections in order).

    >>> pb = parse_playbook(EXAMPLE, "playbooks/demo.md")
    >>> pb.id, pb.signature["min_share"], pb.signature["patterns"]
    ('demo', 0.05, [['lock', '_spin_lock']])
    >>> pb.section("Mitigate")
    'sysctl -w x=0'

Playbook directories: the repository's `playbooks/`, then every directory named in
$FLAMEDIAG_PLAYBOOKS (os.pathsep-separated), then `diagnose --playbooks DIR` (repeatable).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

import yaml

from . import HOME

SECTIONS = ("Symptom & evidence", "Why it happens", "Confirm by hand", "Mitigate", "Verify the fix", "References")
BRANCHED_SECTIONS = ("Mitigate", "Verify the fix")
OPS = ("eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "matches", "exists")
_BRANCH_HEADING = re.compile(r"^###\s+(When|Otherwise)\b\s*(.*?)\s*$")
_CONDITION = re.compile(r"^`?(?P<fact>[^`\s]+)`?\s+(?P<op>[a-z_]+)(?:\s+(?P<value>.+?))?$")
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "playbook.schema.json"
DEFAULT_DIR = HOME / "playbooks"   # the checkout's, or the copy a pip install ships
ENV_DIRS = "FLAMEDIAG_PLAYBOOKS"

SIGNATURE_DEFAULTS = {
    "strong": None, "exclude": [], "context": "any", "comm": None, "leaf_within": None,
    "distinctive": [], "min_share": 0.05, "strong_share": 0.20, "concentration": None,
    "weak_share": None, "companions": [], "beside_threads": {}, "claims": [], "foreign_lockers": [], "foreign_callbacks": [], "own_lockers": [], "own_leaves": [], "lock_frames": [],
    "children_gap": None, "claims_min_ratio": None, "background": None, "takes_cpu": True, "flat_weak": [],
    "exclude_weighed": [],
}
CONCENTRATION_DEFAULTS = {"top_share": 0.5, "top_n": 1, "required": False}
CHECK_DEFAULTS = {"weight": 0.0, "against": 0.0, "else": None, "value": None, "kind": None}

EXAMPLE = """---
id: demo
title: Demo
summary: A demo.
eras: ["any"]
evidence: [stacks]
frames:
  lock: [_raw_spin_lock]
signature:
  patterns: [[lock, _spin_lock]]
---
## Symptom & evidence
x
## Why it happens
x
## Confirm by hand
x
## Mitigate
sysctl -w x=0
## Verify the fix
x
## References
x
"""


class PlaybookError(Exception):
    """A malformed playbook: the message names the file and what to fix."""


@dataclass
class Branch:
    """One `### When FACT OP VALUE` (or `### Otherwise`) part of a runbook section."""

    condition: Optional[dict]      # {"fact", "op", "value"}; None for Otherwise
    heading: str                   # as written, without the `###`
    text: str
    fix: str = ""                  # a leading "Fix: ..." paragraph: the headline's fix when chosen


@dataclass
class Advice:
    """A runbook section: the text every reader gets, then the branches (first that holds wins)."""

    common: str
    branches: List[Branch] = field(default_factory=list)


@dataclass
class Playbook:
    id: str
    title: str
    summary: str
    eras: List[str]
    evidence: List[str]
    frames: Dict[str, List[str]]
    signature: dict
    checks: List[dict]
    mitigation_summary: str
    body: str
    path: str                      # shown in reports: playbooks/<id>.md (or the extra dir's path)
    kernel: bool = True            # a kernel signature: inconclusive without kernel symbols
    color: Optional[str] = None
    sections: Dict[str, str] = field(default_factory=dict)
    advice: Dict[str, Advice] = field(default_factory=dict)
    frame_names: Dict[str, str] = field(default_factory=dict)   # rule CU1: set -> regex (match.with_frame_names)

    def section(self, name: str) -> str:
        return self.sections.get(name, "")

    def advice_for(self, name: str) -> Advice:
        return self.advice.get(name) or Advice(self.section(name))

    def expand(self, element: str) -> List[str]:
        """A pattern element: a frame-set name, else a literal frame name."""
        return self.frames.get(element, [element])


_VALIDATOR = None
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema  # runtime dependency; imported here so `--help` works without it

        _VALIDATOR = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    return _VALIDATOR


def split_front_matter(text: str, where: str):
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise PlaybookError(f"{where}: no YAML front matter: the file must start with a '---' line")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    raise PlaybookError(f"{where}: front matter not closed: add a '---' line after it")


def _validate(data, where: str) -> None:
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        location = "/".join(str(p) for p in err.absolute_path) or "(top)"
        raise PlaybookError(f"{where}: front matter {location}: {err.message}")


def _split_sections(body: str, where: str) -> Dict[str, str]:
    found: Dict[str, List[str]] = {}
    order: List[str] = []
    current = None
    for line in body.splitlines():
        match = re.match(r"^##\s+(.+?)\s*$", line)
        if match and not line.startswith("###"):
            current = match.group(1)
            order.append(current)
            found[current] = []
        elif current is not None:
            found[current].append(line)
    fixed = [name for name in order if name in SECTIONS]
    if fixed != list(SECTIONS):
        raise PlaybookError(f"{where}: body sections must be, in order: "
                            + ", ".join(f"'## {s}'" for s in SECTIONS) + f" (found: {', '.join(order) or 'none'})")
    return {name: "\n".join(lines).strip() for name, lines in found.items()}


def _condition_value(text: Optional[str], where: str):
    if text is None:
        return None
    text = text.strip()
    if text.startswith("`") and text.endswith("`") and len(text) > 1:
        text = text.strip("`").strip()
    try:
        return yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        raise PlaybookError(f"{where}: branch value {text!r} is not a YAML scalar or [list]")


def parse_condition(text: str, where: str) -> dict:
    """`nic.drivers contains virtio_net` (backticks allowed around the fact and the value).

    >>> parse_condition("`kernel.version` lt `3.16`", "x")
    {'fact': 'kernel.version', 'op': 'lt', 'value': 3.16}
    >>> parse_condition("nic.drivers in [ena, vif]", "x")["value"]
    ['ena', 'vif']
    """
    match = _CONDITION.match(text.strip())
    if not match or match.group("op") not in OPS:
        raise PlaybookError(f"{where}: branch '### When {text}': write '### When FACT OP VALUE' with OP one of "
                            + ", ".join(OPS))
    condition = {"fact": match.group("fact"), "op": match.group("op")}
    value = _condition_value(match.group("value"), where)
    if condition["op"] != "exists":
        if value is None:
            raise PlaybookError(f"{where}: branch '### When {text}': op '{condition['op']}' needs a value")
        condition["value"] = value
    errors = sorted(_validator().evolve(schema=_branch_schema()).iter_errors(condition), key=str)
    if errors:
        raise PlaybookError(f"{where}: branch '### When {text}': {errors[0].message}")
    return condition


def _branch_schema() -> dict:
    schema = _validator().schema
    return dict(schema["$defs"]["branch_condition"], **{"$defs": schema["$defs"]})


def split_advice(text: str, where: str) -> Advice:
    """The common text, then one Branch per `### When ...` / `### Otherwise` heading."""
    common: List[str] = []
    branches: List[Branch] = []
    for line in text.split("\n"):
        heading = _BRANCH_HEADING.match(line)
        if heading is None:
            (branches[-1].text.append(line) if branches else common.append(line))
            continue
        if branches and branches[-1].condition is None:
            raise PlaybookError(f"{where}: '### {heading.group(1)}' after '### Otherwise': Otherwise comes last")
        if heading.group(1) == "Otherwise":
            if heading.group(2) or not branches:
                raise PlaybookError(f"{where}: '### Otherwise' takes no condition and follows a '### When'")
            condition = None
        else:
            condition = parse_condition(heading.group(2), where)
        branches.append(Branch(condition, line.lstrip("#").strip().replace("`", ""), []))
    for branch in branches:
        branch.text = "\n".join(branch.text).strip()
        fix = re.match(r"Fix:\s*(.+?)(?:\n\s*\n|\Z)", branch.text, re.S)
        branch.fix = " ".join(fix.group(1).split()).rstrip(".") if fix else ""
    return Advice("\n".join(common).strip(), branches)


def _check_semantics(data: dict, where: str, stem: Optional[str]) -> None:
    if stem is not None and data["id"] != stem:
        raise PlaybookError(f"{where}: id '{data['id']}' must equal the file name '{stem}'")
    sig = data["signature"]
    for index in sig.get("strong") or []:
        if index >= len(sig["patterns"]):
            raise PlaybookError(f"{where}: signature.strong index {index} is out of range "
                                f"({len(sig['patterns'])} patterns)")
    if sig.get("comm"):
        try:
            re.compile(sig["comm"])
        except re.error as err:
            raise PlaybookError(f"{where}: signature.comm is not a valid regex ({err})")
    if sig.get("background"):
        try:
            re.compile(sig["background"])
        except re.error as err:
            raise PlaybookError(f"{where}: signature.background is not a valid regex ({err})")
    for name, pattern in (data.get("frame_names") or {}).items():
        if name not in data["frames"]:
            raise PlaybookError(f"{where}: frame_names key '{name}' is not a frame set of frames")
        try:
            regex = re.compile(pattern)
        except re.error as err:
            raise PlaybookError(f"{where}: frame_names '{name}' is not a valid regex ({err})")
        for frame in data["frames"][name]:
            if not regex.fullmatch(frame):
                raise PlaybookError(f"{where}: frame set '{name}' lists '{frame}', which its frame_names "
                                    f"expression does not match (the set holds the convention's examples)")
    for pattern in sig.get("beside_threads") or {}:
        try:
            re.compile(pattern)
        except re.error as err:
            raise PlaybookError(f"{where}: signature.beside_threads key '{pattern}' is not a valid regex ({err})")
    for key in ("foreign_lockers", "foreign_callbacks", "own_lockers"):
        if sig.get(key) and not (sig.get("claims") or sig.get("lock_frames")):
            raise PlaybookError(f"{where}: signature.{key} needs signature.claims or signature.lock_frames "
                                f"(the lock frames whose direct caller is judged)")
    for element in sig.get("exclude_weighed") or []:
        if not any(element in pattern for pattern in sig.get("exclude") or []):
            raise PlaybookError(f"{where}: signature.exclude_weighed element '{element}' is in no signature.exclude pattern")
    for element in sig.get("claims_min_ratio") or {}:
        if element not in (sig.get("claims") or []):
            raise PlaybookError(f"{where}: signature.claims_min_ratio key '{element}' is not in signature.claims")
    for check in data.get("checks") or []:
        if check["op"] != "exists" and "value" not in check:
            raise PlaybookError(f"{where}: check on {check['fact']}: op '{check['op']}' needs a value")


def parse_playbook(text: str, path: str, stem: Optional[str] = None) -> Playbook:
    front, body = split_front_matter(text, path)
    try:
        data = yaml.load(front, Loader=_YAML_LOADER)
    except yaml.YAMLError as err:
        raise PlaybookError(f"{path}: front matter is not valid YAML ({str(err).splitlines()[0]})")
    if not isinstance(data, dict):
        raise PlaybookError(f"{path}: front matter must be a mapping")
    _validate(data, path)
    _check_semantics(data, path, stem if stem is not None else Path(path).stem)
    signature = dict(SIGNATURE_DEFAULTS, **data["signature"])
    if signature["strong"] is None:
        signature["strong"] = list(range(len(signature["patterns"])))
    if signature["weak_share"] is None:
        signature["weak_share"] = signature["strong_share"]
    if signature["concentration"]:
        signature["concentration"] = dict(CONCENTRATION_DEFAULTS, **signature["concentration"])
    sections = _split_sections(body, path)
    return Playbook(
        id=data["id"], title=data["title"], summary=" ".join(data["summary"].split()),
        eras=list(data["eras"]), evidence=list(data["evidence"]), frames=dict(data["frames"]),
        signature=signature, checks=[dict(CHECK_DEFAULTS, **c) for c in data.get("checks") or []],
        mitigation_summary=data.get("mitigation_summary", ""), body=body, path=path,
        kernel=data.get("kernel", True), color=data.get("color"), sections=sections,
        advice={name: split_advice(sections.get(name, ""), f"{path}: ## {name}") for name in BRANCHED_SECTIONS},
        frame_names=dict(data.get("frame_names") or {}),
    )


def load_file(path: Path, display: Optional[str] = None) -> Playbook:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PlaybookError(f"{path}: unreadable ({err})")
    return parse_playbook(text, display or str(path), stem=path.stem)


def playbook_dirs(extra: Sequence[str] = ()) -> List[Path]:
    dirs = [DEFAULT_DIR]
    env = os.environ.get(ENV_DIRS, "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    dirs += [Path(p) for p in extra]
    return dirs


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(DEFAULT_DIR.parent))
    except ValueError:
        return str(path)


def load_all(extra: Sequence[str] = (), include_default: bool = True) -> List[Playbook]:
    """Every playbook, sorted by id; raises PlaybookError on the first malformed one."""
    dirs = playbook_dirs(extra) if include_default else [Path(p) for p in extra]
    by_id: Dict[str, Playbook] = {}
    for directory in dirs:
        if not directory.is_dir():
            if directory != DEFAULT_DIR:
                raise PlaybookError(f"{directory}: playbook directory not found: check --playbooks / ${ENV_DIRS}")
            continue
        for path in sorted(directory.glob("*.md")):
            if path.name.upper() == "README.MD":
                continue
            playbook = load_file(path, _display_path(path))
            if playbook.id in by_id:
                raise PlaybookError(f"{path}: duplicate playbook id '{playbook.id}' (also {by_id[playbook.id].path})")
            by_id[playbook.id] = playbook
    return [by_id[key] for key in sorted(by_id)]


def catalog_entries(playbooks: Iterable[Playbook]) -> List[dict]:
    return [{"id": p.id, "title": p.title, "eras": p.eras, "evidence": p.evidence, "path": p.path,
             "mitigation": p.mitigation_summary} for p in playbooks]
