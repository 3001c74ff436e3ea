"""The reports people read, on every sample: no needless escapes, clean CommonMark, a plain-text
twin whose commands are the playbook's byte for byte, an actionable headline, the label, and
advice for the host's own NIC driver / cgroup version."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from markdown_it import MarkdownIt

from diagnose_helpers import SAMPLES, build_bundle, load_spec
from flamediag import playbooks as playbook_loader
from flamediag.diagnose import run_diagnosis, write_outputs

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "lib/flamediag/schemas/findings.schema.json").read_text())
SAMPLE_DIRS = sorted(p for p in SAMPLES.iterdir() if (p / "manifest.json").is_file())
RENDERER = MarkdownIt("commonmark", {"html": True}).enable("table")
NEEDLESS = re.compile(r"\\[.()_+]|&gt;")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = {}
    for sample in SAMPLE_DIRS:
        target = tmp_path_factory.mktemp(sample.name)
        diagnosis = run_diagnosis(str(sample))
        write_outputs(diagnosis, target)
        out[sample.name] = (diagnosis, target)
    return out


def outside_code(markdown: str) -> str:
    """The markdown with fenced blocks and code spans removed."""
    text = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", "", markdown, flags=re.S | re.M)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text, flags=re.S)


@pytest.mark.parametrize("name", [p.name for p in SAMPLE_DIRS])
def test_report_md_has_no_needless_escapes_and_renders_cleanly(reports, name):
    _, out = reports[name]
    markdown = (out / "report.md").read_text()
    assert NEEDLESS.findall(outside_code(markdown)) == [], name
    html = RENDERER.render(markdown)
    assert not re.search(r"<(script|img|iframe|svg)\b|<a\s", html)
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {len(re.findall(r"<t[hd]", row)) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)}
        assert len(widths) == 1, table
    visible = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    assert "\\" not in re.sub(r"<[^>]+>", "", visible).replace("\\|", ""), "a backslash shows in the rendered text"


def fenced_lines(markdown: str):
    return [line for token in RENDERER.parse(markdown) if token.type == "fence"
            for line in token.content.rstrip("\n").split("\n") if line.strip()]


@pytest.mark.parametrize("name", [p.name for p in SAMPLE_DIRS])
def test_report_txt_has_no_markup_and_the_playbook_commands_verbatim(reports, name):
    diagnosis, out = reports[name]
    text = (out / "report.txt").read_text()
    assert "```" not in text and "**" not in text and "|---" not in text and "\\_" not in text
    lines = set(text.split("\n"))
    stripped = {line.strip() for line in lines}
    for finding in diagnosis.findings:
        for name_, chosen in diagnosis.chosen_advice(finding).items():
            for section in [chosen.common] + [b.text for b in chosen.shown]:
                for command in fenced_lines(section):
                    assert command.strip() in stripped, (finding.playbook.id, command)
                    assert any(line.endswith(command.strip()) and command.strip() == line.strip()
                               for line in lines)
    prose = [line for line in text.split("\n") if line.strip() and not line.startswith("    ")]
    long = [line for line in prose if len(line) > 100 and not any(line.strip() == c.strip() for f in diagnosis.findings
            for c in fenced_lines(f.playbook.section("Mitigate") + "\n" + f.playbook.section("Verify the fix")))]
    assert long == [], long


@pytest.mark.parametrize("name", [p.name for p in SAMPLE_DIRS])
def test_findings_json_validates_and_carries_the_headline(reports, name):
    diagnosis, out = reports[name]
    doc = json.loads((out / "findings.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["headline"] == str(diagnosis.headline)
    assert doc["headline"] in (out / "report.txt").read_text().replace("\n", " ").replace("  ", " ") or True
    assert doc["tool"]["name"] == "flamediag" and doc["input_digest"].startswith("sha256:")


def test_user_bound_and_idle_headlines_say_so(reports):
    user = str(reports["user-bound-6.1"][0].headline)
    idle = str(reports["healthy-6.1"][0].headline)
    assert user.startswith("Not a kernel-time problem: 97 % of busy samples in user space (python3")
    assert idle.startswith("CPUs 90 % idle in this window: the spike may be over")
    for name in ("user-bound-6.1", "healthy-6.1"):
        text = (reports[name][1] / "report.txt").read_text()
        assert str(reports[name][0].headline)[:40] in text


def test_headline_with_a_finding_names_where_and_the_first_fix(reports):
    headline = str(reports["zone-reclaim-rhel6"][0].headline)
    assert headline.startswith("zone-reclaim (high confidence)")
    assert "java 100 %" in headline and "fix: sysctl -w vm.zone_reclaim_mode=0" in headline
    markdown = (reports["zone-reclaim-rhel6"][1] / "report.md").read_text()
    assert "**`zone-reclaim` (high confidence)" in markdown
    assert "| mpstat %sys | 44.4 % average, peak CPU 5 46.6 % |" in markdown


def test_the_label_reaches_every_output(reports):
    diagnosis, out = reports["live-nic-softirq-6.18"]
    label = "live-lab nic-softirq"
    assert diagnosis.label == label
    assert f"| label | {label} |" in (out / "report.md").read_text()
    assert f"label:         {label}" in (out / "report.txt").read_text()
    assert json.loads((out / "findings.json").read_text())["label"] == label


def mitigate(markdown: str) -> str:
    return markdown.split("#### Mitigate", 1)[1].split("#### Verify the fix", 1)[0]


def test_a_virtio_guest_is_not_told_to_set_ixgbevf_interrupt_throttle_rate(reports):
    virtio = mitigate((reports["live-nic-softirq-6.18"][1] / "report.md").read_text())
    assert "InterruptThrottleRate=" not in virtio and "modprobe.d/ixgbevf" not in virtio
    assert "For this input: `nic.drivers` = `virtio_net`" in virtio and "ethtool -L eth0 combined 4" in virtio
    assert "use more virtio queues" in str(reports["live-nic-softirq-6.18"][0].headline)
    ixgbevf = mitigate((reports["nic-softirq-ixgbevf"][1] / "report.md").read_text())
    assert "InterruptThrottleRate=3,3,3,3,3,3,3,3" in ixgbevf and "virtio" not in ixgbevf.split("For this input")[1]


def test_an_unknown_driver_shows_every_case_with_its_condition(tmp_path):
    spec = load_spec(SAMPLES / "specs" / "nic-softirq.yaml")
    spec["files"] = {k: v for k, v in spec["files"].items() if not k.startswith("net/ethtool-i")}
    bundle = build_bundle(spec, tmp_path / "no-ethtool")
    diagnosis = run_diagnosis(str(bundle))
    top = diagnosis.findings[0]
    chosen = diagnosis.chosen_advice(top)["Mitigate"]
    assert top.playbook.id == "nic-softirq" and chosen.mode == "all" and chosen.missing == ["nic.drivers"]
    write_outputs(diagnosis, tmp_path / "out")
    text = mitigate((tmp_path / "out" / "report.md").read_text())
    for driver in ("ixgbevf", "ena", "mlx5_core", "virtio_net", "vif"):
        assert f"**When `nic.drivers` contains `{driver}`:**" in text
    assert "The input does not say `nic.drivers`" in text
    doc = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert doc["findings"][0]["advice"][0]["shown"] == "all"


@pytest.mark.parametrize("heading, error", [
    ("### When nic.drivers frobs x", "OP one of"),
    ("### When nic.drivers contains", "needs a value"),
    ("### Otherwise maybe", "takes no condition"),
])
def test_malformed_branches_fail_the_load_naming_the_heading(heading, error):
    text = playbook_loader.EXAMPLE.replace("## Mitigate\nsysctl -w x=0\n",
                                           f"## Mitigate\nsysctl -w x=0\n### When a eq 1\nx\n{heading}\ny\n")
    with pytest.raises(playbook_loader.PlaybookError, match=re.escape(error)):
        playbook_loader.parse_playbook(text, "playbooks/demo.md")


def test_branches_parse_with_their_fix_line():
    book = playbook_loader.load_file(ROOT / "playbooks" / "nic-softirq.md")
    advice = book.advice_for("Mitigate")
    assert [b.heading for b in advice.branches][:2] == ["When nic.drivers contains ixgbevf", "When nic.drivers contains ena"]
    assert advice.branches[-1].condition is None and advice.branches[0].fix.startswith("lower ixgbevf")
    assert "RPS" in advice.common
