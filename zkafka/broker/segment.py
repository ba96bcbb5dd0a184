"""Segment files: ``LogSegment`` is one data file (all a 0.7 segment is).

A segment is named after the offset of its first entry, 20 zero-padded digits and the entry format's suffix
(``00000000000000000000.kafka`` on the 0.7 line).
"""

from __future__ import annotations

import logging
import mmap
import os
from typing import Protocol

logger = logging.getLogger(__name__)


class EntryFormat(Protocol):
    """What a segment needs to know about the entries it holds (zkafka.records FORMAT07 / FORMAT08)."""

    name: str
    log_suffix: str
    overhead: int

    def valid_prefix(self, buf) -> int: ...


def segment_file_name(start: int, suffix: str) -> str:
    """The file name of the segment starting at ``start``: 20 zero-padded digits and the suffix."""
    return f"{start:020d}{suffix}"


def parse_segment_file_name(name: str, suffix: str) -> int | None:
    """The start offset a segment file name encodes, or None if it is not ``<digits><suffix>``."""
    if not name.endswith(suffix):
        return None
    stem = name[: -len(suffix)]
    return int(stem) if stem.isascii() and stem.isdigit() else None


class LogSegment:
    """One segment file: the log's entries from offset ``start``, with the sizes written and flushed."""

    __slots__ = ("path", "start", "size", "flushed_size", "first_append_ms", "_fd")

    def __init__(self, path: str, start: int, *, writable: bool) -> None:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT if writable else os.O_RDONLY
        self._fd: int | None = os.open(path, flags, 0o644)
        self.path = path
        self.start = start
        self.size = os.fstat(self._fd).st_size
        self.flushed_size = self.size
        self.first_append_ms: int | None = None

    def fileno(self) -> int:
        """The open descriptor, for ``sendfile``.

        Retention closes the descriptors of the segments it deletes: a sender that may yield while using
        one should ``os.dup`` it first.
        """
        if self._fd is None:
            raise ValueError(f"segment {self.path} is closed")
        return self._fd

    def read(self, position: int, length: int) -> bytes:
        """Up to ``length`` bytes from a position in this file."""
        return os.pread(self.fileno(), length, position)

    def append(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.fileno(), view)
            self.size += written
            view = view[written:]

    def flush(self) -> None:
        """fsync the file; ``flushed_size`` becomes the size written before the call."""
        size = self.size
        os.fsync(self.fileno())
        self.flushed_size = size

    def truncate(self, size: int) -> None:
        os.ftruncate(self.fileno(), size)
        self.size = self.flushed_size = size

    def valid_prefix(self, entry_format: EntryFormat) -> int:
        """Bytes of the longest prefix of whole, valid entries in the file (what recovery keeps)."""
        if self.size == 0:
            return 0
        with mmap.mmap(self.fileno(), self.size, access=mmap.ACCESS_READ) as mapped:
            return entry_format.valid_prefix(mapped)

    @property
    def mtime_ms(self) -> int:
        """The file's last modification time in milliseconds (retention and the offsets request use it)."""
        return os.stat(self.path).st_mtime_ns // 1_000_000

    def touch(self, now_ms: int) -> None:
        os.utime(self.path, ns=(now_ms * 1_000_000, now_ms * 1_000_000))

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def delete(self) -> None:
        self.close()
        os.unlink(self.path)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.path!r}, start={self.start}, size={self.size},"
            f" flushed={self.flushed_size})"
        )
