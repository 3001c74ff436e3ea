"""Parse `perf script` text: the line grammar, the chunker, and the Profile the diagnoser reads.

The line grammar follows stackcollapse-perf.pl so names match what every flame-graph tool
prints; where the Perl script is wrong for modern perf (single-line stacks, versioned
vmlinux paths, jitdump .so files, PERF_RECORD_* side-band lines) this parser is right
instead. Every line is read in time linear in its length. Everything works on bytes: perf
output is not guaranteed UTF-8, and bytes are faster. Samples are read by samplereader (the
one reader `collapse` shares); `profile_of` turns what it aggregated into a Profile.

    with open("perf.script.gz", "rb") as f:
        profile = read_profile(f)
    profile = read_profile_file("perf.script")     # large plain files: one process per core

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

from .contexts import CONTEXT_MARKERS, MARKER_CONTEXTS, context_of_marked, mark_contexts_in_frames  # noqa: F401
from .contexts import entered as _entered
from .magic import GZIP_MAGIC
from .profile import Frame, Profile, StackRecord

CHUNK = 1 << 22
MAX_BLOCK = 8 << 20   # no blank line for this long: not a sample; cut at a line end (bounded memory)
MAX_LINE = 1 << 16            # longer lines are skipped as malformed
WHITESPACE = b" \t\r\n\x0b\x0c"
SIDEBAND = b"PERF_RECORD_"

# Every pattern below is matched against one whitespace-free token, or anchored so that no two
# unbounded repeats can take the same characters: each line costs time linear in its length
# (a lazy `(\S.*?)\s+(\d+)` over a line of 20 000 spaces took 10 s; 60 000 took 145 s).
_PID_TOKEN = re.compile(rb"(\d+)(?:/(\d+))?")          # fullmatch: 1234 or 1234/1240
_PERL_PID_TOKEN = re.compile(rb"(\d+)/*(\d*)")          # fullmatch: Perl's (\d+)\/*(\d+)*
_CPU_TOKEN = re.compile(rb"\[(\d+)\]")                   # fullmatch: [003]
_TIME_TOKEN = re.compile(rb"(\d+\.\d+):")                # match at a token's start: 884.644824:
# After the time: [period] event: [single-line frame]. The event is one token ending in ':'.
_AFTER_TIME = re.compile(rb"\s*(?:(\d+)\s+)?([^\s:]\S*?):(?:\s+(.*))?$")
_CPU = re.compile(rb"\[(\d+)\]")
# The usual stack line shape; anything else takes the careful path below.
_FRAME_FAST = re.compile(rb"[ \t]*(\w+) ([^\s(].*) \(([^\s()]*)\)$")
_OFFSET = re.compile(rb"\+0x[\da-f]+$")
_PARAMS = re.compile(rb"\((?!anonymous namespace\)).*")
_VMLINUX_TAIL = re.compile(rb"[A-Za-z0-9._-]*")
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
    sideband: bool = False          # a PERF_RECORD_* line of `perf script --show-*-events`: no sample


def parse_header(line: bytes) -> Optional[Header]:
    """An event line -> Header, or None when the line is not one.

    The grammar, in whitespace-separated tokens: COMM (may hold spaces, colons and digit words),
    PID or PID/TID, optional [CPU], TIME:, optional PERIOD, EVENT: and, for stacks of one frame,
    the frame. The first PID [CPU] TIME: run followed by an event is taken. Lines without a time
    fall back to stackcollapse-perf.pl's rule (comm, pid[/tid], `period event:` at the end).

    >>> h = parse_header(b"swapper     0/0     [000]   884.644824:     250000 cpu-clock:ppp: ")
    >>> (h.comm, h.pid, h.tid, h.cpu, h.period, h.event)
    (b'swapper', b'0', b'0', 0, 250000, b'cpu-clock:ppp')
    >>> parse_header(b"java 25607 4794564.109216: 1 cycles:").pid
    b'?'
    >>> parse_header(b"      web 1: worker 27240/27249 [001]  1323.13: 250000 cpu-clock:ppp:  ffffffff81614a5f f ([kernel.kallsyms])").comm
    b'web 1: worker'
    >>> parse_header(b"perf 31601 [001]   983.295069: PERF_RECORD_SWITCH_CPU_WIDE IN   prev pid/tid: 0/0").sideband
    True
    >>> parse_header(b"\t    7f1e2215d058 main 12 (/bin/x)") is None
    True
    """
    tokens = line.split()
    for index in range(1, len(tokens) - 1):
        token = tokens[index]
        if not 48 <= token[0] <= 57:
            continue
        pid = _PID_TOKEN.fullmatch(token)
        if pid is None:
            continue
        at = index + 1
        cpu = _CPU_TOKEN.fullmatch(tokens[at])
        if cpu is not None:
            at += 1
            if at == len(tokens):
                continue
        time = _TIME_TOKEN.match(tokens[at])
        if time is None:
            continue
        header = _modern_header(line, index, at, pid, cpu, time)
        if header is not None:
            return header
    return _perl_header(line, tokens)


def _from_token(line: bytes, index: int) -> bytes:
    """The line from its token `index` on."""
    return line.split(None, index)[index]


def _modern_header(line: bytes, index: int, at: int, pid, cpu, time) -> Optional[Header]:
    after = _from_token(line, at)[time.end():]
    comm = line[:len(line) - len(_from_token(line, index))].strip(WHITESPACE)
    pid_text, tid = pid.groups()
    if tid is None:
        pid_text, tid = b"?", pid_text
    cpu_number = int(cpu.group(1)) if cpu is not None else None
    if after.lstrip(WHITESPACE).startswith(SIDEBAND):
        event = after.split(None, 1)[0].split(b":", 1)[0].split(b"(", 1)[0]
        return Header(comm, pid_text, tid, cpu_number, float(time.group(1)), 1, event, None, True)
    rest = _AFTER_TIME.match(after)
    if rest is None:
        return None
    period, event, frame = rest.groups()
    frame = frame.strip(WHITESPACE) if frame else None
    return Header(comm, pid_text, tid, cpu_number, float(time.group(1)), int(period) if period else 1,
                  event, frame or None)


def _perl_header(line: bytes, tokens: List[bytes]) -> Optional[Header]:
    r"""stackcollapse-perf.pl's /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/, read token by token."""
    if not line or line[0] in WHITESPACE:
        return None
    for index in range(1, len(tokens)):
        found = _PERL_PID_TOKEN.fullmatch(tokens[index])
        if found is None:
            continue
        start = len(line) - len(_from_token(line, index))
        end = start + len(tokens[index])
        comm_end = max(len(line[:start].rstrip(WHITESPACE)), 2)   # `\S.+?` takes two characters
        if end >= len(line) or comm_end >= start:                # `\s+` on both sides
            continue
        pid, tid = found.groups()
        if not tid:
            pid, tid = b"?", pid
        period, event = _perl_period_event(tokens)
        cpu = _CPU.search(line, end)
        return Header(line[:comm_end], pid, tid, int(cpu.group(1)) if cpu else None, None, period, event, None)
    return None


def _perl_period_event(tokens: List[bytes]) -> Tuple[int, Optional[bytes]]:
    r"""Perl's /:\s*(\d+)*\s+(\S+):\s*$/ read from the right: (period or 1, event or None)."""
    if len(tokens) < 2 or len(tokens[-1]) < 2 or not tokens[-1].endswith(b":"):
        return 1, None
    event, before = tokens[-1][:-1], tokens[-2]
    if before.endswith(b":"):
        return 1, event
    _, colon, digits = before.rpartition(b":")
    if colon and digits.isdigit():
        return int(digits) or 1, event
    if before.isdigit() and len(tokens) >= 3 and tokens[-3].endswith(b":"):
        return int(before) or 1, event
    return 1, None


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
    if module.startswith(b"[") or module.endswith(b".ko"):
        return True
    last = module.rfind(b"vmlinux")        # /vmlinux[A-Za-z0-9._-]*$/ checked at its last occurrence
    return last >= 0 and _VMLINUX_TAIL.fullmatch(module, last + 7) is not None


def is_jit_module(module: bytes) -> bool:
    """perf map files (/tmp/perf-PID.map) and jitdump objects (jitted-PID-N.so)."""
    return bool(_JIT_MAP.search(module)) or (b"/jitted-" in module and module.endswith(b".so"))


def _is_go_method(func: bytes) -> bool:
    r"""Perl's /\.\(.*\)\./ (Go methods like `main.(*T).run`), without its backtracking."""
    start = func.find(b".(")
    return start >= 0 and func.find(b").", start + 2) >= 0


def tidy_function(func: bytes, java: bool) -> bytes:
    """stackcollapse-perf.pl's $tidy_generic and $tidy_java."""
    func = func.replace(b";", b":")
    if not _is_go_method(func):
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


# A mail client wrapping a stack line at 72-80 columns moves its end to column 0, where perf never
# starts a line with a DSO in parentheses: `        ffffffff8d24bb6e try_to_free_mem_cgroup_pages+0xee`
# then `([kernel.kallsyms])`, or an address alone then `shrink_node+0xd4 ([kernel.kallsyms])`.
_DSO = rb"\((?:\[[\w.-]+\]|/[^()\s]*|unknown)\)"
_WRAPPED_DSO = re.compile(_DSO + rb"[ \t\r]*")
_WRAPPED_SYMBOL_DSO = re.compile(rb"[^\s()]+ " + _DSO + rb"[ \t\r]*")
_ADDRESS_ALONE = re.compile(rb"[ \t]+[0-9a-f]{4,16}[ \t\r]*")


def _wrapped_tail(head: bytes, line: bytes) -> bool:
    """Whether `line` is the end of the stack line `head`, wrapped by a mail client (fullmatch)."""
    if head[:1] not in (b" ", b"\t"):
        return False
    if _WRAPPED_DSO.fullmatch(line):
        return not head.rstrip().endswith(b")")
    return bool(_ADDRESS_ALONE.fullmatch(head) and _WRAPPED_SYMBOL_DSO.fullmatch(line))


def block_lines(block: bytes, first_line: int, problems: Problems) -> Iterator[Tuple[int, bytes]]:
    """Lines of a block minus comments, blank lines and over-long lines; a stack line's end that a
    mail client wrapped onto the next line is joined back.

    >>> list(block_lines(b"\\tffffffff8d24bb6e try_to_free_mem_cgroup_pages+0xee\\n([kernel.kallsyms])", 1, None))
    [(1, b'\\tffffffff8d24bb6e try_to_free_mem_cgroup_pages+0xee ([kernel.kallsyms])')]
    >>> [n for n, _ in block_lines(b"\\t7f61a8c2e410 [unknown] (/tmp/perf-28341.map)\\n(unknown)", 1, None)]
    [1, 2]
    """
    held: Optional[Tuple[int, bytes]] = None
    for offset, line in enumerate(block.split(b"\n")):
        if not line or line.startswith(b"#"):
            continue
        if len(line) > MAX_LINE:
            problems.add("over-long lines", first_line + offset)
            continue
        if held is not None and line[:1] not in (b" ", b"\t") and _wrapped_tail(held[1], line):
            held = (held[0], held[1].rstrip() + b" " + line)
            continue
        if held is not None:
            yield held
        held = (first_line + offset, line)
    if held is not None:
        yield held


# --- Profile ---------------------------------------------------------------------------------

class _ProfileGroups:
    """The diagnoser's view of an event line: (comm, cpu, pid); see samplereader.Consumer."""

    def group(self, header: Header) -> tuple:
        pid = header.tid if header.pid == b"?" else header.pid
        return header.comm, header.cpu, int(pid) if pid.isdigit() else None


def _decode(name: bytes) -> str:
    return name.decode("utf-8", errors="replace")


class _FrameCache:
    """Raw stack line -> (Frames, kind, kernel?, unresolved?, contexts entered): decoded, tidied
    and classified once per distinct line, and once per function for lines that differ only in
    address and `+0x..` offset (the default `perf script` layout prints both on every line)."""

    def __init__(self):
        self.lines: Tuple[Dict[tuple, tuple], Dict[tuple, tuple]] = ({}, {})
        self.functions: Tuple[Dict[tuple, tuple], Dict[tuple, tuple]] = ({}, {})

    def get(self, raw: Tuple[bytes, bytes, bytes], java: bool) -> tuple:
        found = self.lines[java].get(raw)
        if found is None:
            pc, rawfunc, module = raw
            # The name never depends on the offset, nor the kind on the address unless the module is unknown.
            plus = rawfunc.rfind(b"+0x")
            function = rawfunc[:plus] if plus > 0 and _OFFSET.match(rawfunc, plus) else rawfunc
            key = (function, module, pc if module == b"[unknown]" else b"", rawfunc == function)
            found = self.functions[java].get(key)
            if found is None:
                found = self.functions[java][key] = _classify(pc, rawfunc, module, java)
            self.lines[java][raw] = found
        return found


def _classify(pc: bytes, rawfunc: bytes, module: bytes, java: bool) -> tuple:
    kind = frame_kind(pc, module)
    frames = tuple(Frame(_decode(n), kind) for n in function_names(pc, rawfunc, module, java=java, addrs=False))
    kernel = kind == "kernel"
    unresolved = kernel and (rawfunc == b"[unknown]" or rawfunc.startswith(b"0x"))
    entered = tuple(_entered(f.name) for f in frames) if kind in ("kernel", "unknown") else ()
    return frames, kind, kernel, unresolved, entered


class _Stacks:
    """Parsed stack (leaf first) -> root-first Frames and context, once per stack and comm kind."""

    def __init__(self, stacks):
        self.stacks = stacks
        self.cache = _FrameCache()
        self.built: Dict[Tuple[int, bool], tuple] = {}
        self.interned: Dict[tuple, tuple] = {}

    def get(self, stack_id: int, java: bool) -> tuple:
        """(frames, context, kernel frames, unresolved kernel frames)."""
        key = (stack_id, java)
        found = self.built.get(key)
        if found is None:
            found = self._build(self.stacks[stack_id], java)
            frames = self.interned.setdefault(found[0], found[0])     # equal frames: one object
            found = self.built[key] = (frames,) + found[1:]
        return found

    def _build(self, raw_frames, java: bool) -> tuple:
        """As mark_contexts_in_frames + context_of_marked, from each line's cached contexts."""
        frames: List[Frame] = []
        caller_kind = "unknown"
        kernel = unresolved = 0
        context = "task"
        known = self.cache.lines[java]
        for raw in reversed(raw_frames):
            found = known.get(raw)
            names, kind, is_kernel, is_unresolved, entered = found or self.cache.get(raw, java)
            if raw[2] == b"inlined":        # `perf script --inline`: the kind of the frame it is inlined in
                names = tuple(Frame(f.name, caller_kind) for f in names)
                if caller_kind in ("kernel", "unknown"):
                    entered = tuple(_entered(f.name) for f in names)
            else:
                caller_kind = kind
            frames.extend(names)
            kernel += is_kernel
            unresolved += is_unresolved
            for ctx in entered:
                if ctx is not None:
                    context = ctx
        return tuple(frames), context, kernel, unresolved


def read_profile(stream: BinaryIO, *, event_filter: Optional[str] = None, weight_by_period: bool = False,
                 max_warnings: int = 5, progress=None) -> Profile:
    """`perf script` text (plain or gzip) -> Profile; see module docstring."""
    from .samplereader import read_samples

    samples = read_samples(stream, _read_options(event_filter, weight_by_period), _ProfileGroups(), progress)
    return profile_of(samples, max_warnings)


def read_profile_file(path: str, *, event_filter: Optional[str] = None, weight_by_period: bool = False,
                      max_warnings: int = 5, jobs: Optional[int] = None, progress=None) -> Profile:
    """As read_profile, from a path: large plain files are read by one process per core."""
    from .samplereader import read_samples_file

    samples = read_samples_file(path, _read_options(event_filter, weight_by_period), _ProfileGroups(), jobs,
                                progress)
    return profile_of(samples, max_warnings)


def _read_options(event_filter: Optional[str], weight_by_period: bool):
    from .samplereader import ReadOptions

    return ReadOptions(event_filter=event_filter.encode() if event_filter else None,
                       weight_by_period=weight_by_period, with_time=True)


def profile_of(samples, max_warnings: int = 5) -> Profile:
    """Aggregated samples (samplereader.Samples, whose counts it consumes) -> Profile, records in
    order of first appearance.
    Samples of one record (same frames, comm, cpu, context, idle pid) are summed here with small
    keys, so Profile.add runs once per record, not once per (event line group, raw stack)."""
    profile = Profile(source_format="perf-script")
    timed = samples.origin is not None
    stacks = _Stacks(samples.stacks)
    groups = _GroupNames(samples.groups)
    span = len(samples.stacks) or 1
    by_stack: Dict[int, list] = {}                   # group * span + stack -> its record
    records: Dict[tuple, list] = {}                  # record key -> [weight, seconds, frames, context, pid, ...]
    kernel_frames = unresolved = 0
    for (group, stack, second), weight in samples.counts.items():
        record = by_stack.get(group * span + stack)
        if record is None:
            record = by_stack[group * span + stack] = _record(records, groups.get(group), stacks, stack)
        record[0] += weight
        if timed:
            per_second = record[1]
            per_second[second] = per_second.get(second, 0) + weight
    del by_stack
    samples.counts = {}                              # consumed: memory for the records instead
    for (_, comm, cpu, _, _), (weight, seconds, frames, context, pid, kernel, unknown) in records.items():
        kernel_frames += kernel * weight
        unresolved += unknown * weight
        profile.adopt(StackRecord(frames, weight, comm, cpu, context, pid, seconds))
    for event, count in samples.events.items():
        profile.events[_decode(event) if event else "unknown"] += count
    profile.skipped_lines = samples.problems.total()
    if samples.first_time is not None:
        profile.time_span = (samples.first_time, samples.last_time)
        profile.origin = samples.origin
    samples.problems.keep = max_warnings
    _add_quality(profile, samples, kernel_frames, unresolved)
    return profile


def _record(records: Dict[tuple, list], group: tuple, stacks: "_Stacks", stack: int) -> list:
    """The record a (group, stack) pair adds to: Profile.add's key, with frames by identity."""
    comm, cpu, pid, java = group
    frames, context, kernel, unknown = stacks.get(stack, java)
    key = (id(frames), comm, cpu, context, pid if pid == 0 else None)
    record = records.get(key)
    if record is None:
        record = records[key] = [0, {}, frames, context, pid, kernel, unknown]
    return record


class _GroupNames:
    """Event line group (comm bytes, cpu, pid) -> (comm text, cpu, pid, Java?), once per group."""

    def __init__(self, groups):
        self.groups = groups
        self.names: Dict[bytes, str] = {}
        self.done: Dict[int, tuple] = {}

    def get(self, group_id: int) -> tuple:
        found = self.done.get(group_id)
        if found is None:
            comm, cpu, pid = self.groups[group_id]
            name = self.names.get(comm)
            if name is None:
                name = self.names[comm] = _decode(comm).replace(" ", "_")
            found = self.done[group_id] = (name, cpu, pid, comm.startswith(b"java"))
        return found


def _add_quality(profile: Profile, samples, kernel_frames: int, unresolved: int) -> None:
    sentences = []
    problems, wanted = samples.problems, samples.event
    if problems.total():
        sentences.append(f"perf script: {problems.sentence()}")
    if samples.unterminated is not None:
        sentences.append(f"the input ended without a blank line after its last sample (line "
                         f"{samples.unterminated}): that sample was kept, but the file may have been cut short")
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


# OProfile's banner (`CPU: P4 / Xeon with 2 hyper-threads, speed 3000.2 MHz (estimated)`) and the line after
# it (`Counted GLOBAL_POWER_EVENTS events (...) count 100000`) can pass for a `-F comm,tid` event line and a
# frame: an opreport listing, never perf script
OPROFILE_BANNER = re.compile(rb"^\s*CPU: .+, speed [\d.e+]+ MHz \(estimated\)\s*$")


def is_perf_script(sample: bytes) -> bool:
    """Content sniffing: an event line followed by a stack line (or single-line samples).

    >>> is_perf_script(b"CPU: P4 / Xeon with 2 hyper-threads, speed 3000.2 MHz (estimated)\\n"
    ...                b"Counted GLOBAL_POWER_EVENTS events (time) with a unit mask of 0x01 (mandatory) count 100000\\n")
    False
    >>> is_perf_script(b"$ mpstat -P ALL 1 1\\n"         # a command and sysstat's banner (rule F2)
    ...                b"Linux 4.14.146-119.123.amzn2.x86_64 (ip-10-0-3-17)  10/02/2019  _x86_64_  (16 CPU)\\n")
    False
    >>> is_perf_script(b"java 1234 [001] 100.000001: 1000 cycles:\\n"   # timed: frames pasted flush left
    ...                b"ffffffff81000003 futex_wake+0x1 ([kernel.kallsyms])\\n")
    True
    """
    if sample.startswith(GZIP_MAGIC):
        try:
            sample = gzip.GzipFile(fileobj=io.BytesIO(sample)).read(1 << 16)
        except (OSError, EOFError):
            pass
    previous_was_event, timed = False, False
    checked = 0
    for line in sample.split(b"\n")[:200]:
        if not line.strip() or line.startswith(b"#"):
            previous_was_event = False
            continue
        if previous_was_event:      # perf script indents its frames: required below a time-less event line
            return split_frame_line(line) is not None and (timed or line[:1] in (b" ", b"\t"))
        header = parse_header(line)
        if header is None or OPROFILE_BANNER.match(line):
            return False
        if header.inline_frame and split_frame_line(b"\t" + header.inline_frame):
            checked += 1
            if checked >= 2:
                return True
        previous_was_event, timed = True, header.time is not None
    return False
