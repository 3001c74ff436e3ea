"""Undo what tickets, chat and mail do to pasted tool output, before any reader sees it.

    >>> unwrap("> ```\\n> -  33.01%  java  [k] _spin_lock_irq<br>\\n> ```")
    ['-  33.01%  java  [k] _spin_lock_irq']
    >>> unwrap("<pre>&lt;IRQ&gt;\\r\\n net_rx_action+0x1a/0x40</pre>")
    ['<IRQ>', ' net_rx_action+0x1a/0x40']
"""
from __future__ import annotations

import html
import re
from typing import List

_HTML_HINT = re.compile(r"<br\s*/?>|</?(?:pre|code|p|div|span|tt)\b|&(?:lt|gt|amp|nbsp|quot|#\d+);", re.I)
_BREAK_TAG = re.compile(r"<br\s*/?>|</?(?:p|div)(?:\s[^<>]*)?>", re.I)
# Only formatting tags: `<IRQ>`, `<EOI>`, `<TASK>` are kernel trace markers and must survive.
_FORMAT_TAG = re.compile(r"</?(?:pre|code|span|tt|b|i|em|strong|font|blockquote)(?:\s[^<>]*)?>", re.I)
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>[ \t]?)+")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")   # perf top clears the screen between snapshots


def unwrap(text: str) -> List[str]:
    """Lines of the paste with CRLF, HTML, `> ` quoting and markdown fences removed."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if _HTML_HINT.search(text):
        text = _unhtml(text)
    lines = [_QUOTE.sub("", line).expandtabs(8) for line in text.split("\n")]
    return [line.rstrip() for line in lines if not _FENCE.match(line)]


def _unhtml(text: str) -> str:
    # A <br> at the end of a source line would double the line break.
    text = re.sub(r"(?:<br\s*/?>)[ \t]*\n", "\n", text, flags=re.I)
    text = _BREAK_TAG.sub("\n", text)
    text = _FORMAT_TAG.sub("", text)
    return html.unescape(text).replace("\u00a0", " ")
