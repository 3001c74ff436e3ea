"""lib/collectors.tsv is the one collector table: every collector has a reader (a parser that claims
it, a stack reader, or `raw`), capture's snippets exist by name, and the bundle reader, the sample
generator and doc/bundle-format.md take their names and paths from it."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from flamediag import bundle, collectors, inputs, parsers

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "lib" / "capture" / "snippets.bash"
PERF_BASH = ROOT / "lib" / "capture" / "perf.bash"
DOC = ROOT / "doc" / "bundle-format.md"


def unread(table) -> list:
    """Sentences for collectors whose `reader` has nothing behind it (the suite's rule)."""
    problems = []
    claims = parsers.claims()
    for name, collector in table.items():
        if collector.reader == "parser" and name not in claims:
            problems.append(f"{name}: reader is parser, but no module of lib/flamediag/parsers lists it in COLLECTORS")
        if collector.reader != "parser" and name in claims:
            problems.append(f"{name}: parsers/{claims[name]}.py reads it, but its reader is {collector.reader}")
        if (collector.reader == "stacks") != (name in inputs.STACK_READERS):
            problems.append(f"{name}: reader {collector.reader}, but inputs.STACK_READERS "
                            f"{'has' if name in inputs.STACK_READERS else 'lacks'} it")
    problems += [f"{name}: parsers/{module}.py claims a collector the table lacks"
                 for name, module in parsers.claims().items() if name not in table]
    return problems


def test_every_collector_has_a_parser_a_stack_reader_or_is_declared_raw():
    assert unread(collectors.table()) == []


def write_table(directory: Path, extra_line: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "collectors.tsv"
    path.write_text(collectors.TSV.read_text(encoding="utf-8") + extra_line, encoding="utf-8")
    return path


def test_a_new_collector_without_a_parser_or_raw_declaration_fails(tmp_path):
    line = "proc.zoneinfo\tstart,end\t-\t5\t1024\t-\tsnap/{phase}/proc-zoneinfo.txt\tparser\tcat {proc}/zoneinfo\n"
    problems = unread(collectors.table(write_table(tmp_path, line)))
    assert problems == ["proc.zoneinfo: reader is parser, but no module of lib/flamediag/parsers lists it in COLLECTORS"]
    raw = collectors.table(write_table(tmp_path / "raw", line.replace("\tparser\t", "\traw\t")))
    assert unread(raw) == []
    with pytest.raises(collectors.TableError, match=r"collectors.tsv:\d+: 8 tab-separated fields, want 9"):
        collectors.table(write_table(tmp_path / "old", line.replace("\tparser", "")))
    with pytest.raises(collectors.TableError, match="reader 'maybe' is not one of parser, stacks, raw"):
        collectors.table(write_table(tmp_path / "bad", line.replace("\tparser\t", "\tmaybe\t")))


def test_bundle_reader_falls_back_to_the_table_paths():
    assert bundle.DEFAULT_PATHS == collectors.default_paths()
    assert bundle.DEFAULT_PATHS["ethtool.S"] == "snap/{phase}/ethtool-S-{instance}.txt"
    assert set(bundle.DEFAULT_PATHS) == set(collectors.table())


def make_sample_module():
    loader = importlib.machinery.SourceFileLoader("make_sample", str(ROOT / "samples" / "tools" / "make-sample"))
    spec = importlib.util.spec_from_loader("make_sample", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_sample_generator_names_every_collector_path_with_its_manifest_phase():
    make_sample = make_sample_module()
    for collector in collectors.table().values():
        for phase in collector.phases:
            path = collector.path(phase, "eth0" if collector.each == "nic" else None)
            want_instance = "eth0" if collector.each == "nic" else None
            assert make_sample.collector_for(path) == (collector.name, phase, want_instance), path
    assert make_sample.collector_for("perf/record.log") == ("perf.record", "window", None)


def snippet_functions():
    listing = subprocess.run(["bash", "-c", f"source {SNIPPETS} && declare -F"], capture_output=True, text=True,
                             check=True).stdout
    return {line.split()[-1][len("snip_"):] for line in listing.splitlines() if line.split()[-1].startswith("snip_")}


def test_every_snippet_the_table_runs_exists_and_every_snippet_is_run():
    wanted = {re.sub("-", "_", c.argv.split()[1]) for c in collectors.table().values() if c.argv.startswith("@snip ")}
    wanted |= {name.replace("-", "_") for name in re.findall(r"snippets\.bash\"? (\S+)", PERF_BASH.read_text())}
    defined = snippet_functions()
    assert sorted(wanted - defined) == [], "collectors.tsv or perf.bash runs a snippet snippets.bash lacks"
    assert sorted(defined - wanted) == [], "snip_ function no collector runs"


def test_an_unknown_snippet_exits_2_naming_it():
    result = subprocess.run(["bash", str(SNIPPETS), "no-such"], capture_output=True, text=True)
    assert result.returncode == 2 and "unknown snippet 'no-such'" in result.stderr
    result = subprocess.run(["bash", str(SNIPPETS), "clocksource", str(ROOT / "no" / "sys")], capture_output=True, text=True)
    assert result.returncode == 3  # dispatched by name: the snippet ran and found no clocksource


def test_bundle_format_doc_shows_the_table_as_generated():
    text = DOC.read_text(encoding="utf-8")
    assert collectors.with_table(text) == text, "doc/bundle-format.md is stale: run `make docs`"
    assert "| `bpftrace.profile` | window |  | `bpf/bpftrace-profile.txt` | stacks |" in text
