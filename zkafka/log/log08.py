"""The 0.8 log of one topic partition: entries numbered by logical offsets, each segment with an offset index.

The leader assigns offsets when it appends (``format08.assign_offsets``); a follower's append keeps the
leader's offsets. Consumers read up to the visible end (the high watermark: the log end offset while the
partition has one replica), followers up to the log end offset, and a read returns bytes of ONE segment,
cut at ``max_bytes`` (a partial last entry is normal). Flushing advances the recovery point, which the log
manager checkpoints; after an unclean stop the segments from the one holding the recovery point on are
recovered: index rebuilt, torn or corrupt tail truncated, later segments deleted. Deleted segments are
renamed ``*.deleted`` and removed ``file_delete_delay_ms`` later.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
from collections.abc import Callable
from typing import Any, Unpack

from zkafka.errors import (
    MessageSetSizeTooLargeError,
    OffsetOutOfRangeError,
    UnknownMagicByteError,
    UnsupportedForMessageFormatError,
)
from zkafka.log import producer_snapshots as snapshots
from zkafka.log.log_config import LogConfig
from zkafka.log.log_loader import LogLoader
from zkafka.log.log_retention import PendingDeletes
from zkafka.log.log_validator import validate_and_assign
from zkafka.log.offset_index import INDEX_SUFFIX
from zkafka.log.producer_state import Duplicate, ProducerStateManager, producer_batches
from zkafka.log.segment import DELETED_SUFFIX, IndexedSegment, segment_file_name
from zkafka.log.segmented_log import FlushPlan, LogAppendInfo, LogOptions, LogRegion, SegmentedLog, log_end
from zkafka.log.time_index import TIME_INDEX_SUFFIX
from zkafka.records import format08
from zkafka.records.down_convert import first_magic
from zkafka.records.log_entries import LOG_FORMAT08, MAGIC_AT, check_follower_set, max_timestamp
from zkafka.utils.java import INT32_MAX

logger = logging.getLogger(__name__)


# Runs a task after a delay in milliseconds (0: soon, off the caller's path).
Scheduler = Callable[[int, Callable[[], object]], object]


class Log08(SegmentedLog):
    """An append-only 0.8 log of one topic partition: offsets are message numbers."""

    touch_kept_empty_segment = False
    default_format = LOG_FORMAT08
    default_visible_end = staticmethod(log_end)

    def __init__(
        self,
        dir_path: str | os.PathLike[str],
        topic: str,
        partition: int,
        config: LogConfig,
        *,
        recovery_point: int = 0,
        need_recovery: bool = True,
        scheduler: Scheduler | None = None,
        **options: Unpack[LogOptions],
    ) -> None:
        super().__init__(dir_path, topic, partition, flush_interval=config.flush_interval_messages, **options)
        self.config = config
        self._scheduler = scheduler
        self._pending_deletes = PendingDeletes()
        self.recovery_point = recovery_point
        self.log_start_offset = 0  # moved on by DeleteRecords (log-start-offset-checkpoint)
        self._next_offset = 0
        self._segments = self._load(need_recovery)
        self.producer_state = ProducerStateManager(self.name, config.producer_id_expiration_ms)
        self._load_producer_state(self._next_offset)

    # -- loading --------------------------------------------------------------------------------------------

    def _load(self, need_recovery: bool) -> tuple[IndexedSegment, ...]:
        loader = LogLoader(
            self.dir_path,
            self.name,
            self.entry_format,
            self.config,
            lambda start, index_max_bytes: self._segment(start, index_max_bytes=index_max_bytes),
        )
        segments, self.recovery_point, self._next_offset = loader.load(self.recovery_point, need_recovery)
        return segments

    def _load_producer_state(self, end: int) -> None:
        """The producer state as of ``end``: a log that never stored v2 has none (its files are not read)."""
        if self.config.message_format_magic >= 2 or snapshots.snapshot_offsets(self.dir_path):
            state, now = self.producer_state, self._time_ms()
            snapshots.load_producer_state(state, self.dir_path, self._segments, end, now)

    def _segment(self, start: int, *, index_max_bytes: int | None) -> IndexedSegment:
        jitter = self.config.segment_jitter_ms
        return IndexedSegment(
            self.dir_path,
            start,
            log_suffix=self.entry_format.log_suffix,
            index_max_bytes=index_max_bytes,
            index_interval_bytes=self.config.index_interval_bytes,
            created_ms=self._time_ms(),
            roll_jitter_ms=random.randrange(jitter) if jitter > 0 else 0,
        )

    def open_segment(self, start: int) -> IndexedSegment:
        """Open the sealed segment whose files start at ``start`` (the cleaner's swapped-in segment)."""
        return self._segment(start, index_max_bytes=None)

    # -- state ------------------------------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        """The offset the next message gets (LEO)."""
        return self._next_offset

    @property
    def flushed_end(self) -> int:
        """The recovery point: every offset below it is on disk."""
        return self.recovery_point

    @property
    def unflushed_messages(self) -> int:
        return self._next_offset - self.recovery_point

    # -- appending --------------------------------------------------------------------------------------------

    def append(
        self, message_set: Any, assign_offsets: bool = True, flush_due: bool = True, leader_epoch: int = -1
    ) -> LogAppendInfo:
        """Append a message set; returns its first offset, the new log end offset, bytes and messages.

        ``assign_offsets`` (the leader): validate, number from the log end, stamp batches with ``leader_epoch``.
        Otherwise (a follower): validate and keep the offsets, which must increase from the log end
        offset. Validation errors leave the log untouched; a partial trailing entry is dropped. A set larger
        than a segment raises MessageSetSizeTooLargeError. OSError propagates: the broker halts on it.
        With ``flush.messages`` unflushed messages the append flushes, after releasing the lock; a caller
        with work to do first (the leader raising its high watermark) passes ``flush_due=False`` and calls
        ``flush_if_due`` after it.
        """
        config = self.config
        with self._lock:
            self._check_open()
            leo = self._next_offset
            stamped_at = self._time_ms() if config.log_append_time and config.message_format_magic else -1
            if assign_offsets:
                data, first, last, count = validate_and_assign(message_set, leo, config, stamped_at, leader_epoch)
                producers = self.producer_state.analyze(producer_batches(data)) if data else {}
                if isinstance(producers, Duplicate):  # a retry: answered with the batch already here
                    return LogAppendInfo(producers.batch.first_offset, producers.batch.last_offset + 1, 0, 0)
            else:
                data, first, last, count = self._follower_entries(message_set, leo)
                producers = self.producer_state.analyze(producer_batches(data), client=False) if data else {}
            if not data:
                return LogAppendInfo(leo, leo, 0, 0)
            if len(data) > config.segment_bytes:
                raise MessageSetSizeTooLargeError(
                    f"message set of {len(data)} bytes is larger than a segment of log {self.name}"
                    f" (segment.bytes {config.segment_bytes})"
                )
            stamp = max_timestamp(data) if data[MAGIC_AT] else None  # magic 0: no timestamps
            segment = self._maybe_roll(len(data), last)
            segment.append_entries(first, last + 1, data, stamp)
            self._next_offset = last + 1
            if producers:
                self.producer_state.update(producers)
        if flush_due:
            self.flush_if_due()
        info = LogAppendInfo(first, last + 1, len(data), count, stamped_at if assign_offsets else -1)
        if self._listeners:
            self._notify(info)
        return info

    def _follower_entries(self, message_set: bytes | memoryview, leo: int) -> tuple[Any, int, int, int]:
        """A follower's fetched entries checked: magic-0 sets as 0.8 checks them (each wrapper's messages
        counted), sets holding magic 1 or record batches entry by entry."""
        if first_magic(message_set) in (None, 0):
            try:
                valid, count = self.entry_format.validate(message_set, self.config.max_message_size)
                data = memoryview(message_set)[:valid]
                first, last = format08.check_follower_offsets(data, leo)
                return data, first, last, count
            except UnknownMagicByteError:
                pass  # newer entries after older ones: the log's format changed
        checked = check_follower_set(message_set, leo)
        data = memoryview(message_set)[: checked.valid_bytes]
        return data, checked.first_offset, checked.last_offset, checked.count

    def flush_if_due(self) -> bool:
        """Flush when ``flush.messages`` messages are unflushed; True when it flushed."""
        if self._next_offset - self.recovery_point < self.config.flush_interval_messages:
            return False
        return self.flush()

    def _maybe_roll(self, size: int, last_offset: int) -> IndexedSegment:
        segment = self._segments[-1]
        config = self.config
        if (
            segment.size > config.segment_bytes - size
            or (
                segment.size > 0
                and self._time_ms() - segment.created_ms > config.segment_ms - segment.roll_jitter_ms
            )
            or segment.index.is_full
            or (segment.time_index is not None and segment.time_index.is_full)
            or last_offset - segment.start > INT32_MAX
        ):
            return self._roll()
        return segment

    def _seal(self, segment: IndexedSegment) -> None:
        segment.seal_time_index()
        if segment.time_index is not None:
            segment.time_index.trim()
        if self._scheduler is None:
            segment.index.trim()  # else on the disk pool, before the flush after the roll (_sealed)

    def _sealed(self, segment: IndexedSegment, new_start: int) -> None:
        if self.config.message_format_magic >= 2 or self.producer_state.producers:
            snapshots.write_snapshot(self.dir_path, new_start, self.producer_state)
        if self._scheduler is None:
            self._flush(new_start)
        else:
            trim = segment.index.trim_task()
            self._scheduler(0, lambda: self._flush_rolled(trim, new_start))

    def _flush_rolled(self, trim_index: Callable[[], None], new_start: int) -> None:
        """After a roll: the sealed index trimmed, then everything below the new segment flushed (offloaded)."""
        self.offload(trim_index)
        self.flush(new_start)

    def _open_new_segment(self, start: int) -> IndexedSegment:
        for suffix in (self.entry_format.log_suffix, INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            path = os.path.join(self.dir_path, segment_file_name(start, suffix))
            if os.path.exists(path):
                logger.warning("log %s: deleting the existing file %s before rolling onto it", self.name, path)
                os.unlink(path)
        return self._segment(start, index_max_bytes=self.config.index_max_bytes)

    def _schedule(self, delay_ms: int, task: Callable[[], object]) -> None:
        if self._scheduler is None:
            task()
        else:
            self._scheduler(delay_ms, task)

    # -- flushing -----------------------------------------------------------------------------------------------

    def _plan_flush(self, offset: int | None) -> FlushPlan | None:
        """The segments holding offsets from the recovery point to below ``offset`` (default: the log end)."""
        target = self._next_offset if offset is None else min(offset, self._next_offset)
        start = self.recovery_point
        if target <= start:
            return None
        segments = self._segments
        first, last = self.segment_for(start, segments), self.segment_for(target - 1, segments)
        return FlushPlan(
            tuple((segment, segment.size) for segment in segments[max(first, 0) : last + 1]),
            target,
            self._truncations,
        )

    def _flushed(self, plan: FlushPlan) -> None:
        """The recovery point advances to the flush's end (the log manager checkpoints it)."""
        if plan.end > self.recovery_point:
            self.recovery_point = plan.end

    # -- reading ------------------------------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, max_offset: int | None = None) -> LogRegion:
        """The bytes a fetch from ``offset`` gets: from ONE segment, the first entry with an offset >= ``offset``
        on, up to ``max_bytes`` and stopping before the first entry at or past ``max_offset`` (default: the
        visible end; a follower passes the log end offset).

        ``offset`` equal to the log end offset, or at or past ``max_offset``, gives an empty region; before
        the log start or past the log end raises OffsetOutOfRangeError.
        """
        segments = self._segments
        end = self._next_offset
        last = segments[-1]
        if offset == end:
            return LogRegion(last, last.size, 0)
        i = self.segment_for(offset, segments)
        if offset > end or i < 0 or offset < self.log_start_offset:
            raise OffsetOutOfRangeError(
                f"offset {offset} is out of range for log {self.name}: valid offsets are"
                f" {self.log_start} to {end}"
            )
        if max_offset is None:
            max_offset = self._visible_end(self)
        if offset >= max_offset:
            return LogRegion(last, last.size, 0)
        for segment in segments[i:]:
            size = segment.size
            position = segment.translate_offset(offset)
            if position is None:
                continue
            stop = size
            if max_offset < end:
                limit = segment.translate_offset(max_offset, position)
                if limit is not None:
                    stop = limit
            return LogRegion(segment, position, max(0, min(max_bytes, stop - position)))
        return LogRegion(last, last.size, 0)

    def fetch_offset_by_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record stamped at or after ``timestamp`` (ListOffsets v1+ with
        a timestamp; KIP-33), None when no record is; UnsupportedForMessageFormatError for a magic-0 log."""
        if self.config.message_format_magic == 0:
            raise UnsupportedForMessageFormatError(
                f"log {self.name} stores message format v0, which has no timestamps"
            )
        for segment in self._segments:
            if segment.max_timestamp >= timestamp:
                found = segment.find_offset_by_timestamp(timestamp)
                if found is not None:
                    return found
        return None

    def _offsets_end(self) -> int:
        return self._next_offset

    # -- truncation (followers) ------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Remove every message with an offset >= ``offset`` (a follower matching its leader)."""
        if offset < 0:
            raise ValueError(f"cannot truncate log {self.name} to a negative offset {offset}")
        with self._lock:
            if offset >= self._next_offset:
                return
            if self._segments[0].start > offset:
                doomed = self._reset_at(offset)
            else:
                keep = tuple(s for s in self._segments if s.start <= offset)
                doomed = self._segments[len(keep) :]
                self._segments = keep
                active = keep[-1]
                active.truncate_to_offset(offset)
                active.resize_indexes(self.config.index_max_bytes)
                active.next_offset = offset
                if active.size == 0:
                    active.created_ms = self._time_ms()
                self._next_offset = offset
                self.recovery_point = min(self.recovery_point, offset)
                self._truncations += 1
            self._load_producer_state(offset)
        logger.info("log %s: truncated to offset %d", self.name, offset)
        for segment in doomed:
            self._delete_segment(segment)

    @property
    def log_start(self) -> int:
        """The first offset still readable: the first segment's start, or later after DeleteRecords."""
        return max(self._segments[0].start, self.log_start_offset)

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: records below ``offset`` become unreadable (the log start offset moves there, never
        back) and the segments wholly below it are deleted; returns the new log start."""
        if offset > self._next_offset:
            raise OffsetOutOfRangeError(
                f"cannot delete records of log {self.name} below {offset}: its end is {self._next_offset}"
            )
        self.log_start_offset = max(self.log_start_offset, offset)
        segments = self._segments
        below = {id(s) for s, later in itertools.pairwise(segments) if later.start <= self.log_start_offset}
        self.delete_old_segments(lambda segment: id(segment) in below)
        return self.log_start

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start again, empty, at ``offset`` (a follower behind its leader's start)."""
        with self._lock:
            doomed = self._reset_at(offset)
        logger.info("log %s: emptied, restarting at offset %d", self.name, offset)
        for segment in doomed:
            self._delete_segment(segment)

    def _reset_at(self, offset: int) -> tuple[IndexedSegment, ...]:
        self._check_open()
        snapshots.delete_snapshots(self.dir_path, above=-1)
        self.producer_state.reset({})
        doomed = self._segments
        for segment in doomed:
            segment.rename_deleted()
        self._segments = (self._open_new_segment(offset),)
        self._next_offset = self.recovery_point = self.log_start_offset = offset
        self._truncations += 1
        return doomed

    # -- retention ------------------------------------------------------------------------------------------------

    def _delete_segment(self, segment: IndexedSegment) -> None:
        if self._segments:
            snapshots.delete_snapshots(self.dir_path, below=self.log_start)
            self.producer_state.truncate_head(self.log_start)
        if not segment.path.endswith(DELETED_SUFFIX):
            segment.rename_deleted()
        self._schedule(self.config.file_delete_delay_ms, self._pending_deletes.add(segment))

    def _closing(self) -> None:
        """The producer state kept in a snapshot at the log end, the segments awaiting their delayed delete
        closed (once: a second close does nothing)."""
        if self._segments and (self.config.message_format_magic >= 2 or self.producer_state.producers):
            snapshots.write_snapshot(self.dir_path, self._next_offset, self.producer_state)
        self._pending_deletes.close()

    def delete(self) -> None:
        """Close and remove the whole log directory (the partition was deleted)."""
        with self._lock:
            for segment in self._segments:
                segment.close()
            self._segments = ()
            self._pending_deletes.close()
        for name in os.listdir(self.dir_path):
            os.unlink(os.path.join(self.dir_path, name))
        os.rmdir(self.dir_path)
