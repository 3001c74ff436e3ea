"""report.md from a Diagnosis, through jinja2 (templates/report.md.j2).

Every data-derived string is escaped: the environment's `finalize` escapes anything that is
not `Trusted` (playbook runbook text from the repository is), so a template cannot forget.
Filters return `Trusted` so their output is not escaped twice.

    >>> md_escape("a|b <script> [x](javascript:y) `c`")
    'a\\\\|b &lt;script&gt; \\\\[x\\\\]\\\\(javascript:y\\\\) \\\\`c\\\\`'
    >>> code_span("a`b")
    '`` a`b ``'
    >>> code_block("x\\n```\\ny").splitlines()[0]
    '````'
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Sequence

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_FRAME_CHARS = 160
STACK_HEAD, STACK_TAIL = 6, 28

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#!|~+])")
_LINE_START = re.compile(r"^(\s*)(?:([-=])|(\d+)([.)]))")


class Trusted(str):
    """Markdown that may be emitted as is (repository playbook text, filter output)."""


def strip_controls(text: str) -> str:
    """Remove ANSI sequences, C0/C1 controls and bidi/zero-width characters (keeps nothing raw)."""
    return _CONTROL.sub("", _ANSI.sub("", str(text)))


def _escape_line_start(match) -> str:
    if match.group(2):
        return match.group(1) + "\\" + match.group(2)
    return match.group(1) + match.group(3) + "\\" + match.group(4)


def md_escape(text) -> Trusted:
    """Inline markdown text: no emphasis, links, HTML, entities, table breaks or autolinks."""
    text = " ".join(strip_controls(text).split())   # no leading spaces (code blocks), no line breaks
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_PUNCT.sub(r"\\\1", text)
    text = text.replace("://", "&#58;//").replace("www.", "www&#46;")
    text = _LINE_START.sub(_escape_line_start, text)
    return Trusted(text)


def _longest_run(text: str, char: str = "`") -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(r) for r in runs), default=0)


def code_span(text, in_table: bool = False) -> Trusted:
    """`text` with a fence longer than any backtick run inside it."""
    text = strip_controls(text).replace("\n", " ")
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (_longest_run(text) + 1)
    # CommonMark strips one space from each side when both are there: pad so the data survives
    pad = " " if text[:1] in "` " and text[-1:] in "` " or text.startswith("`") or text.endswith("`") \
        or fence != "`" else ""
    return Trusted(f"{fence}{pad}{text}{pad}{fence}")


def code_block(text, info: str = "") -> Trusted:
    lines = [strip_controls(line) for line in str(text).split("\n")]
    body = "\n".join(lines)
    fence = "`" * max(3, _longest_run(body) + 1)
    return Trusted(f"{fence}{info}\n{body}\n{fence}")


def trim_frame(name: str) -> str:
    return name if len(name) <= MAX_FRAME_CHARS else name[: MAX_FRAME_CHARS - 1] + "…"


def stack_lines(frames: Sequence[str]) -> str:
    """Root first, leaf last; the middle elided when the stack is deep."""
    frames = [trim_frame(f) for f in frames]
    if len(frames) > STACK_HEAD + STACK_TAIL + 1:
        hidden = len(frames) - STACK_HEAD - STACK_TAIL
        frames = frames[:STACK_HEAD] + [f"… {hidden} frames …"] + frames[-STACK_TAIL:]
    return "\n".join(frames)


def pct(fraction) -> Trusted:
    """Our own number formatting, not data: emitted as is."""
    fraction = float(fraction or 0)
    return Trusted(f"{fraction * 100:.1f} %" if 0 < fraction < 0.1 else f"{fraction * 100:.0f} %")


def where_cpus(cpus: Dict[str, float]) -> str:
    if not cpus:
        return "unknown"
    top = list(cpus.items())[:3]
    if top[0][1] >= 0.5 or len(cpus) <= 3:
        return ", ".join(f"CPU {c} {pct(s)}" for c, s in top)
    return f"{len(cpus)} CPUs, max CPU {top[0][0]} {pct(top[0][1])}"


def where_commands(commands: Dict[str, float]) -> str:
    return ", ".join(f"{c} {pct(s)}" for c, s in list(commands.items())[:3]) or "unknown"


def _finalize(value):
    if value is None:
        return ""
    if isinstance(value, Trusted):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return md_escape(value)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False, finalize=_finalize,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
    )
    env.filters.update(md=md_escape, code=code_span, codeblock=code_block, pct=pct, stack=stack_lines,
                       where_cpus=where_cpus, where_commands=where_commands,
                       trusted=lambda text: Trusted(text))
    return env


def render(context: dict) -> str:
    text = environment().get_template("report.md.j2").render(**context)
    return re.sub(r"\n{3,}", "\n\n", text)


def playbook_sections(playbook, names: List[str]) -> Dict[str, Trusted]:
    """Runbook sections quoted verbatim: repository content, not data."""
    return {name: Trusted(playbook.section(name)) for name in names}
