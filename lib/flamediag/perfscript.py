"""Parse `perf script` text into a Profile (and the line-level pieces `collapse` shares).

The line grammar follows stackcollapse-perf.pl so names match what every flame-graph tool
prints; where the Perl script is wrong for modern perf (single-line stacks, versioned
vmlinux paths, jitdump .so files) this parser is right instead. Everything works on bytes:
perf output is not guaranteed UTF-8, and bytes are faster.

    with open("perf.script.gz", "rb") as f:
        profile = read_profile(f)

Malformed input never raises: bad lines are counted, and the first few line numbers end
up in `profile.data_quality` (one sentence).
"""
from __future__ import annotations

import gzip
import io
import re
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Dict, Iterator, List, Optional, Tuple

from .kernelnames import context_for_frame
from .profile import Frame, Profile

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 22
MAX_BLOCK = 8 << 20   # no blank line for this long: not a sample; cut at a line end (bounded memory)
MAX_LINE = 1 << 16            # longer lines are skipped as malformed (regex cost, not sense)
WHITESPACE = b" \t\r\n\x0b\x0c"

# Perl: /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/ -- `(\d+)*` rewritten as `(\d*)` (same matches,
# no exponential backtracking on long digit runs).
_PERL_EVENT = re.compile(rb"(\S.+?)\s+(\d+)/*(\d*)\s+")
# Perl: /:\s*(\d+)*\s+(\S+):\s*$/ -- period and event name at the end of the line.
_PERL_PERIOD_EVENT = re.compile(rb":\s*(\d*)\s+(\S+):\s*$")
# Modern perf: pid[/tid] followed by [cpu] and/or time; lets comm contain digit words,
# and finds the event name even when a single-frame stack follows on the same line.
_MODERN_EVENT = re.compile(
    rb"(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[(\d+)\]\s+)?(\d+\.\d+):\s*(?:(\d+)\s+)?([^\s:][^\s]*?):(?:\s+(.*))?$")
_CPU = re.compile(rb"\[(\d+)\]")
# The usual stack line shape; anything else takes the careful path below.
_FRAME_FAST = re.compile(rb"[ \t]*(\w+) ([^\s(].*) \(([^\s()]*)\)$")
_OFFSET = re.compile(rb"\+0x[\da-f]+$")
_GO_METHOD = re.compile(rb"\.\(.*\)\.")
_PARAMS = re.compile(rb"\((?!anonymous namespace\)).*")
_VMLINUX = re.compile(rb"vmlinux[A-Za-z0-9._-]*$")
_JIT_MAP = re.compile(rb"/tmp/perf-\d+\.map")
_KERNEL_ADDR = re.compile(rb"ffff[0-9a-f]{12}")


@dataclass
class Header:
    """One sample's event line."""
    comm: bytes
    pid: bytes          # b"?" when perf printed only the TID (Perl's convention)
    tid: bytes
    cpu: Optional[int]
    time: Optional[float]
    period: int         # 1 when the line has none
    event: Optional[bytes]
    inline_frame: Optional[bytes]   # single-line stacks: the frame after "event:"


def parse_header(line: bytes) -> Optional[Header]:
    """An event line -> Header, or None when the line is not one.

    >>> h = parse_header(b"swapper     0/0     [000]   884.644824:     250000 cpu-clock:ppp: ")
    >>> (h.comm, h.pid, h.tid, h.cpu, h.period, h.event)
    (b'swapper', b'0', b'0', 0, 250000, b'cpu-clock:ppp')
    >>> parse_header(b"java 25607 4794564.109216: 1 cycles:").pid
    b'?'
    >>> parse_header(b"      web 1: worker 27240/27249 [001]  1323.13: 250000 cpu-clock:ppp:  ffffffff81614a5f f ([kernel.kallsyms])").comm
    b'web 1: worker'
    >>> parse_header(b"\t    7f1e2215d058 main 12 (/bin/x)") is None
    True
    """
    indented = line[:1] in (b" ", b"\t")
    modern = _MODERN_EVENT.match(line.lstrip(WHITESPACE) if indented else line)
    if modern:
        comm, pid, tid, cpu, time, period, event, rest = modern.groups()
        if tid is None:
            pid, tid = b"?", pid
        rest = rest.strip() if rest else None
        return Header(comm, pid, tid, int(cpu) if cpu else None, float(time),
                      int(period) if period else 1, event, rest or None)
    perl = None if indented else _PERL_EVENT.match(line)
    if not perl:
        return None
    comm, pid, tid = perl.groups()
    if not tid:
        pid, tid = b"?", pid
    period, event = 1, None
    tail = _PERL_PERIOD_EVENT.search(line)
    if tail:
        period = int(tail.group(1)) if tail.group(1) else 1
        event = tail.group(2)
    cpu = _CPU.search(line, perl.end(2))
    return Header(comm, pid, tid, int(cpu.group(1)) if cpu else None, None, period or 1, event, None)


def _is_word(byte: int) -> bool:
    return 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte == 95


def split_frame_line(line: bytes) -> Optional[Tuple[bytes, bytes, bytes]]:
    """`\\tffffffff8103ce3b native_safe_halt+0xb ([kernel.kallsyms])` -> (pc, rawfunc, module).

    Same result as the Perl regex /^\\s*(\\w+)\\s*(.+) \\((\\S*)\\)/ without its backtracking
    cost: the module is the last ` (...)` group, the function what lies between.

    >>> split_frame_line(b"\\t    7f1e2215d058  (/lib/libc.so)")
    (b'7f1e2215d058', b' ', b'/lib/libc.so')
    """
    fast = _FRAME_FAST.match(line)
    if fast:
        return fast.group(1), fast.group(2), fast.group(3)
    text = line.lstrip(WHITESPACE)
    end = 0
    while end < len(text) and _is_word(text[end]):
        end += 1
    if end == 0:
        return None
    pc, rest = text[:end], text[end:]
    search_end = len(rest)
    for _ in range(64):
        paren = rest.rfind(b" (", 0, search_end)
        if paren < 0:
            return None
        module = _module_at(rest, paren + 2)
        if module is not None:
            func_region = rest[:paren]
            rawfunc = func_region.lstrip(WHITESPACE)
            if rawfunc:
                return pc, rawfunc, module
            if func_region:          # only whitespace: Perl's `\s*(.+)` keeps one char
                return pc, func_region[-1:], module
            if len(pc) > 1:          # Perl backtracks into the address
                return pc[:-1], pc[-1:], module
            return None
        search_end = paren
    return None


def _module_at(text: bytes, start: int) -> Optional[bytes]:
    """`(\\S*)\\)` at start: the non-blank run up to its last ')'."""
    end = start
    while end < len(text) and text[end] not in WHITESPACE:
        end += 1
    close = text.rfind(b")", start, end)
    return None if close < 0 else text[start:close]


def is_kernel_module(module: bytes) -> bool:
    """[kernel.kallsyms], [ixgbevf], vmlinux, vmlinux-6.1.0-18-amd64, /lib/.../foo.ko"""
    if module == b"[unknown]":
        return False
    return module.startswith(b"[") or module.endswith(b".ko") or bool(_VMLINUX.search(module))


def is_jit_module(module: bytes) -> bool:
    """perf map files (/tmp/perf-PID.map) and jitdump objects (jitted-PID-N.so)."""
    return bool(_JIT_MAP.search(module)) or (b"/jitted-" in module and module.endswith(b".so"))


def tidy_function(func: bytes, java: bool) -> bytes:
    """stackcollapse-perf.pl's $tidy_generic and $tidy_java."""
    func = func.replace(b";", b":")
    if not _GO_METHOD.search(func):
        if not func.startswith(b"("):
            func = _PARAMS.sub(b"", func)
    func = func.replace(b'"', b"").replace(b"'", b"")
    if java and func.startswith(b"L") and b"/" in func:
        func = func[1:]
    return func


def function_names(pc: bytes, rawfunc: bytes, module: bytes, *, java: bool, addrs: bool) -> List[bytes]:
    """The frame names one stack line contributes, root side first (inlined ones after).

    >>> function_names(b"7f53", b"[unknown]", b"/usr/lib/libc.so.6", java=False, addrs=False)
    [b'[libc.so.6]']
    """
    rawfunc = _OFFSET.sub(b"", rawfunc)
    if rawfunc.startswith(b"("):
        return []
    parts = rawfunc.split(b"->")
    while parts and not parts[-1]:      # Perl's split drops trailing empty fields
        parts.pop()
    names = []
    for func in parts:
        if func == b"[unknown]":
            func = module.rsplit(b"/", 1)[-1] if module != b"[unknown]" else b"unknown"
            func = b"[" + func + b" <" + pc + b">]" if addrs else b"[" + func + b"]"
        names.append(tidy_function(func, java))
    return names


def frame_kind(pc: bytes, module: bytes) -> str:
    if is_kernel_module(module):
        return "kernel"
    if is_jit_module(module):
        return "jit"
    if module == b"[unknown]":
        return "kernel" if _KERNEL_ADDR.fullmatch(pc) else "unknown"
    return "user"


# --- reading samples -----------------------------------------------------------------------

def open_binary(stream: BinaryIO) -> BinaryIO:
    """Wrap a gzip stream (detected by magic bytes, not name) so reads give plain text."""
    head = _peek(stream, 2)
    if head[0].startswith(GZIP_MAGIC):
        return _TolerantGzip(gzip.GzipFile(fileobj=head[1], mode="rb"))  # type: ignore[return-value]
    return head[1]


class _TolerantGzip:
    """A gzip stream whose corrupt or truncated end reads as end of input; `error` says why
    (a cut-off perf.script.gz still gives the samples before the cut)."""

    def __init__(self, stream):
        self.stream = stream
        self.error: Optional[str] = None

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes, in small reads so a bad end loses little."""
        pieces = []
        wanted = size if size and size > 0 else 1 << 62
        while wanted > 0 and not self.error:
            try:
                piece = self.stream.read1(min(wanted, 1 << 16))   # one raw read: no data lost
            except (OSError, EOFError, zlib.error) as err:
                self.error = f"gzip input is corrupt or truncated ({err})"
                break
            if not piece:
                break
            pieces.append(piece)
            wanted -= len(piece)
        return b"".join(pieces)


def _peek(stream: BinaryIO, size: int) -> Tuple[bytes, BinaryIO]:
    if hasattr(stream, "peek"):
        try:
            return stream.peek(size)[:size], stream  # type: ignore[union-attr]
        except (OSError, ValueError):
            pass
    first = stream.read(size)
    return first, _Prefixed(first, stream)


class _Prefixed(io.RawIOBase):
    """A stream with bytes already read put back in front."""

    def __init__(self, prefix: bytes, rest: BinaryIO):
        self._prefix, self._rest = prefix, rest

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._prefix:
            if size is None or size < 0:
                data, self._prefix = self._prefix + self._rest.read(), b""
                return data
            data, self._prefix = self._prefix[:size], self._prefix[size:]
            return data
        return self._rest.read(size)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class Batches:
    """(first line number, blank-line separated blocks) per chunk read, streamed; a last block
    without its closing blank line comes alone with a negative line number (stackcollapse-perf.pl
    never counts it: it may be a sample cut off mid-write). Memory stays bounded on input with no
    blank lines at all: past MAX_BLOCK bytes a block is cut at a line end."""

    def __init__(self, stream, chunk_size: int = CHUNK):
        self.stream, self.chunk_size = stream, chunk_size
        self.next_line = 1
        self.cut_blocks: List[int] = []

    def __iter__(self):
        carry = b""
        while True:
            chunk = self.stream.read(self.chunk_size)
            if not chunk:
                break
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n\n")
            if cut < 0:
                carry = data
                if len(data) > MAX_BLOCK:
                    end = data.rfind(b"\n")
                    end = len(data) if end < 0 else end
                    block, carry = data[:end], data[end + 1:]
                    self.cut_blocks.append(self.next_line)
                    yield self.next_line, [block]
                    self.next_line += block.count(b"\n") + 1
                continue
            body, carry = data[:cut], data[cut + 2:]
            yield self.next_line, body.split(b"\n\n")
            self.next_line += body.count(b"\n") + 2
        if carry.strip(WHITESPACE):
            yield -self.next_line, [carry]
            self.next_line += carry.count(b"\n") + 1


def iter_blocks(stream: BinaryIO, chunk_size: int = CHUNK) -> Iterator[Tuple[int, bytes]]:
    """(first line number, block) for each blank-line separated block: Batches, one block at a
    time (same bound on input without blank lines; a cut-off last block has a negative number)."""
    for first_line, blocks in Batches(stream, chunk_size):
        if first_line < 0:
            yield first_line, blocks[0]
            continue
        for block in blocks:
            yield first_line, block
            first_line += block.count(b"\n") + 2


class Problems:
    """Counts malformed lines and remembers the first few line numbers."""

    def __init__(self, keep: int = 5):
        self.keep = keep
        self.counts: Dict[str, int] = {}
        self.first_lines: Dict[str, List[int]] = {}

    def add(self, what: str, line_no: int) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        lines = self.first_lines.setdefault(what, [])
        if len(lines) < self.keep:
            lines.append(line_no)

    def merge(self, other: "Problems") -> None:
        for what, count in other.counts.items():
            self.counts[what] = self.counts.get(what, 0) + count
            lines = self.first_lines.setdefault(what, [])
            lines.extend(other.first_lines.get(what, []))
            lines.sort()
            del lines[self.keep:]

    def total(self) -> int:
        return sum(self.counts.values())

    def sentence(self) -> str:
        parts = []
        for what, count in sorted(self.counts.items()):
            lines = ", ".join(str(n) for n in self.first_lines[what])
            more = ", ..." if count > len(self.first_lines[what]) else ""
            parts.append(f"{count} {what} (line {lines}{more})")
        return "skipped " + "; ".join(parts)


def block_lines(block: bytes, first_line: int, problems: Problems) -> Iterator[Tuple[int, bytes]]:
    """Lines of a block minus comments, blank lines and over-long lines."""
    for offset, line in enumerate(block.split(b"\n")):
        if not line or line.startswith(b"#"):
            continue
        if len(line) > MAX_LINE:
            problems.add("over-long lines", first_line + offset)
            continue
        yield first_line + offset, line


# --- Profile ---------------------------------------------------------------------------------

@dataclass
class _Sample:
    header: Header
    frames: List[Tuple[bytes, bytes, bytes]]
    line_no: int = 0


def iter_samples(stream: BinaryIO, problems: Problems) -> Iterator[_Sample]:
    """Samples in input order; malformed lines are counted in `problems` and skipped.
    A new event line ends the previous sample (single-line stacks need no blank line)."""
    stream = open_binary(stream)
    yield from _samples_of(stream, problems)
    if getattr(stream, "error", None):
        problems.add(stream.error, 0)


def _samples_of(stream: BinaryIO, problems: Problems) -> Iterator[_Sample]:
    for first_line, block in iter_blocks(stream):
        final = first_line < 0
        sample: Optional[_Sample] = None
        single_line = False
        stackless_seen = False
        for line_no, line in block_lines(block, abs(first_line), problems):
            header = parse_header(line)
            if header is None:
                frame = split_frame_line(line)
                if frame is None:
                    problems.add("unrecognised lines", line_no)
                elif sample is None:
                    problems.add("stack lines without an event line", line_no)
                else:
                    sample.frames.append(frame)
                    single_line = False
                continue
            if sample is not None:
                stackless_seen = stackless_seen or not sample.frames
                yield sample
            sample = _Sample(header, [], line_no)
            single_line = bool(header.inline_frame)
            if header.inline_frame:
                frame = split_frame_line(b"\t" + header.inline_frame)
                if frame:
                    sample.frames.append(frame)
        if sample is None:
            continue
        if final and not single_line and not (stackless_seen and not sample.frames):
            problems.add("incomplete last sample (no closing blank line)", sample.line_no)
            continue
        yield sample


def _decode(name: bytes) -> str:
    return name.decode("utf-8", errors="replace")


class _FrameCache:
    """Raw stack line -> Frames (names are decoded and tidied once per distinct line)."""

    def __init__(self):
        self.frames: Dict[Tuple[bytes, bytes, bytes, bool], Tuple[Frame, ...]] = {}
        self.unresolved_kernel = 0
        self.kernel = 0

    def get(self, raw: Tuple[bytes, bytes, bytes], java: bool) -> Tuple[Frame, ...]:
        key = raw + (java,)
        found = self.frames.get(key)
        if found is None:
            pc, rawfunc, module = raw
            kind = frame_kind(pc, module)
            names = function_names(pc, rawfunc, module, java=java, addrs=False)
            found = tuple(Frame(_decode(n), kind) for n in names)
            self.frames[key] = found
        return found


def read_profile(stream: BinaryIO, *, event_filter: Optional[str] = None, weight_by_period: bool = False,
                 max_warnings: int = 5) -> Profile:
    """`perf script` text (plain or gzip) -> Profile; see module docstring."""
    profile = Profile(source_format="perf-script")
    problems = Problems(max_warnings)
    cache = _FrameCache()
    wanted = event_filter.encode() if event_filter else None
    counts: Dict[tuple, float] = {}
    first_time = last_time = None
    kernel_frames = unresolved = 0
    for sample in iter_samples(stream, problems):
        header = sample.header
        event = _decode(header.event) if header.event else "unknown"
        profile.events[event] += 1
        if wanted is None and header.event is not None:
            wanted = header.event
        if header.event is not None and header.event != wanted:
            continue
        if header.time is not None:
            first_time = header.time if first_time is None else min(first_time, header.time)
            last_time = header.time if last_time is None else max(last_time, header.time)
        weight = header.period if weight_by_period else 1
        key = (header.comm, header.pid, header.tid, header.cpu, tuple(sample.frames))
        counts[key] = counts.get(key, 0) + weight
    for (comm, pid, tid, cpu, raw_frames), weight in counts.items():
        java = comm.startswith(b"java")
        frames: List[Frame] = []
        for raw in reversed(raw_frames):
            frames.extend(cache.get(raw, java))
            if is_kernel_module(raw[2]) or (raw[2] == b"[unknown]" and _KERNEL_ADDR.fullmatch(raw[0])):
                kernel_frames += 1
                unresolved += raw[1] == b"[unknown]" or raw[1].startswith(b"0x")
        context = context_of_marked(mark_contexts_in_frames(frames))
        pid_value = int(tid if pid == b"?" else pid) if (tid if pid == b"?" else pid).isdigit() else None
        profile.add(frames, weight, comm=_decode(comm).replace(" ", "_"), cpu=cpu,
                    context=context, pid=pid_value)
    profile.skipped_lines = problems.total()
    if first_time is not None:
        profile.time_span = (first_time, last_time)
    _add_quality(profile, problems, kernel_frames, unresolved, wanted)
    return profile


def _add_quality(profile: Profile, problems: Problems, kernel_frames: int, unresolved: int,
                 wanted: Optional[bytes]) -> None:
    sentences = []
    if problems.total():
        sentences.append(f"perf script: {problems.sentence()}")
    if kernel_frames and unresolved * 2 > kernel_frames:
        sentences.append(f"kernel symbols restricted: {unresolved} of {kernel_frames} kernel frames are "
                         "unresolved addresses (set kernel.kptr_restrict=0 and run perf as root)")
    if len(profile.events) > 1 and wanted is not None:
        sentences.append(f"several events in the input ({', '.join(sorted(profile.events))}); "
                         f"only {_decode(wanted)} samples were used")
    if not profile.records:
        sentences.append("no usable samples in the perf script input")
    if sentences:
        profile.data_quality.append("; ".join(sentences) + ".")


# --- contexts ----------------------------------------------------------------------------------

CONTEXT_MARKERS = {"softirq": "[softirq]", "hardirq": "[hardirq]", "nmi": "[nmi]"}
MARKER_CONTEXTS = {v: k for k, v in CONTEXT_MARKERS.items()}


def mark_contexts_in_frames(frames: List[Frame]) -> List[Frame]:
    """Insert a `[softirq]`/`[hardirq]`/`[nmi]` frame (kind "context") right after
    (leaf side of) the first frame of each interrupt context the stack enters."""
    out: List[Frame] = []
    current = "task"
    for frame in frames:
        out.append(frame)
        if frame.kind not in ("kernel", "unknown"):
            continue
        entered = context_for_frame(frame.name)
        if entered and entered != current:
            out.append(Frame(CONTEXT_MARKERS[entered], "context"))
            current = entered
    return out


def context_of_marked(frames) -> str:
    found = "task"
    for frame in frames:
        if frame.kind == "context":
            found = MARKER_CONTEXTS.get(frame.name, found)
    return found


def is_perf_script(sample: bytes) -> bool:
    """Content sniffing: an event line followed by a stack line (or single-line samples)."""
    if sample.startswith(GZIP_MAGIC):
        try:
            sample = gzip.GzipFile(fileobj=io.BytesIO(sample)).read(1 << 16)
        except (OSError, EOFError):
            pass
    previous_was_event = False
    checked = 0
    for line in sample.split(b"\n")[:200]:
        if not line.strip() or line.startswith(b"#"):
            previous_was_event = False
            continue
        if previous_was_event:
            return split_frame_line(line) is not None
        header = parse_header(line)
        if header is None:
            return False
        if header.inline_frame and split_frame_line(b"\t" + header.inline_frame):
            checked += 1
            if checked >= 2:
                return True
        previous_was_event = True
    return False
