"""perf script text -> folded stacks, byte for byte what stackcollapse-perf.pl prints.

    opts = CollapseOptions(kernel=True)
    result = collapse_file("perf.script.gz", opts)      # or collapse_stream(f, opts)
    write_folded(result.counts, sys.stdout.buffer)

Reading is samplereader's (the same reader the diagnoser uses): it aggregates samples by event
line group (here the root frame: comm, or comm-PID/TID) and distinct raw stack. Folding then
runs once per distinct stack: each stack line is tidied once and each stack joined once, so the
cost of a sample is the reader's, and memory grows with distinct stacks, never with input size.
Plain files above 32 MB are read by one process per core; the output is sorted as the Perl
script's is, so it does not depend on that.

One deliberate difference from the Perl script: a last sample with no closing blank line is
kept (Perl drops it); `CollapseOptions(keep_unterminated=False)` (`--perl-compat`) drops it too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import BinaryIO, Dict, List, Optional, Tuple

from . import perfscript, samplereader
from .kernelnames import context_for_frame
from .perfscript import Problems

PARALLEL_MIN_BYTES = samplereader.PARALLEL_MIN_BYTES


@dataclass
class CollapseOptions:
    pid: bool = False
    tid: bool = False
    kernel: bool = False
    jit: bool = False
    addrs: bool = False
    context: bool = False
    event_filter: Optional[bytes] = None
    keep_unterminated: bool = True         # False: drop a last sample without a blank line (Perl)


@dataclass
class CollapseResult:
    counts: Dict[bytes, int] = field(default_factory=dict)    # `comm;root;...;leaf` -> count
    problems: Problems = field(default_factory=Problems)
    samples: int = 0
    events: Dict[bytes, int] = field(default_factory=dict)
    event_filter: Optional[bytes] = None
    lines: int = 0
    unterminated: Optional[int] = None     # line of a kept last sample with no closing blank line


@dataclass
class _RootFrames(samplereader.Consumer):
    """collapse's view of an event line: (root frame, Java tidying?)."""
    pid: bool = False
    tid: bool = False

    def group(self, header: perfscript.Header) -> Tuple[bytes, bool]:
        comm = header.comm
        if self.tid:
            comm += b"-" + header.pid + b"/" + header.tid
        elif self.pid:
            comm += b"-" + header.pid
        return comm.replace(b" ", b"_"), header.comm.startswith(b"java")


class _Folder:
    """Parsed stack (leaf first) -> `;root;...;leaf`, each stack line folded once."""

    def __init__(self, options: CollapseOptions):
        self.opts = options
        self.lines: Tuple[Dict[tuple, tuple], Dict[tuple, tuple]] = ({}, {})

    def fold(self, raw_frames, java: bool) -> bytes:
        known = self.lines[java]
        segments = []
        current = "task"
        for raw in reversed(raw_frames):
            found = known.get(raw)
            if found is None:
                found = known[raw] = self._segment(raw, java)
            segment, entered = found
            if segment is None:
                continue
            segments.append(segment)
            if self.opts.context and entered and entered != current:
                segments.append(perfscript.CONTEXT_MARKERS[entered].encode())
                current = entered
        return b"".join(b";" + s for s in segments)

    def _segment(self, raw, java: bool) -> Tuple[Optional[bytes], Optional[str]]:
        """Folded text of one stack line (None for lines Perl drops) and the context it enters."""
        pc, rawfunc, module = raw
        names = perfscript.function_names(pc, rawfunc, module, java=java, addrs=self.opts.addrs)
        if not names:
            return None, None
        names = [self._annotate(names[0], module)] + [
            n if b"_[i]" in n else n + b"_[i]" for n in names[1:]]
        return b";".join(names), _entered_context(names, module) if self.opts.context else None

    def _annotate(self, name: bytes, module: bytes) -> bytes:
        if self.opts.kernel and perfscript.is_kernel_module(module):
            return name + b"_[k]"
        if self.opts.jit and perfscript.is_jit_module(module) and b"_[j]" not in name:
            return name + b"_[j]"
        return name


def _entered_context(names: List[bytes], module: bytes) -> Optional[str]:
    if not perfscript.is_kernel_module(module) and module != b"[unknown]":
        return None
    for name in names:
        entered = context_for_frame(name.decode("utf-8", errors="replace"))
        if entered:
            return entered
    return None


def _read_options(options: CollapseOptions) -> samplereader.ReadOptions:
    return samplereader.ReadOptions(event_filter=options.event_filter, weight_by_period=True,
                                    keep_unterminated=options.keep_unterminated)


def fold_samples(samples: samplereader.Samples, options: CollapseOptions) -> CollapseResult:
    """Aggregated samples -> folded stacks with their counts."""
    folder = _Folder(options)
    folded: Dict[Tuple[int, bool], bytes] = {}
    counts: Dict[bytes, int] = {}
    groups = samples.groups
    for (group, stack, _), weight in samples.counts.items():
        root, java = groups[group]
        text = folded.get((stack, java))
        if text is None:
            text = folded[(stack, java)] = folder.fold(samples.stacks[stack], java)
        key = root + text
        counts[key] = counts.get(key, 0) + weight
    events = {event: count for event, count in samples.events.items() if event is not None}
    return CollapseResult(counts, samples.problems, samples.samples, events, samples.event, samples.lines,
                          samples.unterminated)


def collapse_stream(stream: BinaryIO, options: CollapseOptions, progress=None) -> CollapseResult:
    samples = samplereader.read_samples(stream, _read_options(options), _RootFrames(options.pid, options.tid),
                                        progress)
    return fold_samples(samples, options)


def collapse_file(path: str, options: CollapseOptions, jobs: Optional[int] = None, progress=None) -> CollapseResult:
    """Fold a file; plain regular files above PARALLEL_MIN_BYTES use one process per core."""
    samples = samplereader.read_samples_file(path, _read_options(options), _RootFrames(options.pid, options.tid),
                                             jobs, progress, parallel_min_bytes=PARALLEL_MIN_BYTES)
    return fold_samples(samples, options)


def write_folded(counts: Dict[bytes, int], out: BinaryIO) -> None:
    """`stack count` lines sorted bytewise, like Perl's `sort keys`."""
    lines = [stack + b" " + str(counts[stack]).encode() + b"\n" for stack in sorted(counts)]
    out.write(b"".join(lines))
