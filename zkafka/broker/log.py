"""The log of one topic partition: a directory of segment files holding one contiguous stream of bytes.

Offsets are byte positions in that stream, and a segment file is named after the offset of its first byte
(``%020d.kafka``). Only the last segment is written to. Readers see the bytes up to the last flush (the
high-water mark) and nothing after it, so a consumer only ever receives data that is on disk.

The list of segments is a tuple replaced on every change (copy on write): readers take it without a lock,
writers (append, flush, roll, retention) hold the log's lock.
"""

from __future__ import annotations

import bisect
import logging
import mmap
import os
import threading
import time
from collections.abc import Callable

from zkafka.errors import OffsetOutOfRangeError
from zkafka.message import recover_valid_prefix, validate_message_set

logger = logging.getLogger(__name__)

SEGMENT_SUFFIX = ".kafka"
LATEST_TIME = -1
EARLIEST_TIME = -2


def current_millis() -> int:
    """Wall-clock time in milliseconds, the broker's default clock."""
    return time.time_ns() // 1_000_000


def segment_file_name(start: int) -> str:
    """The file name of the segment starting at a byte offset: 20 zero-padded digits and ``.kafka``."""
    return f"{start:020d}{SEGMENT_SUFFIX}"


class LogLayoutError(RuntimeError):
    """Segment files that do not form one contiguous log: the broker must not start on them."""


class LogSegment:
    """One segment file: the log's bytes from offset ``start``, with the sizes written and flushed."""

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

        The retention cleaner closes the descriptors of the segments it deletes: a sender that may yield
        while using one should ``os.dup`` it first.
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
        """fsync the file; everything written before the call becomes visible to readers."""
        size = self.size
        os.fsync(self.fileno())
        self.flushed_size = size

    def truncate(self, size: int) -> None:
        os.ftruncate(self.fileno(), size)
        self.size = self.flushed_size = size

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
        return f"LogSegment({self.path!r}, start={self.start}, size={self.size}, flushed={self.flushed_size})"


class Log:
    """An append-only log of one topic partition, stored as a directory of segment files."""

    def __init__(
        self,
        dir_path: str | os.PathLike[str],
        topic: str,
        partition: int,
        *,
        max_segment_size: int,
        roll_ms: int,
        flush_interval: int,
        max_message_size: int | None,
        need_recovery: bool,
        time_ms: Callable[[], int] = current_millis,
    ) -> None:
        self.dir_path = os.fspath(dir_path)
        self.topic = topic
        self.partition = partition
        self.name = f"{topic}-{partition}"
        self.max_segment_size = max_segment_size
        self.roll_ms = roll_ms
        self.flush_interval = flush_interval
        self.max_message_size = max_message_size
        self._time_ms = time_ms
        self._lock = threading.Lock()
        self._segments: tuple[LogSegment, ...] = self._load(need_recovery)
        self._unflushed = 0
        self._last_flush_ms = time_ms()

    # -- loading ------------------------------------------------------------------------------------------

    def _load(self, need_recovery: bool) -> tuple[LogSegment, ...]:
        found = []
        for entry in os.listdir(self.dir_path):
            path = os.path.join(self.dir_path, entry)
            if entry.endswith(SEGMENT_SUFFIX) and os.path.isfile(path):
                found.append((_segment_start(path), path))
        if not found:
            path = os.path.join(self.dir_path, segment_file_name(0))
            return (LogSegment(path, 0, writable=True),)
        found.sort()
        segments: list[LogSegment] = []
        try:
            for i, (start, path) in enumerate(found):
                segments.append(LogSegment(path, start, writable=i == len(found) - 1))
            self._check_contiguous(segments)
            if need_recovery:
                self._recover(segments[-1])
        except BaseException:
            for segment in segments:
                segment.close()
            raise
        return tuple(segments)

    def _check_contiguous(self, segments: list[LogSegment]) -> None:
        for segment, following in zip(segments, segments[1:], strict=False):
            if segment.start + segment.size != following.start:
                raise LogLayoutError(
                    f"log {self.name} in {self.dir_path} is not contiguous: {os.path.basename(segment.path)}"
                    f" holds offsets [{segment.start}, {segment.start + segment.size}) but the next segment"
                    f" starts at {following.start}; restore the missing segment files or move the stray"
                    " ones away before starting the broker"
                )

    def _recover(self, segment: LogSegment) -> None:
        """Truncate the last segment after its last whole, CRC-valid entry (the tail of an unclean stop)."""
        if segment.size == 0:
            return
        with mmap.mmap(segment.fileno(), segment.size, access=mmap.ACCESS_READ) as mapped:
            valid = recover_valid_prefix(mapped)
        if valid < segment.size:
            logger.warning(
                "recovering log %s: truncated %d bytes after offset %d of %s (a torn or corrupt tail)",
                self.name,
                segment.size - valid,
                segment.start + valid,
                segment.path,
            )
            segment.truncate(valid)
        else:
            logger.info("recovering log %s: %s is intact (%d bytes)", self.name, segment.path, valid)

    # -- state ----------------------------------------------------------------------------------------------

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The segments, oldest first (a snapshot: it never changes once returned)."""
        return self._segments

    @property
    def log_start(self) -> int:
        """The offset of the first byte still kept: the first segment's start."""
        return self._segments[0].start

    @property
    def flushed_end(self) -> int:
        """The offset after the last flushed byte: the end of what readers see."""
        last = self._segments[-1]
        return last.start + last.flushed_size

    @property
    def size(self) -> int:
        """Bytes written to all segments, flushed or not."""
        return sum(segment.size for segment in self._segments)

    @property
    def unflushed_messages(self) -> int:
        return self._unflushed

    @property
    def last_flush_ms(self) -> int:
        return self._last_flush_ms

    # -- writing --------------------------------------------------------------------------------------------

    def append(self, message_set: bytes | memoryview) -> tuple[int, int]:
        """Validate a produced message set and append its complete entries; returns (bytes, messages).

        The exceptions of ``validate_message_set`` propagate unchanged and leave the log untouched. A
        partial trailing entry is dropped silently. OSError propagates too: the broker halts on it.
        """
        valid_bytes, count = validate_message_set(message_set, self.max_message_size)
        with self._lock:
            self._maybe_roll()
            segment = self._segments[-1]
            if valid_bytes:
                segment.append(memoryview(message_set)[:valid_bytes])
                if segment.first_append_ms is None:
                    segment.first_append_ms = self._time_ms()
            self._unflushed += count
            if self._unflushed >= self.flush_interval:
                self._flush()
        return valid_bytes, count

    def _maybe_roll(self) -> None:
        last = self._segments[-1]
        too_big = last.size > self.max_segment_size
        too_old = last.first_append_ms is not None and self._time_ms() - last.first_append_ms > self.roll_ms
        if too_big or too_old:
            self._roll()

    def roll(self) -> LogSegment:
        """Flush, then start a new segment at the end of the log (a no-op while the last one is empty)."""
        with self._lock:
            return self._roll()

    def _roll(self) -> LogSegment:
        self._flush()
        last = self._segments[-1]
        if last.size == 0:
            return last
        start = last.start + last.flushed_size
        path = os.path.join(self.dir_path, segment_file_name(start))
        if os.path.exists(path):
            logger.warning("log %s: deleting the existing file %s before rolling onto it", self.name, path)
            os.unlink(path)
        segment = LogSegment(path, start, writable=True)
        self._segments = (*self._segments, segment)
        logger.info("log %s: rolled to a new segment %s", self.name, path)
        return segment

    def flush(self) -> bool:
        """fsync the last segment and make its bytes visible; False when there was nothing to flush."""
        with self._lock:
            return self._flush()

    def _flush(self) -> bool:
        last = self._segments[-1]
        if self._unflushed == 0 and last.flushed_size == last.size:
            return False
        last.flush()
        self._unflushed = 0
        self._last_flush_ms = self._time_ms()
        return True

    # -- reading --------------------------------------------------------------------------------------------

    def read_region(self, offset: int, max_size: int) -> tuple[LogSegment, int, int]:
        """Where the bytes of a fetch are: (segment, position in its file, length).

        The region ends at ``max_size`` bytes or at the end of the segment's flushed bytes, whichever comes
        first: it never spans two segments and is not cut at a message boundary. An offset equal to the
        flushed end gives a length of 0; one before the log start or after the flushed end raises
        OffsetOutOfRangeError.
        """
        segments = self._segments
        last = segments[-1]
        start, end = segments[0].start, last.start + last.flushed_size
        if offset < start or offset > end:
            raise OffsetOutOfRangeError(
                f"offset {offset} is out of range for log {self.name}: valid offsets are {start} to {end}"
            )
        if offset == end:
            return last, offset - last.start, 0
        segment = segments[bisect.bisect_right(segments, offset, key=_start_of) - 1]
        position = offset - segment.start
        return segment, position, max(0, min(max_size, segment.flushed_size - position))

    def read(self, offset: int, max_size: int) -> bytes:
        """The bytes ``read_region`` designates (for tools and tests; the broker sends regions directly)."""
        segment, position, length = self.read_region(offset, max_size)
        return segment.read(position, length) if length else b""

    def offsets_before(self, time_ms: int, max_offsets: int) -> list[int]:
        """Answer an offsets request: up to ``max_offsets`` segment start offsets, newest first.

        The candidates are each segment's (start, mtime) and, when the last segment has flushed bytes, the
        (flushed end, now) pair. ``-1`` starts from the newest candidate, ``-2`` from the oldest, another time
        from the newest candidate whose time is at or before it (none: an empty answer).
        """
        segments = self._segments
        pairs = [(segment.start, segment.mtime_ms) for segment in segments]
        last = segments[-1]
        if last.flushed_size > 0:
            pairs.append((last.start + last.flushed_size, self._time_ms()))
        if time_ms == LATEST_TIME:
            index = len(pairs) - 1
        elif time_ms == EARLIEST_TIME:
            index = 0
        else:
            index = len(pairs) - 1
            while index >= 0 and pairs[index][1] > time_ms:
                index -= 1
        count = min(max_offsets, index + 1)
        return [pairs[index - i][0] for i in range(count)]

    # -- retention and shutdown -----------------------------------------------------------------------------

    def delete_old_segments(self, predicate: Callable[[LogSegment], bool]) -> list[LogSegment]:
        """Delete segments from the oldest forward while the predicate holds; returns those removed.

        The predicate is called in order and not again after it first returns False. The log always keeps
        a segment: when every one would go, a non-empty log is first rolled onto a new empty segment, and
        an empty last segment is kept with its mtime set to now.
        """
        with self._lock:
            segments = self._segments
            count = 0
            while count < len(segments) and predicate(segments[count]):
                count += 1
            if count == len(segments):
                last = segments[-1]
                if last.flushed_size > 0:
                    self._roll()
                else:
                    last.touch(self._time_ms())
                    count -= 1
            doomed = self._segments[:count]
            self._segments = self._segments[count:]
        for segment in doomed:
            try:
                segment.delete()
            except OSError as exc:
                logger.warning("log %s: could not delete %s: %s", self.name, segment.path, exc)
        if doomed:
            logger.info("log %s: deleted %d old segment(s)", self.name, len(doomed))
        return list(doomed)

    def close(self) -> None:
        """Flush and close every segment file."""
        with self._lock:
            self._flush()
            for segment in self._segments:
                segment.close()

    def __repr__(self) -> str:
        return f"Log({self.name!r}, segments={len(self._segments)}, flushed_end={self.flushed_end})"


def _start_of(segment: LogSegment) -> int:
    return segment.start


def _segment_start(path: str) -> int:
    stem = os.path.basename(path)[: -len(SEGMENT_SUFFIX)]
    if not stem.isascii() or not stem.isdigit():
        raise LogLayoutError(f"segment file {path} is not named <offset>{SEGMENT_SUFFIX}")
    return int(stem)
