"""The collector table, `lib/collectors.tsv`, as the diagnoser reads it (the capture runner reads the
same file): each collector's name, phases, per-NIC or not, bundle path and reader.

It is the one list of collectors: the bundle reader's name -> path fallback, the sample generator
and the parser registry's checks all come from here.

    >>> table()["proc.vmstat"].phases, table()["proc.vmstat"].path("end")
    (('start', 'end'), 'snap/end/proc-vmstat.txt')
    >>> table()["ethtool.l"].path(instance="eth0"), table()["ethtool.l"].reader
    ('net/ethtool-l-eth0.txt', 'parser')
    >>> [c.name for c in table().values() if c.reader == "stacks"]
    ['perf.script', 'bpf.profile', 'bpftrace.profile']
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

from . import HOME

TSV = HOME / "lib" / "collectors.tsv"   # the checkout's, or the copy a pip install ships
FIELDS = ("name", "phase", "each", "timeout", "cap", "needs", "output", "reader", "argv")
READERS = ("parser", "stacks", "raw")


@dataclass(frozen=True)
class Collector:
    name: str
    phases: Tuple[str, ...]     # ("start", "end"), ("once",) or ("window",)
    each: str                   # "-" or "nic" (one run per physical NIC: the manifest instance)
    output: str                 # bundle path template: {phase} and {instance} are filled in
    reader: str                 # parser | stacks | raw (see the header of collectors.tsv)
    argv: str

    def path(self, phase: Optional[str] = None, instance: Optional[str] = None) -> str:
        """The bundle path for one phase (start when the template has one and none is given)."""
        return self.output.replace("{phase}", phase or "start").replace("{instance}", instance or "")

    def manifest_phase(self, phase: Optional[str] = None) -> str:
        """The manifest `phase` of one run: start|end for snapshots, else once|window."""
        return phase if phase in self.phases else self.phases[0]


class TableError(Exception):
    """collectors.tsv is missing or has a malformed line (a packaging or editing mistake)."""


@functools.lru_cache(maxsize=None)
def table(path: Path = TSV) -> Dict[str, Collector]:
    """name -> Collector, in table order."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TableError(f"{path}: cannot read the collector table ({err.strerror}): reinstall flamediag") from None
    collectors: Dict[str, Collector] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        collector = _row(line, f"{path}:{number}")
        if collector.name in collectors:
            raise TableError(f"{path}:{number}: collector {collector.name!r} declared twice")
        collectors[collector.name] = collector
    return collectors


def _row(line: str, where: str) -> Collector:
    fields = line.split("\t")
    if len(fields) != len(FIELDS):
        raise TableError(f"{where}: {len(fields)} tab-separated fields, want {len(FIELDS)} ({' '.join(FIELDS)})")
    row = dict(zip(FIELDS, fields))
    if row["reader"] not in READERS:
        raise TableError(f"{where}: reader {row['reader']!r} is not one of {', '.join(READERS)}")
    return Collector(row["name"], tuple(row["phase"].split(",")), row["each"],
                     row["output"].replace("{nic}", "{instance}"), row["reader"], row["argv"])


def default_paths() -> Dict[str, str]:
    """name -> bundle path template ({phase}, {instance}), for readers without a manifest entry."""
    return {name: collector.output for name, collector in table().items()}


def named(reader: str) -> Tuple[str, ...]:
    """The collector names with this reader, in table order."""
    return tuple(name for name, collector in table().items() if collector.reader == reader)


# --- the table in doc/bundle-format.md, generated from this one ------------------------------------
DOC_BEGIN = "<!-- generated from lib/collectors.tsv by `make docs`: edit the TSV, not this table -->"
DOC_END = "<!-- end of the generated table -->"


def markdown_table() -> str:
    """The collector table as doc/bundle-format.md shows it (`<phase>`, `<nic>` in paths)."""
    rows = ["| name | phase | per | path | reader | command |", "|---|---|---|---|---|---|"]
    for collector in table().values():
        path = collector.output.replace("{phase}", "<phase>").replace("{instance}", "<nic>")
        per = "NIC" if collector.each == "nic" else ""
        command = collector.argv.replace("|", "\\|")
        rows.append(f"| `{collector.name}` | {', '.join(collector.phases)} | {per} | `{path}` | {collector.reader} "
                    f"| `{command}` |")
    return "\n".join(rows) + "\n"


def with_table(doc: str) -> str:
    """`doc` with the text between DOC_BEGIN and DOC_END replaced by the current table."""
    head, found, rest = doc.partition(DOC_BEGIN + "\n")
    _, ended, tail = rest.partition(DOC_END)
    if not found or not ended:
        raise TableError(f"the document has no {DOC_BEGIN!r} ... {DOC_END!r} block")
    return head + DOC_BEGIN + "\n" + markdown_table() + DOC_END + tail


def main(argv=None) -> int:
    """`python -m flamediag.collectors [DOC]`: print the table, or rewrite it inside DOC."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stdout.write(markdown_table())
        return 0
    doc = Path(args[0])
    doc.write_text(with_table(doc.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
