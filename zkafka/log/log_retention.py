"""What a log does with whole segments, oldest first: retention deletes them by age and size (Kafka's
``deleteOldSegments``), the offsets request lists their starts by time (``getOffsetsBefore``), the cleaner swaps
cleaned ones in (``replaceSegments``). Both lines' logs have it, through ``SegmentedLog``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from zkafka.log.segment import LogSegment
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME

logger = logging.getLogger(__name__)


class PendingDeletes:
    """Segments out of their log and renamed ``*.deleted``, open for the readers still holding them until
    their delayed delete (``file.delete.delay.ms``) runs. A log closing first closes them and leaves their files
    to its next load, as Kafka's does; once it left their descriptors open for the life of the process."""

    def __init__(self) -> None:
        self._segments: dict[int, LogSegment] = {}

    def add(self, segment: LogSegment) -> Callable[[], None]:
        """Hold ``segment`` until the returned task deletes it."""
        self._segments[id(segment)] = segment

        def delete() -> None:
            self._segments.pop(id(segment), None)
            segment.delete()

        return delete

    def close(self) -> None:
        """Close the segments still waiting (their delayed deletes then find them closed)."""
        for segment in list(self._segments.values()):
            segment.close()
        self._segments.clear()


class LogRetention:
    """The whole-segment operations of ``SegmentedLog`` (its base: the state below is the log's own)."""

    # Retention keeps an empty last segment and touches its mtime (0.7) or just keeps it (0.8).
    touch_kept_empty_segment = True
    name: str
    _lock: threading.Lock
    _segments: tuple[LogSegment, ...]
    _time_ms: Callable[[], int]

    def _roll(self) -> LogSegment:
        raise NotImplementedError

    def _flush_sealed(self) -> None:
        raise NotImplementedError

    # -- offsets request --------------------------------------------------------------------------------------

    def _offsets_end(self) -> int:
        """The offset the offsets request offers as the newest."""
        raise NotImplementedError

    def offsets_before(self, time_ms: int, max_offsets: int) -> list[int]:
        """Answer an offsets request: up to ``max_offsets`` offsets, newest first.

        The candidates are each segment's (start, mtime) and, when the newest offset is past the last
        segment's start, the (newest offset, now) pair. ``-1`` starts from the newest candidate, ``-2`` from
        the oldest, another time from the newest candidate whose time is at or before it (none: an empty
        answer).
        """
        segments = self._segments
        pairs = [(segment.start, segment.mtime_ms) for segment in segments]
        end = self._offsets_end()
        if end > segments[-1].start:
            pairs.append((end, self._time_ms()))
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

    # -- retention ----------------------------------------------------------------------------------------------

    def _retained_size(self, segment: LogSegment) -> int:
        """The bytes of a segment that count for retention by size."""
        return segment.size

    def _delete_segment(self, segment: LogSegment) -> None:
        """Remove a segment's files once it left the segment list (outside the lock)."""
        segment.delete()

    def delete_old_segments(self, predicate: Callable[[LogSegment], bool]) -> list[LogSegment]:
        """Delete segments from the oldest forward while the predicate holds; returns those removed.

        The predicate is called in order and not again after it first returns False. The log always keeps
        a segment: when every one would go, a non-empty log is first rolled onto a new empty segment, and
        an empty last segment is kept (on the 0.7 line with its mtime set to now).
        """
        with self._lock:
            segments = self._segments
            count = 0
            while count < len(segments) and predicate(segments[count]):
                count += 1
            if count == len(segments):
                last = segments[-1]
                if self._retained_size(last) > 0:
                    self._roll()
                else:
                    if self.touch_kept_empty_segment:
                        last.touch(self._time_ms())
                    count -= 1
            doomed = self._segments[:count]
            self._segments = self._segments[count:]
        self._flush_sealed()
        for segment in doomed:
            try:
                self._delete_segment(segment)
            except OSError as exc:
                logger.warning("log %s: could not delete %s: %s", self.name, segment.path, exc)
        if doomed:
            logger.info("log %s: deleted %d old segment(s)", self.name, len(doomed))
        return list(doomed)

    def delete_expired_segments(self, now_ms: int, retention_ms: int) -> int:
        """Delete the oldest segments last modified more than ``retention_ms`` ago; returns how many."""

        def expired(segment: LogSegment) -> bool:
            return now_ms - segment.largest_timestamp > retention_ms

        return len(self.delete_old_segments(expired))

    def delete_segments_over_size(self, retention_bytes: int) -> int:
        """Delete the oldest segments while the log stays at or above ``retention_bytes``; returns how many.

        A negative limit turns this off.
        """
        size = sum(self._retained_size(segment) for segment in self._segments)
        if retention_bytes < 0 or size < retention_bytes:
            return 0
        excess = size - retention_bytes

        def over_size(segment: LogSegment) -> bool:
            nonlocal excess
            if excess - self._retained_size(segment) < 0:
                return False
            excess -= self._retained_size(segment)
            return True

        return len(self.delete_old_segments(over_size))

    def replace_segments(
        self, old: Sequence[LogSegment], open_new: Callable[[], LogSegment]
    ) -> LogSegment | None:
        """Swap one segment in for ``old`` (consecutive, the active segment not among them): under the lock,
        ``open_new()`` puts the new files in place and opens them, then the list changes; the old segments'
        files are deleted afterwards as retention deletes them. None (and nothing done) when the log changed
        meanwhile so that ``old`` is no longer there. Readers holding an old segment keep reading it."""
        with self._lock:
            segments = self._segments
            first = next((i for i, s in enumerate(segments) if s is old[0]), None)
            if (
                first is None
                or first + len(old) >= len(segments)
                or any(a is not b for a, b in zip(segments[first : first + len(old)], old, strict=True))
            ):
                return None
            new = open_new()
            self._segments = (*segments[:first], new, *segments[first + len(old) :])
        for segment in old:
            self._delete_segment(segment)
        logger.info("log %s: replaced %d segment(s) from offset %d", self.name, len(old), new.start)
        return new
