"""diff.svg: a differential flame graph of two profiles (doc/diff.md), in the manner of
FlameGraph's difffolded.pl + flamegraph.pl: red frames grew, blue frames shrank, the deeper
the colour the larger the change.

Both profiles' busy stacks (comm first, root to leaf) are normalised by their own busy samples,
so a frame's value on each side is its share of busy samples (inclusive: the stacks through
it). A frame's width is the mean of its two shares, so a path that vanished after the fix
still shows (at half its old width) instead of disappearing as it would when only the second
profile is drawn; its colour is the change, after - before, scaled to the largest change in
the graph. Hovering a frame shows both shares (SVG <title>, no script). Static SVG.

    >>> from flamediag.profile import Frame, Profile
    >>> a, b = Profile(), Profile()
    >>> a.add([Frame("x", "kernel"), Frame("reclaim", "kernel")], 3, comm="app")
    >>> a.add([Frame("x", "kernel")], 1, comm="app")
    >>> b.add([Frame("x", "kernel")], 4, comm="app")
    >>> [(c["frame"], c["before"], c["after"]) for c in frame_changes(a, b)["shrank"]]
    [('reclaim', 0.75, 0.0)]
    >>> svg = render(a, b, "demo")
    >>> "<script" not in svg and svg.count('class="f"')
    4
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, Iterator, List, Tuple

from .flamegraph import escape
from .profile import Profile, is_idle

WIDTH = 1200
PAD = 10
FRAME_HEIGHT = 16
CHAR_WIDTH = 7.0
MIN_WIDTH_PX = 0.5
TOP_FRAMES = 10


class _Node:
    __slots__ = ("before", "after", "children")

    def __init__(self):
        self.before = 0.0
        self.after = 0.0
        self.children: Dict[str, "_Node"] = {}


def busy_stacks(profile: Profile) -> Iterator[Tuple[Tuple[str, ...], float]]:
    """(comm, root ... leaf) names and the share of busy samples, per busy record."""
    busy = sum(r.weight for r in profile if not is_idle(r))
    if not busy:
        return
    for record in profile:
        if not is_idle(record):
            names = ((record.comm,) if record.comm else ()) + tuple(f.name for f in record.frames)
            yield names, record.weight / busy


def build_tree(before: Profile, after: Profile) -> _Node:
    root = _Node()
    for side, profile in (("before", before), ("after", after)):
        for names, share in busy_stacks(profile):
            node = root
            setattr(node, side, getattr(node, side) + share)
            for name in names:
                node = node.children.setdefault(name, _Node())
                setattr(node, side, getattr(node, side) + share)
    return root


def frame_changes(before: Profile, after: Profile) -> Dict[str, List[dict]]:
    """The frames whose inclusive share of busy samples grew / shrank most (top TOP_FRAMES)."""
    totals: Dict[str, List[float]] = defaultdict(lambda: [0.0, 0.0])
    for index, profile in enumerate((before, after)):
        for names, share in busy_stacks(profile):
            for name in set(names[1:]):
                totals[name][index] += share
    rows = [{"frame": name, "before": round(b, 4), "after": round(a, 4), "change": round(a - b, 4)}
            for name, (b, a) in totals.items() if round(a - b, 4)]
    grew = sorted((r for r in rows if r["change"] > 0), key=lambda r: (-r["change"], r["frame"]))
    shrank = sorted((r for r in rows if r["change"] < 0), key=lambda r: (r["change"], r["frame"]))
    return {"grew": grew[:TOP_FRAMES], "shrank": shrank[:TOP_FRAMES]}


def diff_color(change: float, largest: float) -> str:
    """Red for growth, blue for shrinkage, white for none (flamegraph.pl's differential scale).

    >>> diff_color(0.5, 0.5), diff_color(-0.5, 0.5), diff_color(0, 0.5)
    ('rgb(255,0,0)', 'rgb(0,0,255)', 'rgb(255,255,255)')
    """
    if not largest or not change:
        return "rgb(255,255,255)"
    fade = int(round(255 * (1 - min(abs(change) / largest, 1.0))))
    return f"rgb(255,{fade},{fade})" if change > 0 else f"rgb({fade},{fade},255)"


def _layout(root: _Node) -> Iterator[Tuple[str, _Node, int, float]]:
    """(name, node, depth, start) per frame, children in name order, width = mean share."""
    stack = [("all", root, 0, 0.0)]
    while stack:
        name, node, depth, start = stack.pop()
        yield name, node, depth, start
        offset = start
        children = []
        for child_name in sorted(node.children):
            child = node.children[child_name]
            children.append((child_name, child, depth + 1, offset))
            offset += (child.before + child.after) / 2
        stack.extend(reversed(children))


def _largest_change(root: _Node) -> float:
    largest, stack = 0.0, [root]
    while stack:
        node = stack.pop()
        largest = max(largest, abs(node.after - node.before))
        stack.extend(node.children.values())
    return largest


def _frame(name: str, node: _Node, depth: int, start: float, base: float, scale: float, largest: float) -> str:
    x = PAD + start * scale
    width = (node.before + node.after) / 2 * scale
    y = base - (depth + 1) * FRAME_HEIGHT
    change = node.after - node.before
    info = (f"{name}: {node.before * 100:.2f} % -> {node.after * 100:.2f} % of busy samples "
            f"({change * 100:+.2f} points)")
    chars = int((width - 6) // CHAR_WIDTH)
    label = "" if chars < 3 else (name if len(name) <= chars else name[:chars - 2] + "..")
    dark = largest and abs(change) / largest > 0.6
    ink = ' style="fill: rgb(255,255,255)"' if dark else ""
    return (f'<g class="f"><title>{escape(info)}</title><rect x="{x:.2f}" y="{y:.1f}" width="{width:.2f}" '
            f'height="{FRAME_HEIGHT - 1}" fill="{diff_color(change, largest)}" stroke="rgb(200,200,200)" '
            f'stroke-width="0.3" rx="2" ry="2"/><text x="{x + 3:.2f}" y="{y + 11.5:.1f}"{ink}>{escape(label)}</text>'
            '</g>\n')


def _legend(y: float) -> str:
    items = [("grew", diff_color(1, 1)), ("shrank", diff_color(-1, 1)), ("unchanged", diff_color(0, 1))]
    out, x = ['<g id="legend">'], PAD
    for label, color in items:
        out.append(f'<rect x="{x}" y="{y - 11}" width="12" height="12" fill="{color}" stroke="rgb(120,120,120)"/>'
                   f'<text x="{x + 16}" y="{y}">{label}</text>')
        x += 16 + len(label) * 7 + 18
    out.append(f'<text x="{x + 10}" y="{y}">width: mean of the share of busy samples before and after; '
               'colour: after - before, deepest = the largest change</text></g>\n')
    return "".join(out)


def render(before: Profile, after: Profile, title: str, subtitle: str = "") -> str:
    root = build_tree(before, after)
    largest = _largest_change(root)
    scale = WIDTH - 2 * PAD
    frames = [f for f in _layout(root) if (f[1].before + f[1].after) / 2 * scale >= MIN_WIDTH_PX]
    depth = max((f[2] for f in frames), default=0)
    top = 90
    height = top + (depth + 1) * FRAME_HEIGHT + 30
    base = height - 20
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n',
           f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}">\n',
           '<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); } '
           '#title { text-anchor: middle; font-size: 17px; } #subtitle { text-anchor: middle; fill: rgb(80,80,80); } '
           'g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 1; }</style>\n',
           f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="rgb(248,248,248)"/>\n',
           f'<text id="title" x="{WIDTH / 2}" y="24">{escape(title)}</text>\n']
    if subtitle:
        out.append(f'<text id="subtitle" x="{WIDTH / 2}" y="44">{escape(subtitle)}</text>\n')
    out.append(_legend(68))
    for name, node, level, start in frames:
        out.append(_frame(name, node, level, start, base, scale, largest))
    out.append("</svg>\n")
    return "".join(out)
