"""Log compaction for ``cleanup.policy=compact`` logs of the 0.8 line (0.8.2/0.9's LogCleaner).

Each pass picks the log with the highest dirty ratio — bytes of the segments at or after its first dirty
offset (from ``cleaner-offset-checkpoint``), the active segment excluded, over all those bytes — if it is
above the log's ``min.cleanable.dirty.ratio``. It maps every key of the dirty part to its last offset
(``OffsetMap``, MD5 of the key, bounded by ``log.cleaner.dedupe.buffer.size``), then rewrites every segment
below the map's end in groups that fit one segment: a message is kept unless a later offset has its key, or
it is a tombstone (null value) in a segment last modified before the delete horizon (the last clean
segment's mtime minus ``delete.retention.ms``). A group is written to ``<base>.log.cleaned`` (and
``.index.cleaned``, ``.timeindex.cleaned``), renamed to ``.swap``, swapped into the log under its lock (the old segments renamed
``.deleted`` and removed later) and renamed to ``.log``; a crash at any step is repaired when the log loads.
Compressed wrappers keep their kept inner messages recompressed with the same codec (0.9); a record batch
(message format v2) that lost records is written again keeping its base and last offsets, producer fields,
codec and timestamp type (Kafka 2.x's ``filterTo``), and a log of format v1/v2 gets its ``.timeindex``
written with the cleaned segment; messages without a key are kept (0.9 refuses them on produce). The new
first dirty offset is checkpointed.

Everything but the swaps runs through the cleaner's ``offload`` (the broker's disk pool): choosing the log,
reading and mapping the keys, writing and fsyncing the cleaned files, the checkpoint. Each swap (renames and
opening the new segment under the log's lock, the old segments' delayed deletion) runs on the caller's thread,
the event loop in the broker, as every other change of the segment list does. The work on the pool thread is
Python and holds the GIL while it computes, so the loop may wait for it up to the switch interval (5 ms)
at a time, instead of for the whole cleaning.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zkafka.log.checkpoint import CLEANER_CHECKPOINT, OffsetCheckpoint
from zkafka.log.log08 import Log08
from zkafka.log.offset_index import INDEX_SUFFIX, OffsetIndex
from zkafka.log.segment import CLEANED_SUFFIX, SWAP_SUFFIX, IndexedSegment, segment_file_name
from zkafka.log.segmented_log import Offload, run_here
from zkafka.log.time_index import TIME_INDEX_SUFFIX, TimeIndex
from zkafka.records.convert import entry_records, retained_entry
from zkafka.records.format08 import entries, iter_messages
from zkafka.records.log_entries import log_entries
from zkafka.records.message_v1 import NO_TIMESTAMP
from zkafka.utils.java import INT32_MAX

logger = logging.getLogger(__name__)

BYTES_PER_MAP_ENTRY = 24  # an MD5 and an offset, as Kafka's SkimpyOffsetMap counts them


class OffsetMap:
    """Key → the last offset seen with it, keyed by the MD5 of the key, holding at most ``capacity`` keys."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"an offset map must hold at least one key, not {capacity}")
        self.capacity = capacity
        self._offsets: dict[bytes, int] = {}

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[hashlib.md5(key).digest()] = offset

    def get(self, key: bytes) -> int:
        """The last offset of ``key``, -1 if it was not seen."""
        return self._offsets.get(hashlib.md5(key).digest(), -1)

    def __len__(self) -> int:
        return len(self._offsets)

    def clear(self) -> None:
        self._offsets.clear()


@dataclass
class LogToClean:
    """A compacted log with its first dirty offset and its clean and dirty bytes."""

    log: Log08
    first_dirty_offset: int
    clean_bytes: int
    dirty_bytes: int

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


@dataclass
class CleanerStats:
    """What one cleaning did (for logs, tests and the benchmark)."""

    log: str = ""
    first_dirty_offset: int = 0
    end_offset: int = 0
    segments_in: int = 0
    segments_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    messages_read: int = 0
    messages_written: int = 0
    keyless: int = 0
    groups: list[list[int]] = field(default_factory=list)  # the base offsets of each group rewritten


class LogCleaner:
    """Cleans the compacted logs ``logs()`` returns, one per ``clean_once`` (the dirtiest first).

    ``offload`` runs the blocking work (the broker passes its disk pool; by default it runs in place).
    """

    def __init__(
        self,
        logs: Callable[[], Iterable[Log08]],
        *,
        dedupe_buffer_size: int = 500 * 1024 * 1024,
        load_factor: float = 0.9,
        offload: Offload = run_here,
    ) -> None:
        self._logs = logs
        self._offload = offload
        self.map_capacity = max(1, int(dedupe_buffer_size / BYTES_PER_MAP_ENTRY * load_factor))

    # -- checkpoints ----------------------------------------------------------------------------------------

    @staticmethod
    def _checkpoint(log: Log08) -> OffsetCheckpoint:
        return OffsetCheckpoint(os.path.join(os.path.dirname(log.dir_path), CLEANER_CHECKPOINT))

    def first_dirty_offset(self, log: Log08) -> int:
        """Where cleaning resumes: the checkpointed offset, or the log start if there is none (or it is gone)."""
        checkpointed = self._checkpoint(log).read().get((log.topic, log.partition), 0)
        return max(checkpointed, log.log_start)

    def _write_checkpoint(self, log: Log08, offset: int) -> None:
        """Record the log's new first dirty offset; entries of logs no longer here are dropped."""
        checkpoint = self._checkpoint(log)
        offsets = checkpoint.read()
        offsets[(log.topic, log.partition)] = offset
        live = {(other.topic, other.partition) for other in self._logs()}
        checkpoint.write({tp: o for tp, o in offsets.items() if tp in live})

    # -- choosing a log -------------------------------------------------------------------------------------

    def cleanable(self, log: Log08) -> LogToClean:
        first_dirty = self.first_dirty_offset(log)
        clean = dirty = 0
        for segment in log.segments[:-1]:
            if segment.next_offset <= first_dirty:
                clean += segment.size
            else:
                dirty += segment.size
        return LogToClean(log, first_dirty, clean, dirty)

    def grab_filthiest_log(self) -> LogToClean | None:
        """The compacted log with the highest dirty ratio above its ``min.cleanable.dirty.ratio``, if any."""
        candidates = [self.cleanable(log) for log in self._logs() if log.config.compact]
        candidates = [
            c for c in candidates if c.dirty_bytes > 0 and c.dirty_ratio > c.log.config.min_cleanable_ratio
        ]
        if not candidates:
            return None
        return max(candidates, key=lambda c: (c.dirty_ratio, c.log.name))

    def clean_once(self) -> CleanerStats | None:
        """Clean the filthiest log; None when no log needs it."""
        to_clean = self._offload(self.grab_filthiest_log)
        if to_clean is None:
            return None
        stats = self.clean(to_clean)
        self._offload(lambda: self._write_checkpoint(to_clean.log, stats.end_offset))
        logger.info(
            "log cleaner: %s offsets %d-%d, %d -> %d segment(s), %d -> %d messages, %d -> %d bytes",
            stats.log,
            stats.first_dirty_offset,
            stats.end_offset,
            stats.segments_in,
            stats.segments_out,
            stats.messages_read,
            stats.messages_written,
            stats.bytes_read,
            stats.bytes_written,
        )
        return stats

    # -- cleaning one log -----------------------------------------------------------------------------------

    def clean(self, to_clean: LogToClean) -> CleanerStats:
        """Dedupe and rewrite one log's segments below the end of its offset map; returns what it did."""
        log = to_clean.log
        stats = CleanerStats(log.name, to_clean.first_dirty_offset)
        segments = log.segments
        offset_map = OffsetMap(self.map_capacity)
        stats.end_offset = self._offload(
            lambda: self._build_offset_map(segments[:-1], to_clean.first_dirty_offset, offset_map)
        )
        clean_segments = [s for s in segments[:-1] if s.next_offset <= to_clean.first_dirty_offset]
        horizon = clean_segments[-1].mtime_ms - log.config.delete_retention_ms if clean_segments else 0
        doomed = [s for s in segments[:-1] if s.start < stats.end_offset]
        for group in group_segments_by_size(doomed, log.config.segment_bytes, log.config.index_max_bytes):
            stats.groups.append([s.start for s in group])
            self._offload(lambda group=group: self._write_cleaned(log, group, offset_map, horizon, stats))
            if self._swap_in(log, group) is not None:
                stats.segments_in += len(group)
                stats.segments_out += 1
        return stats

    def _build_offset_map(
        self, segments: Sequence[IndexedSegment], first_dirty: int, offset_map: OffsetMap
    ) -> int:
        """Map the keys of the dirty segments, whole segments while the map has room; the map's end offset."""
        end = first_dirty
        for segment in segments:
            if segment.next_offset <= first_dirty:
                continue
            if len(offset_map) + (segment.next_offset - segment.start) > offset_map.capacity:
                if end == first_dirty:
                    raise ValueError(
                        f"the cleaner's offset map ({offset_map.capacity} keys) cannot hold segment"
                        f" {segment.path}: raise log.cleaner.dedupe.buffer.size"
                    )
                break
            for message in _segment_messages(segment):
                if message.offset >= first_dirty and message.key is not None:
                    offset_map.put(message.key, message.offset)
            end = segment.next_offset
        return end

    def _write_cleaned(
        self,
        log: Log08,
        group: list[IndexedSegment],
        offset_map: OffsetMap,
        horizon_ms: int,
        stats: CleanerStats,
    ) -> None:
        """Write the group's kept entries as the ``.swap`` files of its first segment (fsynced)."""
        paths = _group_paths(log, group)
        base = group[0].start
        for path in paths:
            if os.path.exists(path + CLEANED_SUFFIX):
                os.unlink(path + CLEANED_SUFFIX)
        config = log.config
        index = OffsetIndex(paths[1] + CLEANED_SUFFIX, base, max_bytes=config.index_max_bytes)
        times = (
            TimeIndex(paths[2] + CLEANED_SUFFIX, base, max_bytes=config.index_max_bytes)
            if config.message_format_magic
            else None
        )
        stamp = (NO_TIMESTAMP, base)  # the largest timestamp written and its offset
        try:
            with open(paths[0] + CLEANED_SUFFIX, "wb") as out:
                position = since_index = 0
                for segment in group:
                    retain_deletes = segment.mtime_ms > horizon_ms
                    for first_offset, data in _cleaned_entries(segment, offset_map, retain_deletes, stats):
                        if since_index > config.index_interval_bytes:
                            index.append(first_offset, position)
                            if times is not None:
                                times.maybe_append(*stamp)
                            since_index = 0
                        out.write(data)
                        written = next(log_entries(data))
                        stamp = max(stamp, (written.max_timestamp, written.last_offset))
                        position += len(data)
                        since_index += len(data)
                out.flush()
                os.fsync(out.fileno())
            written_indexes = (index,) if times is None else (index, times)
            if times is not None:
                times.maybe_append(*stamp)
            for written_index in written_indexes:
                written_index.trim()
                written_index.flush()
        finally:
            index.close()
            if times is not None:
                times.close()
        stats.bytes_written += position
        mtime_ns = group[-1].mtime_ms * 1_000_000
        os.utime(paths[0] + CLEANED_SUFFIX, ns=(mtime_ns, mtime_ns))
        for path in paths:
            if os.path.exists(path + CLEANED_SUFFIX):
                os.rename(path + CLEANED_SUFFIX, path + SWAP_SUFFIX)

    def _swap_in(self, log: Log08, group: list[IndexedSegment]) -> IndexedSegment | None:
        """Put the group's ``.swap`` files in its place in the log (None, and the files dropped, if the log
        changed meanwhile)."""
        paths = _group_paths(log, group)
        base = group[0].start

        def swap_in() -> IndexedSegment:
            for segment in group:
                segment.rename_deleted()
            for path in paths:
                if os.path.exists(path + SWAP_SUFFIX):
                    os.rename(path + SWAP_SUFFIX, path)
            segment = log.open_segment(base)
            segment.next_offset = group[-1].next_offset
            return segment

        new = log.replace_segments(group, swap_in)
        if new is None:
            logger.warning(
                "log cleaner: log %s changed while cleaning; dropping the cleaned segment", log.name
            )
            for path in paths:
                if os.path.exists(path + SWAP_SUFFIX):
                    os.unlink(path + SWAP_SUFFIX)
        return new


def _group_paths(log: Log08, group: list[IndexedSegment]) -> tuple[str, str, str]:
    """The log, index and time index paths of the segment a cleaned group becomes (named after its first)."""
    base = group[0].start
    return tuple(  # type: ignore[return-value]
        os.path.join(log.dir_path, segment_file_name(base, suffix))
        for suffix in (log.entry_format.log_suffix, INDEX_SUFFIX, TIME_INDEX_SUFFIX)
    )


def group_segments_by_size(
    segments: Sequence[IndexedSegment], max_size: int, max_index_size: int
) -> list[list[IndexedSegment]]:
    """Consecutive segments grouped so a group's log and index stay under one segment's limits and its
    offsets within an int32 of its base (0.9's ``groupSegmentsBySize``)."""
    groups: list[list[IndexedSegment]] = []
    at = 0
    while at < len(segments):
        group = [segments[at]]
        size, index_size = segments[at].size, segments[at].index.size_bytes
        at += 1
        while (
            at < len(segments)
            and size + segments[at].size < max_size
            and index_size + segments[at].index.size_bytes < max_index_size
            and segments[at].next_offset - 1 - group[0].start <= INT32_MAX
        ):
            size += segments[at].size
            index_size += segments[at].index.size_bytes
            group.append(segments[at])
            at += 1
        groups.append(group)
    return groups


def _segment_bytes(segment: IndexedSegment) -> bytes:
    return segment.read(0, segment.size) if segment.size else b""


def _segment_messages(segment: IndexedSegment) -> Iterable[Any]:
    """Every message or record of the segment: one walk when all its entries are magic 0, else entry by entry."""
    data = _segment_bytes(segment)
    if not any(entry.magic for entry in log_entries(data)):
        return iter_messages(data)
    return (r for e in log_entries(data) for r in entry_records(data[e.position : e.position + e.size]))


def _cleaned_entries(
    segment: IndexedSegment, offset_map: OffsetMap, retain_deletes: bool, stats: CleanerStats
) -> Iterable[tuple[int, bytes]]:
    """The entries of ``segment`` worth keeping, as ``(first offset, bytes)``: whole when all their records
    stay, else rewritten with the kept ones (``convert.retained_entry``: a recompressed wrapper, or a batch
    keeping its offsets and producer fields)."""
    data = _segment_bytes(segment)
    stats.bytes_read += len(data)
    for _, position, size in entries(data):
        entry = data[position : position + size]
        records = entry_records(entry)
        kept = [r for r in records if _retain(r, offset_map, retain_deletes, stats)]
        stats.messages_read += len(records)
        stats.messages_written += len(kept)
        if kept:
            yield kept[0].offset, entry if len(kept) == len(records) else retained_entry(entry, kept)


def _retain(message: Any, offset_map: OffsetMap, retain_deletes: bool, stats: CleanerStats) -> bool:
    if message.key is None:
        stats.keyless += 1
        return True
    if message.offset < offset_map.get(message.key):
        return False
    return message.value is not None or retain_deletes
