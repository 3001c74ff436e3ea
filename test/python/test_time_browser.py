"""timeline.svg, diff.svg and profile.speedscope.json in a real headless Chromium (playwright):
the SVGs render without errors (screenshots in test-artifacts/), and speedscope's own viewer
(npm package `speedscope`, pinned in test/browser/package.json, loaded offline from file://)
imports our file, with its time-order profiles."""
from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser_support import browser, open_page, shoot  # noqa: E402,F401 (browser: a fixture)
from timed_inputs import spike_script  # noqa: E402

VIEWER = ROOT / "test/browser/node_modules/speedscope/dist/release/index.html"


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "out"
    subprocess.run([str(ROOT / "bin/flamediag"), "diagnose", str(spike_script(tmp / "spike.perf")), "-o", str(out)],
                   check=True, capture_output=True)
    return out


def test_timeline_svg_renders(browser, diagnosed):
    page, events = open_page(browser, (diagnosed / "timeline.svg").as_uri(), height=800)
    box = page.evaluate("(() => { const b = document.documentElement.getBBox(); return [b.width, b.height]; })()")
    assert box[0] > 1000 and box[1] > 300
    assert page.locator("polyline").count() >= 3 and page.locator("rect.cell").count() == 4 * 60
    assert page.locator("text", has_text="spike 1").count() == 1
    shoot(page, "timeline-spike.png")
    assert events == {"errors": [], "dialogs": []}


def test_speedscope_viewer_imports_the_file_with_time_order_profiles(browser, diagnosed, tmp_path):
    if not VIEWER.exists():
        pytest.skip("speedscope viewer not installed: make venv-dev (npm ci --prefix test/browser)")
    profile = diagnosed / "profile.speedscope.json"
    loader = tmp_path / "load.js"     # what speedscope's own CLI writes for a local file
    loader.write_text(f"speedscope.loadFileFromBase64({json.dumps(profile.name)}, "
                      f"{json.dumps(base64.b64encode(profile.read_bytes()).decode())})")
    page, events = open_page(browser, f"{VIEWER.as_uri()}#localProfilePath={loader}", height=800)
    page.wait_for_function("document.body.innerText.includes('busy samples (all CPUs)')", timeout=60_000)
    assert "(1/5)" in page.locator("body").inner_text()
    assert page.locator("canvas").count() >= 1
    shoot(page, "speedscope-busy.png")
    page.keyboard.press("n")                      # next profile: CPU 0 in time order
    page.wait_for_function("document.body.innerText.includes('CPU 0 (time order) (2/5)')", timeout=30_000)
    shoot(page, "speedscope-cpu0-time-order.png")
    assert events == {"errors": [], "dialogs": []}


def test_diff_svg_renders(browser, tmp_path):
    out = tmp_path / "diff"
    subprocess.run([str(ROOT / "bin/flamediag"), "diff", str(ROOT / "samples/zone-reclaim-rhel6"),
                    str(ROOT / "samples/healthy-6.1"), "-o", str(out)], check=True, capture_output=True)
    page, events = open_page(browser, (out / "diff.svg").as_uri(), height=600)
    assert page.locator("g.f").count() > 50
    shrank = page.locator("g.f", has_text="zone_reclaim").first
    assert shrank.locator("rect").get_attribute("fill").endswith(",255)")     # blue: it shrank
    assert "% -> 0.00 % of busy samples" in shrank.locator("title").text_content()
    assert page.locator("#legend").count() == 1
    shoot(page, "diff-zone-reclaim-vs-healthy.png")
    assert events == {"errors": [], "dialogs": []}
