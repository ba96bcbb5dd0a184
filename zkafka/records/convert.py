"""Converting a message set between message formats, as Kafka's ``LogValidator`` (produce) and
``RecordsUtil.downConvert`` (fetch) do.

Produce: ``set_records`` reads a set of any magic into records (a magic-0 message has no timestamp: -1) and
the codec of its last compressed entry; ``build_set`` writes records as one entry of the log's magic: one
record batch, or messages (one wrapper when compressed). What the target cannot hold is refused: headers and
zstd below magic 2 (UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_COMPRESSION_TYPE).

Fetch: ``down_convert`` rewrites each entry of a fetched region whose magic is above what the request version
reads, one entry per entry, keeping offsets, timestamps and the codec: headers are dropped, control batches
skipped, a plain batch's records before the fetch offset left out (Kafka's rules); a zstd batch cannot go
below magic 2 (UNSUPPORTED_COMPRESSION_TYPE). Pure: bytes in, bytes out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zkafka.errors import UnsupportedCompressionTypeError, UnsupportedForMessageFormatError
from zkafka.records import format08, message_v1
from zkafka.records.compression import ALL_CODECS, DEFAULT_MAX_INFLATED, NO_COMPRESSION, ZSTD, compress
from zkafka.records.default_record import Record
from zkafka.records.entries import spans
from zkafka.records.format08 import CODEC_MASK, FORMAT08, encode_entry
from zkafka.records.message_v1 import LOG_APPEND_TIME, NO_TIMESTAMP
from zkafka.records.record_batch import MAGIC as MAGIC_V2
from zkafka.records.record_batch import build_batch, read_batch, read_batch_header

MAGIC_AT = 16  # an entry's magic byte: after the offset, the size and the CRC


def set_records(data: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> tuple[list[Record], int]:
    """The records of a magic-0 or magic-1 set (wrappers expanded) and the codec of its last compressed
    entry; a damaged entry raises InvalidMessageError."""
    codec = NO_COMPRESSION
    for pos, _ in spans(data, FORMAT08):
        codec = data[pos + MAGIC_AT + 1] & CODEC_MASK or codec
    if data[MAGIC_AT] == message_v1.MAGIC:
        found = message_v1.iter_messages(data, max_inflated)
        return [Record(offset, m.timestamp, m.key, m.value) for offset, m in found], codec
    found08 = format08.iter_messages(data, max_inflated=max_inflated)
    return [Record(m.offset, NO_TIMESTAMP, m.key, m.value) for m in found08], codec


def build_set(
    magic: int,
    records: Sequence[Record],
    codec: int,
    base_offset: int,
    log_append_time: int | None = None,
    producer: tuple[int, int, int] | None = None,
    leader_epoch: int = -1,
) -> bytes:
    """``records`` renumbered from ``base_offset`` as one entry of ``magic`` with ``codec`` (LogAppendTime
    stamps every record with ``log_append_time``); ``producer`` (id, epoch, base sequence) and
    ``leader_epoch`` (its partitionLeaderEpoch) go into a batch."""
    numbered = [r._replace(offset=base_offset + i) for i, r in enumerate(records)]
    if magic == MAGIC_V2:
        pid, epoch, sequence = producer or (-1, -1, -1)
        return build_batch(
            numbered,
            compression=codec,
            log_append_time=log_append_time,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=sequence,
            partition_leader_epoch=leader_epoch,
        )
    check_legacy(magic, numbered, codec)
    return legacy_set(magic, numbered, codec, log_append_time)


def check_legacy(magic: int, records: Sequence[Record], codec: int) -> None:
    """Refuse what messages of ``magic`` (0 or 1) cannot hold: zstd, record headers."""
    if codec == ZSTD:
        raise UnsupportedCompressionTypeError(f"message format v{magic} has no zstd")
    for record in records:
        if record.headers:
            raise UnsupportedForMessageFormatError(
                f"record at offset {record.offset} has headers, which message format v{magic} cannot hold"
            )


def legacy_set(
    magic: int, records: Sequence[Record], codec: int, log_append_time: int | None = None
) -> bytes:
    """``records`` (offsets as they are, headers ignored) as magic-0 or magic-1 messages; compressed: one
    wrapper whose offset is the last record's, its inner offsets absolute (magic 0) or relative (magic 1)."""
    if not records:
        return b""
    if magic == message_v1.MAGIC:
        attributes = message_v1.attributes_of(NO_COMPRESSION, int(log_append_time is not None))
        base = records[0].offset if codec != NO_COMPRESSION else 0
        stamp = (lambda r: log_append_time) if log_append_time is not None else (lambda r: r.timestamp)
        inner = b"".join(
            encode_entry(r.offset - base, message_v1.encode_message(r.key, r.value, stamp(r), attributes))
            for r in records
        )
        if codec == NO_COMPRESSION:
            return inner
        wrapper_time = log_append_time if log_append_time is not None else max(r.timestamp for r in records)
        wrapper_attributes = message_v1.attributes_of(codec, int(log_append_time is not None))
        payload = compress(codec, inner, ALL_CODECS, magic=message_v1.MAGIC)
        wrapper = message_v1.encode_message(None, payload, wrapper_time, wrapper_attributes)
        return encode_entry(records[-1].offset, wrapper)
    inner = b"".join(encode_entry(r.offset, format08.encode_message(r.key, r.value)) for r in records)
    if codec == NO_COMPRESSION:
        return inner
    return encode_entry(records[-1].offset, format08.encode_message(None, compress(codec, inner), codec))


def down_convert(
    data: Any, to_magic: int, first_offset: int = 0, max_inflated: int = DEFAULT_MAX_INFLATED
) -> bytes:
    """The whole entries of a fetched region with every entry above ``to_magic`` converted down (see the
    module docstring); a region whose first entry is partial comes back as it is (the reader asks for more)."""
    out = []
    end = 0
    for pos, size in spans(data, FORMAT08):
        end = pos + size
        magic = data[pos + MAGIC_AT]
        if magic <= to_magic:
            out.append(bytes(data[pos:end]))
        elif magic == MAGIC_V2:
            out.append(_batch_down(data, pos, to_magic, first_offset, max_inflated))
        else:
            out.append(_message_v1_down(data, pos, end, max_inflated))
    return b"".join(out) if end else bytes(data)


def _batch_down(data: Any, pos: int, to_magic: int, first_offset: int, max_inflated: int) -> bytes:
    header = read_batch_header(data, pos)
    if header.is_control:
        return b""
    if header.compression == ZSTD:
        raise UnsupportedCompressionTypeError(
            "down-conversion of zstandard-compressed batches is not supported"
        )
    records = read_batch(data, pos, max_inflated).records
    if header.compression == NO_COMPRESSION:
        records = [r for r in records if r.offset >= first_offset]
    log_append_time = header.max_timestamp if header.timestamp_type == LOG_APPEND_TIME else None
    return legacy_set(to_magic, records, header.compression, log_append_time)


def _message_v1_down(data: Any, pos: int, end: int, max_inflated: int) -> bytes:
    message = message_v1.decode_message(data, pos, end)
    if message.codec == NO_COMPRESSION:
        (offset,) = format08.OFFSET.unpack_from(data, pos)
        return encode_entry(offset, format08.encode_message(message.key, message.value))
    inner = message_v1.wrapper_messages(data, pos, end, message, max_inflated)
    records = [Record(offset, m.timestamp, m.key, m.value) for offset, m in inner]
    return legacy_set(0, records, message.codec)


def entry_records(entry: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> list[Record]:
    """The records of one whole entry of any magic, a wrapper's expanded (a magic-0 message: timestamp -1)."""
    if entry[MAGIC_AT] == MAGIC_V2:
        return read_batch(entry, 0, max_inflated).records
    if entry[MAGIC_AT] == message_v1.MAGIC:
        return [
            Record(o, m.timestamp, m.key, m.value) for o, m in message_v1.iter_messages(entry, max_inflated)
        ]
    found = format08.iter_messages(entry, max_inflated=max_inflated)
    return [Record(m.offset, NO_TIMESTAMP, m.key, m.value) for m in found]


def retained_entry(entry: Any, kept: Sequence[Record]) -> bytes:
    """One whole entry rewritten to hold only ``kept`` of its records (the log cleaner), as Kafka's
    ``filterTo``: a batch keeps its base and last offsets, producer fields, codec and timestamp type; a
    wrapper is compressed again with its codec."""
    if entry[MAGIC_AT] == MAGIC_V2:
        h = read_batch_header(entry)
        return build_batch(
            kept,
            compression=h.compression,
            log_append_time=h.max_timestamp if h.timestamp_type == LOG_APPEND_TIME else None,
            producer_id=h.producer_id,
            producer_epoch=h.producer_epoch,
            base_sequence=h.base_sequence,
            partition_leader_epoch=h.partition_leader_epoch,
            transactional=h.is_transactional,
            base_offset=h.base_offset,
            last_offset=h.last_offset,
        )
    log_append_time = None
    if entry[MAGIC_AT] == message_v1.MAGIC:
        wrapper = message_v1.decode_message(entry, 0, len(entry))
        log_append_time = wrapper.timestamp if wrapper.timestamp_type == LOG_APPEND_TIME else None
    return legacy_set(entry[MAGIC_AT], kept, entry[MAGIC_AT + 1] & CODEC_MASK, log_append_time)
