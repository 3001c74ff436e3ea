"""Undo what tickets, chat, mail and terminals do to pasted tool output, before any reader sees it.

    >>> unwrap("> ```\\n> -  33.01%  java  [k] _spin_lock_irq<br>\\n> ```")
    ['-  33.01%  java  [k] _spin_lock_irq']
    >>> unwrap("<pre>&lt;IRQ&gt;\\r\\n net_rx_action+0x1a/0x40</pre>")
    ['<IRQ>', ' net_rx_action+0x1a/0x40']
    >>> unwrap("| Overhead  Symbol\\n|   31.98%  [k] xas_find")
    ['Overhead  Symbol', '  31.98%  [k] xas_find']
    >>> unwrap(">     Reported in the thread:\\n>     > 12.10%  a  [k] b")   # a reply quoting a commit message
    ['Reported in the thread:', '12.10%  a  [k] b']

Quote markers: `>` (any nesting: `> > `, `>>`, `> >`) on every line; `|` only on a run of
lines that all carry it and where some line has text right after `| ` (a perf call graph's
rails never do: its names sit under the rails, its branches read `|--`). Box-drawing and
block characters (the perf TUI's scroll bar `▒`/`◆`, annotate's `│`, dialog frames) become
spaces, so columns stay where they were. Lines a mail client wrapped are joined back by
`paste.rewrap`.
"""
from __future__ import annotations

import html
import re
from typing import List

from .rewrap import rejoin

_HTML_HINT = re.compile(r"<br\s*/?>|</?(?:pre|code|p|div|span|tt)\b|&(?:lt|gt|amp|nbsp|quot|#\d+);", re.I)
_BREAK_TAG = re.compile(r"<br\s*/?>|</?(?:p|div)(?:\s[^<>]*)?>", re.I)
# Only formatting tags: `<IRQ>`, `<EOI>`, `<TASK>` are kernel trace markers and must survive.
_FORMAT_TAG = re.compile(r"</?(?:pre|code|span|tt|b|i|em|strong|font|blockquote)(?:\s[^<>]*)?>", re.I)
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>[ \t]?)+")
_PIPE = re.compile(r"^[ \t]{0,3}\|(?: |$)")
_MARKER = re.compile(r"[ \t]{0,3}[|>](?: |$)")
# What a call graph never holds after a rail: text right after `| `, a column percentage, a frame offset.
_QUOTED_TEXT = re.compile(r"^(?:[^\s|-]|\s+\d+(?:[.,]\d+)?%\s|.*\+0x[0-9a-f]+/0x)")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_TEXT_START = re.compile(r"[A-Za-z#@\[<>]")
# `git log` / `git show` header lines above an indented commit message
_GIT_HEADER = re.compile(r"^(?:commit [0-9a-f]{7,40}\b|Merge: |Author: |AuthorDate: |Commit: |CommitDate: |Date: )")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]")   # perf top clears the screen
_BOX = re.compile("[\u2500-\u259f\u25c6\u25c7\u25cf]")   # box drawing, block elements, TUI markers


def unwrap(text: str) -> List[str]:
    """Lines of the paste with CRLF, HTML, quoting, fences, TUI glyphs and mail wrapping removed."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if _HTML_HINT.search(text):
        text = _unhtml(text)
    text = _BOX.sub(" ", text)
    raw = _dedent_commit_message(text.split("\n"))             # a quoted mail in a commit message
    lines = _strip_pipes([_QUOTE.sub("", line) for line in raw])
    lines = _dedent_commit_message([line.expandtabs(8) for line in lines if not _FENCE.match(line)])
    lines = _strip_pipes([_QUOTE.sub("", line) for line in lines])   # a mail quoted in that message
    return [line.rstrip() for line in rejoin(lines)]


def _dedent_commit_message(lines: List[str]) -> List[str]:
    """A commit message as `git log` / `git show` prints it: every line of the body indented
    (four spaces), under the unindented `commit`, `Author:`, `Date:` lines if they were copied.
    The indent is the quoting, not the tool's layout: remove what every line of the body has.

    >>> _dedent_commit_message(["commit 1f2e3d4c", "Author: A <a@b>", "", "    mm: fix it", "",
    ...                         "      80.56%  a.out  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath",
    ...                         "              |"])
    ['commit 1f2e3d4c', 'Author: A <a@b>', '', 'mm: fix it', '', '  80.56%  a.out  [kernel.kallsyms]  [k] native_queued_spin_lock_slowpath', '          |']
    >>> _dedent_commit_message(["Overhead  Symbol", "  31.98%  [k] xas_find"])
    ['Overhead  Symbol', '  31.98%  [k] xas_find']
    >>> _dedent_commit_message(["    12.10%  a  [k] b", "     3.02%  a  [k] c"])
    ['    12.10%  a  [k] b', '     3.02%  a  [k] c']
    """
    body = [line for line in lines if line.strip() and not _GIT_HEADER.match(line)]
    if not body:
        return lines
    indent = min(len(line) - len(line.lstrip(" ")) for line in body)
    # quoting indents lines of every kind alike: some line it indents starts with text (the
    # message's prose, a `# ` header, a `[ 12.3]` log time, `@[`, a mail's `>`); a lone listing
    # whose rows a tool itself indents (perf's `    12.10%  ...`) keeps them
    if indent < 2 or not any(_TEXT_START.match(line, indent) for line in body):
        return lines
    return [line[indent:] if line.strip() and not _GIT_HEADER.match(line) else line for line in lines]


def _strip_pipes(lines: List[str]) -> List[str]:
    """Remove `| ` quote markers (and `>` mixed in: `| > |`) from each run of lines that all
    carry one and hold text: as many markers as every line of the run has."""
    out = list(lines)
    index = 0
    while index < len(lines):
        if not _PIPE.match(lines[index]):
            index += 1
            continue
        end = index
        while end < len(lines) and _PIPE.match(lines[end]):
            end += 1
        run = [_markers(line) for line in lines[index:end]]
        depth = min((len(found) for found, rest in run if rest.strip()), default=1)
        cut = [rest if not rest.strip() else "".join(found[depth:]) + rest for found, rest in run]
        if end - index >= 2 and any(_QUOTED_TEXT.match(line) for line in cut):
            out[index:end] = cut
        index = end
    return out


def _markers(line: str):
    """(the leading quote markers, the rest of the line)."""
    found = []
    position = 0
    while True:
        marker = _MARKER.match(line, position)
        if not marker or marker.end() == position:
            return found, line[position:]
        found.append(marker[0])
        position = marker.end()


def _unhtml(text: str) -> str:
    # A <br> at the end of a source line would double the line break.
    text = re.sub(r"(?:<br\s*/?>)[ \t]*\n", "\n", text, flags=re.I)
    text = _BREAK_TAG.sub("\n", text)
    text = _FORMAT_TAG.sub("", text)
    return html.unescape(text).replace("\u00a0", " ")
