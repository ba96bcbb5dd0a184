"""What the 0.7 and the 0.8 log share: the segment list, roll, flush scheduling, append listeners; retention
and the offsets request come with its base, ``LogRetention`` (``log_retention.py``).

A log is a directory of segment files, each named after the offset of its first entry; only the last one is
written to. The list of segments is a tuple replaced on every change (copy on write): readers take it without
a lock and find a segment by bisecting it; writers (append, flush, roll, retention) hold the log's lock.

A flush plans under the lock (which segments, up to which size), fsyncs without it through the log's
``offload`` (the broker's disk thread pool), and records under the lock again what that fsync covered: appends
go on while a slow disk syncs earlier bytes, and the flushed end never runs ahead of the disk. A roll that must
make the segment it seals durable plans that flush under the lock (``_seal``) and runs it the same way once the
lock is released (``_flush_sealed``). Only ``close`` (and a 0.8 roll without a scheduler) fsyncs with the lock
held, on the calling thread.

What differs between the lines is supplied by the subclass: what an offset is (a byte position on 0.7, a
message number on 0.8), how an append validates and places entries, how segments are opened and deleted.
What readers may see (the visible end) is a policy the owner of the log chooses: the flushed end on the 0.7
line, the high watermark on the 0.8 line (the log end offset while a partition has a single replica).
"""

from __future__ import annotations

import bisect
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypedDict

from zkafka import utils
from zkafka.errors import KafkaStorageError
from zkafka.log.log_retention import LogRetention
from zkafka.log.segment import EntryFormat, LogSegment

logger = logging.getLogger(__name__)


class LogLayoutError(RuntimeError):
    """Segment files that do not form one log: the broker must not start on them."""


class LogAppendInfo(NamedTuple):
    """What one append wrote: the offset of its first entry, the log end after it, its bytes and messages.

    On the 0.8 line the last offset written is ``next_offset - 1``; an append that wrote nothing has
    ``first_offset == next_offset`` and ``size == count == 0``.
    """

    first_offset: int
    next_offset: int
    size: int
    count: int
    log_append_time: int = -1  # the time stamped into the entries (message.timestamp.type=LogAppendTime)


class LogRegion(NamedTuple):
    """Where the bytes of a fetch are: a segment (``segment.fileno()`` for sendfile), a position and a length.

    A region never spans two segments.
    """

    segment: LogSegment
    position: int
    length: int

    def read(self) -> bytes:
        """The region's bytes (tools and tests; the broker sends regions with sendfile)."""
        return self.segment.read(self.position, self.length) if self.length > 0 else b""


class FlushPlan(NamedTuple):
    """What one flush makes durable: each segment with its size when the flush began, and the log end then."""

    segments: tuple[tuple[LogSegment, int], ...]
    end: int
    truncations: int


def run_here(task: Callable[[], Any]) -> Any:
    """The default ``offload``: run the task on the calling thread."""
    return task()


def flushed_end(log: SegmentedLog) -> int:
    """Visible-end policy of the 0.7 line: readers see what is on disk."""
    return log.flushed_end


def log_end(log: SegmentedLog) -> int:
    """Visible-end policy of a single-replica 0.8 partition: the high watermark is the log end offset."""
    return log.log_end_offset


VisibleEnd = Callable[["SegmentedLog"], int]
AppendListener = Callable[["SegmentedLog", LogAppendInfo], None]
FlushListener = Callable[["SegmentedLog", float], None]  # told the seconds each flush took (metrics)
# Runs a blocking task (the fsyncs of a flush) and returns its result: on a thread pool in the broker.
Offload = Callable[[Callable[[], Any]], Any]


class LogOptions(TypedDict, total=False):
    """The keyword seams every log takes (a line's log forwards them; left out, the line's defaults)."""

    entry_format: EntryFormat
    visible_end: VisibleEnd
    time_ms: Callable[[], int]
    offload: Offload


class SegmentedLog(LogRetention):
    """An append-only log of one topic partition, stored as a directory of segment files."""

    # The line's entry format and visible-end policy, where the owner gives none.
    default_format: EntryFormat
    default_visible_end: VisibleEnd

    def __init__(
        self,
        dir_path: str | os.PathLike[str],
        topic: str,
        partition: int,
        *,
        flush_interval: int,
        entry_format: EntryFormat | None = None,
        visible_end: VisibleEnd | None = None,
        time_ms: Callable[[], int] = utils.now_ms,
        offload: Offload = run_here,
    ) -> None:
        self.dir_path = os.fspath(dir_path)
        self.entry_format = self.default_format if entry_format is None else entry_format
        if visible_end is None:
            visible_end = self.default_visible_end
        self.topic = topic
        self.partition = partition
        self.name = f"{topic}-{partition}"
        self.flush_interval = flush_interval
        self._visible_end = visible_end
        self._time_ms = time_ms
        self._lock = threading.Lock()
        self._segments: tuple[LogSegment, ...] = ()
        self._listeners: tuple[AppendListener, ...] = ()
        self._last_flush_ms = time_ms()
        self._truncations = 0  # a flush that began before a truncation records nothing
        # Flushes planned by rolls under the lock, run by _flush_sealed once the lock is free.
        self._seal_flushes: list[FlushPlan] = []
        self.offload = offload
        # The disk seam: every fsync of the log's files goes through it (tests put a slow disk here).
        self.fsync: Callable[[int], None] = os.fsync
        self.on_flush: FlushListener | None = None
        self._closed = False

    # -- state ----------------------------------------------------------------------------------------------

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The segments, oldest first (a snapshot: it never changes once returned)."""
        return self._segments

    @property
    def log_start(self) -> int:
        """The offset of the first entry still kept: the first segment's start."""
        return self._segments[0].start

    @property
    def log_end_offset(self) -> int:
        """The offset the next append gets."""
        raise NotImplementedError

    @property
    def flushed_end(self) -> int:
        """The offset up to which the log is on disk."""
        raise NotImplementedError

    @property
    def visible_end(self) -> int:
        """The end of what readers see, as the log's visible-end policy says."""
        return self._visible_end(self)

    def set_visible_end(self, policy: VisibleEnd) -> None:
        """Replace the visible-end policy (a replicated 0.8 partition: its high watermark)."""
        self._visible_end = policy

    @property
    def size(self) -> int:
        """Bytes written to all segments, flushed or not."""
        return sum(segment.size for segment in self._segments)

    @property
    def last_flush_ms(self) -> int:
        return self._last_flush_ms

    def segment_for(self, offset: int, segments: tuple[LogSegment, ...] | None = None) -> int:
        """The index in ``segments`` of the last segment starting at or before ``offset`` (-1 if none)."""
        return segment_index(segments or self._segments, offset)

    # -- listeners ------------------------------------------------------------------------------------------

    def add_listener(self, listener: AppendListener) -> None:
        """Call ``listener(log, info)`` after every append that wrote something (outside the log's lock).

        A listener must not block; an exception it raises is logged and does not undo the append.
        """
        with self._lock:
            self._listeners = (*self._listeners, listener)

    def remove_listener(self, listener: AppendListener) -> None:
        with self._lock:
            self._listeners = tuple(item for item in self._listeners if item is not listener)

    def _notify(self, info: LogAppendInfo) -> None:
        for listener in self._listeners:
            try:
                listener(self, info)
            except Exception:
                logger.exception("log %s: append listener %r failed", self.name, listener)

    # -- roll and flush ---------------------------------------------------------------------------------------

    def roll(self) -> LogSegment:
        """Start a new segment at the end of the log (a no-op while the last one is empty)."""
        with self._lock:
            segment = self._roll()
        self._flush_sealed()
        return segment

    def _roll(self) -> LogSegment:
        self._check_open()
        last = self._segments[-1]
        if last.size == 0:
            return last
        self._seal(last)
        start = self.log_end_offset
        segment = self._open_new_segment(start)
        self._segments = (*self._segments, segment)
        self._sealed(last, start)
        logger.info("log %s: rolled to a new segment %s", self.name, segment.path)
        return segment

    def _seal(self, segment: LogSegment) -> None:
        """Called under the lock before a roll makes ``segment`` read-only (a flush it needs goes in
        ``_seal_flushes``: whoever rolled runs it with ``_flush_sealed`` after releasing the lock)."""

    def _sealed(self, segment: LogSegment, new_start: int) -> None:
        """Called under the lock after a roll added the segment starting at ``new_start``."""

    def _open_new_segment(self, start: int) -> LogSegment:
        raise NotImplementedError

    def flush(self, offset: int | None = None) -> bool:
        """fsync what was appended (on the 0.8 line, below ``offset`` if given); False when nothing was due.

        The fsync runs through ``offload`` without the log's lock; what readers may see advances once it is done
        and only to what it covered. The caller must not hold the lock.
        """
        with self._lock:
            plan = self._plan_flush(offset)
            if plan is None:
                return False
            sync = self._sync_task(plan)
        self._run_flush(plan, sync)
        return True

    def _flush_sealed(self) -> None:
        """Run the flushes rolls planned (``_seal_flushes``) through ``offload``; the caller must not hold the lock."""
        while self._seal_flushes:
            with self._lock:
                if not self._seal_flushes:
                    return
                plan = self._seal_flushes.pop(0)
                sync = self._sync_task(plan)
            self._run_flush(plan, sync)

    def _run_flush(self, plan: FlushPlan, sync: Callable[[], None]) -> None:
        """Without the lock: the fsyncs of ``plan`` through ``offload``, then record what they covered."""
        started = time.monotonic()
        self.offload(sync)
        with self._lock:
            self._record_flush(plan)
        if self.on_flush is not None:
            self.on_flush(self, time.monotonic() - started)

    def _flush(self, offset: int | None = None) -> bool:
        """``flush`` with the lock held: the fsync runs on this thread (close, a 0.8 roll without a scheduler);
        the flushes rolls planned and nobody ran yet run first."""
        plans, self._seal_flushes = self._seal_flushes, []
        plan = self._plan_flush(offset)
        if plan is not None:
            plans.append(plan)
        if not plans:
            return False
        fsync = self.fsync
        for plan in plans:
            started = time.monotonic()
            for segment, _ in plan.segments:
                for fd in _descriptors(segment):
                    fsync(fd)
            self._record_flush(plan)
            if self.on_flush is not None:
                self.on_flush(self, time.monotonic() - started)
        return True

    def _plan_flush(self, offset: int | None) -> FlushPlan | None:
        """With the lock held: what a flush now must make durable, None when nothing is due."""
        raise NotImplementedError

    def _flushed(self, plan: FlushPlan) -> None:
        """With the lock held, after the fsyncs of ``plan``: advance what the flush made true."""

    def _sync_task(self, plan: FlushPlan) -> Callable[[], None]:
        """The fsyncs of ``plan`` as a task for another thread, on duplicates of the descriptors taken now (under
        the lock), so that a segment closed meanwhile (retention, truncation) is still synced safely."""
        fds = [os.dup(fd) for segment, _ in plan.segments for fd in _descriptors(segment)]
        fsync = self.fsync

        def sync() -> None:
            try:
                for fd in fds:
                    fsync(fd)
            except OSError as exc:
                raise utils.with_filename(exc, self.dir_path) from None
            finally:
                for fd in fds:
                    os.close(fd)

        return sync

    def _record_flush(self, plan: FlushPlan) -> None:
        if plan.truncations == self._truncations:
            for segment, size in plan.segments:
                if size > segment.flushed_size:
                    segment.flushed_size = size
            self._flushed(plan)
        self._last_flush_ms = self._time_ms()

    # -- shutdown -------------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Flush and close every segment file (an index is trimmed to its entries); writes are refused after.
        A second close does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closing()
            self._flush()
            for segment in self._segments:
                segment.close()
            self._closed = True

    def _closing(self) -> None:
        """With the lock held, on the first close, before the segments are flushed and closed."""

    def _check_open(self) -> None:
        """With the lock held: refuse a write once ``close`` ran (Kafka's KafkaStorageException). Without it a
        write after the broker closed its logs (a group's record, a late produce) rolled to a new segment file,
        left open and unflushed under a clean-shutdown marker."""
        if self._closed:
            raise KafkaStorageError(f"log {self.name} in {self.dir_path} is closed")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, segments={len(self._segments)}, end={self.log_end_offset})"
        )


def _start_of(segment: LogSegment) -> int:
    return segment.start


def segment_index(segments: Sequence[LogSegment], offset: int) -> int:
    """The index in ``segments`` (oldest first) of the last segment starting at or before ``offset`` (-1 if none)."""
    return bisect.bisect_right(segments, offset, key=_start_of) - 1


def _descriptors(segment: LogSegment) -> tuple[int, ...]:
    """The descriptors to fsync for a segment; none once it is closed (deleted: its bytes no longer matter)."""
    try:
        return segment.descriptors()
    except ValueError:
        return ()
