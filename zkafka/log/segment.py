"""Segment files: ``LogSegment`` is one data file (all a 0.7 segment is); ``IndexedSegment`` adds the 0.8 index.

A segment is named after the offset of its first entry, 20 zero-padded digits and the entry format's suffix
(``00000000000000000000.kafka`` on the 0.7 line, ``00000000000000000000.log`` + ``.index`` on the 0.8 line).
"""

from __future__ import annotations

import logging
import mmap
import os
import threading
from collections.abc import Iterator
from typing import Protocol

from zkafka.log.offset_index import INDEX_SUFFIX, OffsetIndex
from zkafka.log.time_index import TIME_INDEX_SUFFIX, TimeIndex
from zkafka.records.format08 import entries, find_offset, iter_messages
from zkafka.records.log_entries import LogEntry, first_at_or_after, log_entries
from zkafka.records.message_v1 import NO_TIMESTAMP
from zkafka.utils import with_filename

logger = logging.getLogger(__name__)

DELETED_SUFFIX = ".deleted"
# 0.8: a cleaned segment being written, and one waiting to be swapped in (the log loader finishes the swap).
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
APPEND_ENDS_KEPT = 32  # an IndexedSegment's appends whose ends it remembers


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

    __slots__ = (
        "path", "start", "size", "flushed_size", "first_append_ms", "_fd", "_lent", "_closed_fd", "_lock"
    )

    def __init__(self, path: str, start: int, *, writable: bool) -> None:
        self._lent = 0  # descriptors lent by retain_fd and not yet released
        self._closed_fd: int | None = None  # closed while lent: the last release closes it
        self._lock = threading.Lock()
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT if writable else os.O_RDONLY
        self._fd: int | None = os.open(path, flags, 0o644)
        self.path = path
        self.start = start
        self.size = os.fstat(self._fd).st_size
        self.flushed_size = self.size
        self.first_append_ms: int | None = None

    def fileno(self) -> int:
        """The open descriptor. Retention closes the descriptors of the segments it deletes: a sender that
        may yield while using it (``sendfile``) takes it with ``retain_fd`` instead."""
        if self._fd is None:
            raise ValueError(f"segment {self.path} is closed")
        return self._fd

    def retain_fd(self) -> int:
        """The open descriptor, kept open until ``release_fd`` even if the segment is closed (deleted)
        meanwhile: what a file region being sent uses (Kafka's FileRecords keep their channel open)."""
        with self._lock:
            fd = self.fileno()
            self._lent += 1
            return fd

    def release_fd(self) -> None:
        """A descriptor ``retain_fd`` lent is no longer used; the last one closes it if the segment was."""
        with self._lock:
            self._lent -= 1
            if self._lent or self._closed_fd is None:
                return
            fd, self._closed_fd = self._closed_fd, None
        os.close(fd)

    def read(self, position: int, length: int) -> bytes:
        """Up to ``length`` bytes from a position in this file."""
        return os.pread(self.fileno(), length, position)

    def append(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.fileno(), view)
                self.size += written
                view = view[written:]
        except OSError as exc:
            raise with_filename(exc, self.path) from None

    def descriptors(self) -> tuple[int, ...]:
        """The open descriptors whose fsync makes the segment durable (ValueError once it is closed)."""
        return (self.fileno(),)

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

    @property
    def largest_timestamp(self) -> int:
        """What time-based retention ages the segment by: here its mtime (entries without timestamps)."""
        return self.mtime_ms

    def touch(self, now_ms: int) -> None:
        os.utime(self.path, ns=(now_ms * 1_000_000, now_ms * 1_000_000))

    def close(self) -> None:
        with self._lock:
            if self._fd is None:
                return
            fd, self._fd = self._fd, None
            if self._lent:  # closed by the last release_fd
                self._closed_fd = fd
                return
        os.close(fd)

    def delete(self) -> None:
        self.close()
        os.unlink(self.path)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.path!r}, start={self.start}, size={self.size},"
            f" flushed={self.flushed_size})"
        )


class IndexedSegment(LogSegment):
    """A 0.8 segment: ``<base>.log`` holding entries with logical offsets, and its sparse ``<base>.index``.

    ``start`` is the base offset. Every segment file is opened read-write: a follower's truncation can make
    an older segment the active one again.
    """

    __slots__ = (
        "index",
        "time_index",
        "max_timestamp",
        "offset_of_max_timestamp",
        "_time_index_path",
        "_index_max_bytes",
        "index_interval_bytes",
        "bytes_since_index_entry",
        "created_ms",
        "roll_jitter_ms",
        "next_offset",
        "_append_ends",
    )

    def __init__(
        self,
        dir_path: str,
        base_offset: int,
        *,
        log_suffix: str,
        index_max_bytes: int | None,
        index_interval_bytes: int,
        created_ms: int,
        roll_jitter_ms: int = 0,
    ) -> None:
        super().__init__(
            os.path.join(dir_path, segment_file_name(base_offset, log_suffix)), base_offset, writable=True
        )
        try:
            self.index = OffsetIndex(
                os.path.join(dir_path, segment_file_name(base_offset, INDEX_SUFFIX)),
                base_offset,
                max_bytes=index_max_bytes,
            )
            self._time_index_path = os.path.join(dir_path, segment_file_name(base_offset, TIME_INDEX_SUFFIX))
            self._index_max_bytes = index_max_bytes
            self.time_index: TimeIndex | None = None
            if os.path.exists(self._time_index_path):
                self.time_index = TimeIndex(self._time_index_path, base_offset, max_bytes=index_max_bytes)
        except BaseException:
            self.close()
            raise
        self.max_timestamp, self.offset_of_max_timestamp = (
            self.time_index.last_entry if self.time_index is not None else (NO_TIMESTAMP, base_offset)
        )
        self.index_interval_bytes = index_interval_bytes
        self.bytes_since_index_entry = 0
        self.created_ms = created_ms
        self.roll_jitter_ms = roll_jitter_ms
        self.next_offset = base_offset
        # The last appends' ends, next offset -> position: where a follower (or a consumer at the end) fetches
        # from next; forgotten on truncation.
        self._append_ends: dict[int, int] = {}

    def append_entries(
        self, first_offset: int, next_offset: int, data: bytes | memoryview, stamp: tuple[int, int] | None = None
    ) -> None:
        """Write entries whose offsets run from ``first_offset``; index them if enough bytes went by.
        ``stamp``: their largest timestamp and the offset carrying it (None: entries without timestamps)."""
        if self.bytes_since_index_entry > self.index_interval_bytes:
            self.index.append(first_offset, self.size)
            if self.time_index is not None:
                self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_index_entry = 0
        self.append(data)
        self.bytes_since_index_entry += len(data)
        self.next_offset = next_offset
        ends = self._append_ends
        ends[next_offset] = self.size
        if len(ends) > APPEND_ENDS_KEPT:
            del ends[next(iter(ends))]
        if stamp is not None and stamp[0] > self.max_timestamp:
            self._timestamped(*stamp)

    def _timestamped(self, timestamp: int, offset: int) -> None:
        """The segment's largest timestamp so far; its first one opens the time index."""
        self.max_timestamp, self.offset_of_max_timestamp = timestamp, offset
        if self.time_index is None:
            self.time_index = TimeIndex(self._time_index_path, self.start, max_bytes=self._index_max_bytes)

    @property
    def largest_timestamp(self) -> int:
        """The largest timestamp the entries carry; the file's mtime when they carry none (magic 0)."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.mtime_ms

    @property
    def indexes(self) -> tuple[OffsetIndex, ...]:
        """The offset index, and the time index when the segment has one."""
        return (self.index,) if self.time_index is None else (self.index, self.time_index)

    def find_offset_by_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record stamped at or after ``timestamp`` (None: none is): the
        time index gives the offset to scan from, the offset index its position."""
        if self.time_index is None:
            return None
        position = self.index.lookup(self.time_index.lookup(timestamp)[1])[1]
        for entry in self.log_entries_from(position):
            if entry.max_timestamp >= timestamp:
                found = first_at_or_after(self.read(entry.position, entry.size), timestamp)
                if found is not None:
                    return found
        return None

    def seal_time_index(self) -> None:
        """The time index ends with the segment's largest timestamp (on roll and close), trimmed on roll."""
        if self.time_index is not None:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def resize_indexes(self, max_bytes: int) -> None:
        """Both indexes grown back to ``max_bytes`` (a segment that becomes the active one again)."""
        self._index_max_bytes = max_bytes
        for index in self.indexes:
            index.resize(max_bytes)

    def descriptors(self) -> tuple[int, ...]:
        # On Linux an fsync of the index file also writes the pages changed through its mapping.
        return (self.fileno(), *(index.fileno() for index in self.indexes))

    # -- offsets to positions -------------------------------------------------------------------------------

    def entries_from(self, position: int, end: int | None = None) -> Iterator[tuple[int, int, int]]:
        """Shallow entries ``(offset, position, size)`` of the file from ``position`` (a whole entry's start)."""
        end = self.size if end is None else end
        if end <= position:
            return
        with mmap.mmap(self.fileno(), end, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                for offset, relative, size in entries(view[position:end]):
                    yield offset, position + relative, size
            finally:
                view.release()

    def translate_offset(self, offset: int, from_position: int = 0) -> int | None:
        """The position of the first entry with an offset >= ``offset`` (at or after ``from_position``, a whole
        entry's start at or before it), None past the end.

        The end of one of the last appends is known; else the index gives the last indexed entry at or before
        the offset and the file is scanned from there.
        """
        size = self.size
        position = self._append_ends.get(offset, -1)
        if position >= from_position:
            return position if position < size else None
        position = max(self.index.lookup(offset)[1], from_position)
        if size <= position:
            return None
        with mmap.mmap(self.fileno(), size, access=mmap.ACCESS_READ) as mapped:
            found = find_offset(mapped, offset, position)
        return None if found is None else found[1]

    def read_next_offset(self) -> int:
        """The offset after the last entry in the file (the base offset if it is empty)."""
        last = self.index.last_position
        next_offset = self.start
        for entry_offset, _, _ in self.entries_from(last):
            next_offset = entry_offset + 1
        return next_offset

    # -- recovery and truncation ----------------------------------------------------------------------------

    def recover(self, entry_format: EntryFormat, index_max_bytes: int) -> int:
        """Rebuild the index, truncate after the last whole valid entry; returns the bytes cut off."""
        valid = self.valid_prefix(entry_format)
        for index in self.indexes:
            index.truncate_to_entries(0)
        self.resize_indexes(index_max_bytes)
        self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.start
        next_offset, last_indexed = self.start, 0
        for entry in self.log_entries_from(0, valid):
            position = entry.position
            if position - last_indexed > self.index_interval_bytes:
                self.index.append(self._first_offset(entry), position)
                self.seal_time_index()
                last_indexed = position
            if entry.max_timestamp > self.max_timestamp:
                self._timestamped(entry.max_timestamp, entry.last_offset)
            next_offset = entry.last_offset + 1
        self.seal_time_index()
        truncated = self.size - valid
        if truncated:
            self.truncate(valid)
        for index in self.indexes:
            index.trim()
        self.next_offset = next_offset
        return truncated

    def _first_offset(self, entry: LogEntry) -> int:
        """The offset the index gives the entry: a magic-0 wrapper's first inner one (its entry carries its last
        one), else the entry's first (a record batch's base offset; any offset of a magic-1 wrapper serves)."""
        if entry.magic != 0:
            return entry.first_offset
        inner = next(iter_messages(self.read(entry.position, entry.size)), None)
        return entry.last_offset if inner is None else inner.offset

    def log_entries_from(self, position: int, end: int | None = None) -> Iterator[LogEntry]:
        """The entries of the file from ``position`` (a whole entry's start) with their formats' details."""
        end = self.size if end is None else end
        if end <= position:
            return
        with mmap.mmap(self.fileno(), end, access=mmap.ACCESS_READ) as mapped:
            yield from log_entries(mapped, position)

    def truncate_to_offset(self, offset: int) -> int:
        """Drop every entry with an offset >= ``offset``; returns the bytes removed."""
        position = self.translate_offset(offset)
        if position is None:
            return 0
        for index in self.indexes:
            index.truncate_to_offset(offset)
        if self.time_index is not None:
            self.max_timestamp, self.offset_of_max_timestamp = self.time_index.last_entry
        removed = self.size - position
        self.truncate(position)
        self.next_offset = offset
        self.bytes_since_index_entry = 0
        return removed

    def truncate(self, size: int) -> None:
        self._append_ends.clear()
        super().truncate(size)

    def close(self) -> None:
        if getattr(self, "time_index", None) is not None:
            self.seal_time_index()
            self.time_index.close()
        index = getattr(self, "index", None)
        if index is not None:
            index.close()
        super().close()

    def rename_deleted(self) -> None:
        """Rename the files to ``*.deleted`` (the step before the delayed delete); the descriptors stay open."""
        for path in (self.path, *(index.path for index in self.indexes)):
            if os.path.exists(path):
                os.rename(path, path + DELETED_SUFFIX)
        self.path += DELETED_SUFFIX
        self._time_index_path += DELETED_SUFFIX
        for index in self.indexes:
            index.path += DELETED_SUFFIX

    def delete(self) -> None:
        self.close()
        for path in (self.path, *(index.path for index in self.indexes)):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
