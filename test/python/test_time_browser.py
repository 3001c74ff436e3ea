"""timeline.svg, diff.svg and profile.speedscope.json in a real headless Chromium (playwright):
the SVGs render without errors (screenshots in test-artifacts/), and speedscope's own viewer
(npm package `speedscope`, pinned in test/browser/package.json, loaded offline from file://)
imports our file, with its time-order profiles."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timed_inputs import spike_script  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
VIEWER = ROOT / "test/browser/node_modules/speedscope/dist/release/index.html"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed (make venv-dev)")
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"{CHROMIUM} not found: apt-get install chromium to run the browser tests", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "out"
    subprocess.run([str(ROOT / "bin/flamediag"), "diagnose", str(spike_script(tmp / "spike.perf")), "-o", str(out)],
                   check=True, capture_output=True)
    return out


def open_page(browser, url: str, height: int = 800):
    page = browser.new_page(viewport={"width": 1250, "height": height})
    events = {"errors": [], "dialogs": []}
    page.on("pageerror", lambda err: events["errors"].append(str(err)))
    page.on("console", lambda msg: msg.type == "error" and events["errors"].append(msg.text))
    page.on("dialog", lambda dialog: (events["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(url)
    return page, events


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), timeout=120_000)


def test_timeline_svg_renders(browser, diagnosed):
    page, events = open_page(browser, (diagnosed / "timeline.svg").as_uri())
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
    page, events = open_page(browser, f"{VIEWER.as_uri()}#localProfilePath={loader}")
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
