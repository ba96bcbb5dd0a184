"""What a consumer reads from a fetch answer at Fetch v4 or later: the log's entries as stored, message sets
(magic 0 or 1) and record batches (magic 2) side by side, as a log whose ``message.format.version`` was
raised holds them. Pure: bytes in, values out.

A batch's records come as ``FetchedRecord`` (offset, key, value, codec, crc, timestamp, timestamp type,
headers), those before the fetch offset left out, control batches skipped (they hold markers, not records);
the entries of other magics are left to the 0.8 walker (``walk_runs`` hands them over run by run).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from zkafka.records.compression import DEFAULT_MAX_INFLATED
from zkafka.records.default_record import Header
from zkafka.records.entries import spans
from zkafka.records.format08 import FORMAT08
from zkafka.records.record_batch import MAGIC, read_batch

MAGIC_AT = 16  # an entry's magic byte: after the offset, the size and a message's CRC or a batch's epoch


class FetchedRecord(NamedTuple):
    """A record of a batch as a consumer gets it; ``crc`` is its batch's CRC-32C."""

    offset: int
    key: bytes | None
    value: bytes | None
    codec: int
    crc: int
    timestamp: int
    timestamp_type: int  # 0: CreateTime, 1: LogAppendTime
    headers: tuple[Header, ...]

    @property
    def next_offset(self) -> int:
        return self.offset + 1


def has_batches(data: Any) -> bool:
    """Whether any whole entry of ``data`` is a record batch (reads only lengths and magics)."""
    return any(data[pos + MAGIC_AT] == MAGIC for pos, _ in spans(data, FORMAT08))


def walk_runs(data: Any) -> Iterator[tuple[bool, int, int]]:
    """``(is_batch, start, end)`` of each run of whole entries of one kind: record batches, or messages."""
    run: tuple[bool, int, int] | None = None
    for pos, size in spans(data, FORMAT08):
        batch = data[pos + MAGIC_AT] == MAGIC
        if run is not None and run[0] == batch:
            run = (batch, run[1], pos + size)
            continue
        if run is not None:
            yield run
        run = (batch, pos, pos + size)
    if run is not None:
        yield run


def batch_records(
    data: Any, start: int, end: int, fetch_offset: int, max_inflated: int = DEFAULT_MAX_INFLATED
) -> Iterator[FetchedRecord]:
    """The records of the batches in ``data[start:end]`` from ``fetch_offset`` on (see the module docstring);
    a damaged batch raises as ``record_batch.read_batch`` does."""
    for pos, _ in spans(data, FORMAT08, start):
        if pos >= end:
            return
        batch = read_batch(data, pos, max_inflated)
        header = batch.header
        if header.is_control or header.last_offset < fetch_offset:
            continue
        kind, codec, crc = header.timestamp_type, header.compression, header.crc
        for r in batch.records:
            if r.offset >= fetch_offset:
                yield FetchedRecord(r.offset, r.key, r.value, codec, crc, r.timestamp, kind, r.headers)
