"""`flamediag facts` (lib/flamediag/commands/facts.py), run in-process through cli.run like the dispatcher."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from facts_helpers import FIXTURES, fixture, real_machine_files, write_bundle
from flamediag import cli
from flamediag.commands import facts as command

REAL_BUNDLE = FIXTURES / "bundle" / "capture-vm-futex"


def run(argv, capsys):
    code = cli.run("facts", command.main, argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_text_lists_facts_with_sources(capsys):
    code, out, err = run([str(REAL_BUNDLE), "--match", r"^(thp\.enabled|nic\.eth0\.driver)$"], capsys)
    assert code == 0 and err == ""
    assert out.splitlines() == ["nic.eth0.driver = virtio_net    (net/ethtool-i-eth0.txt)",
                                "thp.enabled = madvise    (system/thp.txt)", "2 facts",
                                # the capture's own sentence, as diagnose says it
                                "data_quality: perf: fields used: comm,pid,tid,cpu,time,period,event,ip,sym,dso"]


def test_json_and_unverified(tmp_path, capsys):
    top = write_bundle(tmp_path / "b", real_machine_files(), tamper="system/sysctl.txt")
    code, out, _ = run([str(top), "--format", "json", "--match", "^sysctl.vm.zone_reclaim_mode$"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["facts"] == {"sysctl.vm.zone_reclaim_mode": 0}
    assert doc["unverified"] == ["sysctl.vm.zone_reclaim_mode"]
    assert doc["sources"]["sysctl.vm.zone_reclaim_mode"] == "system/sysctl.txt"
    assert any("system/sysctl.txt" in p and "SHA256" in p for p in doc["bundle_problems"])
    assert "series" not in doc  # --match narrows the output


def test_ticket_paste(tmp_path, capsys):
    paste = tmp_path / "ticket.txt"
    paste.write_text("CPU0 is hot, see below\n" + fixture("mpstat/seed000-ixgbevf-12h-cpu0-soft59.txt")
                     + "\n$ sysctl vm.zone_reclaim_mode\nvm.zone_reclaim_mode = 1\n")
    code, out, _ = run([str(paste), "--match", r"^(mpstat\.soft_pct\.max_cpu|sysctl\..*)$"], capsys)
    assert code == 0
    assert "mpstat.soft_pct.max_cpu = 0    (pasted:mpstat)" in out
    assert "sysctl.vm.zone_reclaim_mode = 1    (pasted:sysctl)" in out


def test_quoted_paste_is_unwrapped_as_diagnose_does(tmp_path, capsys):
    """`> `-quoted ticket text (a mail reply, a markdown quote): the same loader as diagnose."""
    plain = "$ sysctl vm.zone_reclaim_mode\nvm.zone_reclaim_mode = 1\n" + fixture("numactl/one-node.txt")
    paste = tmp_path / "ticket.txt"
    paste.write_text("".join(f"> {line}\n" for line in plain.splitlines()))
    code, out, err = run([str(paste), "--match", r"^(sysctl\..*|numa\.nodes)$"], capsys)
    assert code == 0, err
    assert "sysctl.vm.zone_reclaim_mode = 1    (pasted:sysctl)" in out
    assert "numa.nodes = 1    (pasted:numactl.hardware)" in out


def test_facts_are_the_ones_diagnose_reads(capsys):
    from flamediag import inputs

    paste = Path(__file__).resolve().parents[1] / "fixtures" / "paste" / "mixed-ticket-futex-top-report-metrics.txt"
    code, out, _ = run([str(paste), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["facts"] == inputs.load(str(paste)).facts.as_dict() != {}


@pytest.mark.parametrize("argv,code,says", [
    (["/nonexistent/bundle.tar.gz"], 65, "no such file or directory"),
    (["--match", "(", str(REAL_BUNDLE)], 2, "not a valid regex"),
])
def test_errors_are_one_line_with_the_fix(argv, code, says, capsys):
    got, out, err = run(argv, capsys)
    assert got == code and out == ""
    assert says in err and len(err.strip().splitlines()) == 1


def test_text_without_evidence_is_unusable_input(tmp_path, capsys):
    junk = tmp_path / "notes.txt"
    junk.write_text("nothing to see here\n")
    code, _, err = run([str(junk)], capsys)
    assert code == 65 and "no bundle and no pasted evidence" in err


def test_help_ends_with_examples(capsys):
    with pytest.raises(SystemExit) as exit_info:
        command.build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0
    assert out.rstrip().splitlines()[-1].strip().startswith("flamediag facts bundle.tar.gz --format json")
    assert "examples:" in out


def test_json_output_escapes_bidi_and_c1_controls_but_keeps_the_values(tmp_path, capsys):
    """A fact value holding U+202E (right-to-left override) or U+009B (CSI) must not reach the
    terminal raw; the JSON still decodes to the same value."""
    paste = tmp_path / "ticket.txt"
    paste.write_bytes("vm.zone_reclaim_mode = 1\nkernel.hostname = a\u202eb\u009b31mc\n"
                      "    native_queued_spin_lock_slowpath\n    _raw_spin_lock\n".encode("utf-8"))
    code, out, _ = run([str(paste), "--format", "json"], capsys)
    assert code == 0
    assert "\u202e" not in out and "\u009b" not in out
    assert "\\u202e" in out and "\\u009b" in out
    assert "a\u202eb\u009b31mc" in json.dumps(json.loads(out), ensure_ascii=False)
