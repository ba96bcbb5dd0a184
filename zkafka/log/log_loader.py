"""``LogLoader``: a 0.8 log's segments loaded from its directory (0.8 line only; Kafka's ``LogLoader``).

A load removes what interrupted deletions and cleanings left (``*.deleted``, ``*.cleaned``, ``*.swap``),
opens every segment, rebuilds a missing or corrupt index and, after an unclean stop, recovers the segments from
the one holding the recovery point on: torn or corrupt tail truncated, later segments deleted.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import NamedTuple

from zkafka.log.checkpoint import RECOVERY_POINT_CHECKPOINT
from zkafka.log.log_config import LogConfig
from zkafka.log.offset_index import INDEX_SUFFIX, CorruptIndexError
from zkafka.log.segment import (
    CLEANED_SUFFIX,
    DELETED_SUFFIX,
    SWAP_SUFFIX,
    EntryFormat,
    IndexedSegment,
    parse_segment_file_name,
    segment_file_name,
)
from zkafka.log.segmented_log import LogLayoutError, segment_index
from zkafka.log.time_index import TIME_INDEX_SUFFIX
from zkafka.records import format08

logger = logging.getLogger(__name__)

# Opens the segment whose files start at an offset, its index sized to a maximum (None: as found on disk).
OpenSegment = Callable[[int, int | None], IndexedSegment]


class LoadedLog(NamedTuple):
    """What a load found: the segments, oldest first, the recovery point and the log end offset."""

    segments: tuple[IndexedSegment, ...]
    recovery_point: int
    next_offset: int


class LogLoader:
    """Loads the segments of one 0.8 log directory, recovering them after an unclean stop."""

    def __init__(
        self,
        dir_path: str,
        name: str,
        entry_format: EntryFormat,
        config: LogConfig,
        open_segment: OpenSegment,
    ) -> None:
        self.dir_path = dir_path
        self.name = name
        self.entry_format = entry_format
        self.config = config
        self._open_segment = open_segment

    def load(self, recovery_point: int, need_recovery: bool) -> LoadedLog:
        """The log's segments (a first empty one in an empty directory); LogLayoutError for files that do not
        form one log. ``recovery_point``: what the checkpoint says is on disk."""
        suffix = self.entry_format.log_suffix
        self._remove_leftovers(suffix)
        starts = self._segment_starts(suffix)
        segments: list[IndexedSegment] = []
        try:
            for start, had_index in starts:
                segment = self._open_segment(start, None)
                segments.append(segment)
                self._check_index(segment, had_index)
            if not segments:
                segments.append(self._open_segment(0, self.config.index_max_bytes))
                recovery_point = 0
            else:
                recovery_point = self._recover(segments, recovery_point, need_recovery)
                segments[-1].resize_indexes(self.config.index_max_bytes)
            for segment in segments:
                segment.index.sanity_check()
        except CorruptIndexError as exc:
            _close_all(segments)
            raise LogLayoutError(f"log {self.name}: {exc}") from None
        except BaseException:
            _close_all(segments)
            raise
        return LoadedLog(tuple(segments), recovery_point, segments[-1].next_offset)

    def _segment_starts(self, suffix: str) -> list[tuple[int, bool]]:
        """Each segment file's start, in order, and whether its index exists; an index without its segment
        is deleted."""
        starts = []
        names = set(os.listdir(self.dir_path))
        for name in names:
            start = parse_segment_file_name(name, suffix)
            if start is not None:
                starts.append(start)
            elif name.endswith(suffix):
                raise LogLayoutError(f"segment file {self.dir_path}/{name} is not named <offset>{suffix}")
            index_start = parse_segment_file_name(name, INDEX_SUFFIX)
            if index_start is None:
                index_start = parse_segment_file_name(name, TIME_INDEX_SUFFIX)
            if index_start is not None and segment_file_name(index_start, suffix) not in names:
                logger.warning("log %s: deleting %s, an index without its segment", self.name, name)
                os.unlink(os.path.join(self.dir_path, name))
        return [(start, segment_file_name(start, INDEX_SUFFIX) in names) for start in sorted(starts)]

    def _remove_leftovers(self, suffix: str) -> None:
        """Step 1 of a load: ``*.deleted`` and ``*.cleaned`` go, ``*.swap`` segments replace theirs (and the
        segments a swapped-in cleaned segment covers: a cleaning interrupted mid-swap)."""
        swapped = []
        for name in sorted(os.listdir(self.dir_path)):
            path = os.path.join(self.dir_path, name)
            if name.endswith((DELETED_SUFFIX, CLEANED_SUFFIX)):
                os.unlink(path)
            elif name.endswith(SWAP_SUFFIX):
                original = path[: -len(SWAP_SUFFIX)]
                if original.endswith((INDEX_SUFFIX, TIME_INDEX_SUFFIX)):
                    os.unlink(path)
                elif original.endswith(suffix):
                    index = original[: -len(suffix)] + INDEX_SUFFIX
                    if os.path.exists(index):
                        os.unlink(index)
                    os.rename(path, original)
                    swapped.append(original)
        for path in swapped:
            self._remove_covered_segments(path, suffix)

    def _remove_covered_segments(self, path: str, suffix: str) -> None:
        """Delete the segments whose base offset lies inside the entries of the segment file ``path``."""
        base = parse_segment_file_name(os.path.basename(path), suffix)
        with open(path, "rb") as handle:
            data = handle.read()
        last = max((offset for offset, _, _ in format08.entries(data)), default=base)
        for name in os.listdir(self.dir_path):
            start = parse_segment_file_name(name, suffix)
            if start is not None and base < start <= last:
                logger.warning("log %s: deleting %s, covered by the swapped-in %s", self.name, name, path)
                for doomed in (name, segment_file_name(start, INDEX_SUFFIX)):
                    if os.path.exists(os.path.join(self.dir_path, doomed)):
                        os.unlink(os.path.join(self.dir_path, doomed))

    def _check_index(self, segment: IndexedSegment, had_index: bool) -> None:
        if not had_index:
            logger.warning("log %s: no index for %s, rebuilding it", self.name, segment.path)
            self._recover_segment(segment)
            return
        try:
            for index in segment.indexes:
                index.sanity_check()
        except CorruptIndexError as exc:
            logger.warning("log %s: %s; rebuilding the index", self.name, exc)
            self._recover_segment(segment)

    def _recover_segment(self, segment: IndexedSegment, later: int = 0) -> int:
        """Rebuild a segment's index and cut its entries after the last valid one, saying what was cut (the
        ``later`` segments after it go too); the bytes cut."""
        truncated = segment.recover(self.entry_format, self.config.index_max_bytes)
        if truncated:
            logger.warning(
                "log %s: corrupt or torn entries in %s: truncated %d bytes at offset %d and deleted %d later"
                " segment(s)",
                self.name,
                segment.path,
                truncated,
                segment.next_offset,
                later,
            )
        return truncated

    def _recover(self, segments: list[IndexedSegment], recovery_point: int, need_recovery: bool) -> int:
        """Recover every segment from the one holding the recovery point; cut everything after a bad entry.
        Returns the recovery point after it."""
        active = segments[-1]
        if not need_recovery:
            active.next_offset = active.read_next_offset()
            return active.next_offset
        first = max(0, segment_index(segments, recovery_point))
        for i in range(first, len(segments)):
            if self._recover_segment(segments[i], later=len(segments) - i - 1):
                later = segments[i + 1 :]
                del segments[i + 1 :]
                for segment in later:
                    segment.delete()
                break
        if segments[-1] is not active:
            segments[-1].resize_indexes(self.config.index_max_bytes)
        end = segments[-1].next_offset
        if recovery_point > end:  # Kafka takes the log end offset as the recovery point then
            logger.warning(
                "log %s: the recovery point %d in %s is past the log end offset %d; recovering from %d",
                self.name,
                recovery_point,
                RECOVERY_POINT_CHECKPOINT,
                end,
                end,
            )
        return min(recovery_point, end)


def _close_all(segments: list[IndexedSegment]) -> None:
    for segment in segments:
        segment.close()
