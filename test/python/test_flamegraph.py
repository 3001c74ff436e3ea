"""flamegraph: escaping of hostile frames (valid XML, only our script), palettes, highlights and
legend, minwidth elision on 100 000 stacks with the size on stderr."""
from __future__ import annotations

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
    svg = render_svg(stacks, highlights=[Highlight("nic-softirq", re.compile(r"net_rx_action|ixgbevf_poll"), "#ff0000")])
    root = ET.fromstring(svg.encode())
    fill_of = {}
    for group in root.iter(SVG_NS + "g"):
        title = group.find(SVG_NS + "title")
        if title is not None:
            fill_of[title.text.split(" (")[0]] = group.find(SVG_NS + "rect").get("fill")
    assert fill_of["net_rx_action"] == fill_of["ixgbevf_poll"] == "#ff0000"
    assert fill_of["[softirq]"] == palette_color("[softirq]", "context")
    assert fill_of["do_idle"] == palette_color("do_idle", "kernel")
    assert fill_of["JS:*hot"] == palette_color("JS:*hot", "jit")
    assert fill_of["main"] == palette_color("main", "user")
    assert len({fill_of["[softirq]"], fill_of["do_idle"], fill_of["JS:*hot"], fill_of["main"]}) == 4
    legend = root.find(f".//{SVG_NS}g[@id='legend']")
    labels = [t.text for t in legend.iter(SVG_NS + "text")]
    assert labels == ["kernel", "user", "JIT", "context", "nic-softirq"]
    assert "#ff0000" in [r.get("fill") for r in legend.iter(SVG_NS + "rect")]


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
