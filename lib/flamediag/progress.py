"""Progress of long reads on stderr: bytes read, rate and time left, on one rewritten line.

Shown only when stderr is a terminal and the input is large (MIN_BYTES); quiet otherwise, so
logs and pipes never get carriage returns.

    progress = Progress.for_input("perf.script", label="reading perf.script")
    progress.watch(stream)          # or progress.update(bytes_done) from elsewhere
    ...
    progress.done()

    flamediag: reading perf.script: 120 of 300 MB, 85 MB/s, about 2 s left
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO

MIN_BYTES = 50 << 20
INTERVAL = 0.5


class Progress:
    def __init__(self, total: Optional[int], label: str, stream: Optional[TextIO] = None):
        self.stream = stream if stream is not None else sys.stderr
        self.total, self.label = total, label
        self.enabled = _is_terminal(self.stream) and (total is None or total >= MIN_BYTES)
        self.started = time.monotonic()
        self.shown_at = 0.0
        self.shown = False
        self.source = None

    @classmethod
    def for_input(cls, path: str, label: str, stream: Optional[TextIO] = None) -> "Progress":
        try:
            size = os.path.getsize(path) if os.path.isfile(path) else None
        except OSError:
            size = None
        return cls(size, label, stream)

    def watch(self, source) -> None:
        """Read the position of this file object on each `update()` without a count."""
        self.source = source

    def update(self, done: Optional[int] = None) -> None:
        if not self.enabled:
            return
        if done is None:
            done = self._position()
            if done is None:
                return
        now = time.monotonic()
        if now - self.shown_at < INTERVAL or (self.total is None and done < MIN_BYTES):
            return
        self.shown_at = now
        self._show(done, now - self.started)

    def _position(self) -> Optional[int]:
        try:
            return self.source.tell() if self.source is not None else None
        except (OSError, ValueError, AttributeError):
            return None

    def _show(self, done: int, elapsed: float) -> None:
        rate = done / elapsed if elapsed > 0 else 0.0
        text = f"flamediag: {self.label}: {done / 1e6:.0f}"
        if self.total:
            text += f" of {self.total / 1e6:.0f} MB, {rate / 1e6:.0f} MB/s"
            if rate > 0:
                text += f", about {max(0.0, (self.total - done) / rate):.0f} s left"
        else:
            text += f" MB, {rate / 1e6:.0f} MB/s"
        self.stream.write("\r" + text + "\033[K")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        """Clear the progress line (nothing when none was shown)."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Counted:
    """A stream whose reads are counted into a Progress (for pipes, which have no position)."""

    def __init__(self, stream, progress: Progress):
        self.stream, self.progress, self.count = stream, progress, 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.count += len(data)
        self.progress.update(self.count)
        return data
