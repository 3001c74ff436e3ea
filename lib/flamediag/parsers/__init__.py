"""Evidence parsers: one module per kind of collector output, each `parse(text) -> dict` with a `notes`
list, the collectors it reads (`COLLECTORS`) and the fact builders it owns (`@builds`).

Parsers turn raw collector output into plain data and never raise on bad input; whatever they do not
understand is reported in `notes` (the facts layer turns those into data_quality sentences). The
modules are found by listing this package: adding a parser is adding a module (doc/parsers.md).

    >>> parser_for("proc.softirqs").__module__
    'flamediag.parsers.softirqs'
    >>> claims()["mpstat.json"]
    'mpstat'
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType
from typing import Callable, Dict, List

from .. import collectors
from ._builder import Builder


@functools.lru_cache(maxsize=None)
def all_modules() -> Dict[str, ModuleType]:
    """module name -> module, every parser of this package (names starting with _ are helpers)."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return {name: importlib.import_module(f"{__name__}.{name}") for name in names}


@functools.lru_cache(maxsize=None)
def claims() -> Dict[str, str]:
    """collector name -> the module whose COLLECTORS lists it (two claims for one name are an error)."""
    owner: Dict[str, str] = {}
    for name, module in all_modules().items():
        for collector in getattr(module, "COLLECTORS", ()):
            if collector in owner:
                raise ValueError(f"collector {collector!r} claimed by parsers {owner[collector]} and {name}")
            owner[collector] = name
    return owner


def parser_for(collector: str) -> Callable[[str], dict]:
    """The parse function for a bundle collector name (KeyError when no parser reads it)."""
    return all_modules()[claims()[collector]].parse


def builders() -> List[Builder]:
    """Every fact builder of every parser module, module by module, in definition order."""
    found: List[Builder] = []
    for module in all_modules().values():
        for value in vars(module).values():
            builder = getattr(value, "builder", None)
            if isinstance(builder, Builder) and builder.function is value and value.__module__ == module.__name__:
                found.append(builder)
    return found


def lost_without() -> Dict[str, str]:
    """Collectors whose absence weakens a diagnosis (each module's LOST_WITHOUT), in table order."""
    declared_losses: Dict[str, str] = {}
    for module in all_modules().values():
        declared_losses.update(getattr(module, "LOST_WITHOUT", {}))
    return {name: declared_losses[name] for name in collectors.table() if name in declared_losses}
