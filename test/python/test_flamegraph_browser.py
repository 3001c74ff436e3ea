"""The SVG in a real headless browser (Debian chromium via playwright): loads without script
errors, a click zooms, search highlights with a matched percentage, hostile frame names fire no
dialog. Screenshots go to test-artifacts/."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

from browser_support import ARTIFACTS, browser, open_page  # noqa: E402,F401 (browser: a fixture)
from flamediag.collapse import CollapseOptions, collapse_file  # noqa: E402
from flamediag.flamegraph import Highlight, render_svg  # noqa: E402

HOSTILE = ["<script>alert(1)</script>", '"><svg onload=alert(2)>', "a & b", "x ]]> y",
           "<img src=x onerror=alert(3)>", "javascript:alert(4)"]

def open_svg(browser, path: Path, query: str = ""):
    page, events = open_page(browser, path.as_uri() + query)
    page.wait_for_function("typeof frames !== 'undefined' && frames.length > 0")
    return page, events


def real_svg(tmp_path: Path) -> Path:
    result = collapse_file(str(ROOT / "test/fixtures/perf-script/cpu-softirq.perf"),
                           CollapseOptions(kernel=True, jit=True, context=True))
    stacks = [(stack.decode("utf-8", "replace"), count) for stack, count in result.counts.items()]
    svg = render_svg(stacks, title="cpu-softirq fixture",
                     highlights=[Highlight("softirq", __import__("re").compile(r"handle_softirqs|rcu_core"))])
    path = tmp_path / "cpu.svg"
    path.write_text(svg)
    return path


def frame_box(page, name: str):
    return page.evaluate("""name => { for (const g of frames) if (g._name === name) {
        const r = g.querySelector('rect'); return [parseFloat(r.getAttribute('x')), parseFloat(r.getAttribute('width'))]; }
        return null; }""", name)


def test_click_zooms_and_reset_restores(browser, tmp_path):
    page, events = open_svg(browser, real_svg(tmp_path))
    before = frame_box(page, "handle_softirqs")
    page.locator("g.f", has_text="handle_softirqs").first.click()
    after = frame_box(page, "handle_softirqs")
    assert after != before and after[1] > before[1]
    assert "hide" not in (page.locator("#unzoom").get_attribute("class") or "").split()
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 1e6)")          # the root is at the bottom
    page.screenshot(path=str(ARTIFACTS / "flamegraph-zoomed.png"))
    page.locator("#unzoom").click()
    assert frame_box(page, "handle_softirqs") == before
    page.hover("g.f >> nth=3")
    assert "samples" in page.locator("#details").text_content()
    assert events == {"errors": [], "dialogs": []}


def test_search_highlights_with_matched_percent(browser, tmp_path):
    page, events = open_svg(browser, real_svg(tmp_path), "?s=" + "softirq")
    matched = page.locator("#matched").text_content()
    assert matched.startswith("Matched: ") and matched.endswith("%") and matched != "Matched: 0.0%"
    assert page.locator("g.f.match").count() > 0
    assert page.locator("g.f.match rect").first.get_attribute("fill") == "rgb(230,0,230)"
    page.evaluate("window.scrollTo(0, 1e6)")
    page.screenshot(path=str(ARTIFACTS / "flamegraph-search.png"))
    assert events == {"errors": [], "dialogs": []}


def test_hostile_frames_run_no_script(browser, tmp_path):
    stacks = [("app;" + ";".join(HOSTILE), 10)] + [(f"app;{name}", 3) for name in HOSTILE]
    path = tmp_path / "hostile.svg"
    path.write_text(render_svg(stacks, title="<script>alert('title')</script>"))
    page, events = open_svg(browser, path)
    for index in range(page.locator("g.f").count()):
        page.locator("g.f").nth(index).hover()
    page.locator("g.f", has_text="app").first.click()
    assert page.evaluate("document.querySelectorAll('script').length") == 1
    assert page.evaluate("document.querySelectorAll('img, foreignObject, iframe').length") == 0
    page.screenshot(path=str(ARTIFACTS / "flamegraph-hostile.png"))
    assert events == {"errors": [], "dialogs": []}


# --- the diagnoser's SVGs and report.md, as a person sees them ---------------------------------

from flamediag.diagnose import run_diagnosis, write_outputs  # noqa: E402

SAMPLES = ROOT / "samples"
SHOWN = ("live-nic-softirq-6.18", "zone-reclaim-rhel6", "thp-compaction-5.15")


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    out = {}
    for name in SHOWN:
        target = tmp_path_factory.mktemp(name)
        diagnosis = run_diagnosis(str(SAMPLES / name))
        write_outputs(diagnosis, target)
        out[name] = (diagnosis, target)
    return out


def visible_highlights(page):
    """Highlighted frames drawn inside the first screen, wide enough to see, with their outline."""
    return page.evaluate("""() => {
        const out = [];
        for (const g of document.querySelectorAll('g.f.hl')) {
            const r = g.querySelector('rect').getBoundingClientRect();
            const style = getComputedStyle(g.querySelector('rect'));
            if (r.width >= 1 && r.bottom <= window.innerHeight && r.top >= 0 && style.display !== 'none')
                out.push({name: g.querySelector('title').textContent, stroke: style.stroke,
                          width: parseFloat(style.strokeWidth), fill: g.querySelector('rect').getAttribute('fill')});
        }
        return out; }""")


@pytest.mark.parametrize("name", SHOWN)
def test_finding_frames_are_visible_and_outlined_in_the_first_screen(browser, diagnosed, name):
    diagnosis, out = diagnosed[name]
    page = browser.new_page(viewport={"width": 1250, "height": 900})
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto((out / "flamegraph.svg").as_uri())
    page.wait_for_function("typeof frames !== 'undefined' && frames.length > 0")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"flamegraph-{name}.png"))
    shown = visible_highlights(page)
    top = diagnosis.findings[0]
    assert shown, f"{name}: no highlighted frame in the first screen"
    assert all(item["stroke"] == "rgb(0, 0, 0)" and item["width"] >= 1 for item in shown)
    names = {item["name"].split(" (")[0] for item in shown}
    assert names & set(top.match.frames), (names, top.match.frames)
    painted = page.evaluate("""() => { let n = 0; for (const g of frames)
        { const r = g.querySelector('rect').getBoundingClientRect();
          if (!g.classList.contains('hide') && r.width > 2 && r.bottom <= window.innerHeight) n++; } return n; }""")
    assert painted >= 20, f"{name}: the first screen shows {painted} frames"
    assert errors == []


def test_show_idle_toggles_percentages_and_the_url_keeps_the_view(browser, tmp_path):
    diagnosis = run_diagnosis(str(SAMPLES / "healthy-6.1"))
    write_outputs(diagnosis, tmp_path)
    page = browser.new_page(viewport={"width": 1250, "height": 900})
    page.goto((tmp_path / "flamegraph.svg").as_uri())
    page.wait_for_function("typeof frames !== 'undefined' && frames.length > 0")
    root = lambda: page.evaluate("frames[0].querySelector('title').textContent")
    assert root().startswith(f"all ({diagnosis.samples['busy']:,} samples")
    assert page.locator("g.f.idle").first.is_hidden()
    page.locator("#idle").click()
    assert root().startswith(f"all ({diagnosis.samples['total']:,} samples")
    assert page.locator("g.f.idle").first.is_visible()
    assert "idle=1" in page.url
    page.locator("g.f", has_text="swapper").last.click()
    assert "x=" in page.url and "y=" in page.url
    again = browser.new_page(viewport={"width": 1250, "height": 900})
    again.goto(page.url)
    again.wait_for_function("typeof frames !== 'undefined' && frames.length > 0")
    assert again.evaluate("zoomed !== null && showIdle")
    again.locator("#ic").click()
    assert "i=1" in again.url
    page.screenshot(path=str(ARTIFACTS / "flamegraph-healthy-idle-zoomed.png"))


def test_report_md_renders_in_chromium(browser, diagnosed):
    from markdown_it import MarkdownIt

    _, out = diagnosed["zone-reclaim-rhel6"]
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render((out / "report.md").read_text())
    page_file = out / "report.html"
    page_file.write_text("<!doctype html><meta charset=utf-8><style>body{font-family:sans-serif;max-width:1100px}"
                         "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}</style>" + html)
    page = browser.new_page(viewport={"width": 1200, "height": 1400})
    page.goto(page_file.as_uri())
    assert page.locator("h1").first.text_content().startswith("flamediag diagnosis")
    headline = page.locator("p strong").first.text_content()
    assert headline.startswith("zone-reclaim (high confidence)") and "\\" not in headline
    assert "sysctl -w vm.zone_reclaim_mode=0" in page.locator("pre").nth(1).text_content()
    assert page.locator("table").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "report-zone-reclaim.png"), full_page=False)
