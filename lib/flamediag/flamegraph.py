"""Folded stacks -> an interactive SVG flame graph (in the manner of flamegraph.pl).

    svg = render_svg([("swapper;do_idle;[softirq];net_rx_action", 30)], title="CPU",
                     highlights=[Highlight("nic-softirq", re.compile(r"net_rx_action|ixgbevf_poll"))])

Frames are merged the way flamegraph.pl does (sorted stacks, shared prefixes), frames
narrower than `minwidth` pixels are elided, kernel/user/JIT/context frames get distinct
palettes and frames matched by a highlight get its colour (legend at the top). Every
string that comes from the data is XML-escaped into text nodes; the only script is the
static template `templates/flamegraph/flamegraph.js`.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Pattern, Sequence, Tuple, Union

from .kernelnames import normalize
from .profile import Profile

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates" / "flamegraph"
FRAME_HEIGHT = 16
FONT_SIZE = 12
CHAR_WIDTH = 0.59 * FONT_SIZE
PAD = 10
HIGHLIGHT_COLORS = ("rgb(30,120,255)", "rgb(0,190,120)", "rgb(160,60,255)", "rgb(255,40,120)",
                    "rgb(0,200,220)", "rgb(120,90,40)", "rgb(90,90,90)", "rgb(200,200,0)")
SEARCH_COLOR = "rgb(230,0,230)"
KIND_SUFFIXES = {"_[k]": "kernel", "_[j]": "jit", "_[i]": "inlined", "_[w]": "waker"}
CONTEXT_FRAMES = frozenset({"[softirq]", "[hardirq]", "[nmi]"})
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Highlight:
    id: str
    pattern: Union[Pattern[str], frozenset, set]
    color: Optional[str] = None

    def matches(self, name: str) -> bool:
        if isinstance(self.pattern, (set, frozenset)):
            return name in self.pattern or normalize(name) in self.pattern
        return bool(self.pattern.fullmatch(name) or self.pattern.fullmatch(normalize(name)))


@dataclass
class _Node:
    name: str           # as folded (with any _[k] suffix)
    depth: int
    start: float
    end: float


# --- folded lines from a Profile --------------------------------------------------------------

_SUFFIX_OF_KIND = {"kernel": "_[k]", "jit": "_[j]"}


def folded_lines(profile: Profile, annotate: bool = True, context: bool = True) -> Iterator[Tuple[str, float]]:
    """(stack, weight) per record, comm first, with `_[k]`/`_[j]` suffixes and context markers.

    The diagnoser's SVG and `collapse` share this code path."""
    from .perfscript import mark_contexts_in_frames

    for record in profile:
        frames = mark_contexts_in_frames(list(record.frames)) if context else record.frames
        names = [record.comm] if record.comm else []
        for frame in frames:
            if frame.kind == "context" and not context:
                continue
            suffix = _SUFFIX_OF_KIND.get(frame.kind, "") if annotate else ""
            names.append(frame.name.replace(";", ":") + suffix)
        if names:
            yield ";".join(names), record.weight


# --- layout ---------------------------------------------------------------------------------------

def merge_stacks(stacks: Iterable[Tuple[str, float]]) -> Dict[str, float]:
    merged: Dict[str, float] = {}
    for stack, count in stacks:
        if count and count > 0:
            merged[stack] = merged.get(stack, 0) + count
    return merged


def flow(merged: Dict[str, float], min_time: float = 0.0) -> Tuple[List[_Node], float, int]:
    """flamegraph.pl's flow(): sorted stacks, each frame spans the samples sharing its prefix.
    Frames shorter than `min_time` are not kept, only counted: on 100 000 deep
    stacks that is most of them, and never building them keeps memory small."""
    nodes: List[_Node] = []
    open_frames: List[Tuple[str, float]] = []
    time = 0.0
    elided = 0
    for stack in sorted(merged):
        names = stack.split(";")
        common = 0
        while common < len(open_frames) and common < len(names) and open_frames[common][0] == names[common]:
            common += 1
        while len(open_frames) > common:
            name, start = open_frames.pop()
            if time - start >= min_time:
                nodes.append(_Node(name, len(open_frames) + 1, start, time))
            else:
                elided += 1
        for name in names[common:]:
            open_frames.append((name, time))
        time += merged[stack]
    while open_frames:
        name, start = open_frames.pop()
        if time - start >= min_time:
            nodes.append(_Node(name, len(open_frames) + 1, start, time))
        else:
            elided += 1
    return nodes, time, elided


def _min_time(total: float, width: int, minwidth: float) -> float:
    return minwidth * total / (width - 2 * PAD) if total > 0 else 0.0


def _prune(nodes: List[_Node], total: float, width: int, minwidth: float) -> Tuple[List[_Node], int]:
    """Drop frames narrower than minwidth pixels (their children are narrower still)."""
    if total <= 0:
        return [], 0
    min_time = _min_time(total, width, minwidth)
    kept = [n for n in nodes if n.end - n.start >= min_time]
    return kept, len(nodes) - len(kept)


# --- colours ----------------------------------------------------------------------------------------

def _hash(name: str) -> Tuple[float, float, float]:
    value = zlib.crc32(name.encode("utf-8", "replace"))
    return (value & 0xFF) / 255, ((value >> 8) & 0xFF) / 255, ((value >> 16) & 0xFF) / 255


def kind_of(name: str) -> Tuple[str, str]:
    """(display name, kind) from a folded frame name."""
    if name in CONTEXT_FRAMES:
        return name, "context"
    kind = KIND_SUFFIXES.get(name[-4:])
    if kind:
        return name[:-4], kind
    return name, "user"


def palette_color(name: str, kind: str) -> str:
    v1, v2, v3 = _hash(name)
    if kind == "kernel":          # orange
        r, g, b = 225 + 30 * v3, 130 + 45 * v1, 0 + 30 * v2
    elif kind == "jit":           # green
        r, g, b = 50 + 60 * v3, 170 + 60 * v1, 50 + 60 * v2
    elif kind == "inlined":       # aqua
        r, g, b = 50 + 60 * v3, 165 + 55 * v1, 165 + 55 * v2
    elif kind == "context":       # violet
        r, g, b = 150, 120, 220
    elif kind == "root":
        r, g, b = 200, 200, 200
    else:                         # user: red (kept apart from the kernel's orange)
        r, g, b = 200 + 55 * v3, 40 + 60 * v1, 40 + 50 * v2
    return f"rgb({int(r)},{int(g)},{int(b)})"


def assign_highlight_colors(highlights: Sequence[Highlight]) -> List[Highlight]:
    out = []
    for index, highlight in enumerate(highlights):
        color = highlight.color or HIGHLIGHT_COLORS[index % len(HIGHLIGHT_COLORS)]
        out.append(Highlight(highlight.id, highlight.pattern, _safe_color(color, index)))
    return out


def _safe_color(color: str, index: int) -> str:
    if re.fullmatch(r"#[0-9a-fA-F]{3,8}|rgb\(\d{1,3},\d{1,3},\d{1,3}\)|[a-zA-Z]{1,20}", color):
        return color
    return HIGHLIGHT_COLORS[index % len(HIGHLIGHT_COLORS)]


# --- SVG ----------------------------------------------------------------------------------------------

def escape(text: str) -> str:
    """XML text: entities for & < > " ', and characters XML 1.0 forbids replaced."""
    text = _XML_BAD.sub("\ufffd", text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def _label(name: str, width: float) -> str:
    chars = int((width - 6) // CHAR_WIDTH)
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."


def _format_count(count: float) -> str:
    return f"{int(count):,}" if float(count).is_integer() else f"{count:,.2f}"


def script_source() -> str:
    return (TEMPLATE_DIR / "flamegraph.js").read_text(encoding="utf-8")


STYLE = """
text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
#subtitle { text-anchor: middle; fill: rgb(80,80,80); }
g.f { cursor: pointer; }
g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
g.f text { pointer-events: none; }
.hide { display: none; }
.parent { opacity: 0.5; }
#unzoom, #search { cursor: pointer; }
#search.show { fill: rgb(230,0,230); }
"""


def render_svg(stacks: Iterable[Tuple[str, float]], *, title: str = "Flame Graph", subtitle: Optional[str] = None,
               highlights: Sequence[Highlight] = (), width: int = 1200, minwidth: float = 0.1,
               count_name: str = "samples") -> str:
    merged = merge_stacks(stacks)
    nodes, total, elided = flow(merged, _min_time(sum(merged.values()), width, minwidth))
    highlights = assign_highlight_colors(highlights)
    max_depth = max((n.depth for n in nodes), default=0)
    legend_rows = 1
    top = 60 + (20 if subtitle else 0) + 20 * legend_rows
    height = top + (max_depth + 1) * FRAME_HEIGHT + 40
    scale = (width - 2 * PAD) / total if total else 0
    out: List[str] = [
        '<?xml version="1.0" standalone="no"?>\n',
        f'<svg version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n',
        f"<style>{STYLE}</style>\n",
        "<script><![CDATA[\n" + script_source() + "]]></script>\n",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="rgb(248,248,248)"/>\n',
        f'<text id="title" x="{width / 2:.1f}" y="24">{escape(title)}</text>\n',
    ]
    y = 44
    if subtitle:
        out.append(f'<text id="subtitle" x="{width / 2:.1f}" y="{y}">{escape(subtitle)}</text>\n')
        y += 20
    out.append(_legend(highlights, y))
    out.append(f'<text id="unzoom" class="hide" x="{PAD}" y="24">Reset Zoom</text>\n')
    out.append(f'<text id="search" x="{width - PAD - 100}" y="24">Search</text>\n')
    out.append(f'<text id="matched" x="{width - PAD - 140}" y="{height - 12}"> </text>\n')
    out.append(f'<text id="details" x="{PAD}" y="{height - 12}"> </text>\n')
    base = height - 40
    root = _Node("all", 0, 0.0, total)
    for node in [root] + nodes if total else []:
        out.append(_frame(node, total, scale, base, highlights, count_name))
    out.append(f"<!-- frames: {len(nodes) + (1 if total else 0)}, elided: {elided} -->\n")
    out.append("</svg>\n")
    return "".join(out)


def _legend(highlights: Sequence[Highlight], y: int) -> str:
    items = [("kernel", palette_color("legend", "kernel")), ("user", palette_color("legend", "user")),
             ("JIT", palette_color("legend", "jit")), ("context", palette_color("legend", "context"))]
    items += [(h.id, h.color or "") for h in highlights]
    parts = ['<g id="legend">']
    x = PAD
    for label, color in items:
        parts.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{color}"/>'
                     f'<text x="{x + 16}" y="{y}">{escape(label)}</text>')
        x += 16 + int(len(label) * CHAR_WIDTH) + 18
    parts.append("</g>\n")
    return "".join(parts)


def _frame(node: _Node, total: float, scale: float, base: float, highlights: Sequence[Highlight],
           count_name: str) -> str:
    name, kind = kind_of(node.name) if node.depth else ("all", "root")
    color = palette_color(name, kind)
    for highlight in highlights:
        if kind != "context" and highlight.matches(name):
            color = highlight.color or color
            break
    x = PAD + node.start * scale
    w = (node.end - node.start) * scale
    y = base - (node.depth + 1) * FRAME_HEIGHT
    count = node.end - node.start
    pct = 100 * count / total if total else 0
    info = f"{name} ({_format_count(count)} {count_name}, {pct:.2f}%)"
    return (f'<g class="f"><title>{escape(info)}</title>'
            f'<rect x="{x:.2f}" y="{y:.1f}" width="{w:.2f}" height="{FRAME_HEIGHT - 1}" fill="{color}" rx="2" ry="2"/>'
            f'<text x="{x + 3:.2f}" y="{y + 11.5:.1f}">{escape(_label(name, w))}</text></g>\n')


def count_frames(svg: str) -> int:
    return svg.count('<g class="f">')
