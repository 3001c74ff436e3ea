"""Shared by the browser tests: Debian's chromium driven by playwright (skipped with the reason
when either is missing), a page that records script errors and dialogs, screenshots."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
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


def open_page(browser, url: str, height: int = 700):
    """A page at `url` and the {"errors": [...], "dialogs": [...]} it raised (dialogs dismissed)."""
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
