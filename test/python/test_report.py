"""report.md: every data-derived string is escaped; the rendered HTML has nothing from the data."""
from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from diagnose_helpers import FIXTURES, build_bundle, spec_from_yaml
from flamediag.diagnose import load_playbooks, render_report, run_diagnosis
from flamediag.report import code_block, code_span, md_escape, stack_lines, strip_controls

PAYLOADS = [
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "]]></script><script>alert(1)</script>",
    "`|[x](javascript:alert(1))",
    "&amp;&lt;",
    "\x1b]0;owned\x07",
    "\u202eevil",
    "<img src=x onerror=alert(1)>",
    "**bold** _em_ # head",
    "http://evil.example/x www.evil.example",
]
RENDERER = MarkdownIt("commonmark", {"html": True}).enable("table")


def html_of(markdown: str) -> str:
    return RENDERER.render(markdown)


def assert_no_data_html(html_text: str):
    assert not re.search(r"<(script|svg|img|iframe|a)\b", html_text, re.I), html_text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_inline_escape_renders_as_literal_text(payload):
    rendered = html_of(f"- {md_escape(payload)}\n\n| a |\n|---|\n| {md_escape(payload)} |\n")
    assert_no_data_html(rendered)
    assert "<em>" not in rendered and "<strong>" not in rendered and "<h1>" not in rendered
    assert rendered.count("<td>") == 1, "a pipe in the data split the table cell"
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    visible = strip_controls(payload)
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    if visible:
        assert text.count(visible) == 2, text


def test_controls_and_bidi_are_removed():
    assert strip_controls("a\x1b[31mb\x07c\u202ed\x00") == "abcd"


@pytest.mark.parametrize("text", ["plain", "a`b", "``x``", "`lead", "trail`", "a|b"])
def test_code_span_fence_is_longer_than_any_backtick_run(text):
    span = code_span(text)
    html = html_of(span)
    assert html.count("<code>") == 1
    inner = re.search(r"<code>(.*)</code>", html).group(1)
    assert inner == text.replace("<", "&lt;")


def test_code_block_survives_fences_inside():
    block = code_block("a\n```\n<script>\n````")
    html = html_of(block + "\nafter\n")
    assert html.count("<pre>") == 1 and "&lt;script&gt;" in html and "<p>after</p>" in html


def test_deep_stack_is_trimmed_root_first_leaf_last():
    lines = stack_lines([f"f{i}" for i in range(100)]).splitlines()
    assert lines[0] == "f0" and lines[-1] == "f99" and any("frames" in line for line in lines)
    assert len(lines) < 40


HOSTILE = """
name: hostile
host: "web<script>alert(1)</script>|`x`"
kernel: "6.1.0 [x](javascript:alert(1))"
cpus: 2
duration: 2
idle: {comm: swapper, pid: 0, stack: "start_secondary;cpu_startup_entry;do_idle;default_idle"}
stacks:
  - {comm: "ev<img src=x onerror=alert(1)>il|`", pid: 10, samples: 150,
     stack: "entry_SYSCALL_64;node_reclaim;_raw_spin_lock;native_queued_spin_lock_slowpath"}
  - {comm: "java", pid: 11, samples: 20,
     stack: "x_[u];]]></script><script>alert(1)</script>_[u];`|[x](javascript:alert(1))_[u]"}
files:
  system/sysctl.txt: |
    vm.zone_reclaim_mode = 1
"""


def test_full_report_of_a_hostile_bundle_has_no_html_from_data(tmp_path):
    bundle = build_bundle(spec_from_yaml(HOSTILE), tmp_path / "hostile")
    books = load_playbooks([str(FIXTURES / "playbooks")])
    diagnosis = run_diagnosis(str(bundle), loaded=books)
    markdown = render_report(diagnosis)
    html = html_of(markdown)
    assert not re.search(r"<(script|svg|img|iframe)\b", html, re.I)
    assert not re.search(r"<a\s", html)
    assert "\x1b" not in markdown
    # every table row keeps its column count: no pipe from the data leaked
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        widths = {len(re.findall(r"<t[hd]", row)) for row in rows}
        assert len(widths) == 1, table
    assert "zone-reclaim" in markdown


def test_report_sections_for_a_finding(tmp_path):
    bundle = build_bundle(spec_from_yaml(HOSTILE), tmp_path / "hostile")
    markdown = render_report(run_diagnosis(str(bundle)))
    for heading in ("## Findings", "Evidence:", "Hottest matching stack", "#### Mitigate", "#### Verify the fix",
                    "## Ruled out", "| host |"):
        assert heading in markdown
    assert "(from `system/sysctl.txt`)" in markdown


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

MARKDOWN_ALPHABET = st.sampled_from(list("`|[]()<>&*_#!~+-=.\\/:;'\" \tab1\x1b\x07\u202e\n") + ["www.", "://", "javascript:"])


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKDOWN_ALPHABET, max_size=40).map("".join))
def test_fuzz_escaped_text_is_literal_in_a_list_item_and_a_table_cell(payload):
    rendered = html_of(f"- {md_escape(payload)}\n\n| a |\n|---|\n| {md_escape(payload)} |\n")
    tags = set(re.findall(r"</?([a-z0-9]+)", rendered))
    assert tags <= {"ul", "li", "table", "thead", "tbody", "tr", "th", "td", "p"}, (payload, rendered)
    assert rendered.count("<td>") + rendered.count("<td ") <= 1
    visible = " ".join(strip_controls(payload).split())
    for tag in ("li", "td"):
        cell = re.search(rf"<{tag}>(.*?)</{tag}>", rendered, re.S)
        shown = html.unescape(re.sub(r"<[^>]+>", "", cell.group(1))) if cell else ""
        assert " ".join(shown.split()) == visible, (payload, rendered)


@settings(max_examples=200, deadline=None)
@given(st.lists(MARKDOWN_ALPHABET, min_size=1, max_size=30).map("".join))
def test_fuzz_code_span_round_trips(payload):
    clean = strip_controls(payload).replace("\n", " ")
    if not clean.strip(" ") or clean.strip("`") == "":
        return
    rendered = html_of("x " + code_span(payload))
    inner = re.search(r"<code>(.*)</code>", rendered, re.S)
    assert inner, rendered
    assert html.unescape(inner.group(1)) == clean
