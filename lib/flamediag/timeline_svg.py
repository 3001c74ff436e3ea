"""timeline.svg: a Timeline drawn as a static SVG (no script, readable in a ticket preview).

Top panel: per-second lines of the kernel share, the softirq share, each finding's share of
busy samples and mpstat %sys / %soft (average solid-thin, hottest CPU dotted), 0-100 %, over
grey bars of the busy samples (right axis); spikes shaded and labelled. Under it one strip per
finding marks its seconds (darker = larger share). Bottom panel: the heat map, one row per CPU,
one column per second, the kernel share of that CPU's samples (white 0 % -> dark red 100 %,
grey = no sample). Hovering a column or a cell shows its numbers (SVG <title>, no script).
Long windows are drawn in bins of several seconds (the mean), at most MAX_COLUMNS columns.

    >>> from flamediag.clock import Clock
    >>> from flamediag.timeline import Timeline
    >>> t = Timeline(Clock(None), 0, 3, [5.0, 9.0, 4.0], [0.2, 0.9, None], [0.0, 0.0, None], {}, [], {},
    ...              {0: [0.1, 0.8, None]})
    >>> svg = render(t, "demo")
    >>> svg.startswith("<?xml") and "<script" not in svg and svg.count('class="cell"') == 3
    True
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

from .flamegraph import escape
from .text import pct_whole
from .timeline import Timeline

WIDTH = 1200
LEFT, RIGHT = 110, 90
CHART_HEIGHT = 240
STRIP_HEIGHT = 12
MAX_COLUMNS = 600
MAX_ROW_HEIGHT = 14
MIN_ROW_HEIGHT = 2
KERNEL_COLOR, SOFTIRQ_COLOR = "rgb(230,120,0)", "rgb(140,90,210)"
SYS_COLOR, SOFT_COLOR = "rgb(40,110,200)", "rgb(0,150,140)"
FINDING_COLORS = ("rgb(220,40,40)", "rgb(20,140,60)", "rgb(200,0,160)", "rgb(120,90,40)", "rgb(90,90,90)")
SPIKE_FILL = "rgb(255,80,80)"
STYLE = ("text { font-family: Verdana, sans-serif; font-size: 11px; fill: rgb(30,30,30); } "
         ".title { font-size: 16px; text-anchor: middle; } .sub { fill: rgb(90,90,90); text-anchor: middle; } "
         ".axis { stroke: rgb(120,120,120); stroke-width: 1; } .grid { stroke: rgb(225,225,225); stroke-width: 1; } "
         "polyline { fill: none; stroke-width: 1.6; } .right { text-anchor: end; } .mid { text-anchor: middle; }")


def _bins(count: int) -> int:
    return max(1, math.ceil(count / MAX_COLUMNS))


def _binned(values: Sequence[Optional[float]], size: int) -> List[Optional[float]]:
    out = []
    for start in range(0, len(values), size):
        known = [v for v in values[start:start + size] if v is not None]
        out.append(sum(known) / len(known) if known else None)
    return out


class _Frame:
    """x positions of the columns."""

    def __init__(self, timeline: Timeline):
        self.timeline = timeline
        self.size = _bins(timeline.seconds)
        self.columns = math.ceil(timeline.seconds / self.size) if timeline.seconds else 0
        self.plot = WIDTH - LEFT - RIGHT
        self.step = self.plot / max(self.columns, 1)

    def x(self, column: float) -> float:
        return LEFT + column * self.step

    def second(self, column: int) -> int:
        return self.timeline.first + column * self.size

    def label(self, column: int) -> str:
        return self.timeline.clock.stamp(self.second(column))


def _finding_colors(timeline: Timeline, colors: Dict[str, str]) -> Dict[str, str]:
    return {ident: colors.get(ident) or FINDING_COLORS[i % len(FINDING_COLORS)]
            for i, ident in enumerate(timeline.shown)}


def _line(frame: _Frame, values: Sequence[Optional[float]], top: float, color: str, scale: float,
          dash: str = "", width: float = 1.6) -> str:
    """Polylines through the known points; a gap (None) breaks the line."""
    parts, points = [], []
    for column, value in enumerate(values):
        if value is None:
            if points:
                parts.append(points)
            points = []
            continue
        y = top + CHART_HEIGHT * (1 - min(max(value / scale, 0.0), 1.0))
        points.append(f"{frame.x(column + 0.5):.1f},{y:.1f}")
    if points:
        parts.append(points)
    style = f' stroke-dasharray="{dash}"' if dash else ""
    out = []
    for points in parts:
        if len(points) == 1:
            x, y = points[0].split(",")
            out.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{color}"/>')
        else:
            out.append(f'<polyline points="{" ".join(points)}" stroke="{color}" stroke-width="{width}"{style}/>')
    return "".join(out)


def _axes(frame: _Frame, top: float, busy_max: float) -> str:
    out = []
    for pct in (0, 25, 50, 75, 100):
        y = top + CHART_HEIGHT * (1 - pct / 100)
        out.append(f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"/>'
                   f'<text class="right" x="{LEFT - 6}" y="{y + 4:.1f}">{pct} %</text>')
    out.append(f'<text x="{WIDTH - RIGHT + 6}" y="{top + 10}">{busy_max:,.0f}</text>'
               f'<text x="{WIDTH - RIGHT + 6}" y="{top + 24}">busy</text>'
               f'<text x="{WIDTH - RIGHT + 6}" y="{top + CHART_HEIGHT}">0</text>')
    out.append(f'<line class="axis" x1="{LEFT}" y1="{top + CHART_HEIGHT}" x2="{WIDTH - RIGHT}" '
               f'y2="{top + CHART_HEIGHT}"/><line class="axis" x1="{LEFT}" y1="{top}" x2="{LEFT}" '
               f'y2="{top + CHART_HEIGHT}"/>')
    return "".join(out)


def _ticks(frame: _Frame, y: float) -> str:
    every = max(1, math.ceil(frame.columns / 12))
    out = []
    for column in range(0, frame.columns + 1, every):
        x = frame.x(column)
        out.append(f'<line class="axis" x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}"/>'
                   f'<text class="mid" x="{x:.1f}" y="{y + 16}">{escape(frame.label(column))}</text>')
    return "".join(out)


def _busy_bars(frame: _Frame, busy: List[Optional[float]], top: float, busy_max: float) -> str:
    out = []
    for column, value in enumerate(busy):
        if not value:
            continue
        height = CHART_HEIGHT * value / busy_max
        out.append(f'<rect x="{frame.x(column):.1f}" y="{top + CHART_HEIGHT - height:.1f}" '
                   f'width="{max(frame.step - 0.5, 0.5):.1f}" height="{height:.1f}" fill="rgb(222,222,222)"/>')
    return "".join(out)


def _spikes(frame: _Frame, spikes: Sequence[Tuple[int, int]], top: float) -> str:
    out = []
    for number, (start, end) in enumerate(spikes, 1):
        a = (start - frame.timeline.first) / frame.size
        b = (end - frame.timeline.first) / frame.size
        x, w = frame.x(a), max(frame.x(b) - frame.x(a), 2.0)
        out.append(f'<rect x="{x:.1f}" y="{top}" width="{w:.1f}" height="{CHART_HEIGHT}" fill="{SPIKE_FILL}" fill-opacity="0.18" stroke="rgb(220,0,0)" stroke-dasharray="3,2"/>'
                   f'<text class="mid" x="{x + w / 2:.1f}" y="{top - 4}" fill="rgb(200,0,0)">spike {number}</text>')
    return "".join(out)


def _trigger(frame: _Frame, trigger: Optional[dict], top: float) -> str:
    """watch's trigger: a vertical line at its second, labelled."""
    if not trigger:
        return ""
    column = (trigger["second"] - frame.timeline.first) / frame.size
    if not 0 <= column <= frame.columns:
        return ""
    x = frame.x(column)
    return (f'<line x1="{x:.1f}" y1="{top - 12}" x2="{x:.1f}" y2="{top + CHART_HEIGHT}" stroke="rgb(0,0,0)" '
            f'stroke-width="1.5" stroke-dasharray="4,2"/><text x="{x + 4:.1f}" y="{top - 2}">'
            f'{escape(trigger["label"])}</text>')


def _hover_columns(frame: _Frame, series: Dict[str, List[Optional[float]]], top: float, height: float) -> str:
    out = []
    for column in range(frame.columns):
        facts = [f"{frame.label(column)} (second {frame.second(column)})"]
        for name, values in series.items():
            value = values[column]
            if value is not None:
                facts.append(f"{name}: {value:,.0f}" if name == "busy samples" else f"{name}: {pct_whole(value)}")
        out.append(f'<rect x="{frame.x(column):.1f}" y="{top}" width="{frame.step:.2f}" height="{height}" '
                   f'fill="transparent"><title>{escape("; ".join(facts))}</title></rect>')
    return "".join(out)


def _legend(items: Sequence[Tuple[str, str, str]], y: float) -> str:
    out, x = [], LEFT
    for label, color, dash in items:
        style = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 22}" y2="{y - 4}" stroke="{color}" stroke-width="2.5"{style}/>'
                   f'<text x="{x + 26}" y="{y}">{escape(label)}</text>')
        x += 26 + int(len(label) * 6.6) + 18
        if x > WIDTH - 200:
            x, y = LEFT, y + 16
    return "".join(out)


def _short(name: str, chars: int = 16) -> str:
    return name if len(name) <= chars else name[:chars - 1] + "\u2026"


def _strips(frame: _Frame, strips: Dict[str, List[Optional[float]]], colors: Dict[str, str], top: float) -> str:
    out = []
    for row, (ident, values) in enumerate(strips.items()):
        y = top + row * (STRIP_HEIGHT + 3)
        out.append(f'<text class="right" x="{LEFT - 6}" y="{y + 10}">{escape(_short(ident))}</text>')
        for column, value in enumerate(values):
            if value:
                out.append(f'<rect x="{frame.x(column):.1f}" y="{y}" width="{max(frame.step, 1):.1f}" '
                           f'height="{STRIP_HEIGHT}" fill="{colors[ident]}" fill-opacity="{min(1.0, 0.15 + value):.2f}">'
                           f'<title>{escape(f"{ident}: {pct_whole(value)} of busy samples at {frame.label(column)}")}'
                           f'</title></rect>')
    return "".join(out)


def heat_color(share: Optional[float]) -> str:
    """White (0) to dark red (1); grey for no sample.

    >>> heat_color(0), heat_color(1), heat_color(None)
    ('rgb(255,255,255)', 'rgb(150,0,0)', 'rgb(200,200,200)')
    """
    if share is None:
        return "rgb(200,200,200)"
    share = min(max(share, 0.0), 1.0)
    if share <= 0.5:
        k = share / 0.5
        return f"rgb(255,{int(255 - 135 * k)},{int(255 - 255 * k)})"
    k = (share - 0.5) / 0.5
    return f"rgb({int(255 - 105 * k)},{int(120 - 120 * k)},0)"


def _heatmap(frame: _Frame, cpu_kernel: Dict[int, List[Optional[float]]], top: float) -> Tuple[str, float]:
    cpus = sorted(cpu_kernel)
    if not cpus:
        return "", 0.0
    row = max(MIN_ROW_HEIGHT, min(MAX_ROW_HEIGHT, 480 / len(cpus)))
    label_every = max(1, math.ceil(12 / row))
    out = [f'<text x="{LEFT}" y="{top - 6}">Kernel share of each CPU\'s samples per second '
           f'(white 0 %, dark red 100 %, grey no sample)</text>']
    for index, cpu in enumerate(cpus):
        y = top + index * row
        if index % label_every == 0:
            out.append(f'<text class="right" x="{LEFT - 6}" y="{y + min(row, 12) - 1:.1f}">CPU {cpu}</text>')
        for column, value in enumerate(_binned(cpu_kernel[cpu], frame.size)):
            tip = "no sample" if value is None else f"{pct_whole(value)} kernel"
            out.append(f'<rect class="cell" x="{frame.x(column):.1f}" y="{y:.1f}" width="{frame.step + 0.3:.2f}" '
                       f'height="{row + 0.3:.2f}" fill="{heat_color(value)}"><title>'
                       f'{escape(f"CPU {cpu} at {frame.label(column)}: {tip}")}</title></rect>')
    height = row * len(cpus)
    out.append(f'<rect x="{LEFT}" y="{top}" width="{frame.plot}" height="{height:.1f}" fill="none" '
               f'stroke="rgb(120,120,120)"/>')
    return "".join(out), height


def render(timeline: Timeline, title: str, spikes: Sequence[Tuple[int, int]] = (),
           colors: Optional[Dict[str, str]] = None) -> str:
    frame = _Frame(timeline)
    colors = _finding_colors(timeline, colors or {})
    series = timeline.series()
    busy = _binned(timeline.busy, frame.size)
    busy_max = max([b for b in busy if b] or [1.0])
    lines: List[Tuple[str, List[Optional[float]], str, str]] = [
        ("kernel share", _binned(timeline.kernel, frame.size), KERNEL_COLOR, ""),
        ("softirq share", _binned(timeline.softirq, frame.size), SOFTIRQ_COLOR, ""),
    ]
    lines += [(ident, _binned(series[ident], frame.size), colors[ident], "") for ident in timeline.shown]
    for column, color in (("sys", SYS_COLOR), ("soft", SOFT_COLOR)):
        for kind, dash in (("avg", "6,3"), ("max", "2,3")):
            values = timeline.mpstat.get(f"mpstat.{column}_pct.{kind}")
            if values:
                label = f"%{column} " + ("average" if kind == "avg" else "hottest CPU")
                lines.append((label, _binned([None if v is None else v / 100 for v in values], frame.size),
                              color, dash))
    top = 70.0
    strips = {ident: _binned(series[ident], frame.size) for ident in timeline.shown}
    strip_top = top + CHART_HEIGHT + 34
    heat_top = strip_top + len(strips) * (STRIP_HEIGHT + 3) + 30
    heat, heat_height = _heatmap(frame, timeline.cpu_kernel, heat_top)
    legend_y = heat_top + heat_height + 28
    height = int(legend_y + 50)
    clock = timeline.clock.describe()
    out = [
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n',
        f'<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}">\n<style>{STYLE}</style>\n',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="rgb(252,252,252)"/>\n',
        f'<text class="title" x="{WIDTH / 2}" y="22">{escape(title)}</text>\n',
        f'<text class="sub" x="{WIDTH / 2}" y="40">{escape(f"{timeline.seconds} s, {clock}; share of busy samples per second")}</text>\n',
        _busy_bars(frame, busy, top, busy_max), _spikes(frame, spikes, top), _axes(frame, top, busy_max), "\n",
    ]
    for label, values, color, dash in lines:
        out.append(_line(frame, values, top, color, 1.0, dash, 1.2 if dash else 1.8))
    out.append(_trigger(frame, timeline.trigger, top))
    out.append("\n" + _ticks(frame, top + CHART_HEIGHT))
    hover = {"busy samples": busy, "kernel": lines[0][1], "softirq": lines[1][1]}
    hover.update({ident: strips[ident] for ident in timeline.shown})
    out.append(_hover_columns(frame, hover, top, CHART_HEIGHT))
    out.append("\n" + _strips(frame, strips, colors, strip_top) + "\n" + heat + "\n")
    legend = [(label, color, dash) for label, _, color, dash in lines]
    out.append(_legend([("busy samples (bars, right axis)", "rgb(200,200,200)", "")] + legend, legend_y))
    out.append("\n</svg>\n")
    return "".join(out)
