"""Bounded fuzzing: every parser and the facts layer take arbitrary text without raising or hanging."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts_helpers import FIXTURES
from flamediag.facts import build_facts_from_sections
from flamediag.parsers import all_modules

MODULES = all_modules()
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
# Text that looks like the real thing, mutated: real fixture lines shuffled with junk.
REAL_LINES = sorted({line for path in FIXTURES.rglob("*.txt")
                     for line in path.read_text(errors="replace").splitlines()[:40]})
junk = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
# Real lines whose digits are swapped for look-alikes that str.isdigit()/float() treat specially.
ODD = ["\u00b2", "\u0661", "\u066b", "\u00a0", "\u2212", "nan", "inf", "1_0", "-", "", "\x00", "99999999999999999999999"]
mutated = st.builds(lambda line, digit, odd: line.replace(digit, odd),
                    st.sampled_from(REAL_LINES), st.sampled_from("0123456789"), st.sampled_from(ODD))
mixed = st.lists(st.one_of(st.sampled_from(REAL_LINES), mutated, junk), max_size=40).map("\n".join)


@pytest.mark.parametrize("name", sorted(MODULES))
@FUZZ
@given(text=st.one_of(junk, mixed))
def test_parser_never_raises(name, text):
    result = MODULES[name].parse(text)
    assert isinstance(result, dict) and isinstance(result["notes"], list)


@pytest.mark.parametrize("name", sorted(MODULES))
@FUZZ
@given(data=st.binary(max_size=400))
def test_parser_takes_decoded_bytes(name, data):
    result = MODULES[name].parse(data.decode("utf-8", errors="replace"))
    assert isinstance(result["notes"], list)


@FUZZ
@given(sections=st.dictionaries(st.sampled_from(["mpstat", "vmstat", "sysctl", "thp", "numactl.hardware"]),
                                st.one_of(junk, mixed), max_size=5))
def test_facts_from_pasted_junk_never_raises(sections):
    facts = build_facts_from_sections(sections)
    assert isinstance(facts.as_dict(), dict)


@pytest.mark.timeout(120)  # a hang guard (pytest-timeout), not a timing assertion
@pytest.mark.parametrize("name", sorted(MODULES))
def test_huge_and_hostile_input_is_bounded(name):
    hostile = ("\x00" * 1000 + "x" * 100_000 + "\n" + "CPU0 CPU1\n" + "1 2 3\n" * 50_000
               + "{" * 5000 + "\n" + "node distances:\nnode 0 1\n 0: 10\n")
    result = MODULES[name].parse(hostile)
    assert isinstance(result["notes"], list)


# test/fixtures/parsers/<module>/ holds each parser's real and hand fixtures (test_fact_builders checks that)
FIXTURE_MODULE = {d.name: d.name for d in FIXTURES.iterdir() if d.is_dir() and d.name in MODULES}


@pytest.mark.parametrize("directory", sorted(FIXTURE_MODULE))
def test_every_digit_of_every_fixture_swapped_for_a_look_alike(directory):
    """Deterministic: `²` passes str.isdigit() but not int(); `١` is a decimal int() accepts."""
    parse = MODULES[FIXTURE_MODULE[directory]].parse
    for path in sorted((FIXTURES / directory).glob("*.txt")):
        text = path.read_text(errors="replace")[:20000]
        for digit in "0123456789":
            for odd in ("\u00b2", "\u0661", "nan"):
                assert isinstance(parse(text.replace(digit, odd))["notes"], list), (path.name, digit, odd)
