"""How a parser module declares the facts it builds; the engine (flamediag.facts) runs the builders.

A parser module names the collectors its `parse()` reads and marks its fact builders:

    COLLECTORS = ("proc.interrupts",)                # lib/collectors.tsv names

    @builds("interrupts.delta.<ROW>.total", series=("interrupts",), shares=("interrupts.deltas",))
    def interrupt_facts(src): ...

`makes` are the fact names the builder may set (`<x>` stands for any run of characters; the same
spelling as doc/facts.md). A builder that reads what another one shares (`src.shared[...]`) or a fact
another one makes says so with `uses=`; the engine runs it after that builder, whatever the order of
the modules. `series` are the `facts.series` keys it fills.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Tuple


@dataclass(frozen=True)
class Builder:
    function: Callable
    makes: Tuple[str, ...]
    uses: Tuple[str, ...] = ()
    shares: Tuple[str, ...] = ()
    series: Tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """`interrupts.interrupt_facts`: the module (without the package) and the function."""
        return f"{self.function.__module__.rsplit('.', 1)[-1]}.{self.function.__name__}"

    def provides(self, name: str) -> bool:
        """Does this builder share `name` or make a fact that `name` is an instance of?"""
        return name in self.shares or any(pattern_regex(made).match(name) for made in self.makes)


def builds(*makes: str, uses: Tuple[str, ...] = (), shares: Tuple[str, ...] = (),
           series: Tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Mark a function `f(src)` as the builder of the facts `makes`."""
    def declare(function: Callable) -> Callable:
        function.builder = Builder(function, tuple(makes), tuple(uses), tuple(shares), tuple(series))
        return function
    return declare


def pattern_regex(pattern: str) -> "re.Pattern[str]":
    """`softirq.delta.<VEC>.total` -> a regex matching the concrete names.

    Examples:
        >>> bool(pattern_regex("softirq.delta.<VEC>.total").match("softirq.delta.NET_RX.total"))
        True
        >>> bool(pattern_regex("cpus").match("cpus.x"))
        False
    """
    parts = re.split(r"<[^<>]+>", pattern)
    return re.compile("^" + ".+".join(re.escape(part) for part in parts) + "$")
