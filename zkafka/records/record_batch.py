"""Record batches of magic 2 (Kafka 0.11+, KIP-98), as Kafka's ``DefaultRecordBatch``: read and write.

A batch is a 61-byte header, then its records (``default_record``), compressed as one stream when the
attributes name a codec::

    baseOffset int64 | batchLength int32 (the bytes after it) | partitionLeaderEpoch int32 | magic int8 = 2 |
    crc uint32 (CRC-32C of everything from the attributes to the end) | attributes int16 |
    lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 | producerId int64 |
    producerEpoch int16 | baseSequence int32 | records count int32 | records

Attributes: the codec in bits 0-2 (gzip, snappy, lz4 with the LZ4 spec's header checksum, zstd), the
timestamp type in bit 3 (1: LogAppendTime, every record then has the batch's maxTimestamp), bit 4 a
transactional batch, bit 5 a control batch; a batch reports them (``BatchHeader``) so its reader can refuse
what it does not serve. A batch of count 0 holds no records, whatever follows its header (as Kafka reads it).

Reading checks the length, the magic, the CRC, the codec, then that the records are exactly as many as the
count says; each failure raises InvalidMessageError (UnknownMagicByteError, UnknownCodecError) carrying
``position`` and ``resume`` as the entry walker's errors do. Inflating is capped (``max_inflated``): a
bomb raises MessageSizeTooLargeError before the rest of it is inflated. Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from crc32c import crc32c

from zkafka.errors import InvalidMessageError, KafkaError, UnknownMagicByteError
from zkafka.records import native
from zkafka.records.compression import CODECS_V2, DEFAULT_MAX_INFLATED, NO_COMPRESSION, compress, decompress
from zkafka.records.default_record import Record, decode_records, encode_record
from zkafka.records.entries import entry_error
from zkafka.records.format08 import LOG_OVERHEAD  # baseOffset and batchLength take the place of offset and N
from zkafka.records.message_v1 import LOG_APPEND_TIME, TIMESTAMP_TYPE_MASK
from zkafka.utils.java import INT32_MAX

MAGIC = 2
RECORD_BATCH_OVERHEAD = 61
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
ATTRIBUTES_AT = 21  # where the CRC-32C's bytes start
COMPRESSION_MASK = 0x07
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qiib")  # baseOffset, batchLength, partitionLeaderEpoch, magic
_CRC = struct.Struct(">I")
_INT32 = struct.Struct(">i")
_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes ... records count


class BatchHeader(NamedTuple):
    """The 61-byte header of a record batch, field by field."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int

    @property
    def size(self) -> int:
        """The batch's bytes, its offset and length included."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        """CREATE_TIME or LOG_APPEND_TIME."""
        return (self.attributes & TIMESTAMP_TYPE_MASK) >> 3

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """The sequence number of the last record (sequences wrap past int32's maximum to 0)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (INT32_MAX + 1)


class RecordBatch(NamedTuple):
    """A batch as read: its header and its records."""

    header: BatchHeader
    records: list[Record]


def read_batch_header(data: Any, pos: int = 0) -> BatchHeader:
    """The header of the batch at ``pos``, without reading its records or checking its CRC.

    Raises InvalidMessageError when fewer than 61 bytes are left or batchLength is below the smallest batch,
    UnknownMagicByteError when the magic byte is not 2.
    """
    if len(data) - pos < RECORD_BATCH_OVERHEAD:
        raise _error(InvalidMessageError, pos, None, f"holds {len(data) - pos} bytes, fewer than a header")
    header = BatchHeader(*_HEADER.unpack_from(data, pos))
    if header.batch_length < MIN_BATCH_LENGTH:
        raise _error(InvalidMessageError, pos, None, f"has a batchLength of {header.batch_length}")
    if header.magic != MAGIC:
        raise _error(UnknownMagicByteError, pos, pos + header.size, f"has magic {header.magic}, not 2")
    return header


def read_batch(data: Any, pos: int = 0, max_inflated: int = DEFAULT_MAX_INFLATED) -> RecordBatch:
    """The batch at ``pos``, its CRC-32C checked and its records read; their inflated bytes at most
    ``max_inflated``. See the module docstring for what raises."""
    header = read_batch_header(data, pos)
    end = pos + header.size
    if end > len(data):
        raise _error(InvalidMessageError, pos, None, f"of {header.size} bytes runs past the end")
    if crc32c(data[pos + ATTRIBUTES_AT : end]) != header.crc:
        raise _error(InvalidMessageError, pos, end, "fails its CRC-32C check")
    try:
        return RecordBatch(header, _records(data, pos, end, header, max_inflated))
    except KafkaError as err:
        raise entry_error(type(err), f"record batch at position {pos}: {err}", pos, end) from None


def _records(data: Any, pos: int, end: int, header: BatchHeader, max_inflated: int) -> list[Record]:
    if header.count == 0:
        return []
    start = pos + RECORD_BATCH_OVERHEAD
    if header.compression != NO_COMPRESSION:
        payload = data[start:end]
        data = decompress(header.compression, payload, max_inflated, CODECS_V2, magic=MAGIC)
        start, end = 0, len(data)
    log_append_time = header.max_timestamp if header.timestamp_type == LOG_APPEND_TIME else None
    return decode_records(
        data, start, end, header.count, header.base_offset, header.base_timestamp, log_append_time
    )


def batch_spans(data: Any, start: int = 0) -> Iterator[tuple[int, int]]:
    """``(position, size)`` of each whole batch from ``start``, reading only lengths; stops at a partial
    trailing batch (a fetch response may end in one) and raises at a batchLength below the smallest."""
    pos = start
    while len(data) - pos >= LOG_OVERHEAD:
        (batch_length,) = _INT32.unpack_from(data, pos + 8)
        if batch_length < MIN_BATCH_LENGTH:
            raise _error(InvalidMessageError, pos, None, f"has a batchLength of {batch_length}")
        if pos + LOG_OVERHEAD + batch_length > len(data):
            return
        yield pos, LOG_OVERHEAD + batch_length
        pos += LOG_OVERHEAD + batch_length


def stamped_epochs(data: Any) -> Iterable[tuple[int, int]]:
    """``(partitionLeaderEpoch, baseOffset)`` of each whole record batch of ``data`` stamped with an epoch (a
    follower learns its leader's epochs from them); older entries, unstamped batches and a partial tail give
    none. Reads only the entries' prefixes (in the native core when built)."""
    lib = native.lib
    return lib.stamped_epochs(data) if lib is not None else _stamped_epochs(data)


def _stamped_epochs(data: Any) -> Iterator[tuple[int, int]]:
    pos = 0
    while len(data) - pos >= _PREFIX.size:
        base_offset, length, epoch, magic = _PREFIX.unpack_from(data, pos)
        if length < 0 or pos + LOG_OVERHEAD + length > len(data):
            return
        if magic == MAGIC and epoch >= 0:
            yield epoch, base_offset
        pos += LOG_OVERHEAD + length


def read_batches(data: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> Iterator[RecordBatch]:
    """Every whole batch of ``data`` read (``read_batch``), a partial trailing one left out."""
    for pos, _ in batch_spans(data):
        yield read_batch(data, pos, max_inflated)


def _error(cls: type[KafkaError], pos: int, resume: int | None, what: str) -> KafkaError:
    return entry_error(cls, f"record batch at position {pos} {what}", pos, resume)


def build_batch(
    records: Sequence[Record],
    *,
    compression: int = NO_COMPRESSION,
    log_append_time: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    transactional: bool = False,
    control: bool = False,
    base_offset: int | None = None,
    last_offset: int | None = None,
) -> bytes:
    """One batch of ``records`` (offsets increasing; the first one's timestamp is the batch's base, and its
    offset unless ``base_offset`` is given). With ``log_append_time`` it is a LogAppendTime batch whose
    maxTimestamp is that time. ``base_offset``/``last_offset`` keep a compacted batch's offsets (Kafka keeps
    them so a producer's sequence numbers stay)."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    first = records[0]
    base = first.offset if base_offset is None else base_offset
    _check_offsets(records, base)
    payload = b"".join(
        encode_record(r.offset - base, r.timestamp - first.timestamp, r.key, r.value, r.headers)
        for r in records
    )
    if compression != NO_COMPRESSION:
        payload = compress(compression, payload, CODECS_V2, magic=MAGIC)
    attributes = (
        compression
        | (TIMESTAMP_TYPE_MASK if log_append_time is not None else 0)
        | (TRANSACTIONAL_MASK if transactional else 0)
        | (CONTROL_MASK if control else 0)
    )
    max_timestamp = log_append_time if log_append_time is not None else max(r.timestamp for r in records)
    last_offset_delta = (records[-1].offset if last_offset is None else last_offset) - base
    fields = (attributes, last_offset_delta, first.timestamp, max_timestamp, producer_id, producer_epoch)
    return _framed(base, partition_leader_epoch, fields, base_sequence, len(records), payload)


def _framed(
    base_offset: int, leader_epoch: int, fields: tuple, base_sequence: int, count: int, payload: bytes
) -> bytes:
    after_crc = _AFTER_CRC.pack(*fields, base_sequence, count) + payload
    prefix = _PREFIX.pack(base_offset, MIN_BATCH_LENGTH + len(payload), leader_epoch, MAGIC)
    return prefix + _CRC.pack(crc32c(after_crc)) + after_crc


def build_plain_batch(
    pairs: Sequence[tuple[bytes | None, bytes | None]] | None,
    timestamp: int,
    compression: int = NO_COMPRESSION,
    *,
    values: Sequence[bytes | None] = (),
    key: bytes | None = None,
) -> bytes:
    """A producer's batch from offset 0: ``(key, value)`` pairs (or, with ``pairs`` None, ``values`` each with
    ``key``), every record stamped ``timestamp`` (CreateTime), no headers; the records are written by the
    native core when it is built (``build_batch`` writes the same bytes)."""
    lib = native.lib
    payload = None
    if lib is not None:
        try:
            if pairs is not None:
                payload, count = lib.build_records(pairs, 0)
            else:
                payload, count = lib.build_value_records(values, key, 0)
        except TypeError:  # not bytes-like: the pure path accepts or refuses them itself
            payload = None
    if payload is None:
        found = pairs if pairs is not None else [(key, v) for v in values]
        payload, count = b"".join(encode_record(i, 0, k, v) for i, (k, v) in enumerate(found)), len(found)
    if not count:
        raise ValueError("a record batch needs at least one record")
    if compression != NO_COMPRESSION:
        payload = compress(compression, payload, CODECS_V2, magic=MAGIC)
    fields = (compression, count - 1, timestamp, timestamp, NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    return _framed(0, NO_PARTITION_LEADER_EPOCH, fields, NO_SEQUENCE, count, payload)


def _check_offsets(records: Sequence[Record], base: int) -> None:
    if records[0].offset < base:
        raise ValueError(f"offset {records[0].offset} is below the batch's base offset {base}")
    for before, after in zip(records, records[1:], strict=False):
        if after.offset <= before.offset:
            raise ValueError(f"offset {after.offset} does not follow {before.offset} (offsets must increase)")
    if records[-1].offset - base > INT32_MAX:
        raise ValueError("the records' offsets span more than an int32 delta")
