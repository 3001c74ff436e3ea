"""report.md from a Diagnosis, through jinja2 (templates/report.md.j2).

Escaping policy (doc/diagnose.md "Escaping"):
- identifiers, frame names, paths and commands go in code spans or fenced blocks, which need no
  escaping (the fence is longer than any backtick run inside);
- prose from the data is escaped only where CommonMark would misread it: a block marker at the
  start of the text (`#`, `>`, `-`, `+`, `*`, `1.`), backticks, `*`, `_` at a word edge, `[ ]`,
  `|` (table cells), `<` before a tag, `&` before an entity, `\\` before punctuation, `~` pairs,
  and autolink openers (`://`, `www.`);
- control, bidi and zero-width characters are removed.
The environment's `finalize` escapes anything that is not `Trusted` (playbook runbook text from
the repository is), so a template cannot forget. `Prose` mixes text and code segments: the
headline and other sentences built from identifiers render as markdown, plain text or JSON.

    >>> md_escape("a|b <script> [x](javascript:y) `c`")
    'a\\\\|b &lt;script> [x\\\\](javascript:y) \\\\`c\\\\`'
    >>> md_escape("**bold** _em_ frames above __mutex_lock / down_write")
    '\\\\*\\\\*bold\\\\*\\\\* \\\\_em\\\\_ frames above \\\\_\\\\_mutex_lock / down_write'
    >>> md_escape("frames above __mutex_lock / down_write, 2 * 3")
    'frames above __mutex_lock / down_write, 2 * 3'
    >>> md_escape("sysctl -w vm.zone_reclaim_mode=0 (persist in /etc/sysctl.d) 2.6.32 + 10 s > 3")
    'sysctl -w vm.zone_reclaim_mode=0 (persist in /etc/sysctl.d) 2.6.32 + 10 s > 3'
    >>> md_escape("1. first"), md_escape("__schedule__"), md_escape("# x #")
    ('1\\\\. first', '\\\\_\\\\_schedule\\\\_\\\\_', '\\\\# x \\\\#')
    >>> code_span("a`b")
    '`` a`b ``'
    >>> code_block("x\\n```\\ny").splitlines()[0]
    '````'
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import jinja2

from . import text as text_rules

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_FRAME_CHARS = 160
STACK_HEAD, STACK_TAIL = 6, 28

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_ALWAYS = re.compile(r"([`|])")
_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_EDGE_RUN = re.compile(r"(?<![A-Za-z0-9_])_+|_+(?![A-Za-z0-9_])")
_BLOCK_START = re.compile(r"^(?:[-+*](?=\s|$)|>|(?:[-_*][ \t]*)+$|#{1,6}(?=\s|$)|=+\s*$|~~~)")
_ORDERED_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
_CLOSING_HASHES = re.compile(r"(\s)(#+)\s*$")


class Trusted(str):
    """Markdown that may be emitted as is (repository playbook text, filter output)."""


Segment = Tuple[str, str]          # ("text" | "code", content)


class Prose(tuple):
    """A sentence of text and code segments: markdown, plain text or JSON from one source.

    >>> p = Prose.of("fix: ", Prose.code("sysctl -w vm.x=0"), " now")
    >>> str(p), p.markdown()
    ('fix: sysctl -w vm.x=0 now', 'fix: `sysctl -w vm.x=0` now')
    """

    @staticmethod
    def code(text: str) -> Segment:
        return ("code", str(text))

    @classmethod
    def of(cls, *parts: Union[str, Segment, "Prose"]) -> "Prose":
        segments: List[Segment] = []
        for part in parts:
            if isinstance(part, Prose):
                segments.extend(part)
            elif isinstance(part, tuple):
                segments.append(part)
            elif part:
                segments.append(("text", str(part)))
        return cls(segments)

    def __str__(self) -> str:
        return "".join(strip_controls(text) for _, text in self)

    def markdown(self) -> Trusted:
        # code segments escape `|` too: the sentence may sit in a table cell
        context = " ".join(strip_controls(text) for kind, text in self if kind == "text")
        return Trusted("".join(code_span(text, in_table=True) if kind == "code"
                               else _md_inline(strip_controls(text), context) for kind, text in self))


def strip_controls(text: str) -> str:
    """Remove ANSI sequences, C0/C1 controls and bidi/zero-width characters (keeps nothing raw)."""
    return text_rules.strip_controls(_ANSI.sub("", str(text)))


def _could_pair(text: str, runs) -> bool:
    """Some delimiter run that can open (next char not a space) precedes one that can close
    (previous char not a space): only then can emphasis form, and only then is escaping needed."""
    opened = False
    for run in runs:
        before, after = text[run.start() - 1:run.start()], text[run.end():run.end() + 1]
        if opened and before and not before.isspace():
            return True
        opened = opened or bool(after and not after.isspace())
    return False


def _emphasis(text: str) -> Dict[str, bool]:
    """Which of `*`, `_`, `~` and `]` the whole inline context needs escaped."""
    return {"*": _could_pair(text, re.finditer(r"\*+", text)),
            "_": _could_pair(text, _EDGE_RUN.finditer(text)),
            "~": _could_pair(text, re.finditer(r"~+", text)),
            "]": "[" in text and "]" in text[text.index("["):]}


def _md_inline(text: str, context: Optional[str] = None) -> str:
    """Escape a piece of inline text that does not start a line; `context` is the whole inline
    run it sits in (emphasis can pair across the pieces of one sentence)."""
    needs = _emphasis(text if context is None else context)
    text = _BACKSLASH.sub(r"\\\\", text)
    text = _ENTITY.sub("&amp;", text)
    text = _TAG_OPEN.sub("&lt;", text)
    text = _ALWAYS.sub(r"\\\1", text)
    if needs["_"]:
        text = _EDGE_UNDERSCORE.sub(r"\\_", text)
    for char in "*~]":
        if needs[char]:
            text = text.replace(char, "\\" + char)
    # GitHub turns bare URLs into links: keep data-derived ones inert
    return text.replace("://", "&#58;//").replace("www.", "www&#46;")


def md_escape(text) -> Trusted:
    """Inline markdown text: no emphasis, links, HTML, entities, table breaks or autolinks."""
    text = " ".join(strip_controls(text).split())   # no leading spaces (code blocks), no line breaks
    text = _md_inline(text)
    ordered = _ORDERED_START.match(text)
    if ordered:
        text = ordered.group(1) + "\\" + text[len(ordered.group(1)):]
    elif _BLOCK_START.match(text):
        text = "\\" + text
    text = _CLOSING_HASHES.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
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
    return Trusted(text_rules.pct(fraction))


def where_cpus(cpus: Dict[str, float]) -> str:
    if not cpus:
        return "unknown"
    top = list(cpus.items())[:3]
    if top[0][1] >= 0.5 or len(cpus) <= 3:
        return ", ".join(f"CPU {c} {pct(s)}" for c, s in top)
    return f"{len(cpus)} CPUs, max CPU {top[0][0]} {pct(top[0][1])}"


def where_commands(commands: Dict[str, float]) -> Prose:
    top = list(commands.items())[:3]
    if not top:
        return Prose.of("unknown")
    parts: List[Union[str, Segment]] = []
    for index, (comm, share) in enumerate(top):
        parts += [", " if index else "", Prose.code(comm), f" {pct(share)}"]
    return Prose.of(*parts)


def _finalize(value):
    if value is None:
        return ""
    if isinstance(value, Trusted):
        return value
    if isinstance(value, Prose):
        return value.markdown()
    if isinstance(value, (int, float)):
        return str(value)
    return md_escape(value)


def _code_list(values: Iterable[str], in_table: bool = False) -> Trusted:
    return Trusted(", ".join(code_span(v, in_table) for v in values))


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False, finalize=_finalize,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
    )
    env.filters.update(md=md_escape, code=code_span, codes=_code_list, codeblock=code_block, pct=pct,
                       stack=stack_lines, where_cpus=where_cpus, where_commands=where_commands,
                       trusted=lambda text: Trusted(text))
    return env


def render(context: dict) -> str:
    text = environment().get_template("report.md.j2").render(**context)
    return re.sub(r"\n{3,}", "\n\n", text)


# -- plain text (report.txt, --format text) ------------------------------------------------------
def _text_finalize(value):
    if value is None:
        return ""
    return strip_controls(str(value))


def _runbook_text(markdown, indent: str = "") -> str:
    from .plaintext import markdown_to_text

    text = markdown_to_text(str(markdown))
    return "\n".join(indent + line if line else "" for line in text.split("\n"))


def text_environment() -> jinja2.Environment:
    from .plaintext import wrap

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False, finalize=_text_finalize,
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
    )
    env.filters.update(pct=pct, stack=stack_lines, where_cpus=where_cpus,
                       where_commands=lambda commands: str(where_commands(commands)),
                       wrap=lambda text, indent="", first=None: wrap(strip_controls(str(text)), indent, first),
                       runbook=_runbook_text, indent_lines=lambda text, indent="    ": "\n".join(
                           indent + strip_controls(line) for line in str(text).split("\n")))
    return env


def render_text(context: dict) -> str:
    text = text_environment().get_template("report.txt.j2").render(**context)
    return re.sub(r"\n{3,}", "\n\n", text)
