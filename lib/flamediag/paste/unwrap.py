"""Undo what tickets, chat, mail and terminals do to pasted tool output, before any reader sees it.

    >>> unwrap("> ```\\n> -  33.01%  java  [k] _spin_lock_irq<br>\\n> ```")
    ['-  33.01%  java  [k] _spin_lock_irq']
    >>> unwrap("<pre>&lt;IRQ&gt;\\r\\n net_rx_action+0x1a/0x40</pre>")
    ['<IRQ>', ' net_rx_action+0x1a/0x40']
    >>> unwrap("| Overhead  Symbol\\n|   31.98%  [k] xas_find")
    ['Overhead  Symbol', '  31.98%  [k] xas_find']
    >>> unwrap("| Overhead | Symbol |\\n|---:|---|\\n| 27.41% | [k] shrink_slab |")
    ['  Overhead  Symbol', '  27.41%  [k] shrink_slab']
    >>> unwrap("Overhead | Symbol\\n--- | ---\\n27.41% | [k] shrink_slab")
    ['  Overhead  Symbol', '  27.41%  [k] shrink_slab']

Quote markers: `>` (any nesting: `> > `, `>>`, `> >`) on every line; `|` only on a run of
lines that all carry it and where some line has text right after `| ` (a perf call graph's
rails never do: its names sit under the rails, its branches read `|--`). Box-drawing and
block characters (the perf TUI's scroll bar `▒`/`◆`, annotate's `│`, dialog frames) become
spaces, so columns stay where they were. Lines a mail client wrapped are joined back by
`paste.rewrap`.

A GitHub (GFM) Markdown table, which issue authors type when they retype a `perf top` screenshot
(`| Overhead | Shared Object | Symbol |`, then a delimiter row `|---:|---|---|`; the outer pipes are
optional), is a table, not quoting: its delimiter row goes and its cells become columns two spaces
apart, as the tool printed them. Only a header row followed by a delimiter row of as many cells
(every cell dashes, `:` for alignment) starts a table; a call graph's rails (`|          |`,
`|--12.5%--sym`) never do.
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
_TABLE_ROW = re.compile(r"(?<!\\)\|")
# unambiguous (each run of blanks ends at a required character): linear on long runs of spaces
_TABLE_DELIMITER = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+(?:\|[ \t]*)?$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]")   # perf top clears the screen
_BOX = re.compile("[\u2500-\u259f\u25c6\u25c7\u25cf]")   # box drawing, block elements, TUI markers


def unwrap(text: str) -> List[str]:
    """Lines of the paste with CRLF, HTML, quoting, fences, TUI glyphs and mail wrapping removed."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if _HTML_HINT.search(text):
        text = _unhtml(text)
    text = _BOX.sub(" ", text)
    raw = text.split("\n")
    lines = _strip_pipes(_untable([_QUOTE.sub("", line) for line in raw]))
    lines = [line.expandtabs(8) for line in lines if not _FENCE.match(line)]
    return [line.rstrip() for line in rejoin(lines)]


def _cells(line: str) -> List[str]:
    """The cells of a Markdown table row, outer pipes optional (`\\|` is a pipe inside a cell)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def _untable(lines: List[str]) -> List[str]:
    """Markdown tables as columns: the header and rows' cells two spaces apart, no delimiter row."""
    out: List[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if (index + 1 < len(lines) and "---" in lines[index + 1] and _TABLE_ROW.search(line)
                and _TABLE_DELIMITER.match(lines[index + 1])
                and len(_cells(line)) == len(_cells(lines[index + 1])) and any(_cells(line))):
            out.append("  " + "  ".join(_cells(line)))
            index += 2
            while index < len(lines) and lines[index].strip() and _TABLE_ROW.search(lines[index]):
                out.append("  " + "  ".join(_cells(lines[index])))
                index += 1
            continue
        out.append(line)
        index += 1
    return out


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
