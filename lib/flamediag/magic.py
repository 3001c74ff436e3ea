"""The byte signatures content detection relies on (the file name never decides).

    >>> is_gzip(b"\\x1f\\x8b\\x08\\x00"), is_tar_block(b"\\0" * 257 + b"ustar\\0")
    (True, True)
"""
from __future__ import annotations

GZIP_MAGIC = b"\x1f\x8b"
TAR_MAGIC = b"ustar"          # at offset 257 of a POSIX (ustar, GNU, pax) tar header block
TAR_MAGIC_OFFSET = 257


def is_gzip(head: bytes) -> bool:
    return head.startswith(GZIP_MAGIC)


def is_tar_block(block: bytes) -> bool:
    """True when `block` (the first 512 bytes of a file) is a tar header."""
    return block[TAR_MAGIC_OFFSET:TAR_MAGIC_OFFSET + len(TAR_MAGIC)] == TAR_MAGIC
