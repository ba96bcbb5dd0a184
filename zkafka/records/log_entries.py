"""The entries of a 0.8-line log whatever their message format (magic 0, 1 or 2 record batches).

The three formats share the framing ``int64 offset | int32 size``; they differ in what the CRC covers (magic
0 and 1: CRC-32 from the magic byte; a batch: CRC-32C from its attributes), in which offset the entry carries
(a message or wrapper: its last; a batch: its first, the last at ``lastOffsetDelta``) and in their
timestamps (none; one per message; the batch's maxTimestamp). Recovery, a follower's append and the time
index read entries here; runs of magic-0 entries go through ``FORMAT08`` (the native core when built).
Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any, NamedTuple

from crc32c import crc32c

from zkafka.errors import InvalidMessageError, KafkaError
from zkafka.records import message_v1
from zkafka.records.entries import UINT32, entry_error, entry_size, spans
from zkafka.records.format08 import (
    FORMAT08,
    MIN_MESSAGE_SIZE,
    OFFSET,
    Format08,
    OffsetsOutOfOrderError,
    entry_offset,
)
from zkafka.records.message_v1 import MIN_MESSAGE_SIZE as MIN_MESSAGE_V1_SIZE
from zkafka.records.message_v1 import NO_TIMESTAMP
from zkafka.records.record_batch import ATTRIBUTES_AT, RECORD_BATCH_OVERHEAD, read_batch, read_batch_header
from zkafka.records.record_batch import MAGIC as MAGIC_V2

MAGIC_AT = 16
_V1_TIMESTAMP = 18  # after the offset, size, CRC, magic and attributes
_BASE_OFFSET_AND_MAX_TIMESTAMP = struct.Struct(">q27xq")  # a batch's header fields at 0 and 35
_MIN_SIZES = {0: MIN_MESSAGE_SIZE + 12, 1: MIN_MESSAGE_V1_SIZE + 12, MAGIC_V2: RECORD_BATCH_OVERHEAD}


class LogEntry(NamedTuple):
    """One top-level entry: where it is, its magic, its first and last offsets and largest timestamp (-1:
    none). A magic-0/1 wrapper's first offset is not read (its last is given for both)."""

    position: int
    size: int
    magic: int
    first_offset: int
    last_offset: int
    max_timestamp: int


def log_entries(data: Any, start: int = 0) -> Iterator[LogEntry]:
    """Every whole entry from ``start``, reading headers only (no CRC check)."""
    for pos, size in spans(data, FORMAT08, start):
        magic = data[pos + MAGIC_AT]
        last = entry_offset(data, pos, size)
        if magic == MAGIC_V2 and size >= RECORD_BATCH_OVERHEAD:
            base_offset, stamp = _BASE_OFFSET_AND_MAX_TIMESTAMP.unpack_from(data, pos)
            yield LogEntry(pos, size, magic, base_offset, last, stamp)
        elif magic == 1 and size >= _MIN_SIZES[1]:
            yield LogEntry(pos, size, magic, last, last, OFFSET.unpack_from(data, pos + _V1_TIMESTAMP)[0])
        else:
            yield LogEntry(pos, size, magic, last, last, NO_TIMESTAMP)


def max_timestamp(data: Any) -> tuple[int, int] | None:
    """``(largest timestamp, offset of the entry carrying it)`` of the whole entries; None when none has one."""
    best = None
    for entry in log_entries(data):
        if entry.max_timestamp >= 0 and (best is None or entry.max_timestamp > best[0]):
            best = (entry.max_timestamp, entry.last_offset)
    return best


def first_at_or_after(data: Any, timestamp: int) -> tuple[int, int] | None:
    """``(timestamp, offset)`` of the first record of the one entry ``data`` holds (magic 1 or 2) whose
    timestamp is at or past ``timestamp``; None when none is."""
    if data[MAGIC_AT] == MAGIC_V2:
        found = ((r.timestamp, r.offset) for r in read_batch(data).records)
    else:
        found = ((m.timestamp, offset) for offset, m in message_v1.iter_messages(data))
    return next((pair for pair in found if pair[0] >= timestamp), None)


def entry_problem(data: Any, pos: int, end: int) -> str | None:
    """Why the whole entry ``data[pos:end]`` is damaged (its size, magic or CRC), None when it is sound."""
    magic = data[pos + MAGIC_AT]
    if magic not in _MIN_SIZES:
        return f"has an unknown magic byte {magic}"
    if end - pos < _MIN_SIZES[magic]:
        return f"of {end - pos} bytes is shorter than a magic-{magic} entry"
    if magic == MAGIC_V2:
        read_batch_header(data, pos)
        crc, crc_from, check = UINT32.unpack_from(data, pos + 17)[0], pos + ATTRIBUTES_AT, crc32c
    else:
        crc, crc_from, check = UINT32.unpack_from(data, pos + 12)[0], pos + MAGIC_AT, zlib.crc32
    return None if check(data[crc_from:end]) == crc else "fails its CRC check"


def valid_prefix(data: Any) -> int:
    """Bytes of the longest prefix of whole, sound entries (where recovery truncates a segment)."""
    view = memoryview(data)
    pos = 0
    try:
        while True:
            with view[pos:] as rest:
                pos += FORMAT08.valid_prefix(rest)
            size = entry_size(data, FORMAT08, pos)
            if size is None or size < _MIN_SIZES[0] or pos + size > len(data) or data[pos + MAGIC_AT] == 0:
                return pos
            if entry_problem(data, pos, pos + size) is not None:
                return pos
            pos += size
    except KafkaError:
        return pos
    finally:
        view.release()


class FollowerSet(NamedTuple):
    """A follower's fetched entries as checked: the bytes of whole entries, their offsets, records."""

    valid_bytes: int
    first_offset: int
    last_offset: int
    count: int


def check_follower_set(data: Any, log_end_offset: int) -> FollowerSet:
    """A leader's entries of any format as a follower appends them: each whole entry sound (else
    InvalidMessageError), offsets increasing from ``log_end_offset`` (else OffsetsOutOfOrderError)."""
    first, last, count, valid = log_end_offset, log_end_offset - 1, 0, 0
    for entry in log_entries(data):
        problem = entry_problem(data, entry.position, entry.position + entry.size)
        if problem is not None:
            where = f"entry at position {entry.position}"
            raise entry_error(InvalidMessageError, f"{where} {problem}", entry.position, None)
        if entry.first_offset <= last or entry.first_offset < log_end_offset:
            raise OffsetsOutOfOrderError(
                f"offset {entry.first_offset} at position {entry.position} does not follow {last}"
            )
        if not count:
            first = entry.first_offset
        count += entry.last_offset - entry.first_offset + 1
        last, valid = entry.last_offset, entry.position + entry.size
    return FollowerSet(valid, first, last, count)


class LogFormat08(Format08):
    """``FORMAT08`` for a 0.8-line log: its recovery scan also keeps sound magic-1 messages and batches."""

    def valid_prefix(self, buf: Any) -> int:
        return valid_prefix(buf)


LOG_FORMAT08 = LogFormat08()
