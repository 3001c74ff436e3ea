"""Diagnose what tickets already contain: pasted perf report / perf top / perf script /
folded / bcc / bpftrace output and kernel traces (oops, NMI, lockup, hung task, crash bt,
/proc/PID/stack, sysrq-l), with mpstat / vmstat / numactl / sysctl / THP lines as evidence.

    result = read_paste(open("ticket.txt").read())
    result.profile        # flamediag.profile.Profile, ancestry=False for flat profiles
    result.sections       # {"mpstat": text, "sysctl": text, ...} for facts.build_facts_from_sections
    result.formats, result.skipped_lines, result.notes

The paste is unwrapped first (markdown fences, `> ` quoting, HTML, CRLF), then read line by
line: at each line the readers whose cheap trigger matches try to read a block; lines no
reader or evidence section takes are skipped and counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from .. import errors
from ..errors import UserError
from ..profile import Profile
from . import kstack, perfreport, stacktext
from .common import Block, plural
from .sections import find_sections
from .unwrap import unwrap

UNDERSTOOD = (
    "perf report --stdio (call graph or flat), perf top, perf script, folded stacks, "
    "bcc profile -f, bpftrace @[kstack] maps, crash bt, oops/NMI/soft-lockup/hung-task traces, "
    "/proc/PID/stack, sysrq-l dumps"
)


@dataclass
class PasteResult:
    profile: Profile
    sections: Dict[str, str] = field(default_factory=dict)
    formats: List[str] = field(default_factory=list)
    skipped_lines: int = 0
    notes: List[str] = field(default_factory=list)


Reader = Callable[[Sequence[str], int], Optional[Block]]


def _readers_for(line: str) -> List[Reader]:
    """The readers worth trying at this line (cheap triggers keep prose fast)."""
    text = kstack.PREFIX.sub("", line)
    readers: List[Reader] = []
    if kstack.CRASH_TASK.match(line):
        readers.append(kstack.read_crash_bt)
    if kstack._header(text) is not None or kstack.CALL_TRACE.match(text) or kstack.SYSRQ.search(text) \
            or (kstack.FRAME.match(text) and not kstack.PROC_STACK.match(line)):
        readers.append(kstack.read_kernel_log)
    if kstack.PROC_STACK.match(line) or kstack._comm_hint(line) is not None:
        readers.append(kstack.read_proc_stack)
    if line.startswith("@") or line.startswith("Attaching ") and "probe" in line:
        readers.append(stacktext.read_bpftrace)
    if stacktext.PERF_SCRIPT_HEADER.match(line):
        readers.append(stacktext.read_perf_script)
    if ";" in line and stacktext.FOLDED.match(line.strip()):
        readers.append(stacktext.read_folded)
    if perfreport.is_entry(line) or perfreport.PERFTOP.match(line) or line.startswith("# Overhead") \
            or line.startswith(("# Children", "# Samples:", "# To display the perf.data header", "# Total Lost Samples",
                                "# Events:")):
        readers.append(perfreport.read_report)
    return readers


def _blocks(lines: Sequence[str]) -> List[Block]:
    blocks: List[Block] = []
    index = 0
    while index < len(lines):
        block = None
        for reader in _readers_for(lines[index]):
            block = reader(lines, index)
            if block is not None and block.end > index:
                break
            block = None
        if block is None:
            index += 1
            continue
        blocks.append(block)
        index = block.end
    return blocks


def read_paste(text: str) -> PasteResult:
    """Read every stack and evidence section in a pasted ticket; see the module docstring."""
    lines = unwrap(text)
    blocks = _blocks(lines)
    sections, section_lines = find_sections(lines)
    if not any(b.stacks for b in blocks):
        raise UserError(f"no stacks found; understood formats: {UNDERSTOOD}", errors.DATAERR)
    covered = set(section_lines)
    for block in blocks:
        covered.update(range(block.start, block.end))
    skipped = sum(1 for i, line in enumerate(lines) if line.strip() and i not in covered)
    return _result(blocks, sections, skipped)


def read_evidence(text: str) -> Dict[str, str]:
    """Only the metric evidence of a paste (mpstat, vmstat, numactl, sysctl, THP ... sections),
    unwrapped as read_paste() does: for `flamediag facts`, which needs no stacks."""
    return find_sections(unwrap(text))[0]


def _result(blocks: List[Block], sections: Dict[str, str], skipped: int) -> PasteResult:
    with_ancestry = [b for b in blocks if not b.flat and b.stacks]
    used = with_ancestry or [b for b in blocks if b.stacks]
    notes: List[str] = []
    for block in blocks:
        notes.extend(block.notes if block in used else [])
    ignored = [b for b in blocks if b not in used and b.stacks]
    if ignored:
        notes.append(f"ignored {len(ignored)} flat profile(s) ({', '.join(sorted({b.fmt for b in ignored}))}): "
                     "the pasted call stacks carry more")
    formats = list(dict.fromkeys(b.fmt for b in blocks if b.stacks))
    profile = Profile(source_format=",".join(dict.fromkeys(b.fmt for b in used)),
                      ancestry=not all(b.flat for b in used))
    for block in used:
        for frames, weight, comm, cpu, context in block.stacks:
            profile.add(frames, weight, comm=comm, cpu=cpu, context=context)
    if skipped:
        notes.append(f"skipped {plural(skipped, 'line')} of prose or unrecognised output")
    if sections:
        notes.append("used pasted evidence: " + ", ".join(sorted(sections)))
    profile.skipped_lines = skipped
    profile.data_quality.extend(notes)
    return PasteResult(profile, sections, formats, skipped, notes)
