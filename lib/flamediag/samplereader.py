"""The one `perf script` reader: sample blocks -> weights by (event line group, raw stack, second).

`collapse` and `diagnose` both read perf script through `read_samples()` (a stream) or
`read_samples_file()` (a path: large plain files are read by one process per core). They differ
only in a `Consumer`: what a distinct event line stands for (`group`: the root frame for collapse,
comm/cpu/pid for the diagnoser) and what they make of each distinct stack afterwards.

    samples = read_samples_file("perf.script", ReadOptions(with_time=True), consumer)
    for (group_id, stack_id, second), weight in samples.counts.items():
        samples.groups[group_id], samples.stacks[stack_id]     # stacks are parsed lines, leaf first

Why it is fast: most samples repeat a stack already seen. A sample block

    stress-ng-fork  6991 [000]   781.284034:    1001001 cpu-clock:ppp:
    \tffffffff81600d54 copy_page_range+0x6e4 ([kernel.kallsyms])
    \tffffffff8160c9a6 dup_mmap+0x416 ([kernel.kallsyms])

costs a split of its event line, whose words minus the timestamp are looked up (parsed once per
distinct event line), and one dict look-up of its stack text as bytes (hashed in C): stack lines
are parsed once per distinct stack, never per sample. Blocks of any other shape (single-line
stacks, several samples without blank lines between them, comments, junk) take the careful
line-by-line path, which knows every shape and counts what it skips with line numbers.

The last sample of an input that does not end in a blank line is kept (`unterminated` holds its
line number); `ReadOptions(keep_unterminated=False)` drops it as stackcollapse-perf.pl does.
`PERF_RECORD_*` lines (`perf script --show-task-events` and friends) are counted and skipped.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, Dict, Hashable, List, Optional, Tuple

from .perfscript import (GZIP_MAGIC, MAX_LINE, WHITESPACE, Batches, Header, Problems, _TIME_TOKEN,
                         block_lines, open_binary, parse_header, split_frame_line)
from .workerproc import default_signals

RawFrame = Tuple[bytes, bytes, bytes]          # (pc, function as printed, module)
LINE_CACHE_MAX = 500_000
HEADER_CACHE_MAX = 100_000
PARALLEL_MIN_BYTES = 32 << 20
_UNSEEN = object()


@dataclass
class ReadOptions:
    event_filter: Optional[bytes] = None   # keep only this event (default: the first one met)
    weight_by_period: bool = True          # weight = the sample's period (1 when perf printed none)
    with_time: bool = False                # read each sample's time: counts keyed by second
    origin: Optional[float] = None         # time of second 0 (default: the first sample's)
    keep_unterminated: bool = True         # keep a last sample with no closing blank line


class Consumer:
    """What a reader's caller makes of a distinct event line (must pickle: parallel reads)."""

    def group(self, header: Header) -> Hashable:
        raise NotImplementedError


@dataclass
class Samples:
    """Aggregated samples: weight per (group id, stack id, second); second is 0 without time."""
    groups: List[Hashable] = field(default_factory=list)
    stacks: List[Tuple[RawFrame, ...]] = field(default_factory=list)
    counts: Dict[Tuple[int, int, int], float] = field(default_factory=dict)
    samples: int = 0                       # samples kept (after the event filter)
    events: Dict[bytes, int] = field(default_factory=dict)   # event -> samples seen, kept or not
    event: Optional[bytes] = None          # the event kept
    problems: Problems = field(default_factory=Problems)
    first_time: Optional[float] = None
    last_time: Optional[float] = None
    origin: Optional[float] = None
    lines: int = 0
    sideband: int = 0                      # PERF_RECORD_* lines skipped
    unterminated: Optional[int] = None     # line of a last sample with no closing blank line
    dropped_unterminated: bool = False

    def merge(self, other: "Samples", line_offset: int) -> None:
        """Add a later piece of the same input (ids remapped, problems' lines shifted)."""
        group_ids = {group: index for index, group in enumerate(self.groups)}
        stack_ids = {stack: index for index, stack in enumerate(self.stacks)}
        group_map = [_intern(group_ids, self.groups, group) for group in other.groups]
        stack_map = [_intern(stack_ids, self.stacks, stack) for stack in other.stacks]
        counts = self.counts
        for (group, stack, second), weight in other.counts.items():
            key = (group_map[group], stack_map[stack], second)
            counts[key] = counts.get(key, 0) + weight
        for what, lines in other.problems.first_lines.items():
            other.problems.first_lines[what] = [n + line_offset for n in lines]
        self.problems.merge(other.problems)
        self.samples += other.samples
        self.sideband += other.sideband
        for event, count in other.events.items():
            self.events[event] = self.events.get(event, 0) + count
        self.event = self.event or other.event
        self.first_time = _pick(min, self.first_time, other.first_time)
        self.last_time = _pick(max, self.last_time, other.last_time)
        if other.unterminated is not None:
            self.unterminated = other.unterminated + line_offset
        self.dropped_unterminated = self.dropped_unterminated or other.dropped_unterminated


def _intern(ids: dict, values: list, value) -> int:
    found = ids.get(value)
    if found is None:
        found = ids[value] = len(values)
        values.append(value)
    return found


def _pick(func, a, b):
    return b if a is None else a if b is None else func(a, b)


class _Reader:
    """One pass over one stream (or one piece of a file)."""

    def __init__(self, options: ReadOptions, consumer: Consumer):
        self.options = options
        self.consumer = consumer
        self.out = Samples(event=options.event_filter, origin=options.origin)
        self.group_ids: Dict[Hashable, int] = {}
        self.stack_ids: Dict[bytes, int] = {}             # stack text -> id (the hot look-up)
        self.parsed_ids: Dict[tuple, int] = {}            # parsed stack -> id (same ids)
        self.line_cache: Dict[bytes, Optional[RawFrame]] = {}
        # event line words minus the time -> (group id, weight, kept?, event); two layouts:
        # `... TIME: PERIOD EVENT:` (time is the 4th word from the end) and `... TIME: EVENT:`.
        self.with_period: Dict[tuple, tuple] = {}
        self.without_period: Dict[tuple, tuple] = {}
        self.untimed: Dict[bytes, tuple] = {}            # event lines without a time: whole line

    # -- the hot loop ------------------------------------------------------------------------
    def feed_batch(self, first_line: int, blocks: List[bytes]) -> None:
        """Blank-line separated blocks, the first at line `first_line`. The common shape (one
        event line, then stack lines) is handled inline; anything else goes to `_general`."""
        out = self.out
        counts = self.out.counts
        stack_ids = self.stack_ids
        with_period, without_period = self.with_period, self.without_period
        with_time = self.options.with_time
        origin = out.origin
        first_time, last_time = out.first_time, out.last_time
        kept = 0
        counted = 0                          # blocks[:counted] are included in `line`
        line = first_line
        for index, block in enumerate(blocks):
            body = block
            newline = body.find(b"\n")
            if newline == 0:                 # more than one blank line before this sample
                body = body.lstrip(b"\n")
                newline = body.find(b"\n")
            if newline > 0:
                words = body[:newline].rsplit(None, 3)
                entry = time_word = None
                if len(words) == 4:
                    entry = with_period.get((words[0], words[2], words[3]))
                    if entry is not None:
                        time_word = words[1]
                    else:
                        entry = without_period.get((words[0], words[1], words[3]))
                        time_word = words[2]
                        if entry is None:
                            entry, time_word = self._new_entry(body[:newline], words)
                if entry is not None:
                    group, weight, keep, event = entry
                    if with_time:
                        try:
                            seconds = float(time_word[:-1])
                        except ValueError:
                            seconds = None
                        if seconds is None or seconds - seconds:        # not a number, inf, nan
                            entry = None
                    if entry is not None and not keep:
                        out.events[event] = out.events.get(event, 0) + 1
                        continue
                if entry is not None:
                    tail = body[newline + 1:]
                    stack = stack_ids.get(tail)
                    if stack is None:
                        stack = self._new_stack(tail)
                    if stack is not None:
                        if with_time:
                            if origin is None:
                                origin = out.origin = seconds
                            if first_time is None or seconds < first_time:
                                first_time = seconds
                            if last_time is None or seconds > last_time:
                                last_time = seconds
                            key = (group, stack, int((seconds - origin) // 1))
                        else:
                            key = (group, stack, 0)
                        counts[key] = counts.get(key, 0) + weight
                        kept += 1
                        continue
            for earlier in blocks[counted:index]:
                line += earlier.count(b"\n") + 2
            counted = index
            self._sync(kept, first_time, last_time)
            kept = 0
            self.feed(line, block)
            origin, first_time, last_time = out.origin, out.first_time, out.last_time
        self._sync(kept, first_time, last_time)

    def _sync(self, kept: int, first_time, last_time) -> None:
        """Store what the hot loop kept in locals."""
        out = self.out
        out.samples += kept
        if kept:
            out.events[out.event] = out.events.get(out.event, 0) + kept
        out.first_time, out.last_time = first_time, last_time

    def _new_stack(self, tail: bytes) -> Optional[int]:
        """Id of a stack text met for the first time, or None when a line in it is not a stack
        line (the block then takes the careful path)."""
        frames = []
        cache = self.line_cache
        for line in tail.split(b"\n"):
            frame = cache.get(line, _UNSEEN)
            if frame is _UNSEEN:
                frame = _stack_line(line)
                if len(cache) >= LINE_CACHE_MAX:
                    cache.clear()
                cache[line] = frame
            if frame is None:
                return None
            frames.append(frame)
        stack = self._stack_id(tuple(frames))
        self.stack_ids[tail] = stack
        return stack

    def _stack_id(self, frames: tuple) -> int:
        stack = self.parsed_ids.get(frames)
        if stack is None:
            stack = self.parsed_ids[frames] = len(self.out.stacks)
            self.out.stacks.append(frames)
        return stack

    def _entry(self, header: Header) -> tuple:
        """(group id, weight, kept?, event) of an event line."""
        out = self.out
        if out.event is None and header.event is not None:
            out.event = header.event
        keep = header.event is None or header.event == out.event
        group = self.consumer.group(header)
        group_id = self.group_ids.get(group)
        if group_id is None:
            group_id = self.group_ids[group] = len(out.groups)
            out.groups.append(group)
        weight = header.period if self.options.weight_by_period else 1
        return group_id, weight, keep, header.event

    def _new_entry(self, line: bytes, words: List[bytes]) -> tuple:
        """(entry, time word) of an event line met for the first time, when it has the usual shape
        (no frame on it, not a side-band record); else (None, None)."""
        header = parse_header(line)
        if header is None or header.inline_frame is not None or header.sideband or header.event is None:
            return None, None
        entry = self._entry(header)
        time_at = self._remember(words, entry)
        return (entry, words[time_at]) if time_at else (None, None)

    def _remember(self, words: List[bytes], entry: tuple) -> Optional[int]:
        """Cache an event line's entry under its words minus the time (see feed_batch); the index
        of the time word, or None when the line has neither usual layout."""
        if len(words) == 4 and _is_time(words[1]) and words[2].isdigit():
            cache, key, time_at = self.with_period, (words[0], words[2], words[3]), 1
        elif len(words) == 4 and _is_time(words[2]):
            cache, key, time_at = self.without_period, (words[0], words[1], words[3]), 2
        else:
            return None
        if len(cache) >= HEADER_CACHE_MAX:
            cache.clear()
        cache[key] = entry
        return time_at

    # -- the careful path (stackcollapse-perf.pl's main loop) ---------------------------------
    def feed(self, first_line: int, block: bytes) -> None:
        """One block, line by line. A new event line ends the previous sample (single-line
        stacks need no blank line); a negative `first_line` marks a last block that had no
        closing blank line."""
        final = first_line < 0
        problems = self.out.problems
        sample: Optional[list] = None        # [entry, frames, single_line, line_no, time]
        filtered = False
        stackless_seen = False               # samples without a stack (perf script without ip/sym)
        for line_no, line in block_lines(block, abs(first_line), problems):
            header = parse_header(line)
            if header is None:
                frame = self._cached_frame(line)
                if sample is None:
                    if frame is None:
                        problems.add("unrecognised lines", line_no)
                    elif not filtered:
                        problems.add("stack lines without an event line", line_no)
                    continue
                if frame is None:
                    problems.add("unrecognised stack lines", line_no)
                else:
                    sample[1].append(frame)
                sample[2] = False
                continue
            if sample is not None:
                stackless_seen = stackless_seen or not sample[1]
                self._flush(sample)
                sample = None
            if header.sideband:
                self.out.sideband += 1
                continue
            entry = self._entry(header)
            if header.inline_frame is None and header.event is not None:
                self._remember(line.rsplit(None, 3), entry)
            filtered = not entry[2]
            if filtered:
                self.out.events[entry[3]] = self.out.events.get(entry[3], 0) + 1
                continue
            sample = [entry, [], bool(header.inline_frame), line_no, header.time]
            if header.inline_frame:
                frame = split_frame_line(b"\t" + header.inline_frame)
                if frame:
                    sample[1].append(frame)
        if sample is None:
            return
        if final and not sample[2] and not (stackless_seen and not sample[1]):
            if not self.options.keep_unterminated:
                problems.add("incomplete last sample (no closing blank line)", sample[3])
                self.out.dropped_unterminated = True
                return
            self.out.unterminated = sample[3]
        self._flush(sample)

    def _cached_frame(self, line: bytes) -> Optional[RawFrame]:
        """A line that is not an event line, as a stack line (None if it is none)."""
        frame = self.line_cache.get(line, _UNSEEN)
        if frame is _UNSEEN:
            frame = split_frame_line(line)
            if frame is not None and len(self.line_cache) < LINE_CACHE_MAX:
                self.line_cache[line] = frame
        return frame

    def _flush(self, sample: list) -> None:
        entry, frames, _, _, seconds = sample
        out = self.out
        second = 0
        if self.options.with_time and seconds is not None:
            if out.origin is None:
                out.origin = seconds
            out.first_time = _pick(min, out.first_time, seconds)
            out.last_time = _pick(max, out.last_time, seconds)
            second = int((seconds - out.origin) // 1)
        key = (entry[0], self._stack_id(tuple(frames)), second)
        out.counts[key] = out.counts.get(key, 0) + entry[1]
        out.samples += 1
        out.events[entry[3]] = out.events.get(entry[3], 0) + 1


def _is_time(word: bytes) -> bool:
    found = _TIME_TOKEN.match(word)
    return found is not None and found.end() == len(word)


def _stack_line(line: bytes) -> Optional[RawFrame]:
    """A stack line's (pc, function, module), or None when the line is anything else."""
    if not line or line[0] == 35 or len(line) > MAX_LINE:
        return None
    # An indented line is an event line only with a `TIME:` token, so without a colon it is not one.
    if (line[0] not in (9, 32) or b":" in line) and parse_header(line) is not None:
        return None
    return split_frame_line(line)


# -- drivers ----------------------------------------------------------------------------------

def read_samples(stream: BinaryIO, options: ReadOptions, consumer: Consumer, progress=None) -> Samples:
    """Read a stream (plain or gzip, detected by content)."""
    return _read(_Reader(options, consumer), open_binary(stream), progress)


def _read(reader: _Reader, stream, progress=None) -> Samples:
    batches = Batches(stream)
    for first_line, blocks in batches:
        if first_line < 0:
            reader.feed(first_line, blocks[0])
        else:
            reader.feed_batch(first_line, blocks)
        if progress is not None:
            progress.update()
    out = reader.out
    out.lines = batches.next_line - 1
    if getattr(stream, "error", None):
        out.problems.add(stream.error, batches.next_line)
    if batches.cut_blocks:
        out.problems.add("over-long blocks cut at a line end (no blank line in 8 MiB)", batches.cut_blocks[0])
    return out


def read_samples_file(path: str, options: ReadOptions, consumer: Consumer, jobs: Optional[int] = None,
                      progress=None, parallel_min_bytes: int = PARALLEL_MIN_BYTES) -> Samples:
    """Read a file; plain regular files above `parallel_min_bytes` use one process per core."""
    jobs = jobs or cpu_count()
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    with open(path, "rb") as stream:
        plain = stream.read(2) != GZIP_MAGIC
        if jobs < 2 or size < parallel_min_bytes or not plain:
            stream.seek(0)
            return _read_stream(stream, options, consumer, progress)
    return _read_parallel(path, size, options, consumer, jobs, progress)


def _read_here(path: str, options: ReadOptions, consumer: Consumer, progress=None) -> Samples:
    with open(path, "rb") as stream:
        return _read_stream(stream, options, consumer, progress)


def _read_stream(stream: BinaryIO, options: ReadOptions, consumer: Consumer, progress=None) -> Samples:
    if progress is not None:
        progress.watch(stream)
    return read_samples(stream, options, consumer, progress)


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _read_parallel(path: str, size: int, options: ReadOptions, consumer: Consumer, jobs: int,
                   progress=None) -> Samples:
    pinned = _with_first_sample(path, options)
    if pinned is None:                     # no sample in the first MiB: one process decides alone
        return _read_here(path, options, consumer, progress)
    bounds = _split_points(path, size, jobs)
    pieces = [(path, start, end, pinned, consumer) for start, end in zip(bounds, bounds[1:])]
    try:
        parts = _read_pieces(pieces, progress)
    except BrokenProcessPool:              # a reader was killed (out of memory, a signal): read it here
        return _read_here(path, options, consumer, progress)
    total = parts[0]
    line_offset = total.lines
    for part in parts[1:]:
        total.merge(part, line_offset)
        line_offset += part.lines
    total.lines = line_offset
    return total


def _read_pieces(pieces: List[tuple], progress=None) -> List[Samples]:
    """`_read_range` of each piece, one process each; a dead process raises BrokenProcessPool
    (a multiprocessing.Pool would wait for its lost piece forever)."""
    import multiprocessing

    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    done = context.Value("q", 0) if progress is not None and progress.enabled else None
    with ProcessPoolExecutor(len(pieces), mp_context=context, initializer=_start_worker,
                             initargs=(done,)) as pool:
        futures = [pool.submit(_read_range, *piece) for piece in pieces]
        while wait(futures, timeout=0.25).not_done:
            if done is not None:
                progress.update(done.value)
        return [future.result() for future in futures]


def _with_first_sample(path: str, options: ReadOptions) -> Optional[ReadOptions]:
    """The event and time of the first sample, so every piece filters and counts seconds alike;
    None when the first MiB holds no sample with both (the pieces could not agree)."""
    if options.event_filter is not None and (options.origin is not None or not options.with_time):
        return options
    with open(path, "rb") as stream:
        head = stream.read(1 << 20)
    for line in head.split(b"\n"):
        if line and line[0] not in WHITESPACE and line[0] != 35:
            header = parse_header(line)
            if header is None or header.sideband or (options.event_filter not in (None, header.event)):
                continue
            if header.event is None or (options.with_time and options.origin is None and header.time is None):
                return None
            return replace(options, event_filter=options.event_filter or header.event,
                           origin=options.origin if options.origin is not None else header.time)
    return None


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


_COUNTER: Any = None


def _start_worker(counter) -> None:
    global _COUNTER
    default_signals()
    _COUNTER = counter


class _RangeReader:
    """`remaining` bytes of a stream; counts what it hands out in the shared progress counter."""

    def __init__(self, stream: BinaryIO, remaining: int):
        self.stream, self.remaining = stream, remaining

    def read(self, size: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        size = self.remaining if size is None or size < 0 else min(size, self.remaining)
        data = self.stream.read(size)
        self.remaining -= len(data)
        if _COUNTER is not None:
            with _COUNTER.get_lock():
                _COUNTER.value += len(data)
        return data


def _read_range(path: str, start: int, end: int, options: ReadOptions, consumer: Consumer) -> Samples:
    with open(path, "rb") as stream:
        stream.seek(start)
        return _read(_Reader(options, consumer), _RangeReader(stream, end - start))
