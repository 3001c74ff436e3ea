"""Markdown runbook text -> plain text for tickets and mail that do not render markdown.

No markup at all: code spans and emphasis lose their markers, links become "title (url)",
lists keep their numbers and bullets as text, and fenced commands are kept verbatim, line for
line as in the playbook (never wrapped: a wrapped command breaks when pasted). Prose is wrapped
at 100 columns. The markdown is parsed with markdown-it (CommonMark), not by hand.

    >>> print(markdown_to_text("Run `sysctl -w vm.x=0` **now**:\\n```sh\\necho 'a_b' > /x   # c\\n```"))
    Run sysctl -w vm.x=0 now:
    <BLANKLINE>
    echo 'a_b' > /x   # c
"""
from __future__ import annotations

import textwrap
from typing import List, Optional, Tuple

from markdown_it import MarkdownIt

WIDTH = 100
_PARSER = MarkdownIt("commonmark").enable("table")


def wrap(text: str, indent: str = "", first: Optional[str] = None, width: int = WIDTH) -> str:
    """Prose wrapped at `width`; words longer than a line (paths, URLs) are never broken."""
    first = indent if first is None else first
    return textwrap.fill(" ".join(str(text).split()), width=width, initial_indent=first,
                         subsequent_indent=indent, break_long_words=False, break_on_hyphens=False) or first.rstrip()


def _inline(token) -> str:
    out: List[str] = []
    hrefs: List[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "link_open":
            hrefs.append(str(child.attrs.get("href", "")))
            out.append("\0")
        elif child.type == "link_close":
            href = hrefs.pop() if hrefs else ""
            start = len(out) - 1 - out[::-1].index("\0")
            title = "".join(out[start + 1:])
            out[start:] = [title if not href or href == title else f"{title} ({href})"]
        elif child.type == "image":
            out.append(child.content)
    return "".join(out)


class _Writer:
    def __init__(self, width: int):
        self.width = width
        self.blocks: List[Tuple[str, bool]] = []    # (text, tight list item)
        self.lists: List[List[int]] = []      # per open list: [next number or -1 for bullets]
        self.pending = ""                     # a list marker waiting for its first block

    @property
    def indent(self) -> str:
        return " " * sum(self._marker_width(kind) for kind in self.lists)

    @staticmethod
    def _marker_width(kind: List[int]) -> int:
        return 2 if kind[0] < 0 else len(f"{kind[0]}. ")

    def _first_indent(self) -> str:
        if not self.pending:
            return self.indent
        outer = " " * sum(self._marker_width(kind) for kind in self.lists[:-1])
        marker, self.pending = self.pending, ""
        return outer + marker.ljust(self._marker_width(self.lists[-1]))

    def paragraph(self, text: str, tight: bool = False) -> None:
        self.blocks.append((wrap(text, self.indent, self._first_indent(), self.width), tight))

    def verbatim(self, content: str) -> None:
        first = self._first_indent()
        lines = content.rstrip("\n").split("\n")
        self.blocks.append(("\n".join((first if i == 0 else self.indent) + line if line else ""
                                      for i, line in enumerate(lines)), False))

    def open_list(self, ordered: bool, start: int) -> None:
        self.lists.append([start if ordered else -1])

    def open_item(self) -> None:
        kind = self.lists[-1]
        self.pending = "-" if kind[0] < 0 else f"{kind[0]}."

    def close_item(self) -> None:
        if self.lists and self.lists[-1][0] >= 0:
            self.lists[-1][0] += 1

    def text(self) -> str:
        out: List[str] = []
        previous_tight = False
        for block, tight in self.blocks:
            if not block.strip():
                continue
            if out:
                out.append("\n" if tight and previous_tight else "\n\n")
            out.append(block.rstrip())
            previous_tight = tight
        return "".join(out)


def markdown_to_text(markdown: str, width: int = WIDTH) -> str:
    writer = _Writer(width)
    tokens = _PARSER.parse(markdown)
    row: List[str] = []
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "inline" and tokens[index - 1].type in ("paragraph_open", "heading_open"):
            writer.paragraph(_inline(token), tight=tokens[index - 1].hidden)
        elif kind in ("fence", "code_block"):
            writer.verbatim(token.content)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            writer.open_list(kind == "ordered_list_open", int(token.attrs.get("start", 1) or 1))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            writer.lists.pop()
        elif kind == "list_item_open":
            writer.open_item()
        elif kind == "list_item_close":
            writer.close_item()
        elif kind == "inline":                                    # a table cell
            row.append(_inline(token))
        elif kind == "tr_close":
            writer.paragraph(" | ".join(row))
            row = []
        elif kind == "html_block":
            writer.verbatim(token.content)
    return writer.text()
