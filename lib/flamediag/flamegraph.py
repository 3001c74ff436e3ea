"""Folded stacks -> an interactive SVG flame graph (in the manner of flamegraph.pl).

    svg = render_svg([("swapper;do_idle;[softirq];net_rx_action", 30)], title="CPU",
                     highlights=[Highlight("nic-softirq", re.compile(r"net_rx_action|ixgbevf_poll"))])

Frames are merged the way flamegraph.pl does (sorted stacks, shared prefixes), frames
narrower than `minwidth` pixels are elided, kernel/user/JIT/context frames get distinct
palettes and frames matched by a highlight get its colour and an outline (legend at the top).
Before layout, runs of frames without a symbol (`[unknown]`, address 0) merge into one, and
thin towers (deeper than the depth that holds 99 % of the samples, and holding less than 1 %)
are cut in the middle, so the graph starts in the first screen. Idle stacks, when given apart,
are laid out after the busy ones and hidden until the reader asks for them: the default view's
percentages are of busy samples, as in the report. Every string that comes from the data is
XML-escaped into text nodes; the only script is the static template
`templates/flamegraph/flamegraph.js`.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Pattern, Sequence, Set, Tuple, Union

from .contexts import MARKER_CONTEXTS, mark_contexts_in_frames
from .kernelnames import normalize
from .profile import Profile, is_idle
from .text import NOT_IN_XML

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates" / "flamegraph"
FRAME_HEIGHT = 16
FONT_SIZE = 12
PAD = 10
SEARCH_COLOR = "rgb(230,0,230)"
KIND_SUFFIXES = {"_[k]": "kernel", "_[j]": "jit", "_[i]": "inlined", "_[w]": "waker"}
CONTEXT_FRAMES = frozenset(MARKER_CONTEXTS)

# Default palette ("java" in flamegraph.pl's terms): per kind, the (low, high) range of each of
# R, G, B; a frame's hash picks the point in the box.
PALETTE_BOXES = {
    "kernel": ((225, 255), (130, 175), (0, 30)),      # orange
    "user": ((200, 255), (40, 100), (40, 90)),        # red
    "jit": ((50, 110), (170, 230), (50, 110)),        # green
    "inlined": ((50, 110), (165, 220), (165, 220)),   # aqua
    "context": ((150, 150), (120, 120), (220, 220)),  # violet
    "root": ((200, 200), (200, 200), (200, 200)),
}
# flamegraph.pl's single-hue palettes for --colors (R, G, B as base + span x hash value index)
PL_PALETTES = {
    "hot": ((205, 50, 2), (0, 230, 0), (0, 55, 1)),
    "mem": ((0, 0, 0), (190, 50, 1), (0, 210, 0)),
    "io": ((80, 60, 0), (80, 60, 0), (190, 55, 1)),
    "red": ((200, 55, 0), (50, 80, 0), (50, 80, 0)),
    "green": ((50, 60, 0), (200, 55, 0), (50, 60, 0)),
    "blue": ((80, 60, 0), (80, 60, 0), (205, 50, 0)),
    "yellow": ((175, 55, 0), (175, 55, 0), (50, 20, 0)),
    "purple": ((190, 65, 0), (80, 60, 0), (190, 65, 0)),
    "aqua": ((50, 60, 0), (165, 55, 0), (165, 55, 0)),
    "orange": ((190, 65, 0), (90, 65, 0), (0, 0, 0)),
}
COLOR_SCHEMES = ("java",) + tuple(PL_PALETTES)
# Highlight colours: each at least MIN_DISTANCE (RGB) from every box of the default palette and
# from the search magenta, so a finding never looks like ordinary kernel or user frames.
HIGHLIGHT_COLORS = ("rgb(20,70,230)", "rgb(255,240,0)", "rgb(0,100,60)", "rgb(90,0,160)",
                    "rgb(0,215,255)", "rgb(110,60,0)", "rgb(60,60,60)", "rgb(255,160,255)")
MIN_DISTANCE = 60
UNKNOWN_FRAME = re.compile(r"(?:\[unknown\]|0x0*|0+)(?:_\[[kjiw]\])?")
MERGED_UNKNOWN = "[unknown…]"
ELIDED = "[… frames cut …]"
KEEP_LEAF_FRAMES = 8
THIN_TOWER = 0.01            # a tower holding less than this share of the samples is thin
DEEP_QUANTILE = 0.99         # ... and deeper than the depth this share of the samples reaches
MIN_CAP = 40                 # never cut stacks shorter than this


@dataclass(frozen=True)
class Highlight:
    id: str
    pattern: Union[Pattern[str], frozenset, set]
    color: Optional[str] = None
    faded: bool = False          # a low-confidence finding: drawn paler, dashed outline

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
    idle: bool = False


@dataclass
class Options:
    """flamegraph.pl's layout flags, where it has them."""

    width: int = 1200
    minwidth: float = 0.1
    frame_height: int = FRAME_HEIGHT       # --height
    font_size: float = FONT_SIZE           # --fontsize
    colors: str = "java"                   # --colors
    inverted: bool = False                 # --inverted: icicle graph, root at the top
    reverse: bool = False                  # --reverse: stacks reversed (leaf first)
    notes: Optional[str] = None            # --notes: a comment in the SVG
    count_name: str = "samples"
    merge_unknown: bool = True
    cap_towers: bool = True
    extra_classes: Set[str] = field(default_factory=set)

    @property
    def char_width(self) -> float:
        return 0.59 * self.font_size


# --- folded lines from a Profile --------------------------------------------------------------

_SUFFIX_OF_KIND = {"kernel": "_[k]", "jit": "_[j]"}


def folded_name(name: str) -> str:
    """A name as one folded frame: `;` would split it into two, so it becomes `:`."""
    return name.replace(";", ":")


def folded_lines(profile: Profile, annotate: bool = True, context: bool = True,
                 idle: Optional[bool] = None) -> Iterator[Tuple[str, float]]:
    """(stack, weight) per record, comm first, with `_[k]`/`_[j]` suffixes and context markers.
    `idle` True/False keeps only the idle/busy records (None: all).

    The diagnoser's SVG and `collapse` share this code path."""

    for record in profile:
        if idle is not None and is_idle(record) != idle:
            continue
        frames = mark_contexts_in_frames(list(record.frames)) if context else record.frames
        names = [folded_name(record.comm)] if record.comm else []
        for frame in frames:
            if frame.kind == "context" and not context:
                continue
            suffix = _SUFFIX_OF_KIND.get(frame.kind, "") if annotate else ""
            names.append(folded_name(frame.name) + suffix)
        if names:
            yield ";".join(names), record.weight


# --- stack preparation ------------------------------------------------------------------------------

def merge_stacks(stacks: Iterable[Tuple[str, float]]) -> Dict[str, float]:
    merged: Dict[str, float] = {}
    for stack, count in stacks:
        if count and count > 0 and math.isfinite(count):
            merged[stack] = merged.get(stack, 0) + count
    return merged


def merge_unknown_runs(names: List[str]) -> List[str]:
    """Two or more frames in a row without a symbol become one `[unknown…]` frame (kernel or user,
    as the run was).

    >>> merge_unknown_runs(["python", "[unknown]", "[unknown]", "0x0", "main", "[unknown]"])
    ['python', '[unknown…]', 'main', '[unknown]']
    >>> merge_unknown_runs(["a", "[unknown]_[k]", "[unknown]_[k]"])
    ['a', '[unknown…]_[k]']
    """
    out: List[str] = []
    run: List[str] = []
    for name in names + [""]:
        if name and UNKNOWN_FRAME.fullmatch(name) and (not run or _suffix(run[-1]) == _suffix(name)):
            run.append(name)
            continue
        if run:
            out.append(MERGED_UNKNOWN + _suffix(run[0]) if len(run) > 1 else run[0])
            run = []
            if name and UNKNOWN_FRAME.fullmatch(name):
                run.append(name)
                continue
        if name:
            out.append(name)
    return out


def _suffix(name: str) -> str:
    return name[-4:] if name[-4:] in KIND_SUFFIXES else ""


def _depth_cap(depths: Dict[str, int], weights: Dict[str, float]) -> int:
    """The depth 99 % of the samples reach (at least MIN_CAP): deeper towers are thin."""
    total = sum(weights.values())
    if not total:
        return MIN_CAP
    by_depth: Dict[int, float] = {}
    for stack, depth in depths.items():
        by_depth[depth] = by_depth.get(depth, 0.0) + weights[stack]
    seen = 0.0
    for depth in sorted(by_depth):
        seen += by_depth[depth]
        if seen >= DEEP_QUANTILE * total:
            return max(MIN_CAP, depth)
    return MIN_CAP


def cut_tower(names: List[str], cap: int) -> List[str]:
    """Keep the root side and the last KEEP_LEAF_FRAMES frames; one marker frame in between."""
    if len(names) <= cap:
        return names
    head = cap - KEEP_LEAF_FRAMES - 1
    return names[:head] + [ELIDED] + names[-KEEP_LEAF_FRAMES:]


_UNKNOWN_RUN = re.compile(r"(?:^|;)(?:\[unknown\]|0x0*|0+)(?:_\[[kjiw]\])?;(?:\[unknown\]|0x0*|0+)(?:_\[[kjiw]\])?(?:;|$)")


def prepare(stacks: Dict[str, float], options: Options) -> Dict[str, float]:
    """Reverse, merge unknown runs and cut thin towers; equal results are summed. Stacks that
    need none of it are passed through as they are (no split: 100 000 stacks stay cheap)."""
    if options.reverse:
        stacks = merge_stacks((";".join(stack.split(";")[::-1]), count) for stack, count in stacks.items())
    if options.merge_unknown:
        merged = {stack: ";".join(merge_unknown_runs(stack.split(";"))) for stack in stacks
                  if ("[unknown]" in stack or ";0" in stack) and _UNKNOWN_RUN.search(stack)}
        if merged:
            stacks = merge_stacks((merged.get(stack, stack), count) for stack, count in stacks.items())
    if options.cap_towers and stacks:
        depths = {stack: stack.count(";") + 1 for stack in stacks}
        cap = _depth_cap(depths, stacks)
        deep = [stack for stack, depth in depths.items() if depth > cap]
        if deep and sum(stacks[s] for s in deep) < THIN_TOWER * sum(stacks.values()):
            cut = {stack: ";".join(cut_tower(stack.split(";"), cap)) for stack in deep}
            stacks = merge_stacks((cut.get(stack, stack), count) for stack, count in stacks.items())
    return stacks


# --- layout ---------------------------------------------------------------------------------------

def flow(merged: Dict[str, float], min_time: float = 0.0, start: float = 0.0, idle: bool = False
         ) -> Tuple[List[_Node], float, int]:
    """flamegraph.pl's flow(): sorted stacks, each frame spans the samples sharing its prefix,
    from `start` on (idle stacks are laid out after the busy ones, their nodes marked idle).
    Frames shorter than `min_time` are not kept, only counted: on 100 000 deep
    stacks that is most of them, and never building them keeps memory small."""
    nodes: List[_Node] = []
    open_frames: List[Tuple[str, float]] = []
    time = start
    elided = 0
    for stack in sorted(merged):
        names = stack.split(";")
        common = 0
        while common < len(open_frames) and common < len(names) and open_frames[common][0] == names[common]:
            common += 1
        while len(open_frames) > common:
            name, begin = open_frames.pop()
            if time - begin >= min_time:
                nodes.append(_Node(name, len(open_frames) + 1, begin, time, idle))
            else:
                elided += 1
        for name in names[common:]:
            open_frames.append((name, time))
        time += merged[stack]
    while open_frames:
        name, begin = open_frames.pop()
        if time - begin >= min_time:
            nodes.append(_Node(name, len(open_frames) + 1, begin, time, idle))
        else:
            elided += 1
    return nodes, time, elided


def _min_time(total: float, width: int, minwidth: float) -> float:
    return minwidth * total / (width - 2 * PAD) if total > 0 else 0.0


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


def palette_color(name: str, kind: str, scheme: str = "java") -> str:
    v1, v2, v3 = _hash(name)
    if scheme in PL_PALETTES and kind != "root":
        values = (v1, v2, v3)
        r, g, b = (base + span * values[index] for base, span, index in PL_PALETTES[scheme])
    else:
        box = PALETTE_BOXES.get(kind if kind in PALETTE_BOXES else "user")
        (r0, r1), (g0, g1), (b0, b1) = box
        r, g, b = r0 + (r1 - r0) * v3, g0 + (g1 - g0) * v1, b0 + (b1 - b0) * v2
    return f"rgb({int(r)},{int(g)},{int(b)})"


def parse_color(color: str) -> Optional[Tuple[int, int, int]]:
    match = re.fullmatch(r"#([0-9a-fA-F]{6})", color.strip())
    if match:
        value = int(match.group(1), 16)
        return value >> 16, (value >> 8) & 0xFF, value & 0xFF
    match = re.fullmatch(r"rgb\((\d{1,3}),(\d{1,3}),(\d{1,3})\)", color.replace(" ", ""))
    if match and all(int(part) <= 255 for part in match.groups()):
        return int(match.group(1)), int(match.group(2)), int(match.group(3))
    return None


def palette_distance(rgb: Tuple[int, int, int], kinds: Sequence[str] = ("kernel", "user", "jit", "inlined",
                                                                          "context")) -> float:
    """Euclidean RGB distance to the nearest colour any of these palettes can give."""
    best = float("inf")
    for kind in kinds:
        nearest = [min(max(value, low), high) for value, (low, high) in zip(rgb, PALETTE_BOXES[kind])]
        best = min(best, math.dist(rgb, nearest))
    return best


def _far_enough(rgb: Tuple[int, int, int], taken: Sequence[Tuple[int, int, int]]) -> bool:
    return (palette_distance(rgb) >= MIN_DISTANCE and math.dist(rgb, parse_color(SEARCH_COLOR)) >= MIN_DISTANCE
            and all(math.dist(rgb, other) >= MIN_DISTANCE for other in taken))


def assign_highlight_colors(highlights: Sequence[Highlight]) -> List[Highlight]:
    """Each highlight keeps its own colour when it stands out from the palettes and from the
    highlights before it; otherwise it gets the next free colour of HIGHLIGHT_COLORS."""
    out: List[Highlight] = []
    taken: List[Tuple[int, int, int]] = []
    for index, highlight in enumerate(highlights):
        wanted = parse_color(highlight.color) if highlight.color else None
        candidates = ([wanted] if wanted else []) + [parse_color(c) for c in HIGHLIGHT_COLORS[index:]] \
            + [parse_color(c) for c in HIGHLIGHT_COLORS[:index]]
        rgb = next((c for c in candidates if c and _far_enough(c, taken)), candidates[-1])
        taken.append(rgb)
        out.append(Highlight(highlight.id, highlight.pattern, "rgb({},{},{})".format(*rgb), highlight.faded))
    return out


def text_color(fill: str) -> Optional[str]:
    """White labels on dark fills (relative luminance below one half)."""
    rgb = parse_color(fill)
    if rgb is None:
        return None
    r, g, b = rgb
    return "rgb(255,255,255)" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 128 else None


# --- SVG ----------------------------------------------------------------------------------------------

def escape(text: str) -> str:
    """XML text: entities for & < > " ', and characters XML 1.0 forbids, C1 controls and
    bidi/zero-width characters replaced by U+FFFD (shown, never acted on)."""
    text = NOT_IN_XML.sub("\ufffd", text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


def _comment(text: str) -> str:
    return escape(text).replace("--", "- -")


def _label(name: str, width: float, char_width: float) -> str:
    chars = int((width - 6) // char_width)
    if chars < 3:
        return ""
    return name if len(name) <= chars else name[:chars - 2] + ".."


def _format_count(count: float) -> str:
    return f"{int(count):,}" if float(count).is_integer() else f"{count:,.2f}"


def wrap_line(text: str, chars: int) -> List[str]:
    """Words into lines of at most `chars` characters (a longer word gets its own line)."""
    lines: List[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def script_source() -> str:
    return (TEMPLATE_DIR / "flamegraph.js").read_text(encoding="utf-8")


STYLE = """
text { font-family: Verdana, sans-serif; font-size: %(font)spx; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: %(title)spx; }
.subtitle { text-anchor: middle; fill: rgb(80,80,80); }
g.f { cursor: pointer; }
g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
g.f text { pointer-events: none; }
g.f.hl rect { stroke: rgb(0,0,0); stroke-width: 1.5; }
g.f.hl.faded rect { fill-opacity: 0.55; stroke-dasharray: 3,2; }
.hide { display: none; }
.parent { opacity: 0.5; }
.button { cursor: pointer; fill: rgb(0,0,160); }
#search.show, #ic.show, #idle.show { fill: rgb(230,0,230); }
"""


@dataclass
class _Header:
    lines: List[str]
    top: int


def render_svg(stacks: Iterable[Tuple[str, float]], *, title: str = "Flame Graph", subtitle: Optional[str] = None,
               highlights: Sequence[Highlight] = (), width: int = 1200, minwidth: float = 0.1,
               count_name: str = "samples", idle_stacks: Iterable[Tuple[str, float]] = (),
               options: Optional[Options] = None) -> str:
    """The SVG. `idle_stacks` are laid out after the busy ones and hidden until 'Show idle'."""
    options = options or Options(width=width, minwidth=minwidth, count_name=count_name)
    busy = prepare(merge_stacks(stacks), options)
    idle = prepare(merge_stacks(idle_stacks), options)
    busy_total = sum(busy.values())
    all_total = busy_total + sum(idle.values())
    if not busy_total:                            # nothing busy: draw the idle stacks as they are
        busy, idle, busy_total = idle, {}, all_total
    shown_total = busy_total
    min_time = _min_time(shown_total, options.width, options.minwidth)
    nodes, total, elided = flow(busy, min_time)
    idle_nodes, total, idle_elided = flow(idle, min_time, start=total, idle=True)
    nodes += idle_nodes
    elided += idle_elided
    has_idle = bool(idle)
    highlights = assign_highlight_colors(highlights)
    header = _header(options, subtitle, highlights)
    max_depth = max((n.depth for n in nodes), default=0)
    height = header.top + (max_depth + 1) * options.frame_height + 40
    scale = (options.width - 2 * PAD) / shown_total if shown_total else 0
    out: List[str] = [
        '<?xml version="1.0" standalone="no"?>\n',
        f'<svg version="1.1" width="{options.width}" height="{height}" viewBox="0 0 {options.width} {height}" '
        f'data-busy="{_format_count(shown_total).replace(",", "")}" data-all="{_format_count(all_total).replace(",", "")}" '
        f'data-inverted="{int(options.inverted)}" data-fontsize="{options.font_size:g}" '
        'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n',
    ]
    if options.notes:
        out.append(f"<!-- NOTES: {_comment(options.notes)} -->\n")
    out += [
        f"<style>{STYLE % {'font': f'{options.font_size:g}', 'title': f'{options.font_size + 5:g}'}}</style>\n",
        "<script><![CDATA[\n" + script_source() + "]]></script>\n",
        f'<rect x="0" y="0" width="{options.width}" height="{height}" fill="rgb(248,248,248)"/>\n',
        f'<text id="title" x="{options.width / 2:.1f}" y="24">{escape(title)}</text>\n',
    ]
    out += header.lines
    out.append(f'<text id="unzoom" class="button hide" x="{PAD}" y="24">Reset Zoom</text>\n')
    buttons_x = options.width - PAD
    out.append(f'<text id="search" class="button" x="{buttons_x - 60}" y="24">Search</text>\n')
    out.append(f'<text id="ic" class="button" x="{buttons_x - 85}" y="24">ic</text>\n')
    if has_idle:
        out.append(f'<text id="idle" class="button" x="{buttons_x - 180}" y="24">Show idle</text>\n')
    out.append(f'<text id="matched" x="{options.width - PAD - 140}" y="{height - 12}"> </text>\n')
    out.append(f'<text id="details" x="{PAD}" y="{height - 12}"> </text>\n')
    geometry = _Geometry(options, scale, header.top, height, shown_total)
    root = _Node("all", 0, 0.0, shown_total)
    for node in [root] + nodes if total else []:
        out.append(_frame(node, geometry, highlights))
    out.append(f"<!-- frames: {len(nodes) + (1 if total else 0)}, elided: {elided} -->\n")
    out.append("</svg>\n")
    return "".join(out)


def _header(options: Options, subtitle: Optional[str], highlights: Sequence[Highlight]) -> _Header:
    lines: List[str] = []
    y = 44
    if subtitle:
        chars = max(20, int((options.width - 2 * PAD) // options.char_width))
        for index, line in enumerate(wrap_line(subtitle, chars)):
            ident = ' id="subtitle"' if index == 0 else ""
            lines.append(f'<text{ident} class="subtitle" x="{options.width / 2:.1f}" y="{y}">{escape(line)}</text>\n')
            y += int(options.font_size + 6)
    legend, rows = _legend(highlights, y, options)
    lines.append(legend)
    return _Header(lines, y + 20 * rows + 16)


@dataclass
class _Geometry:
    options: Options
    scale: float
    top: int
    height: int
    total: float

    def y(self, depth: int) -> float:
        if self.options.inverted:
            return self.top + depth * self.options.frame_height
        return self.height - 40 - (depth + 1) * self.options.frame_height


def _legend(highlights: Sequence[Highlight], y: int, options: Options) -> Tuple[str, int]:
    items = [("kernel", palette_color("legend", "kernel")), ("user", palette_color("legend", "user")),
             ("JIT", palette_color("legend", "jit")), ("context", palette_color("legend", "context"))]
    items += [(h.id + (" (low confidence)" if h.faded else ""), h.color or "") for h in highlights]
    parts = ['<g id="legend">']
    x, rows = PAD, 1
    for index, (label, color) in enumerate(items):
        step = 16 + int(len(label) * options.char_width) + 18
        if x + step > options.width - PAD and x > PAD:
            x, y, rows = PAD, y + 20, rows + 1
        outline = ' stroke="rgb(0,0,0)" stroke-width="1.5"' if index >= 4 else ""
        parts.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{color}"{outline}/>'
                     f'<text x="{x + 16}" y="{y}">{escape(label)}</text>')
        x += step
    parts.append("</g>\n")
    return "".join(parts), rows


def _frame(node: _Node, geometry: _Geometry, highlights: Sequence[Highlight]) -> str:
    options = geometry.options
    name, kind = kind_of(node.name) if node.depth else ("all", "root")
    color = palette_color(name, kind, options.colors)
    classes = ["f"] + (["idle", "hide"] if node.idle else [])
    text_fill = None
    for highlight in highlights:
        if kind not in ("context", "root") and highlight.matches(name):
            color = highlight.color or color
            classes += ["hl"] + (["faded"] if highlight.faded else [])
            text_fill = text_color(color)
            break
    x = PAD + node.start * geometry.scale
    w = (node.end - node.start) * geometry.scale
    y = geometry.y(node.depth)
    count = node.end - node.start
    pct = 100 * count / geometry.total if geometry.total else 0
    info = f"{name} ({_format_count(count)} {options.count_name}, {pct:.2f}%)"
    fill_text = f' style="fill:{text_fill}"' if text_fill else ""
    return (f'<g class="{" ".join(classes)}"><title>{escape(info)}</title>'
            f'<rect x="{x:.2f}" y="{y:.1f}" width="{w:.2f}" height="{options.frame_height - 1}" fill="{color}" '
            f'rx="2" ry="2"/>'
            f'<text x="{x + 3:.2f}" y="{y + options.frame_height * 0.72:.1f}"{fill_text}>'
            f'{escape(_label(name, w, options.char_width))}</text></g>\n')


def count_frames(svg: str) -> int:
    return len(re.findall(r'<g class="f[ "]', svg))
