"""The 0.7 log of one topic partition: one contiguous stream of bytes in a directory of segment files.

Offsets are byte positions in that stream, and a segment file is named after the offset of its first byte
(``%020d.kafka``). Only the last segment is written to. Readers see the bytes up to the visible end, by
default the flushed end (the last flush), so a consumer only ever receives data that is on disk.
What is shared with the 0.8 log (segment list, roll, retention, listeners) is in ``segmented_log``.
"""

from __future__ import annotations

import logging
import os
from typing import Unpack

from zkafka.errors import OffsetOutOfRangeError
from zkafka.log import segment as _segment
from zkafka.log.segment import LogSegment
from zkafka.log.segmented_log import (
    FlushPlan,
    LogAppendInfo,
    LogLayoutError,
    LogOptions,
    LogRegion,
    SegmentedLog,
    flushed_end,
)
from zkafka.records.format07 import FORMAT07

__all__ = [
    "Log",
    "LogAppendInfo",
    "LogLayoutError",
    "LogRegion",
    "LogSegment",
    "segment_file_name",
]

logger = logging.getLogger(__name__)

SEGMENT_SUFFIX = FORMAT07.log_suffix


def segment_file_name(start: int) -> str:
    """The file name of the 0.7 segment starting at a byte offset: 20 zero-padded digits and ``.kafka``."""
    return _segment.segment_file_name(start, SEGMENT_SUFFIX)


class Log(SegmentedLog):
    """An append-only 0.7 log of one topic partition, stored as a directory of segment files."""

    default_format = FORMAT07
    default_visible_end = staticmethod(flushed_end)

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
        **options: Unpack[LogOptions],
    ) -> None:
        super().__init__(dir_path, topic, partition, flush_interval=flush_interval, **options)
        self.max_segment_size = max_segment_size
        self.roll_ms = roll_ms
        self.max_message_size = max_message_size
        self._segments = self._load(need_recovery)
        self._unflushed = 0

    # -- loading ------------------------------------------------------------------------------------------

    def _load(self, need_recovery: bool) -> tuple[LogSegment, ...]:
        found = []
        for entry in os.listdir(self.dir_path):
            path = os.path.join(self.dir_path, entry)
            if entry.endswith(SEGMENT_SUFFIX) and os.path.isfile(path):
                start = _segment.parse_segment_file_name(entry, SEGMENT_SUFFIX)
                if start is None:
                    raise LogLayoutError(f"segment file {path} is not named <offset>{SEGMENT_SUFFIX}")
                found.append((start, path))
        if not found:
            return (self._open_new_segment(0),)
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
        valid = segment.valid_prefix(self.entry_format)
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
    def log_end_offset(self) -> int:
        """The offset after the last byte written, flushed or not."""
        last = self._segments[-1]
        return last.start + last.size

    @property
    def flushed_end(self) -> int:
        """The offset after the last flushed byte: the end of what readers see by default.

        A segment a roll sealed is not wholly flushed until the flush the roll planned is done; until then the
        flushed end stops in it.
        """
        segments = self._segments
        i = len(segments) - 1
        end = segments[i].start + segments[i].flushed_size
        i -= 1
        while i >= 0 and segments[i].flushed_size < segments[i].size:
            end = segments[i].start + segments[i].flushed_size
            i -= 1
        return end

    @property
    def unflushed_messages(self) -> int:
        return self._unflushed

    # -- writing --------------------------------------------------------------------------------------------

    def append(self, message_set: bytes | memoryview) -> LogAppendInfo:
        """Validate a produced message set and append its complete entries; returns where they went.

        The validation errors of the entry format propagate unchanged and leave the log untouched. A
        partial trailing entry is dropped silently. OSError propagates too: the broker halts on it.
        When ``flush_interval`` messages are unflushed the append flushes, after releasing the lock; so does
        the fsync of a segment the append's roll sealed.
        Listeners are told about an append that wrote bytes.
        """
        valid_bytes, count = self.entry_format.validate(message_set, self.max_message_size)
        with self._lock:
            self._check_open()
            self._maybe_roll()
            segment = self._segments[-1]
            first_offset = segment.start + segment.size
            if valid_bytes:
                segment.append(memoryview(message_set)[:valid_bytes])
                if segment.first_append_ms is None:
                    segment.first_append_ms = self._time_ms()
            self._unflushed += count
            flush_due = self._unflushed >= self.flush_interval
        if self._seal_flushes:
            self._flush_sealed()  # a roll: the sealed segment's fsync, off the event loop like any flush
        if flush_due:
            self.flush()
        info = LogAppendInfo(first_offset, first_offset + valid_bytes, valid_bytes, count)
        if valid_bytes and self._listeners:
            self._notify(info)
        return info

    def _maybe_roll(self) -> None:
        last = self._segments[-1]
        too_big = last.size > self.max_segment_size
        too_old = last.first_append_ms is not None and self._time_ms() - last.first_append_ms > self.roll_ms
        if too_big or too_old:
            self._roll()

    def _seal(self, segment: LogSegment) -> None:
        # Its unflushed tail is fsynced after the roll releases the lock (_flush_sealed); flushed_end waits.
        plan = self._plan_flush(None)
        if plan is not None:
            self._seal_flushes.append(plan)

    def _open_new_segment(self, start: int) -> LogSegment:
        path = os.path.join(self.dir_path, segment_file_name(start))
        if os.path.exists(path):
            logger.warning("log %s: deleting the existing file %s before rolling onto it", self.name, path)
            os.unlink(path)
        return LogSegment(path, start, writable=True)

    def _plan_flush(self, offset: int | None) -> FlushPlan | None:
        """The last segment up to its size now (a roll planned the flush of the one it sealed); its bytes become
        visible."""
        last = self._segments[-1]
        if self._unflushed == 0 and last.flushed_size == last.size:
            return None
        self._unflushed = 0
        return FlushPlan(((last, last.size),), last.start + last.size, self._truncations)

    # -- reading --------------------------------------------------------------------------------------------

    def read_region(self, offset: int, max_size: int) -> LogRegion:
        """Where the bytes of a fetch are: (segment, position in its file, length).

        The region ends at ``max_size`` bytes, at the visible end or at the end of the segment, whichever
        comes first: it never spans two segments and is not cut at a message boundary. An offset equal to
        the visible end gives a length of 0; one before the log start or after the visible end raises
        OffsetOutOfRangeError.
        """
        segments = self._segments
        start, end = segments[0].start, self._visible_end(self)
        if offset < start or offset > end:
            raise OffsetOutOfRangeError(
                f"offset {offset} is out of range for log {self.name}: valid offsets are {start} to {end}"
            )
        segment = segments[self.segment_for(offset, segments)]
        position = offset - segment.start
        return LogRegion(segment, position, max(0, min(max_size, end - offset, segment.size - position)))

    def read(self, offset: int, max_size: int) -> bytes:
        """The bytes ``read_region`` designates (for tools and tests; the broker sends regions directly)."""
        return self.read_region(offset, max_size).read()

    def _offsets_end(self) -> int:
        return self._visible_end(self)

    # -- retention ------------------------------------------------------------------------------------------

    def _retained_size(self, segment: LogSegment) -> int:
        # As in 0.7, retention counts flushed bytes: bytes not yet visible to readers do not count.
        return segment.flushed_size
