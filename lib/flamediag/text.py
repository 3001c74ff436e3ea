"""Text rules every layer shares: how a share of samples is printed, and the characters never
emitted raw (to a terminal, into report.md, or accepted in a bundle member name).

    >>> pct(0.7698), pct(0.05), pct(0), pct_whole(0.05)
    ('77 %', '5.0 %', '0 %', '5 %')
    >>> strip_controls("ok\\x1b\\u202e!")
    'ok!'
    >>> escape_controls("bell\\x07 tab\\tend")
    'bell\\\\x07 tab\\tend'
"""
from __future__ import annotations

import re

# C0 controls but tab and newline; then DEL and C1 controls, zero-width characters and direction
# marks, line/paragraph separators, bidi embeddings/overrides/isolates (Trojan Source), invisible
# operators and the word joiner, and the byte-order mark.
_C0 = "\x00-\x08\x0b-\x1f"
_BEYOND_C0 = "\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
CONTROL_CHARS = _C0 + _BEYOND_C0
CONTROL = re.compile(f"[{CONTROL_CHARS}]")
_IN_JSON = re.compile(f"[{_BEYOND_C0}]")     # json.dumps escapes C0 itself
CONTROL_OR_LAYOUT = re.compile(f"[\t\n{CONTROL_CHARS}]")    # names: not even tab or newline
NOT_IN_XML = re.compile(f"[{CONTROL_CHARS}\ufffe\uffff]")     # SVG text: these, and XML's non-characters


def from_os(text: str) -> str:
    """A file name or argument as text to show: bytes that are not UTF-8 (kept by Python as
    surrogate escapes, which no UTF-8 writer accepts) become U+FFFD.

    >>> from_os("x\\udcff.folded") == "x\\ufffd.folded"
    True
    """
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def pct(fraction) -> str:
    """A fraction as a percentage: one decimal below 10 %, none above, and none for nothing at all."""
    fraction = float(fraction or 0)
    return f"{fraction * 100:.1f} %" if 0 < fraction < 0.1 else f"{fraction * 100:.0f} %"


def pct_whole(fraction) -> str:
    """A fraction as a whole percentage (check values and placeholders in playbook sentences)."""
    return f"{float(fraction or 0) * 100:.0f} %"


def strip_controls(text: str) -> str:
    """`text` without the characters of CONTROL (tab and newline stay)."""
    return CONTROL.sub("", text)


def escape_in_json(text: str) -> str:
    """JSON text with the CONTROL characters json.dumps leaves raw written as \\uXXXX escapes (they
    occur only inside strings, where the escape means the same character)."""
    return _IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def escape_controls(text: str) -> str:
    """`text` with each character of CONTROL shown escaped (`\\x1b`, `\\u202e`), never raw."""
    return CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)
