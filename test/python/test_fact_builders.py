"""The declarations of the parser modules hold: every fact a builder makes is declared and documented,
every collector a parser claims is read by some builder, dependencies between builders decide their
order, and playbooks never name a fact after one host's NIC or CPU."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from facts_helpers import FIXTURES, fixture, real_machine_files, write_bundle
from flamediag import collectors, facts, parsers, playbooks
from flamediag.bundle import open_bundle
from flamediag.facts import build_facts
from flamediag.parsers._builder import builds, pattern_regex

ROOT = Path(__file__).resolve().parents[2]
FACTS_DOC = ROOT / "doc" / "facts.md"
CAPTURE_BUNDLE = FIXTURES / "bundle" / "capture-vm-futex"
HOST_ITEMS = ("<nic>", "<cpu>")   # placeholders that name this host's objects, not kernel-defined ones


def documented_names():
    """First-column names of doc/facts.md (`a.b.top_cpu`, `.top_share` shorthand expanded)."""
    names = []
    for line in FACTS_DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| (`[^|]+`(?:,\s*`[^|]+`)*) \|", line)
        for name in re.findall(r"`([^`]+)`", match.group(1)) if match else []:
            names.append(names[-1].rsplit(".", 1)[0] + name if name.startswith(".") and names else name)
    return names


def declared_names():
    return [name for builder in facts.declared() for name in builder.makes]


def test_doc_facts_lists_exactly_the_declared_facts():
    documented, declared = set(documented_names()), set(declared_names())
    assert sorted(declared - documented) == [], "declared by a builder but not in doc/facts.md"
    assert sorted(documented - declared) == [], "in doc/facts.md but no builder declares it"


def test_a_fact_two_builders_make_is_a_declared_fallback():
    """`cpus`: lscpu (or the manifest) first, mpstat's CPU count only when it is still absent: the
    second maker must `use` the fact, so that the engine runs it after the first."""
    makers = {}
    for builder in facts.declared():
        for name in builder.makes:
            makers.setdefault(name, []).append(builder)
    for name, builders in makers.items():
        for later in builders[1:]:
            assert name in later.uses, f"{name} is made by {[b.label for b in builders]} without a declared order"


class RecordingReader:
    """A real bundle that remembers every collector a builder asked for."""

    def __init__(self, bundle):
        self.bundle, self.asked = bundle, set()
        self.manifest, self.unverified = bundle.manifest, bundle.unverified

    def read_text(self, name, phase=None, instance=None):
        self.asked.add(name)
        return self.bundle.read_text(name, phase=phase, instance=instance)

    def instances(self, name):
        return self.bundle.instances(name)

    def source(self, name, phase=None, instance=None):
        return self.bundle.source(name, phase, instance)


def fixture_bundles(tmp_path):
    """The real capture, every recorded fixture, and the same without sysstat (the /proc/stat fallbacks)."""
    files = real_machine_files()
    files.update({("ethtool.S", "start", "eth0"): fixture("ethtool/S-virtio.txt"),
                  ("ethtool.S", "end", "eth0"): fixture("ethtool/S-virtio.txt"),
                  ("cpufreq", "once", None): fixture("cpufreq/hand-intel-pstate-powersave.txt"),
                  ("uname", "once", None): fixture("uname/vm.txt"), ("lscpu", "once", None): fixture("lscpu/vm.txt")})
    without_sysstat = {key: text for key, text in files.items() if key[0] not in ("mpstat", "mpstat.json")}
    without_procstat = {key: text for key, text in without_sysstat.items() if key[0] != "procstat"}
    yield open_bundle(CAPTURE_BUNDLE)
    for index, chosen in enumerate((files, without_sysstat, without_procstat)):
        yield open_bundle(write_bundle(tmp_path / f"b{index}", chosen, {"kernel": None, "cpus": None}))


def test_every_fact_made_matches_its_builders_declaration(tmp_path):
    made = 0
    for bundle in fixture_bundles(tmp_path):
        result = build_facts(bundle)
        makes = {builder.label: builder.makes for builder in facts.declared()}
        for name, label in result.made_by.items():
            assert any(pattern_regex(p).match(name) for p in makes[label]), f"{label} made undeclared {name}"
        made += len(result.made_by)
        assert set(result.made_by) == result.names()
    assert made > 1000


def test_every_collector_a_parser_claims_is_read_by_a_builder(tmp_path):
    asked = set()
    for bundle in fixture_bundles(tmp_path):
        reader = RecordingReader(bundle)
        build_facts(reader)
        asked |= reader.asked
    claimed = set(parsers.claims())
    assert sorted(claimed - asked) == [], "claimed in COLLECTORS but no fact builder reads it"


def test_builders_run_after_what_they_use_whatever_the_definition_order():
    @builds("b.total", uses=("a.shared",))
    def consumer(src):
        pass

    @builds("a.count", shares=("a.shared",))
    def provider(src):
        pass

    ordered = facts.order([consumer.builder, provider.builder])
    assert [b.function for b in ordered] == [provider, consumer]
    nic_load = next(b for b in facts.plan() if b.function.__name__ == "nic_irq_load_facts")
    position = {b.label: i for i, b in enumerate(facts.plan())}
    assert position[nic_load.label] > position["interrupts.interrupt_facts"]
    assert position["mpstat.utilisation_facts"] > position["lscpu.cpu_count_facts"]  # mpstat sets cpus last


def test_a_builder_using_what_nobody_provides_or_a_cycle_is_refused():
    @builds("x.one", uses=("nobody.shares.this",))
    def orphan(src):
        pass

    with pytest.raises(RuntimeError, match="uses 'nobody.shares.this', which no builder makes or shares"):
        facts.order([orphan.builder])

    @builds("p.one", uses=("q.one",))
    def p_builder(src):
        pass

    @builds("q.one", uses=("p.one",))
    def q_builder(src):
        pass

    with pytest.raises(RuntimeError, match="cycle"):
        facts.order([p_builder.builder, q_builder.builder])


def host_specific(name: str) -> bool:
    """Matches a declared fact only through a host placeholder (`nic.eth0.rx_queues`, `mpstat.soft_pct.3`)."""
    matching = [p for p in declared_names() if pattern_regex(p).match(name)]
    return bool(matching) and all(any(item in p for item in HOST_ITEMS) for p in matching)


def test_playbooks_use_aggregates_not_facts_named_after_one_nic_or_cpu():
    assert host_specific("nic.eth0.rx_queues") and host_specific("mpstat.soft_pct.0")
    assert not host_specific("nic.rx_queues.min") and not host_specific("nic.irqs.delta.total")
    named = [(p.id, check["fact"]) for p in playbooks.load_all() for check in p.checks if host_specific(check["fact"])]
    assert named == []


def test_every_parser_quotes_sample_input_and_has_real_or_hand_fixtures():
    for name, module in parsers.all_modules().items():
        assert "Sample input::" in (module.__doc__ or ""), f"parsers/{name}.py: no `Sample input::` in its docstring"
        assert "Examples:" in (module.__doc__ or ""), f"parsers/{name}.py: no doctest `Examples:`"
        assert any((FIXTURES / name).glob("*.txt")), f"test/fixtures/parsers/{name}/ has no fixture"


def test_lost_without_names_collectors_of_the_table():
    assert set(facts.lost_without()) <= set(collectors.table())
    assert "mpstat" in facts.lost_without()
