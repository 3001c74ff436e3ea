"""perf script text -> folded stacks, byte for byte what stackcollapse-perf.pl prints.

    opts = CollapseOptions(kernel=True)
    result = collapse_file("perf.script.gz", opts)      # or collapse_stream(f, opts)
    write_folded(result.counts, sys.stdout.buffer)

Speed comes from caching, not cleverness: a raw stack line (`\\tffffffff81 sym (dso)`) is
tidied once, and a whole raw call chain (the sample block minus its event line) is folded
once and then looked up. Both caches are bounded, so memory grows with the number of
distinct stacks, never with the input size. Regular uncompressed files are split at sample
boundaries and folded by one process per core; the merge sorts, as the Perl script does.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import BinaryIO, Dict, List, Optional, Tuple

from . import perfscript
from .kernelnames import context_for_frame
from .perfscript import WHITESPACE, Problems

BLOCK_CACHE_MAX = 200_000
LINE_CACHE_MAX = 500_000
PARALLEL_MIN_BYTES = 32 << 20
MAX_HEADER = perfscript.MAX_LINE
HEADER_CACHE_MAX = 100_000
# The usual event line of `perf script` (pid/tid, cpu, time, period, event, nothing after),
# read on the block itself. Whitespace never includes a newline, so a match ends the line;
# on every line it matches, perfscript.parse_header reads the same comm/pid/tid/period/event
# (same lazy split, same anchors) -- the conformance tests hold both paths to that.
_COMMON_HEADER = re.compile(
    rb"([^\s#].*?)[^\S\n]+(\d+)/(\d+)[^\S\n]+(?:\[\d+\][^\S\n]+)?\d+\.\d+:[^\S\n]*"
    rb"(?:(\d+)[^\S\n]+)?([^\s:]\S*?):[^\S\n]*(?:\n|\Z)")


@dataclass
class CollapseOptions:
    pid: bool = False
    tid: bool = False
    kernel: bool = False
    jit: bool = False
    addrs: bool = False
    context: bool = False
    event_filter: Optional[bytes] = None


@dataclass
class CollapseResult:
    # (root frame, ";frame;frame") -> count: a tuple of two cached objects hashes cheaply,
    # the joined stack is built once per distinct stack in `counts`.
    pairs: Dict[Tuple[bytes, bytes], int] = field(default_factory=dict)
    problems: Problems = field(default_factory=Problems)
    samples: int = 0
    events: Dict[bytes, int] = field(default_factory=dict)
    event_filter: Optional[bytes] = None
    lines: int = 0

    @property
    def counts(self) -> Dict[bytes, int]:
        """`comm;root;...;leaf` -> count."""
        joined: Dict[bytes, int] = {}
        for (pname, folded), count in self.pairs.items():
            stack = pname + folded
            joined[stack] = joined.get(stack, 0) + count
        return joined

    def merge(self, other: "CollapseResult", line_offset: int) -> None:
        pairs = self.pairs
        for key, count in other.pairs.items():
            pairs[key] = pairs.get(key, 0) + count
        for what, lines in other.problems.first_lines.items():
            other.problems.first_lines[what] = [n + line_offset for n in lines]
        self.problems.merge(other.problems)
        self.samples += other.samples
        for event, count in other.events.items():
            self.events[event] = self.events.get(event, 0) + count


class _Skip(Exception):
    """A block the fast path cannot fold alone."""


class Collapser:
    def __init__(self, options: CollapseOptions, result: Optional[CollapseResult] = None):
        self.opts = options
        self.result = result or CollapseResult(event_filter=options.event_filter)
        self.line_cache: Tuple[Dict[bytes, Optional[bytes]], Dict[bytes, Optional[bytes]]] = ({}, {})
        self.block_cache: Tuple[Dict[bytes, bytes], Dict[bytes, bytes]] = ({}, {})
        self.context_cache: Dict[bytes, Optional[str]] = {}
        self.header_cache: Dict[Tuple[bytes, bytes, bytes], tuple] = {}

    # -- many sample blocks: the hot loop ----------------------------------------------------
    def feed_batch(self, first_line: int, blocks: List[bytes]) -> None:
        """Blocks (blank-line separated, the first starting at line `first_line`). A block of
        the common shape -- `comm pid/tid [cpu] time: period event:` then stack lines -- costs
        a split of its event line and a few dict look-ups, inline here: the event line minus
        its timestamp is parsed once (`_header_entry`), a call chain is folded once
        (`_fold_new_tail`). Any other block takes `feed`, which knows every shape (line
        numbers are counted only then)."""
        pairs = self.result.pairs
        events = self.result.events
        wanted = self.result.event_filter
        headers = self.header_cache
        samples = 0
        counted = 0                       # blocks[:counted] are included in `line`
        line = first_line
        for index, block in enumerate(blocks):
            newline = block.find(b"\n")
            words = block[:newline].rsplit(None, 3) if newline > 0 else ()
            entry = headers.get((words[0], words[2], words[3])) if len(words) == 4 else None
            if entry is None:
                entry = self._header_entry(block, newline, words)
            if entry is not None:
                pname, tails, weight, event = entry
                events[event] = events.get(event, 0) + 1
                if wanted is None:
                    wanted = self.result.event_filter = event
                if event != wanted:
                    continue
                tail = block[newline + 1:]
                folded = tails.get(tail)
                if folded is None:
                    folded = self._fold_new_tail(tail, tails)
                if folded is not None:
                    key = (pname, folded)
                    pairs[key] = pairs.get(key, 0) + weight
                    samples += 1
                    continue
                events[event] -= 1        # `feed` counts it again
            for earlier in blocks[counted:index]:
                line += earlier.count(b"\n") + 2
            counted = index
            self.result.samples += samples
            samples = 0
            self.feed(line, block)
            wanted = self.result.event_filter
        self.result.samples += samples

    def _header_entry(self, block: bytes, newline: int, words):
        """(root frame, call-chain cache, weight, event) for an event line of the common shape
        followed by stack lines, remembered under its words minus the timestamp; else None.
        The time word of later lines is not read, as stackcollapse-perf.pl never reads it."""
        if newline < 0 or newline >= MAX_HEADER or len(words) != 4:
            return None
        found = _COMMON_HEADER.match(block)
        if found is None or found.end() != newline + 1 or not words[1].endswith(b":"):
            return None
        comm, pid, tid, period, event = found.groups()
        java = comm.startswith(b"java")
        entry = (self._pname(comm, pid, tid), self.block_cache[java], int(period) if period else 1, event)
        if len(self.header_cache) >= HEADER_CACHE_MAX:
            self.header_cache.clear()
        self.header_cache[(words[0], words[2], words[3])] = entry
        return entry

    def _fold_new_tail(self, tail: bytes, cache: Dict[bytes, bytes]) -> Optional[bytes]:
        """Fold and remember a call chain; None when it needs the careful path."""
        java = cache is self.block_cache[True]
        try:
            folded = self._fold_tail(tail, java)
        except _Skip:
            return None
        if len(cache) >= BLOCK_CACHE_MAX:
            cache.clear()
        cache[tail] = folded
        return folded

    def _pname(self, comm: bytes, pid: bytes, tid: bytes) -> bytes:
        if self.opts.tid:
            comm += b"-" + pid + b"/" + tid
        elif self.opts.pid:
            comm += b"-" + pid
        return comm.replace(b" ", b"_")

    # -- one sample block -----------------------------------------------------------------
    def feed(self, first_line: int, block: bytes) -> None:
        if first_line < 0:
            return self._feed_general(-first_line, block, final=True)
        newline = block.find(b"\n")
        header_line = block if newline < 0 else block[:newline]
        if not header_line or header_line[0] == 35 or len(header_line) > perfscript.MAX_LINE:
            return self._feed_general(first_line, block)
        header = perfscript.parse_header(header_line)
        if header is None or header.inline_frame:
            return self._feed_general(first_line, block)
        pname = self._accept(header)
        if pname is None:
            return None
        java = header.comm.startswith(b"java")
        tail = b"" if newline < 0 else block[newline + 1:]
        cache = self.block_cache[java]
        folded = cache.get(tail)
        if folded is None:
            try:
                folded = self._fold_tail(tail, java)
            except _Skip:
                return self._feed_general(first_line, block)
            if len(cache) >= BLOCK_CACHE_MAX:
                cache.clear()
            cache[tail] = folded
        self._count(pname, folded, header.period)
        return None

    def _count(self, pname: bytes, folded: bytes, weight: int) -> None:
        pairs = self.result.pairs
        key = (pname, folded)
        pairs[key] = pairs.get(key, 0) + weight
        self.result.samples += 1

    def _accept(self, header: perfscript.Header) -> Optional[bytes]:
        """The root frame for this sample, or None when its event is filtered out."""
        result = self.result
        event = header.event
        if event is not None:
            result.events[event] = result.events.get(event, 0) + 1
            if result.event_filter is None:
                result.event_filter = event
            elif event != result.event_filter:
                return None
        return self._pname(header.comm, header.pid, header.tid)

    def _fold_tail(self, tail: bytes, java: bool) -> bytes:
        """`;frame;frame` (root first) for the stack lines of one sample."""
        segments = []
        cache = self.line_cache[java]
        for line in tail.split(b"\n"):
            if line in cache:
                segment = cache[line]
            else:
                if not line or line[0] == 35 or len(line) > perfscript.MAX_LINE:
                    raise _Skip
                if perfscript.parse_header(line) is not None:
                    raise _Skip
                segment = self._segment(line, java)
                if segment is False:
                    raise _Skip
                if len(cache) >= LINE_CACHE_MAX:
                    cache.clear()
                cache[line] = segment
            if segment is not None:
                segments.append(segment)
        segments.reverse()
        if self.opts.context:
            segments = self._with_context_markers(segments)
        return b"".join(b";" + s for s in segments)

    def _segment(self, line: bytes, java: bool):
        """Folded text of one stack line; None for lines Perl drops, False when malformed."""
        parts = perfscript.split_frame_line(line)
        if parts is None:
            return False
        pc, rawfunc, module = parts
        names = perfscript.function_names(pc, rawfunc, module, java=java, addrs=self.opts.addrs)
        if not names:
            return None
        names = [self._annotate(names[0], module)] + [
            n if b"_[i]" in n else n + b"_[i]" for n in names[1:]]
        segment = b";".join(names)
        if self.opts.context:
            self.context_cache[segment] = _entered_context(names, module)
        return segment

    def _annotate(self, name: bytes, module: bytes) -> bytes:
        if self.opts.kernel and perfscript.is_kernel_module(module):
            return name + b"_[k]"
        if self.opts.jit and perfscript.is_jit_module(module) and b"_[j]" not in name:
            return name + b"_[j]"
        return name

    def _with_context_markers(self, segments: List[bytes]) -> List[bytes]:
        out = []
        current = "task"
        for segment in segments:
            out.append(segment)
            entered = self.context_cache.get(segment)
            if entered and entered != current:
                out.append(perfscript.CONTEXT_MARKERS[entered].encode())
                current = entered
        return out

    # -- the general, line-by-line path (Perl's main loop) ------------------------------------
    def _feed_general(self, first_line: int, block: bytes, final: bool = False) -> None:
        """Line by line. A new event line ends the previous sample (single-line stacks);
        `final`: the block had no closing blank line, so its last multi-line sample may be
        cut off -- Perl drops it, and so do we (single-line samples are complete, and so is
        an event line alone after other samples without a stack)."""
        problems = self.result.problems
        sample: Optional[list] = None        # [pname, period, java, segments, single_line, line_no]
        filtered = False
        stackless_seen = False               # samples without a stack (perf script without ip/sym)
        for line_no, line in perfscript.block_lines(block, first_line, problems):
            header = perfscript.parse_header(line)
            if header is None:
                if sample is None:
                    if perfscript.split_frame_line(line) is None:
                        problems.add("unrecognised lines", line_no)
                    elif not filtered:
                        problems.add("stack lines without an event line", line_no)
                    continue
                segment = self._segment(line, sample[2])
                if segment is False:
                    problems.add("unrecognised stack lines", line_no)
                elif segment is not None:
                    sample[3].append(segment)
                sample[4] = False
                continue
            if sample is not None:
                stackless_seen = stackless_seen or not sample[3]
                self._flush(sample)
            accepted = self._accept(header)
            filtered = accepted is None
            sample = None
            if accepted is None:
                continue
            java = header.comm.startswith(b"java")
            sample = [accepted, header.period, java, [], bool(header.inline_frame), line_no]
            if header.inline_frame:
                segment = self._segment(b"\t" + header.inline_frame, java)
                if segment:
                    sample[3].append(segment)
        if sample is None:
            return
        if final and not sample[4] and not (stackless_seen and not sample[3]):
            problems.add("incomplete last sample (no closing blank line)", sample[5])
            return
        self._flush(sample)

    def _flush(self, sample: list) -> None:
        pname, period, _, segments = sample[:4]
        segments.reverse()
        if self.opts.context:
            segments = self._with_context_markers(segments)
        self._count(pname, b"".join(b";" + s for s in segments), period)


def _entered_context(names: List[bytes], module: bytes) -> Optional[str]:
    if not perfscript.is_kernel_module(module) and module != b"[unknown]":
        return None
    for name in names:
        entered = context_for_frame(name.decode("utf-8", errors="replace"))
        if entered:
            return entered
    return None


# --- drivers -----------------------------------------------------------------------------------

def collapse_stream(stream: BinaryIO, options: CollapseOptions,
                    result: Optional[CollapseResult] = None) -> CollapseResult:
    collapser = Collapser(options, result)
    return _collapse_batches(collapser, perfscript.open_binary(stream))


def _collapse_batches(collapser: Collapser, stream) -> CollapseResult:
    batches = Batches(stream)
    for first_line, blocks in batches:
        if first_line < 0:
            collapser.feed(first_line, blocks[0])
        else:
            collapser.feed_batch(first_line, blocks)
    collapser.result.lines = batches.next_line - 1
    if getattr(stream, "error", None):
        collapser.result.problems.add(stream.error, batches.next_line)
    if batches.cut_blocks:
        collapser.result.problems.add("over-long blocks cut at a line end (no blank line in 8 MiB)",
                                      batches.cut_blocks[0])
    return collapser.result


Batches = perfscript.Batches   # the chunker shared with the diagnoser's reader


def collapse_file(path: str, options: CollapseOptions, jobs: Optional[int] = None) -> CollapseResult:
    """Fold a file; plain regular files above PARALLEL_MIN_BYTES use one process per core."""
    jobs = jobs or _cpu_count()
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    with open(path, "rb") as stream:
        if jobs < 2 or size < PARALLEL_MIN_BYTES or stream.read(2) == perfscript.GZIP_MAGIC:
            stream.seek(0)
            return collapse_stream(stream, options)
    return _collapse_parallel(path, size, options, jobs)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _collapse_parallel(path: str, size: int, options: CollapseOptions, jobs: int) -> CollapseResult:
    import multiprocessing

    if options.event_filter is None:
        options = _with_first_event(path, options)
    bounds = _split_points(path, size, jobs)    # one piece each: caches warm up once per process
    ranges = list(zip(bounds, bounds[1:]))
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs) as pool:
        parts = pool.starmap(_collapse_range, [(path, start, end, options) for start, end in ranges])
    total = CollapseResult(event_filter=options.event_filter)
    line_offset = 0
    for part in parts:
        total.merge(part, line_offset)
        line_offset += part.lines
    total.lines = line_offset
    return total


def _with_first_event(path: str, options: CollapseOptions) -> CollapseOptions:
    """Perl filters on the first event type it meets; find it before splitting the work."""
    with open(path, "rb") as stream:
        for _, block in perfscript.iter_blocks(stream, 1 << 16):
            for line in block.split(b"\n"):
                if line and line[0] not in WHITESPACE and line[0] != 35:
                    header = perfscript.parse_header(line)
                    if header is not None and header.event is not None:
                        return CollapseOptions(**{**options.__dict__, "event_filter": header.event})
    return options


def _split_points(path: str, size: int, pieces: int) -> List[int]:
    """Byte offsets just after a blank line, so every piece starts with a sample."""
    points = [0]
    with open(path, "rb") as stream:
        for i in range(1, pieces):
            target = max(points[-1], size * i // pieces)
            stream.seek(target)
            window = stream.read(1 << 20)
            found = window.find(b"\n\n")
            if found >= 0 and target + found + 2 < size:
                points.append(target + found + 2)
    points.append(size)
    return sorted(set(points))


class _RangeReader:
    def __init__(self, stream: BinaryIO, remaining: int):
        self.stream, self.remaining = stream, remaining

    def read(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        size = self.remaining if size is None or size < 0 else min(size, self.remaining)
        data = self.stream.read(size)
        self.remaining -= len(data)
        return data


def _collapse_range(path: str, start: int, end: int, options: CollapseOptions) -> CollapseResult:
    with open(path, "rb") as stream:
        stream.seek(start)
        return _collapse_batches(Collapser(options), _RangeReader(stream, end - start))


def write_folded(counts: Dict[bytes, int], out: BinaryIO) -> None:
    """`stack count` lines sorted bytewise, like Perl's `sort keys`."""
    lines = [stack + b" " + str(counts[stack]).encode() + b"\n" for stack in sorted(counts)]
    out.write(b"".join(lines))
