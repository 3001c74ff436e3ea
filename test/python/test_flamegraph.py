"""flamegraph: escaping of hostile frames (valid XML, only our script), palettes, highlights and
legend, minwidth elision on 100 000 stacks with the size on stderr."""
from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from flamediag.flamegraph import Highlight, palette_color, render_svg, script_source  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"
HOSTILE = ["<script>alert(1)</script>", 'say "hi"', "fish & chips", "end ]]> of cdata",
           "<img src=x onerror=alert(1)>", "</text><script>alert(2)</script>", "it's", "\x01ctl\x7f"]
ALLOWED_TAGS = {"svg", "style", "script", "rect", "text", "g", "title"}


def hostile_stacks():
    stacks = [("app;" + ";".join(HOSTILE), 10), ("app;main;work_[k]", 5)]
    stacks += [(f"app;{name};leaf{i}", i + 1) for i, name in enumerate(HOSTILE)]
    return stacks


def test_hostile_frames_give_valid_xml_with_only_our_script():
    svg = render_svg(hostile_stacks(), title='<script>alert("t")</script> & ]]>', subtitle="<b>sub</b>")
    root = ET.fromstring(svg.encode("utf-8"))
    tags = {el.tag.replace(SVG_NS, "") for el in root.iter()}
    assert tags <= ALLOWED_TAGS, tags
    scripts = [el for el in root.iter() if el.tag == SVG_NS + "script"]
    assert len(scripts) == 1
    assert scripts[0].text == "\n" + script_source()      # byte-identical to the template
    assert svg.count("<script") == 1 and svg.count("]]>") == 1
    for el in root.iter():
        assert not [a for a in el.attrib if a.lower().startswith("on") or "href" in a.lower()], el.attrib
    texts = "".join(el.text or "" for el in root.iter())
    for name in HOSTILE[:-1]:
        assert name in texts, name                  # shown verbatim, as text
    assert '<script>alert("t")</script> & ]]>' in texts


def test_palettes_differ_by_kind_and_highlights_get_their_colour_and_legend():
    stacks = [("swapper;do_idle_[k];[softirq];net_rx_action_[k];ixgbevf_poll_[k]", 50),
              ("node;main;JS:*hot_[j]", 30), ("dd;read;vfs_read_[k]", 20)]
    svg = render_svg(stacks, highlights=[Highlight("nic-softirq", re.compile(r"net_rx_action|ixgbevf_poll"), "#5a00a0")])
    root = ET.fromstring(svg.encode())
    fill_of = {}
    for group in root.iter(SVG_NS + "g"):
        title = group.find(SVG_NS + "title")
        if title is not None:
            fill_of[title.text.split(" (")[0]] = group.find(SVG_NS + "rect").get("fill")
    assert fill_of["net_rx_action"] == fill_of["ixgbevf_poll"] == "rgb(90,0,160)"
    assert fill_of["[softirq]"] == palette_color("[softirq]", "context")
    assert fill_of["do_idle"] == palette_color("do_idle", "kernel")
    assert fill_of["JS:*hot"] == palette_color("JS:*hot", "jit")
    assert fill_of["main"] == palette_color("main", "user")
    assert len({fill_of["[softirq]"], fill_of["do_idle"], fill_of["JS:*hot"], fill_of["main"]}) == 4
    legend = root.find(f".//{SVG_NS}g[@id='legend']")
    labels = [t.text for t in legend.iter(SVG_NS + "text")]
    assert labels == ["kernel", "user", "JIT", "context", "nic-softirq"]
    assert "rgb(90,0,160)" in [r.get("fill") for r in legend.iter(SVG_NS + "rect")]


def test_hover_details_name_samples_and_percent():
    svg = render_svg([("a;b", 3), ("a;c", 1)])
    titles = [t.text for t in ET.fromstring(svg.encode()).iter(SVG_NS + "title")]
    assert "b (3 samples, 75.00%)" in titles and "all (4 samples, 100.00%)" in titles


def many_stacks(count: int) -> str:
    return "".join(f"app;main;mod{i % 97};fn{i % 1009};leaf{i} {1 + i % 5}\n" for i in range(count))


def test_minwidth_elides_narrow_frames_and_the_size_is_reported(tmp_path):
    folded = tmp_path / "big.folded"
    folded.write_text(many_stacks(100_000))
    out = tmp_path / "big.svg"
    run = subprocess.run([str(ROOT / "bin" / "flamediag"), "flamegraph", str(folded), "-o", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    size = out.stat().st_size
    match = re.search(r"wrote (\S+): ([\d,]+) bytes, ([\d,]+) frames, ([\d,]+) narrower than 0.1 px elided, "
                      r"100,000 input stacks", run.stderr)
    assert match, run.stderr
    assert int(match.group(2).replace(",", "")) == size
    frames, elided = (int(match.group(n).replace(",", "")) for n in (3, 4))
    assert elided > 100_000 and frames < 5_000
    assert size < 2_000_000
    ET.parse(out)


def test_minwidth_zero_keeps_every_frame():
    svg = render_svg([(f"a;b{i}", 1) for i in range(3000)], minwidth=0)
    assert "elided: 0 -->" in svg and svg.count('<g class="f">') == 3002


# --- highlights that stand out, layout that fits, flamegraph.pl flags ----------------------------

from flamediag import playbooks as playbook_loader  # noqa: E402
from flamediag.flamegraph import (HIGHLIGHT_COLORS, MERGED_UNKNOWN, MIN_DISTANCE, Options,  # noqa: E402
                                  assign_highlight_colors, palette_distance, parse_color)

SAMPLES = ROOT / "samples"


def test_every_highlight_colour_is_far_from_the_kernel_user_jit_and_context_palettes():
    for color in HIGHLIGHT_COLORS:
        assert palette_distance(parse_color(color)) >= MIN_DISTANCE, color
    books = playbook_loader.load_all()
    for book in books:      # a playbook's own colour is drawn as written, so it must stand out already
        if book.color:
            assert palette_distance(parse_color(book.color)) >= MIN_DISTANCE, (book.id, book.color)
    declared = [book for book in books if book.color]
    for index, book in enumerate(declared):
        for other in declared[index + 1:]:
            assert math.dist(parse_color(book.color), parse_color(other.color)) >= MIN_DISTANCE, (book.id, other.id)
    together = assign_highlight_colors([Highlight(b.id, frozenset(), b.color) for b in books])
    alone = [assign_highlight_colors([Highlight(b.id, frozenset(), b.color)])[0] for b in books]
    for highlight in together + alone:
        assert palette_distance(parse_color(highlight.color)) >= MIN_DISTANCE, (highlight.id, highlight.color)
    # a playbook colour equal to the kernel orange or the user red is replaced, a far one kept
    kernel_orange, user_red, blue = assign_highlight_colors(
        [Highlight("a", frozenset(), "#f08c00"), Highlight("b", frozenset(), "#e03131"),
         Highlight("c", frozenset(), "#1446e6")])
    assert kernel_orange.color != "rgb(240,140,0)" and user_red.color != "rgb(224,49,49)"
    assert blue.color == "rgb(20,70,230)" or palette_distance(parse_color(blue.color)) >= MIN_DISTANCE


def frames_of(svg: str):
    root = ET.fromstring(svg.encode())
    out = []
    for group in root.iter(SVG_NS + "g"):
        title = group.find(SVG_NS + "title")
        if title is not None:
            out.append((title.text, group.get("class"), group.find(SVG_NS + "rect")))
    return out


def test_highlighted_frames_are_outlined_and_low_confidence_ones_faded():
    stacks = [("app;lock_[k];spin_[k]", 10), ("app;reclaim_[k]", 5)]
    svg = render_svg(stacks, highlights=[Highlight("locks", frozenset({"spin"})),
                                         Highlight("reclaim", frozenset({"reclaim"}), faded=True)])
    classes = {title.split(" (")[0]: cls for title, cls, _ in frames_of(svg)}
    assert classes["spin"] == "f hl" and classes["reclaim"] == "f hl faded" and classes["lock"] == "f"
    assert "g.f.hl rect { stroke: rgb(0,0,0)" in svg and "reclaim (low confidence)" in svg


def test_a_comm_with_a_semicolon_stays_one_frame_and_controls_never_reach_svg_text():
    from flamediag.profile import Frame, Profile
    from flamediag.flamegraph import folded_lines

    profile = Profile()
    profile.add([Frame("main", "user"), Frame("evil\u202efdp.exe\x9b31m", "user")], 3, comm="a;b;c")
    stacks = list(folded_lines(profile))
    assert stacks == [("a:b:c;main;evil\u202efdp.exe\x9b31m", 3)]
    svg = render_svg(stacks, subtitle="sub\u202ex\u0085")
    names = [title.split(" (")[0] for title, _, _ in frames_of(svg)]
    assert sorted(names) == sorted(["all", "a:b:c", "main", "evil\ufffdfdp.exe\ufffd31m"])
    for char in ("\u202e", "\x9b", "\x85", "\u2066", "\u200b"):
        assert char not in svg


def test_unknown_runs_merge_and_thin_towers_are_cut():
    deep = "py;" + ";".join(["[unknown]"] * 120) + ";main"
    tower = "bash;" + ";".join(f"f{i}" for i in range(200))
    stacks = [(deep, 1), (tower, 1)] + [(f"app;a;b;c{i}", 100) for i in range(5)]
    svg = render_svg(stacks)
    names = [title.split(" (")[0] for title, _, _ in frames_of(svg)]
    assert names.count(MERGED_UNKNOWN) == 1 and "[unknown]" not in names
    assert "[… frames cut …]" in names and "f199" in names and "f100" not in names
    assert int(re.search(r'height="(\d+)"', svg).group(1)) < 1000
    uncut = render_svg(stacks, options=Options(merge_unknown=False, cap_towers=False))
    assert "f100" in uncut and int(re.search(r'height="(\d+)"', uncut).group(1)) > 3000


def test_the_live_capture_starts_in_the_first_screen(tmp_path):
    from flamediag.diagnose import render_flamegraph, run_diagnosis

    svg = render_flamegraph(run_diagnosis(str(SAMPLES / "live-nic-softirq-6.18")))
    assert int(re.search(r'height="(\d+)"', svg).group(1)) <= 1400


def test_busy_view_by_default_with_percentages_of_busy_samples():
    from flamediag.diagnose import render_flamegraph, run_diagnosis

    diagnosis = run_diagnosis(str(SAMPLES / "healthy-6.1"))
    svg = render_flamegraph(diagnosis)
    frames = frames_of(svg)
    root_title = frames[0][0]
    assert root_title.startswith(f"all ({diagnosis.samples['busy']:,} samples, 100.00%)")
    idle = [cls for _, cls, _ in frames if "idle" in cls.split()]
    assert idle and all("hide" in cls.split() for cls in idle)
    assert f'data-all="{diagnosis.samples["total"]}"' in svg and 'id="idle"' in svg
    width = 1200 - 20
    visible = [rect for _, cls, rect in frames if "idle" not in cls.split()]
    assert all(float(rect.get("x")) + float(rect.get("width")) <= 10 + width + 0.01 for rect in visible)


def test_long_subtitle_wraps_instead_of_clipping():
    subtitle = " ".join(["word"] * 120)
    svg = render_svg([("a;b", 1)], subtitle=subtitle, width=600)
    lines = re.findall(r'<text[^>]*class="subtitle"[^>]*>([^<]*)</text>', svg)
    assert len(lines) > 1 and " ".join(lines) == subtitle
    assert all(len(line) * 0.59 * 12 <= 600 - 20 for line in lines)


def test_flamegraph_pl_flags(tmp_path):
    folded = tmp_path / "in.folded"
    folded.write_text("app;main;work_[k] 5\napp;main;idle 3\n")

    def draw(*flags):
        out = tmp_path / "out.svg"
        result = subprocess.run([sys.executable, "-m", "flamediag", "flamegraph", str(folded), "-o", str(out), *flags],
                                capture_output=True, text=True, cwd=ROOT / "lib")
        assert result.returncode == 0, result.stderr
        return out.read_text()

    plain = draw()
    inverted = draw("--inverted")
    y_of = lambda svg, name: float(next(r.get("y") for t, _, r in frames_of(svg) if t.startswith(name + " (")))
    assert y_of(plain, "all") > y_of(plain, "work") and y_of(inverted, "all") < y_of(inverted, "work")
    reverse = draw("--reverse")
    assert y_of(reverse, "work") > y_of(reverse, "main") > y_of(reverse, "app")     # leaf at the root
    tall = draw("--height", "24", "--fontsize", "14", "--hash", "--colors", "blue", "--notes", "run 42 -- <x>")
    assert 'height="23"' in tall and "font-size: 14px" in tall and "<!-- NOTES: run 42 - - &lt;x&gt; -->" in tall
