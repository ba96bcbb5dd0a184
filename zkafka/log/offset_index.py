"""The sparse offset index of one 0.8 segment: ``int32 offset - base · int32 position`` entries, sorted.

The file of the active segment is pre-allocated to ``log.index.size.max.bytes`` (rounded down to a multiple
of 8, a sparse file) and memory-mapped for lookups; entries are written with ``pwrite`` and removed by cutting
the file (holes again), never through the mapping, and only entries written are read from it: on a full disk
a page of the mapping that was never written cannot be faulted in (SIGBUS, which Python cannot catch), where a
write fails with ENOSPC naming the file and the broker halts. Rolling or closing trims it to the entries
written (a broker's roll trims on its disk pool: shrinking a 10 MB file takes over a millisecond, and the
mapping stays as it is, only its entries are read). An index found on disk is taken as full (its size / 8 entries); the active segment's is grown back
to the maximum when loaded. A lookup is a binary search for the last entry at or before an offset.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from collections.abc import Callable

from zkafka.utils import with_filename
from zkafka.utils.java import INT32_MAX

INDEX_SUFFIX = ".index"
ENTRY_SIZE = 8
_ENTRY = struct.Struct(">ii")


class CorruptIndexError(ValueError):
    """An index file that cannot belong to its segment (bad size, unsorted, offsets below the base)."""


class OffsetIndex:
    """Maps offsets of one segment to file positions, for every ``log.index.interval.bytes`` of entries."""

    entry_size = ENTRY_SIZE
    _entry = _ENTRY

    def __init__(self, path: str, base_offset: int, *, max_bytes: int | None) -> None:
        """Open or create the index; ``max_bytes`` None opens an existing one as it is (a non-active segment)."""
        self.path = path
        self.base_offset = base_offset
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        self.entries = size // self.entry_size  # an existing index is taken as full
        self.max_bytes = size if max_bytes is None else max_bytes
        self._mmap: mmap.mmap | None = None
        # File size changes (resize, close, a sealed index's trim from another thread) one at a time; the
        # generation counts resizes, so a trim planned before one does nothing.
        self._resizing = threading.Lock()
        self._generation = 0
        self._map(size)
        if max_bytes is not None:
            self.resize(max_bytes)

    def _map(self, size: int) -> None:
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        if size > 0:
            self._mmap = mmap.mmap(self._fd, size)
            # Lookups and appends touch a page or two: without this a fault reads ahead as much as the device
            # asks (8 MB here), and the first append to a new index (a hole) waited ~4 ms to zero it.
            self._mmap.madvise(mmap.MADV_RANDOM)

    @property
    def max_entries(self) -> int:
        return len(self._mmap) // self.entry_size if self._mmap is not None else 0

    @property
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    @property
    def size_bytes(self) -> int:
        """Bytes of the entries written."""
        return self.entries * self.entry_size

    def entry(self, slot: int) -> tuple[int, int]:
        """The ``(offset, position)`` of the entry in a slot."""
        relative, position = self._entry.unpack_from(self._mmap, slot * self.entry_size)
        return self.base_offset + relative, position

    @property
    def last_offset(self) -> int:
        """The offset of the last entry (the base offset when there is none)."""
        return self.entry(self.entries - 1)[0] if self.entries else self.base_offset

    @property
    def last_position(self) -> int:
        return self.entry(self.entries - 1)[1] if self.entries else 0

    def append(self, offset: int, position: int) -> None:
        """Add an entry; its offset must be above the last one's and within int32 of the base."""
        if self.is_full:
            raise ValueError(f"index {self.path} is full ({self.entries} entries)")
        relative = offset - self.base_offset
        if not 0 <= relative <= INT32_MAX or (self.entries and offset <= self.last_offset):
            raise ValueError(
                f"offset {offset} cannot follow {self.last_offset} in index {self.path} (base {self.base_offset})"
            )
        self._write_entry(relative, position)

    def _write_entry(self, *fields: int) -> None:
        """Add an entry at the end with ``pwrite`` (never through the mapping: see the module's docstring)."""
        try:
            os.pwrite(self._fd, self._entry.pack(*fields), self.entries * self.entry_size)
        except OSError as exc:
            raise with_filename(exc, self.path) from None
        self.entries += 1

    def _file_entry(self, slot: int) -> tuple[int, ...]:
        """The fields of a slot read from the file, not the mapping (zeros past its end): after a crash an index
        found on disk is taken as full, and its entries past the last one written are a hole."""
        raw = os.pread(self.fileno(), self.entry_size, slot * self.entry_size)
        return self._entry.unpack(raw) if len(raw) == self.entry_size else (0, 0)

    def _slot_for(self, offset: int) -> int:
        """The slot of the last entry with an offset <= ``offset`` (-1 if there is none)."""
        relative = self._key(offset)
        low, high = 0, self.entries - 1
        unpack = self._entry.unpack_from
        mapped = self._mmap
        found = -1
        while low <= high:
            middle = (low + high) // 2
            if unpack(mapped, middle * self.entry_size)[0] <= relative:
                found, low = middle, middle + 1
            else:
                high = middle - 1
        return found

    def _key(self, offset: int) -> int:
        """What an entry's first field holds for ``offset``."""
        return offset - self.base_offset

    def lookup(self, offset: int) -> tuple[int, int]:
        """``(offset, position)`` of the last entry at or before ``offset``; ``(base, 0)`` if none is."""
        slot = self._slot_for(offset)
        return self.entry(slot) if slot >= 0 else (self.base_offset, 0)

    def truncate_to_offset(self, offset: int) -> None:
        """Remove the entries with an offset >= ``offset``."""
        slot = self._slot_for(offset)
        if slot < 0:
            self.truncate_to_entries(0)
        elif self.entry(slot)[0] == offset:
            self.truncate_to_entries(slot)
        else:
            self.truncate_to_entries(slot + 1)

    def truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries; the file keeps its size, the rest of it a hole (zeros)."""
        if entries >= self.entries:
            return
        with self._resizing:
            self.entries = entries
            size = os.fstat(self._fd).st_size
            os.ftruncate(self._fd, entries * self.entry_size)
            os.ftruncate(self._fd, size)

    def resize(self, max_bytes: int) -> None:
        """Set the file (and mapping) to ``max_bytes`` rounded down to whole entries, keeping the entries."""
        size = max(max_bytes // self.entry_size * self.entry_size, self.size_bytes)
        # No msync first: a shared mapping writes the page cache itself, so the entries survive the remap;
        # making them durable is the flush's fsync, on the disk pool (an msync here waited for the disk on
        # the event loop at every roll).
        with self._resizing:
            self._generation += 1
            os.ftruncate(self._fd, size)
            self._map(size)
            self.max_bytes = max_bytes

    def trim(self) -> None:
        """Shrink the file to the entries written (on roll and close)."""
        self.resize(self.size_bytes)

    def trim_task(self) -> Callable[[], None]:
        """For an index that takes no more entries (its segment rolled): a task, for any thread, that shrinks
        the file to the entries written now and leaves the mapping alone (only its entries are ever read). It
        does nothing once the index was resized or closed after this call."""
        generation, size = self._generation, self.size_bytes

        def trim_file() -> None:
            with self._resizing:
                if self._fd is not None and self._generation == generation:
                    os.ftruncate(self._fd, size)

        return trim_file

    def flush(self) -> None:
        if self._mmap is not None:
            self._mmap.flush()

    def fileno(self) -> int:
        """The open descriptor of the index file (ValueError once it is closed)."""
        if self._fd is None:
            raise ValueError(f"index {self.path} is closed")
        return self._fd

    def sanity_check(self) -> None:
        """Raise CorruptIndexError unless the file is whole entries and its last offset is above the base."""
        size = os.fstat(self._fd).st_size
        if size % self.entry_size:
            raise CorruptIndexError(
                f"index {self.path} has a size of {size} bytes, not a multiple of {self.entry_size}"
            )
        if not self.entries:
            return
        last = self.base_offset + self._file_entry(self.entries - 1)[0]
        if last <= self.base_offset:
            raise CorruptIndexError(
                f"index {self.path} is corrupt: its last offset {last} is not above the base"
                f" offset {self.base_offset}"
            )

    def close(self) -> None:
        """Trim to the entries written and close the file."""
        with self._resizing:
            if self._fd is None:
                return
            if self._mmap is not None:
                self._mmap.flush()
                self._mmap.close()
                self._mmap = None
            os.ftruncate(self._fd, self.size_bytes)
            fd, self._fd = self._fd, None
            os.close(fd)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, base={self.base_offset}, entries={self.entries}/{self.max_entries})"
