"""Building blocks for the log tests: a settable clock, hand-built entries, file times."""

from __future__ import annotations

import os
import struct
import zlib


class Clock:
    """A settable millisecond clock."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def entry(payload: bytes) -> bytes:
    """One magic-1 uncompressed entry, built by hand from the 0.7 layout."""
    return struct.pack(">iBBI", 6 + len(payload), 1, 0, zlib.crc32(payload)) + payload


def set_mtime(path: str | os.PathLike, ms: int) -> None:
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
