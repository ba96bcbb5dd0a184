"""The time index of one segment (KIP-33): ``int64 timestamp · int32 offset - base`` entries, both increasing.

Written beside the offset index at the same ``log.index.interval.bytes`` cadence: each entry is the largest
timestamp the segment held then and the offset of the entry that carries it, and only a timestamp above the
last entry's is added. The file machinery (pre-allocated, mmapped, trimmed on roll and close) is the offset
index's. A lookup gives the last entry whose timestamp is at or below a target: the offset to scan from for
the first record with a timestamp at or past it. A segment of magic-0 entries has no timestamps and no file.
"""

from __future__ import annotations

import os
import struct

from zkafka.log.offset_index import CorruptIndexError, OffsetIndex
from zkafka.records.message_v1 import NO_TIMESTAMP

TIME_INDEX_SUFFIX = ".timeindex"
TIME_ENTRY_SIZE = 12


class TimeIndex(OffsetIndex):
    """Maps timestamps of one segment to the offsets that carry them."""

    entry_size = TIME_ENTRY_SIZE
    _entry = struct.Struct(">qi")

    def entry(self, slot: int) -> tuple[int, int]:
        """The ``(timestamp, offset)`` of the entry in a slot."""
        timestamp, relative = self._entry.unpack_from(self._mmap, slot * TIME_ENTRY_SIZE)
        return timestamp, self.base_offset + relative

    @property
    def last_entry(self) -> tuple[int, int]:
        """``(timestamp, offset)`` of the last entry; ``(-1, base offset)`` when there is none."""
        if not self.entries:
            return NO_TIMESTAMP, self.base_offset
        # From the file: at load a crash may have left a hole there.
        timestamp, relative = self._file_entry(self.entries - 1)
        return timestamp, self.base_offset + relative

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add ``(timestamp, offset)`` when the timestamp is above the last entry's (and there is room)."""
        if (
            self._mmap is None
            or timestamp <= self.last_entry[0]
            or self.is_full
            or offset < self.last_entry[1]
        ):
            return
        self._write_entry(timestamp, offset - self.base_offset)

    def _key(self, timestamp: int) -> int:
        return timestamp

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """``(timestamp, offset)`` of the last entry at or below ``timestamp``; ``(-1, base)`` if none is."""
        slot = self._slot_for(timestamp)
        return self.entry(slot) if slot >= 0 else (NO_TIMESTAMP, self.base_offset)

    def truncate_to_offset(self, offset: int) -> None:
        """Remove the entries with an offset >= ``offset``."""
        keep = self.entries
        while keep and self.entry(keep - 1)[1] >= offset:
            keep -= 1
        self.truncate_to_entries(keep)

    def sanity_check(self) -> None:
        """Raise CorruptIndexError unless the file is whole entries."""
        size = os.fstat(self.fileno()).st_size
        if size % TIME_ENTRY_SIZE:
            raise CorruptIndexError(
                f"time index {self.path} has a size of {size} bytes, not a multiple of 12"
            )
