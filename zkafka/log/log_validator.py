"""What the leader does to a produced message set before it appends it, as Kafka's ``LogValidator``: check it,
bring it to the log's message format and give it offsets from the log end.

Record batches that need neither a codec nor a transaction nor, below v2, anything magic 0 lacks take the
native core's one pass (``_native_batch.c``: checked, given their offsets, in place or as 0.8 messages, no
per-record object); it returns the same bytes as the paths below, which read every other set.
A log of magic 0 takes the 0.8 path unchanged (``down_convert.to_magic0`` then ``format08.assign_offsets``,
the native core's hot path). A log of magic 2 given record batches keeps them as they are (in place: the
producer's codec and producer id/epoch/sequence untouched): each batch is read whole (its CRC-32C, count and
records checked), gets its base offset and the leader's epoch as its partitionLeaderEpoch (both before the
CRC, which covers the attributes onward), and has its maxTimestamp corrected, set to the append time for
``message.timestamp.type=LogAppendTime`` (the CRC written again when either changes).
Anything else is converted: the set's records (``convert.set_records``; magic-0 messages have timestamp -1)
become ONE entry of the log's magic with the codec of the set's last compressed entry, as Kafka converts
(a batch stamped with the leader's epoch).
``compression.type`` (broker or topic) other than ``producer`` and other than the set's codec: the records
are compressed again with it into one entry (a batch keeps its producer fields), as Kafka's LogValidator does.
Errors: a batch clients may not write INVALID_RECORD (87), damaged bytes CORRUPT_MESSAGE (2), transactional
batches, and idempotent ones to a log below v2, UNSUPPORTED_FOR_MESSAGE_FORMAT (43), an entry over
``max.message.bytes`` MESSAGE_TOO_LARGE (10). Pure: bytes in, bytes out.
"""

from __future__ import annotations

import struct
from typing import Any

from crc32c import crc32c

from zkafka.errors import MessageSizeTooLargeError
from zkafka.log.log_config import LogConfig
from zkafka.records import format08, native
from zkafka.records.convert import build_set, set_records
from zkafka.records.default_record import Record
from zkafka.records.down_convert import client_batches, first_magic, plain_batches_to_set08, to_magic0
from zkafka.records.format08 import AssignedSet
from zkafka.records.message_v1 import TIMESTAMP_TYPE_MASK
from zkafka.records.record_batch import ATTRIBUTES_AT, read_batch
from zkafka.records.record_batch import MAGIC as MAGIC_V2
from zkafka.records.record_batch import NO_PARTITION_LEADER_EPOCH as NO_EPOCH

_BASE_OFFSET = struct.Struct(">q")
_CRC = struct.Struct(">I")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_AT = 12
_ATTRIBUTES = struct.Struct(">h")
_MAX_TIMESTAMP = struct.Struct(">q")
_CRC_AT = 17
_MAX_TIMESTAMP_AT = 35


def validate_and_assign(
    message_set: Any, next_offset: int, config: LogConfig, now_ms: int, leader_epoch: int = NO_EPOCH
) -> AssignedSet:
    """The set checked, in the log's format, numbered from ``next_offset`` (batches stamped with
    ``leader_epoch``); a partial tail is dropped."""
    magic = config.message_format_magic
    limit = config.max_message_size
    given = first_magic(message_set)
    log_append_time = now_ms if config.log_append_time else None
    if config.compression is not None and given is not None:
        recompressed = _recompressed(
            bytes(message_set), given, config, next_offset, log_append_time, leader_epoch
        )
        if recompressed is not None:
            return recompressed
    if given == MAGIC_V2 and magic in (0, MAGIC_V2):
        plain = _plain_assign(native.lib, message_set, magic, next_offset, limit, log_append_time, leader_epoch)
        if plain is not None:
            return AssignedSet(plain[0], next_offset, next_offset + plain[1] - 1, plain[1])
    if magic == 0:
        return format08.assign_offsets(to_magic0(message_set, limit), next_offset, limit)
    data = bytes(message_set)
    if given is None:
        return AssignedSet(b"", next_offset, next_offset - 1, 0)
    if given == MAGIC_V2 and magic == MAGIC_V2:
        return assign_batches(data, next_offset, limit, log_append_time, leader_epoch)
    records, codec, producer = _set_records(data, given, magic, limit)
    return _one_entry(records, codec, producer, config, next_offset, log_append_time, leader_epoch)


def assign_batches(
    data: bytes, next_offset: int, limit: int, log_append_time: int | None, leader_epoch: int = NO_EPOCH
) -> AssignedSet:
    """Record batches kept as they are, given offsets from ``next_offset`` and ``leader_epoch`` (see the
    module docstring)."""
    out = bytearray()
    offset = next_offset
    for pos, header in client_batches(data, MAGIC_V2):
        _check_size(header.size, limit)
        records = read_batch(data, pos, limit).records
        batch = bytearray(data[pos : pos + header.size])
        _BASE_OFFSET.pack_into(batch, 0, offset)
        _LEADER_EPOCH.pack_into(batch, _LEADER_EPOCH_AT, leader_epoch)
        attributes, max_timestamp = header.attributes, max(r.timestamp for r in records)
        if log_append_time is not None:
            attributes, max_timestamp = attributes | TIMESTAMP_TYPE_MASK, log_append_time
        if (attributes, max_timestamp) != (header.attributes, header.max_timestamp):
            _ATTRIBUTES.pack_into(batch, ATTRIBUTES_AT, attributes)
            _MAX_TIMESTAMP.pack_into(batch, _MAX_TIMESTAMP_AT, max_timestamp)
            _CRC.pack_into(batch, _CRC_AT, crc32c(batch[ATTRIBUTES_AT:]))
        out += batch
        offset += header.count
    return AssignedSet(bytes(out), next_offset, offset - 1, offset - next_offset)


def _plain_assign(
    lib: Any | None,
    data: Any,
    magic: int,
    next_offset: int,
    limit: int,
    log_append_time: int | None,
    leader_epoch: int,
) -> tuple[bytes, int] | None:
    """One pass over a set of plain record batches (uncompressed, no transaction; towards magic 0 without
    headers or producer id): ``(bytes, count)``, or None for the general path to read the set. The native core
    takes both magics; without it a magic-0 log has the pure twin (``plain_batches_to_set08``)."""
    if lib is None:
        return plain_batches_to_set08(bytes(data), next_offset, limit) if magic == 0 else None
    if magic == MAGIC_V2:
        return lib.assign_batches(data, next_offset, limit, leader_epoch, log_append_time)
    return lib.batches_to_set08(data, next_offset, limit)


def _recompressed(
    data: bytes,
    given: int,
    config: LogConfig,
    next_offset: int,
    log_append_time: int | None,
    leader_epoch: int,
) -> AssignedSet | None:
    """``compression.type`` names a codec other than the set's (the last compressed entry's, as Kafka's
    sourceCodec): the records as one entry of the log's magic compressed with it, a batch keeping its
    producer's id, epoch and base sequence; None when the codecs agree (the paths above keep the set)."""
    records, codec, producer = _set_records(data, given, config.message_format_magic, config.max_message_size)
    if codec == config.compression:
        return None
    return _one_entry(
        records, config.compression, producer, config, next_offset, log_append_time, leader_epoch
    )


def _set_records(data: bytes, given: int, magic: int, limit: int) -> tuple[list[Record], int, tuple | None]:
    """The set's records, its codec (the last compressed entry's) and a batch's producer (see _batch_records)."""
    if given == MAGIC_V2:
        return _batch_records(data, magic, limit)
    records, codec = set_records(data, limit)
    return records, codec, None


def _one_entry(
    records: list[Record],
    codec: int,
    producer: tuple[int, int, int] | None,
    config: LogConfig,
    next_offset: int,
    log_append_time: int | None,
    leader_epoch: int,
) -> AssignedSet:
    """``records`` as one entry of the log's magic with ``codec``, numbered from ``next_offset``."""
    if not records:
        return AssignedSet(b"", next_offset, next_offset - 1, 0)
    converted = build_set(
        config.message_format_magic, records, codec, next_offset, log_append_time, producer, leader_epoch
    )
    _check_size(len(converted), config.max_message_size)
    return AssignedSet(converted, next_offset, next_offset + len(records) - 1, len(records))


def _batch_records(
    data: bytes, magic: int, limit: int
) -> tuple[list[Record], int, tuple[int, int, int] | None]:
    """The records of the set's batches, the last compressed one's codec, the first one's producer (id,
    epoch, base sequence; None when it has no producer id)."""
    records: list[Record] = []
    codec = 0
    producer = None
    for pos, header in client_batches(data, magic):
        records += read_batch(data, pos, limit).records
        codec = header.compression or codec
        if producer is None and header.producer_id >= 0:
            producer = (header.producer_id, header.producer_epoch, header.base_sequence)
    return records, codec, producer


def _check_size(size: int, limit: int) -> None:
    if size > limit:
        raise MessageSizeTooLargeError(
            f"an entry of {size} bytes (with its offset and size) exceeds max.message.bytes {limit}"
        )
