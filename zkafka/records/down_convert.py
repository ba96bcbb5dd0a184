"""Magic-1 messages (0.10's format) and record batches (magic 2, 0.11's) converted to the 0.8/0.9 format.

A client that learnt from ApiVersions that the broker answers ApiVersions takes it for 0.10 or later and
may write magic-1 messages (kafka-python 2.x does, whatever Produce version it is allowed). zkafka's logs
hold magic 0, so the produce path converts them down first, as a 0.10 broker does for a topic whose
``message.format.version`` is 0.9.0: the timestamp and its type are dropped, the CRC is computed again, and
a compressed wrapper is decompressed, its inner messages converted, and compressed again with its codec.
An lz4 wrapper of magic 1 has the LZ4 spec's frame header checksum (KIP-57); it is written back with Kafka's
0.8.2 one, which magic 0 needs.

A set of record batches is converted as Kafka's LogValidator converts one for a log of an older message
format: each record becomes a v0 message (its key and value; its timestamp dropped), and a compressed batch
becomes one wrapper compressed again with the batch's codec (lz4 in 0.8's framing). What magic 0 cannot
hold is refused: a zstd batch (UNSUPPORTED_COMPRESSION_TYPE), a transactional batch or one with a producer
id (UNSUPPORTED_FOR_MESSAGE_FORMAT, Kafka's answer for toMagic < 2: idempotence needs a v2 log), a record
with headers (UNSUPPORTED_FOR_MESSAGE_FORMAT); what a client may never write is INVALID_RECORD: a control
batch, a count that disagrees with the batch's offsets, a set mixing batches with other entries. A CRC-32C
or record-level fault is CORRUPT_MESSAGE (``record_batch``).

Pure: bytes in, bytes out. Only a set whose first entry is magic 1 or 2 is converted (a producer writes one
format per set); any other set is returned as is, so the 0.8 path costs one byte comparison. Each wrapper or
batch inflates to at most ``max_inflated`` bytes (MessageSizeTooLargeError past that, before the rest of it
is inflated), as every other reader of wrappers does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from zkafka.errors import (
    InvalidRecordError,
    KafkaError,
    UnsupportedCompressionTypeError,
    UnsupportedForMessageFormatError,
)
from zkafka.records.compression import DEFAULT_MAX_INFLATED, NO_COMPRESSION, ZSTD, compress, decompress
from zkafka.records.format08 import LOG_OVERHEAD, build_message_set, encode_entry, encode_message
from zkafka.records.message_v1 import MAGIC as MAGIC_V1
from zkafka.records.message_v1 import decode_message
from zkafka.records.record_batch import MAGIC as MAGIC_V2
from zkafka.records.record_batch import BatchHeader, read_batch, read_batch_header

MAGIC_AT = LOG_OVERHEAD + 4  # int64 offset, int32 N, crc32
_HEAD = struct.Struct(">qiIBB")  # offset, N, crc, magic, attributes
_BATCH_PREFIX = struct.Struct(">qi")  # baseOffset, batchLength
_MESSAGE08_OVERHEAD = LOG_OVERHEAD + 14  # offset, N; crc, magic, attributes, key and value lengths


def first_magic(message_set: Any) -> int | None:
    """The magic byte of the set's first entry (None for a set too short to have one)."""
    return message_set[MAGIC_AT] if len(message_set) > MAGIC_AT else None


def is_magic1(message_set: Any) -> bool:
    """Whether the set's first entry is a magic-1 message."""
    return first_magic(message_set) == MAGIC_V1


def to_magic0(message_set: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> Any:
    """The set with every magic-1 entry or record batch rewritten as magic 0; a set that starts with neither
    comes back unchanged. A damaged entry raises InvalidMessageError, a wrapper or batch inflating past
    ``max_inflated`` bytes MessageSizeTooLargeError, what magic 0 cannot hold the errors the module docstring
    names; a partial tail is dropped (batches) or kept as is (the append drops it as any partial tail)."""
    magic = first_magic(message_set)
    if magic == MAGIC_V2:
        return batches_to_magic0(message_set, max_inflated)
    if magic != MAGIC_V1:
        return message_set
    data = bytes(message_set)
    out: list[bytes] = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD + 6:
        offset, size, _, magic, _ = _HEAD.unpack_from(data, pos)
        end = pos + LOG_OVERHEAD + size
        if size < 0 or end > len(data):
            break
        if magic != MAGIC_V1:
            out.append(data[pos:end])
        else:
            out.append(encode_entry(offset, _message_v0(data, pos, end, max_inflated)))
        pos = end
    out.append(data[pos:])
    return b"".join(out)


def _message_v0(data: bytes, pos: int, end: int, max_inflated: int) -> bytes:
    message = decode_message(data, pos, end)
    value = message.value
    if message.codec != NO_COMPRESSION and value is not None:
        inner = decompress(message.codec, value, max_inflated, magic=MAGIC_V1)
        value = compress(message.codec, to_magic0(inner, max_inflated - len(inner)))
    return encode_message(message.key, value, message.codec)


def batches_to_magic0(message_set: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> bytes:
    """Every whole record batch of the set as magic-0 entries: one message per record of a plain batch, one
    wrapper with the batch's codec per compressed batch. See the module docstring for what it refuses."""
    data = bytes(message_set)
    return b"".join(
        build_message_set(_record_pairs(data, pos, max_inflated), header.compression, header.base_offset)
        for pos, header in client_batches(data)
    )


def plain_batches_to_set08(data: bytes, next_offset: int, limit: int) -> tuple[bytes, int] | None:
    """The pure twin of the native core's ``batches_to_set08``: a set of whole plain record batches
    (uncompressed, no producer id, records without headers) checked and written as 0.8 messages numbered from
    ``next_offset``, every entry at most ``limit`` bytes, in one pass: ``(bytes, count)``. None for any other
    set, which ``to_magic0`` reads (and names what is wrong with)."""
    pairs: list[tuple[bytes | None, bytes | None]] = []
    end = 0
    try:
        for pos, header in client_batches(data):
            if header.compression != NO_COMPRESSION:
                return None
            pairs += _record_pairs(data, pos, limit)
            end = pos + header.size
    except KafkaError:
        return None
    if not pairs or end != len(data):  # no batch, or a partial tail: the general path reads the set
        return None
    if max(_MESSAGE08_OVERHEAD + len(k or b"") + len(v or b"") for k, v in pairs) > limit:
        return None
    return build_message_set(pairs, NO_COMPRESSION, next_offset), len(pairs)


def client_batches(data: bytes, to_magic: int = 0) -> Iterator[tuple[int, BatchHeader]]:
    """The position and header of each whole batch of a client's set, each checked by ``check_client_batch``
    for a log of ``to_magic``. Every entry must be a record batch (a set mixing formats is INVALID_RECORD); a
    partial trailing batch is left out, as the append drops any partial tail."""
    pos = 0
    while len(data) - pos > MAGIC_AT:
        if data[pos + MAGIC_AT] != MAGIC_V2:
            raise InvalidRecordError(f"entry at position {pos} has magic {data[pos + MAGIC_AT]} after a batch")
        _, batch_length = _BATCH_PREFIX.unpack_from(data, pos)
        if pos + LOG_OVERHEAD + batch_length > len(data):
            return
        header = read_batch_header(data, pos)  # refuses a batchLength below the smallest batch
        check_client_batch(header, pos, to_magic)
        yield pos, header
        pos += header.size


def _record_pairs(data: bytes, pos: int, max_inflated: int) -> list[tuple[bytes | None, bytes | None]]:
    """The key and value of each record of the batch at ``pos``; a record with headers is refused."""
    pairs = []
    for record in read_batch(data, pos, max_inflated).records:
        if record.headers:
            raise UnsupportedForMessageFormatError(
                f"record at offset {record.offset} of the batch at position {pos} has headers, which"
                " message format v0 cannot hold"
            )
        pairs.append((record.key, record.value))
    return pairs


def check_client_batch(header: BatchHeader, pos: int, to_magic: int = 0) -> None:
    """Refuse a batch a client may not write, or one with features a log of ``to_magic`` lacks (an idempotent
    batch below v2) or this broker does not serve (a transactional batch), in LogValidator's order."""
    where = f"record batch at position {pos}"
    if header.count <= 0 or header.last_offset_delta + 1 != header.count:
        raise InvalidRecordError(
            f"{where} declares {header.count} records over offsets 0..{header.last_offset_delta}"
        )
    if header.is_control:
        raise InvalidRecordError(f"{where} is a control batch, which clients may not write")
    if header.is_transactional:
        raise UnsupportedForMessageFormatError(f"{where} is transactional: this broker's logs do not take it")
    if header.has_producer_id and to_magic < MAGIC_V2:
        raise UnsupportedForMessageFormatError(
            f"{where} has producer id {header.producer_id} (idempotent): message format v{to_magic} cannot"
            " keep producer state (a log of message format v2 can)"
        )
    if header.compression == ZSTD and to_magic < MAGIC_V2:
        raise UnsupportedCompressionTypeError(f"{where} is zstd-compressed: message format v{to_magic} has no zstd")
