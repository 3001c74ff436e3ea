"""`flamediag diagnose` end to end: every input kind, outputs, exit codes, data quality, canaries."""
from __future__ import annotations

import gzip
import json
import shutil
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from diagnose_helpers import FIXTURES, ROOT, SAMPLES, build_bundle, read_findings, run_cli, spec_from_yaml
from flamediag import flamegraph, perfscript

SCHEMA = json.loads((ROOT / "lib" / "flamediag" / "schemas" / "findings.schema.json").read_text())
ZONE = SAMPLES / "zone-reclaim-rhel6"
SEED_003_REPORT = """\
-  33.01%             java  [kernel.kallsyms]                     [k] _spin_lock_irq
   - _spin_lock_irq
      - 98.89% shrink_inactive_list
           shrink_mem_cgroup_zone
           shrink_zone
           zone_reclaim
           get_page_from_freelist
         - __alloc_pages_nodemask
            - 89.56% alloc_pages_current
               - 79.46% __page_cache_alloc
                    grab_cache_page_write_begin
                    ext4_da_write_begin
                    generic_file_buffered_write
                    vfs_write
                    sys_write
                    system_call_fastpath
+  14.24%             java  [kernel.kallsyms]                     [k] _spin_lock
+   4.75%             java  libjvm.so                             [.] SpinPause
+   1.58%             init  [kernel.kallsyms]                     [k] intel_idle
"""


def diagnose(tmp_path, source, *extra, env=None):
    out = tmp_path / "out"
    result = run_cli("diagnose", source, "-o", out, *extra, env=env)
    return result, out


def validate(doc):
    jsonschema.validate(doc, SCHEMA)
    return doc


def test_bundle_directory_gives_the_finding_and_three_valid_outputs(tmp_path):
    result, out = diagnose(tmp_path, ZONE, "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = validate(json.loads(result.stdout))
    assert doc == read_findings(out)
    assert doc["findings"][0]["id"] == "zone-reclaim" and doc["findings"][0]["confidence"] == "high"
    assert result.stderr.splitlines()[0].startswith("zone-reclaim (high confidence)")
    assert (out / "report.md").read_text().startswith("# flamediag diagnosis")
    ET.fromstring((out / "flamegraph.svg").read_bytes())   # well-formed XML


def test_svg_highlights_the_finding_frames_in_their_own_colour(tmp_path):
    """zone-reclaim's frames are drawn in the playbook's own colour, far from the kernel and user palettes."""
    from flamediag import playbooks
    from flamediag.flamegraph import Highlight, assign_highlight_colors

    book = next(b for b in playbooks.load_all() if b.id == "zone-reclaim")
    _, out = diagnose(tmp_path, ZONE)
    svg = (out / "flamegraph.svg").read_text()
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    colour = assign_highlight_colors([Highlight("zone-reclaim", frozenset(), book.color)])[0].color
    assert colour == "rgb({},{},{})".format(*(int(book.color[i:i + 2], 16) for i in (1, 3, 5)))
    coloured = {g.find("s:title", ns).text.split(" (")[0] for g in root.iter("{http://www.w3.org/2000/svg}g")
                if g.find("s:rect", ns) is not None and g.find("s:rect", ns).get("fill") == colour
                and "hl" in g.get("class").split()}
    assert {"zone_reclaim", "_spin_lock_irq"} <= coloured
    assert "get_page_from_freelist" not in coloured


def test_tar_gz_bundle(tmp_path):
    archive = tmp_path / "flamediag-hadoop-dn17-20150925T031500Z.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(ZONE, arcname="flamediag-hadoop-dn17-20150925T031500Z")
    result, out = diagnose(tmp_path, archive)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    assert doc["findings"][0]["id"] == "zone-reclaim" and doc["host"] == "hadoop-dn17"


@pytest.mark.parametrize("compress", [False, True])
def test_plain_perf_script_without_metrics_is_medium(tmp_path, compress):
    data = gzip.decompress((ZONE / "perf" / "perf.script.gz").read_bytes())
    path = tmp_path / ("perf.script.gz" if compress else "perf.txt")
    path.write_bytes(gzip.compress(data) if compress else data)
    result, out = diagnose(tmp_path, path)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    assert doc["findings"][0]["id"] == "zone-reclaim" and doc["findings"][0]["confidence"] == "medium"
    assert any("no metrics" in line for line in doc["data_quality"])
    assert doc["window"]["seconds"] == pytest.approx(9.99, abs=0.05)


def test_folded_stacks(tmp_path):
    with open(ZONE / "perf" / "perf.script.gz", "rb") as handle:
        profile = perfscript.read_profile(handle)
    folded = tmp_path / "zone.folded"
    folded.write_text("".join(f"{stack} {int(weight)}\n" for stack, weight in flamegraph.folded_lines(profile)))
    result, out = diagnose(tmp_path, folded)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    assert doc["findings"][0]["id"] == "zone-reclaim"


def test_ticket_paste_of_the_seed_perf_report(tmp_path):
    paste = tmp_path / "ticket.txt"
    paste.write_text("From the on-call engineer:\n\n" + SEED_003_REPORT)
    result, out = diagnose(tmp_path, paste)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    assert doc["findings"] and doc["findings"][0]["id"] == "zone-reclaim"


@pytest.mark.parametrize("content", [b"", b"hello, this is not a profile\n", bytes(range(256)) * 10])
def test_unusable_input_exits_65_with_one_line(tmp_path, content):
    path = tmp_path / "input.bin"
    path.write_bytes(content)
    result, out = diagnose(tmp_path, path)
    assert result.returncode == 65, (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "ERROR" in result.stderr
    assert not out.exists()


def test_missing_input_exits_65(tmp_path):
    result, _ = diagnose(tmp_path, tmp_path / "nope.tar.gz")
    assert result.returncode == 65 and "no such file" in result.stderr


def test_directory_that_is_not_a_bundle_exits_65(tmp_path):
    (tmp_path / "empty").mkdir()
    result, _ = diagnose(tmp_path, tmp_path / "empty")
    assert result.returncode == 65


RESTRICTED = """
name: restricted
kernel: 6.1.0-18-amd64
cpus: 2
duration: 2
kernel_symbols: restricted
idle: {comm: swapper, pid: 0, stack: "secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;default_idle"}
stacks:
  - {comm: java, pid: 10, samples: 150, stack: "entry_SYSCALL_64;node_reclaim;shrink_node;_raw_spin_lock;native_queued_spin_lock_slowpath"}
  - {comm: java, pid: 10, samples: 20, dso: /usr/lib/jvm/libjvm.so, stack: "start_thread_[u];SpinPause_[u]"}
files:
  system/sysctl.txt: |
    vm.zone_reclaim_mode = 1
"""


def test_restricted_kernel_symbols_are_inconclusive_not_nothing_found(tmp_path):
    bundle = build_bundle(spec_from_yaml(RESTRICTED), tmp_path / "restricted")
    result, out = diagnose(tmp_path, bundle)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    assert any("inconclusive" in line for line in doc["data_quality"])
    inconclusive = [r["id"] for r in doc["ruled_out"] if r["reason"].startswith("inconclusive")]
    assert "zone-reclaim" in inconclusive and "nic-softirq" in inconclusive
    assert not [f for f in doc["findings"] if f["id"] == "zone-reclaim"]
    assert result.stderr.startswith("Inconclusive")
    assert "inconclusive" in (out / "report.md").read_text()


INTERRUPTED = """
name: interrupted
kernel: 6.1.0-18-amd64
cpus: 2
duration: 30
duration_actual: 12.4
complete: false
end_signal: SIGINT
lost_chunks: 14
idle: {comm: swapper, pid: 0, stack: "secondary_startup_64;start_secondary;cpu_startup_entry;do_idle;default_idle"}
stacks:
  - {comm: dd, pid: 10, samples: 50, stack: "entry_SYSCALL_64;ksys_write;vfs_write"}
extra_collectors:
  - {name: mpstat, phase: window, status: missing, reason: "mpstat not found", fix: "apt-get install sysstat"}
"""


def test_interrupted_capture_and_lost_chunks_are_reported(tmp_path):
    bundle = build_bundle(spec_from_yaml(INTERRUPTED), tmp_path / "interrupted")
    result, out = diagnose(tmp_path, bundle)
    doc = validate(read_findings(out))
    assert "capture interrupted after 12.4 of 30 s by SIGINT: the window may miss the spike" in doc["data_quality"]
    assert any(line.startswith("perf lost 14 chunks") for line in doc["data_quality"])
    assert doc["window"]["seconds"] == 12.4
    report = (out / "report.md").read_text()
    # each said once: the cut-short window, and the missing tool (with what the diagnosis loses)
    assert report.count("capture interrupted") == 1 and report.count("mpstat not found") == 1, report
    assert "mpstat not captured (missing: mpstat not found): per-CPU %sys/%soft unknown" in doc["data_quality"]


def test_tampered_evidence_file_is_marked_unverified(tmp_path):
    bundle = tmp_path / "zone"
    shutil.copytree(ZONE, bundle)
    sysctl = bundle / "system" / "sysctl.txt"
    sysctl.write_text(sysctl.read_text() + "vm.swappiness = 10\n")
    result, out = diagnose(tmp_path, bundle)
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    setting = next(e for e in doc["findings"][0]["evidence"] if e["source"] == "system/sysctl.txt")
    assert "unverified" in setting["text"]
    assert any("system/sysctl.txt" in line and "SHA256" in line for line in doc["data_quality"])
    assert "**unverified**" in (out / "report.md").read_text()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_canary_playbooks_end_to_end(tmp_path, how):
    canaries = str(FIXTURES / "playbooks")
    if how == "flag":
        result, out = diagnose(tmp_path, ZONE, "--playbooks", canaries)
    else:
        result, out = diagnose(tmp_path, ZONE, env={"FLAMEDIAG_PLAYBOOKS": canaries})
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    always = next(f for f in doc["findings"] if f["id"] == "always-fires")
    assert always["share"] == 1.0 and always["confidence"] == "medium"
    assert {"id": "never-fires", "code": "no_match", "reason": "no busy sample carries the signature"} in doc["ruled_out"]
    report = (out / "report.md").read_text()
    assert "always-fires" in report and "never-fires" in report


def test_default_output_directory_is_named_after_the_input(tmp_path):
    result = run_cli("diagnose", ZONE, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "zone-reclaim-rhel6-diagnosis" / "findings.json").exists()


def test_markdown_format_prints_the_report(tmp_path):
    result, out = diagnose(tmp_path, ZONE, "--format", "markdown")
    assert result.stdout == (out / "report.md").read_text()


def test_min_share_override_rules_out_below_it(tmp_path):
    result, out = diagnose(tmp_path, ZONE, "--min-share", "90")
    doc = read_findings(out)
    assert not doc["findings"]
    assert any(r["id"] == "zone-reclaim" and "90" in r["reason"] for r in doc["ruled_out"])
    assert "Top kernel hotspots" in (out / "report.md").read_text()
    assert doc["hotspots"][0]["frame"] == "_spin_lock_irq"
    assert doc["hotspots"][0]["example_stack"].endswith("zone_reclaim;shrink_zone;shrink_mem_cgroup_zone;shrink_inactive_list;_spin_lock_irq")


def test_usage(tmp_path):
    helped = run_cli("diagnose", "--help")
    assert helped.returncode == 0 and "examples:" in helped.stdout
    assert helped.stdout.rstrip().splitlines()[-1].strip().startswith("flamediag diagnose")
    bad = run_cli("diagnose", "--no-such-flag", ZONE)
    assert bad.returncode == 2
    out_of_range = run_cli("diagnose", ZONE, "--min-share", "150", "-o", tmp_path / "x")
    assert out_of_range.returncode == 2


def test_unwritable_output_directory_names_the_fix(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run_cli("diagnose", ZONE, "-o", blocker / "sub")
    assert result.returncode != 0 and "-o" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_evidence_says_which_items_support_and_which_go_against(tmp_path):
    # The real 6.18 nic-softirq capture: NET_RX all on CPU 0 (for), but no time_squeeze (against).
    result, out = diagnose(tmp_path, SAMPLES / "live-nic-softirq-6.18")
    assert result.returncode == 0, result.stderr
    doc = validate(read_findings(out))
    evidence = doc["findings"][0]["evidence"]
    assert all(e["supports"] in (True, False, None) for e in evidence)
    assert any(e["supports"] is True and "NET_RX" in e["text"] for e in evidence)
    against = [e for e in evidence if e["supports"] is False]
    assert any("time_squeeze" in e["text"] for e in against)
    report = (out / "report.md").read_text()
    assert "- against: " in report
