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

Quote markers: `>` (any nesting: `> > `, `>>`, `> >`, `| >`) on every line; `|` only on a run
of lines that all carry it and where some line holds what a perf call graph never has right
after a rail: text (its names sit under the rails, its branches read `|--`), a row starting
with a number, a tool's header. Unicode spaces (no-break, figure, ideographic) are spaces and
zero-width marks are dropped; `dedent_embedded` moves output indented in a mail or a commit
message back to column 0. Box-drawing and
block characters (the perf TUI's scroll bar `▒`/`◆`, annotate's `│`, dialog frames) become
spaces, so columns stay where they were. Lines a mail client wrapped are joined back by
`paste.rewrap`.
"""
from __future__ import annotations

import html
import textwrap
import re
from typing import Iterator, List, Optional, Tuple

from .rewrap import looks_cut, rejoin, rejoin_words

_HTML_HINT = re.compile(r"<br\s*/?>|</?(?:pre|code|p|div|span|tt|table|tr|td|th)\b|&(?:lt|gt|amp|nbsp|quot|#\d+);", re.I)
_BREAK_TAG = re.compile(r"<br\s*/?>|</?(?:p|div)(?:\s[^<>]*)?>", re.I)
# Only formatting tags: `<IRQ>`, `<EOI>`, `<TASK>` are kernel trace markers and must survive.
_FORMAT_TAG = re.compile(r"</?(?:pre|code|span|tt|b|i|em|strong|font|blockquote)(?:\s[^<>]*)?>", re.I)
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>[ \t]?)+")
# A quote marker's margin is up to three spaces; a tab is a column of 8, the indentation of the
# output itself (a call graph's rails saved with tabs, `\t\t|`), never a margin (rule AK2).
_PIPE = re.compile(r"^ {0,3}\|(?: |$)")
_MARKER = re.compile(r" {0,3}[|>](?: |$)")
_MARKERS_ONLY = re.compile(r"^(?: {0,3}[|>](?: |$))+$")
# What a call graph never holds after a rail: text right after `| ` (another quote marker among it),
# a row that starts with a number (a column percentage or count), a perf TUI row folded open or shut
# (`-   19.47%  comm`, `+  3.1% frame`: the fold marker, blanks, a percentage; a graph's own branch is
# `--3.1%--`, rule BD1), a tool's header or rule (one run of dashes, or a table's column rule of
# several: `--------------- --------  ------` under perf trace -s or perf sched timehist, rule BM3),
# a frame offset. Rule BQ2: perf lock report's header (2.6.33-5.x, `Name  acquired  contended ...`),
# whose Name column is right-aligned, so that the header and every row start with blanks as a graph's do.
_QUOTED_TEXT = re.compile(r"^(?:[^\s|-]|\s*[-+]?\d+(?:[.,]\d+)*%?\s|\s*[-+]\s+\d+(?:[.,]\d+)*%\s"
                          r"|\s*(?:#|PerfTop:|KernelTop:|Samples:|Children\s|Overhead\s|Name\s+acquired\s+contended\s"
                          r"|-{5,}(?: +-{2,})*\s*$)"
                          r"|.*\+0x[0-9a-f]+/0x)")
_TABLE_ROW = re.compile(r"(?<!\\)\|")
# unambiguous (each run of blanks ends at a required character): linear on long runs of spaces
# A delimiter cell is one dash or more (GFM's grammar; GitHub writes `-- | --` for a table pasted from
# a spreadsheet or a web page, rule AQ1), with optional alignment colons.
_TABLE_DELIMITER = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+(?:\|[ \t]*)?$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
# An HTML table exported by a wiki or a ticket system (Confluence, ServiceNow): a row per `<tr>`, its
# cells two spaces apart, as `_untable` lays out a Markdown table (rule AK1).
_HTML_ROW = re.compile(r"</?tr(?:\s[^<>]*)?>", re.I)
_HTML_CELL = re.compile(r"<t[dh](?:\s[^<>]*)?>", re.I)
_HTML_TABLE_TAG = re.compile(r"</t[dh]>|</?(?:table|tbody|thead|tfoot|colgroup|col|caption)(?:\s[^<>]*)?/?>", re.I)
# Jira wiki markup around pasted output: `{color:red}...{color}` on a row, `{code:java}`, `{noformat}`,
# `{quote}`, `{panel:title=x}` (rule AK1); a Jira table's header row separates its cells with `||`.
_JIRA_MACRO = re.compile(r"\{(?:color|code|noformat|quote|panel)(?::[^{}\n]*)?\}")
_JIRA_HEADER = re.compile(r"^\s*\|\|.*\|\|\s*$")
# A chat log's line prefix: IRC and Matrix bridges (`[14:02:19] <nick> `, `14:02 <@nick> `); the kernel's
# own angle-bracket markers never follow a clock time at the start of a line (rule AK2).
_CHAT_PREFIX = re.compile(r"^\[?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?\]?[ \t]+<[@+%&~]?(?!(?:IRQ|EOI|NMI|TASK|EOE)>)[^\s<>]{1,32}>(?: |$)")
MIN_CHAT_LINES = 3
# A line-number gutter (`cat -n`, `nl`, a pastebin's numbered view `12. `, `bat`'s `  12 │ `): a run of
# lines each starting with the next integer (rule AK2). `/proc/interrupts` rows (`0:`) are not one.
_NUMBERED = re.compile(r"^( *)(\d{1,6})(?:\t|\.(?= |$)| |$)")
MIN_NUMBERED = 5
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]")   # perf top clears the screen
_BOX = re.compile("[\u2500-\u259f\u25c6\u25c7\u25cf]")   # box drawing, block elements, TUI markers
# Web pages and word processors pad columns with no-break and fixed-width spaces, and leave
# zero-width marks behind: columns are read as if they were plain spaces.
_WIDE_SPACE = re.compile("[\u00a0\u2000-\u200a\u2007\u202f\u205f\u3000]")
_NO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")


def unwrap(text: str) -> List[str]:
    """Lines of the paste with CRLF, HTML, quoting, fences, TUI glyphs and mail wrapping removed."""
    return [line.rstrip() for line in rejoin(_unquote(text))]


def layouts(text: str) -> Iterator[Tuple[str, List[str]]]:
    """The ways the paste may have looked before the ticket damaged it, likeliest first, named:
    `as pasted` (what `unwrap` sees); `dedented`, output indented in a mail or commit message
    (quoting and all: `git log` indents a quoted report too) moved back to column 0, and the
    quote markers that brings to the left edge removed (a mail quoted in a commit message);
    `word-joined`, words a mail client wrapped joined back, then dedented (instead of a
    fixed-width cut: a padded table has many lines exactly as wide as the widest, like a cut
    paste); `dedented twice`, a post indented as a whole (prose and code blocks) whose code blocks
    were indented within it. `paste.read_paste` diagnoses the one its readers understand best.

    >>> post = ["Profile:", "", "  A few samples:", "  ", "      app 12 [003] 1.000: cycles:",
    ...         "      \\tffffffff81 shrink_node+0x1 ([kernel.kallsyms])", "  ", "Signed-off-by: A"]
    >>> dict(layouts("\\n".join(post)))["dedented twice"][4:6]
    ['app 12 [003] 1.000: cycles:', '  ffffffff81 shrink_node+0x1 ([kernel.kallsyms])']
    """
    plain = _unquote(text)
    first = [line.rstrip() for line in rejoin(plain)]
    yield "as pasted", first
    flush = textwrap.dedent(text)
    dedented = unwrap("\n".join(dedent_embedded(first if flush == text else unwrap(flush))))
    yield "dedented", dedented
    soft = [line.rstrip() for line in rejoin(plain, hard_cut=False)] if looks_cut(plain) else first
    yield "word-joined", dedent_embedded(rejoin_words(soft))
    # a commit message or a quoting reply indents a whole post, its prose and its code blocks alike:
    # the post's prose comes back to column 0 first, then its own indented blocks (rule AW2)
    nested = dedent_embedded(dedented)
    if nested != dedented:
        yield "dedented twice", nested


def _unquote(text: str) -> List[str]:
    """The paste's lines with CRLF, HTML, quoting, fences and TUI glyphs removed."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if _HTML_HINT.search(text):
        text = _unhtml(text)
    text = _NO_WIDTH.sub("", _WIDE_SPACE.sub(" ", _BOX.sub(" ", text)))
    if "{" in text:
        text = _JIRA_MACRO.sub("", text)
    raw = _unchat(text.split("\n"))
    lines = first = [_QUOTE.sub("", line) for line in raw]
    for _level in range(MAX_PIPE_LEVELS):
        # Rule BH2: a reply that quotes with `| ` a message which itself quoted with `> ` and
        # `| ` (`| > | row`): the attribution lines of each level carry fewer markers than the
        # rows, so one pass strips the outer level only; the rows' inner `| ` is the next run.
        piped = _strip_pipes(lines)
        if piped == lines:
            break
        lines = [_QUOTE.sub("", new) if new != old else new for new, old in zip(piped, lines)]
    lines = _undouble([new if new == old or not _MARKERS_ONLY.match(new) else "" for new, old in zip(lines, first)])
    lines = [_QUOTE.sub("", line) for line in _untable(_unnumber(lines))]
    return [line.expandtabs(8) for line in lines if not _FENCE.match(line)]


def _undouble(lines: List[str]) -> List[str]:
    """A double-spaced paste (`\r\r\n` line ends, a web page's one paragraph per line): no two
    lines of text touch. Of each run of blank lines, one in two was added.

    >>> _undouble(["a", "", "b", "", "", "", "c", "", "d", ""])
    ['a', 'b', '', 'c', 'd']
    """
    text = [i for i, line in enumerate(lines) if line.strip()]
    if len(text) < MIN_DOUBLED or any(b - a == 1 for a, b in zip(text, text[1:])):
        return lines
    out: List[str] = []
    blanks = 0
    for line in lines:
        if not line.strip():
            blanks += 1
            continue
        out.extend([""] * ((blanks - 1) // 2 if out else blanks // 2))
        out.append(line)
        blanks = 0
    return out


MIN_DOUBLED = 4            # fewer lines of text may be prose paragraphs


def dedent_embedded(lines: List[str]) -> List[str]:
    """The lines with each embedded block moved back to column 0: a commit message, a mail or a
    wiki page indents pasted output as a whole (`git log` by 4 spaces, authors by 2 or a tab) and
    sets it apart with blank lines, while every tool's grammar counts columns from the left edge.
    A block is a run of indented lines with a blank line (or the paste's edge) on each side; it
    loses the indentation of its least indented line. Indented lines right under a line at
    column 0 are that line's own (a caller under its function, a frame under `PID:`).

    >>> dedent_embedded(["Profile:", "", "    # Overhead  Symbol", "      38.41%  [k] _spin_lock", "", "Fixes: x"])
    ['Profile:', '', '# Overhead  Symbol', '  38.41%  [k] _spin_lock', '', 'Fixes: x']
    >>> dedent_embedded(["PID: 1  TASK: ffff8", " #0 [ffffc9] __schedule at ffffffff81"])
    ['PID: 1  TASK: ffff8', ' #0 [ffffc9] __schedule at ffffffff81']
    """
    out = list(lines)
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and (not lines[end].strip() or lines[end][0] == " "):
            end += 1
        apart = (start == 0 or not lines[start].strip()) and (end == len(lines) or not lines[end - 1].strip())
        if apart:
            depth = min((len(line) - len(line.lstrip(" ")) for line in lines[start:end] if line.strip()), default=0)
            out[start:end] = [line[depth:] for line in lines[start:end]]
        start = end + 1
    return out


def _cells(line: str) -> List[str]:
    """The cells of a Markdown table row, outer pipes optional (`\\|` is a pipe inside a cell)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [_uncode(cell.strip().replace("\\|", "|")) for cell in re.split(r"(?<!\\)\|", inner)]


# A cell that is one Markdown code span (`` `futex_wake` ``, ``` ``x`` ```): the backquotes are markup
# (rule BM1), as a README writes symbols and objects in a table
_CODE_CELL = re.compile(r"^(?P<ticks>`+)\s?(?P<text>[^`]+?)\s?(?P=ticks)$")


def _uncode(cell: str) -> str:
    """The text of a cell that is one code span, else the cell.

    >>> _uncode("`native_queued_spin_lock_slowpath`"), _uncode("``[kernel.kallsyms]``"), _uncode("a `b` c")
    ('native_queued_spin_lock_slowpath', '[kernel.kallsyms]', 'a `b` c')
    """
    found = _CODE_CELL.match(cell)
    return found["text"] if found else cell


def _unchat(lines: List[str]) -> List[str]:
    """The lines without a chat log's time-and-nick prefix, where at least MIN_CHAT_LINES carry one.

    >>> _unchat(["[14:02:19] <mh>    PerfTop:   40122 irqs/sec", "[14:02:19] <mh>     38.71%  [kernel]  [k] x",
    ...          "[14:02:40] <jk> that is the lock", "[ 8123.5] <IRQ>"])
    ['   PerfTop:   40122 irqs/sec', '    38.71%  [kernel]  [k] x', 'that is the lock', '[ 8123.5] <IRQ>']
    """
    if sum(1 for line in lines if _CHAT_PREFIX.match(line)) < MIN_CHAT_LINES:
        return lines
    return [_CHAT_PREFIX.sub("", line) for line in lines]


def _unnumber(lines: List[str]) -> List[str]:
    """The lines without a line-number gutter: each run of MIN_NUMBERED lines or more numbered
    n, n+1, n+2 ... loses the number, its separator (a tab, or `.`) and the gutter's padding, the
    column where the run's least indented text starts (a tab: everything up to it).

    >>> _unnumber(["     1\\t# Overhead  Symbol", "     2\\t    14.82%  [k] a", "     3\\t     9.71%  [k] b",
    ...            "     4\\t", "     5\\t     8.04%  [k] c"])
    ['# Overhead  Symbol', '    14.82%  [k] a', '     9.71%  [k] b', '', '     8.04%  [k] c']
    >>> _unnumber(["9.  Samples: 98K", "10.    3.22%  kw  [k] a", "11.    2.71%  kw  [k] b", "12.    1.95%  gs  [.] c",
    ...            "13.    1.40%  kw  [k] d"])
    ['Samples: 98K', '   3.22%  kw  [k] a', '   2.71%  kw  [k] b', '   1.95%  gs  [.] c', '   1.40%  kw  [k] d']
    >>> _unnumber(["  1   # Overhead  Symbol", "  2       14.82%  [kernel.kallsyms]", "[k] a", "  3        9.71%  [k] b",
    ...            "  4        8.04%  [k] c", "  5        6.55%  [k] d"])
    ['# Overhead  Symbol', '    14.82%  [kernel.kallsyms]', '[k] a', '     9.71%  [k] b', '     8.04%  [k] c', '     6.55%  [k] d']
    """
    out = list(lines)
    index = 0
    while index < len(lines):
        first = _NUMBERED.match(lines[index])
        numbered = [index]
        if first:
            while True:
                following = _next_numbered(lines, numbered[-1], int(first[2]) + len(numbered))
                if following is None:
                    break
                numbered.append(following)
        if not first or len(numbered) < MIN_NUMBERED or int(first[2]) == 0 or _COUNTED_HEADER.match(_above(lines, index)):
            index = numbered[-1] + 1   # the rest of a run that is no gutter is none either
            continue
        heads = {i: _NUMBERED.match(lines[i]) for i in numbered}
        starts = [len(lines[i]) - len(lines[i][head.end():].lstrip(" ")) for i, head in heads.items()
                  if "\t" not in head[0] and lines[i][head.end():].strip()]
        column = min(starts, default=0)
        for i, head in heads.items():
            out[i] = lines[i][head.end():] if "\t" in head[0] else lines[i][max(column, head.end()):]
        index = numbered[-1] + 1
    return out


MAX_NUMBERED_TAILS = 2     # a numbered line a mail client wrapped after it was numbered
# Tables whose first column counts up by itself: numbered from 0 (`lscpu -e`, per-CPU rows), or
# under a header naming it (`ps -e` sorted by PID, `PID  TTY ...`): not a gutter.
_COUNTED_HEADER = re.compile(r"^\s*#?\s*(?:PID|TID|CPU|NODE|IRQ|NR|No\.?|Index)\b", re.I)


def _above(lines: List[str], index: int) -> str:
    """The nearest line with text above line `index`, or ''."""
    return next((line for line in reversed(lines[:index]) if line.strip()), "")


def _next_numbered(lines: List[str], after: int, number: int) -> Optional[int]:
    """The index of the line numbered `number` right after line `after`, past the tails a mail
    client wrapped at column 0 (text, no number), or None."""
    for index in range(after + 1, min(after + 2 + MAX_NUMBERED_TAILS, len(lines))):
        head = _NUMBERED.match(lines[index])
        if head:
            return index if int(head[2]) == number else None
        if not lines[index].strip() or lines[index][0] in " \t":
            return None
    return None


def _untable(lines: List[str]) -> List[str]:
    """Markdown tables as columns: the header and rows' cells two spaces apart, no delimiter row.
    A Jira table (`||Overhead||Symbol||` header, `|12.3%|[k] x|` rows) the same way.

    >>> _untable(["||Overhead||Command||Symbol||", "|22.71%|kswapd0|[k] shrink_slab|", "", "text"])
    ['  Overhead  Command  Symbol', '  22.71%  kswapd0  [k] shrink_slab', '', 'text']

    A delimiter cell may be a single dash or two, as GitHub writes a pasted spreadsheet's table
    (rule AQ1); a header whose cells do not match the delimiter's in number is no table:

    >>> _untable(["Overhead | Symbol", "-- | --", "27.44% | smp_call_function_many"])
    ['  Overhead  Symbol', '  27.44%  smp_call_function_many']
    >>> _untable(["| a | b |", "|:-|-:|", "| 1 | 2 |"])
    ['  a  b', '  1  2']
    >>> _untable(["a | b | c", "- | -", "1 | 2 | 3"])
    ['a | b | c', '- | -', '1 | 2 | 3']
    """
    out: List[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if _JIRA_HEADER.match(line):
            out.append("  " + "  ".join(cell.strip() for cell in line.strip()[2:-2].split("||")))
            index += 1
            while index < len(lines) and lines[index].strip() and _TABLE_ROW.search(lines[index]):
                out.append("  " + "  ".join(_cells(lines[index])))
                index += 1
            continue
        if (index + 1 < len(lines) and "-" in lines[index + 1] and _TABLE_ROW.search(line)
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
    carry one and hold text: as many markers as every line of the run has. A few lines at column
    0 between two quoted lines are tails the mail client wrapped after quoting: they stay in the run."""
    out = list(lines)
    index = 0
    while index < len(lines):
        if not _PIPE.match(lines[index]):
            index += 1
            continue
        end = index
        while end < len(lines) and (_PIPE.match(lines[end]) or _quoted_tail(lines, end)):
            end += 1
        quoted = [i for i in range(index, end) if _PIPE.match(lines[i])]
        run = {i: _markers(lines[i]) for i in quoted}
        depth = min((len(found) for found, rest in run.values() if rest.strip()), default=1)
        outer_cut = ("".join(found[1:]) + rest for found, rest in run.values() if rest.strip())
        if len(quoted) >= 2 and any(_QUOTED_TEXT.match(line) for line in outer_cut):
            for i, (found, rest) in run.items():
                # an empty line of an inner level keeps its inner markers: the next level's run
                # goes on through it (rule BH2); `_unquote` blanks what is left of it at the end
                out[i] = "".join(found[depth:]) + rest if rest.strip() or len(found) > depth else rest
        index = end
    return out


MAX_PIPE_LEVELS = 3        # `| ` levels, each with its own attribution lines, undone one at a time
MAX_QUOTED_TAILS = 4       # a row of a wide table wraps into a few lines at 72 columns


def _quoted_tail(lines: List[str], index: int) -> bool:
    """Whether the line is one of a few lines at column 0 that a quoted line follows."""
    for following in lines[index:index + MAX_QUOTED_TAILS + 1]:
        if _PIPE.match(following):
            return True
        if not following.strip() or following[0] in " \t":
            return False
    return False


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
    text = _HTML_TABLE_TAG.sub("", _HTML_CELL.sub("  ", _HTML_ROW.sub("\n", text)))
    text = _BREAK_TAG.sub("\n", text)
    text = _FORMAT_TAG.sub("", text)
    return html.unescape(text).replace("\u00a0", " ")
