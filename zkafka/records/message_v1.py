"""Message format v1 (magic 1, Kafka 0.10, KIP-31/KIP-32): the v0 message with a timestamp.

An entry is ``int64 offset | int32 N | uint32 crc | int8 magic = 1 | int8 attributes | int64 timestamp |
int32 key length | key | int32 value length | value`` (a length of -1: null), the CRC-32 over everything from
the magic byte on, as in v0. Attributes: the codec in bits 0-2, the timestamp type in bit 3 (0: CreateTime,
1: LogAppendTime). A compressed wrapper (KIP-31) holds its messages with relative offsets 0, 1, ... and has
the absolute offset of the last as its own; its timestamp is the largest inside (CreateTime) or the time the
log appended it (LogAppendTime), which then is every inner message's timestamp. Its LZ4 frames carry the LZ4
spec's header checksum (KIP-57).

Pure: bytes in, values out; the entry framing and the v0 key/value fields are ``format08``'s. The 0.8 line's
logs do not hold this format: the produce path converts it down (``down_convert``).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from zkafka.errors import InvalidMessageError, UnknownMagicByteError
from zkafka.records.compression import ALL_CODECS, DEFAULT_MAX_INFLATED, NO_COMPRESSION, compress, decompress
from zkafka.records.entries import UINT32, entry_error, spans
from zkafka.records.format08 import (
    CODEC_MASK,
    FORMAT08,
    LOG_OVERHEAD,
    OFFSET,
    bytes_field,
    encode_entry,
    key_value,
)

MAGIC = 1
TIMESTAMP_TYPE_MASK = 0x08
CREATE_TIME = 0
LOG_APPEND_TIME = 1
NO_TIMESTAMP = -1
MIN_MESSAGE_SIZE = 22  # crc, magic, attributes, timestamp, key length, value length
_HEAD = struct.Struct(">BBq")  # magic, attributes, timestamp
_FIELDS_AT = LOG_OVERHEAD + 4 + _HEAD.size  # where the key length sits in an entry


class MessageV1(NamedTuple):
    """A magic-1 message as read: key and value (None when null), attributes, timestamp, CRC."""

    key: bytes | None
    value: bytes | None
    attributes: int
    timestamp: int
    crc: int

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        """CREATE_TIME or LOG_APPEND_TIME."""
        return (self.attributes & TIMESTAMP_TYPE_MASK) >> 3


def attributes_of(codec: int, timestamp_type: int = CREATE_TIME) -> int:
    """The attributes byte of a magic-1 message."""
    return (codec & CODEC_MASK) | (TIMESTAMP_TYPE_MASK if timestamp_type == LOG_APPEND_TIME else 0)


def encode_message(key: bytes | None, value: bytes | None, timestamp: int, attributes: int = 0) -> bytes:
    """The bytes of one magic-1 message (no offset, no N)."""
    body = _HEAD.pack(MAGIC, attributes, timestamp) + bytes_field(key) + bytes_field(value)
    return UINT32.pack(zlib.crc32(body)) + body


def decode_message(data: Any, pos: int, end: int) -> MessageV1:
    """The magic-1 message of the entry at ``pos`` (ending at ``end``), its CRC checked.

    Raises InvalidMessageError for an entry too short, a CRC mismatch or a length running past its end, and
    UnknownMagicByteError when its magic byte is not 1.
    """
    if end - pos < LOG_OVERHEAD + MIN_MESSAGE_SIZE:
        raise entry_error(
            InvalidMessageError,
            f"magic-1 message at position {pos} is truncated ({end - pos - LOG_OVERHEAD} bytes, the minimum"
            f" is {MIN_MESSAGE_SIZE})",
            pos,
            end,
        )
    (crc,) = UINT32.unpack_from(data, pos + LOG_OVERHEAD)
    magic, attributes, timestamp = _HEAD.unpack_from(data, pos + LOG_OVERHEAD + 4)
    if magic != MAGIC:
        raise entry_error(UnknownMagicByteError, f"magic byte {magic} at position {pos} is not 1", pos, end)
    if zlib.crc32(data[pos + LOG_OVERHEAD + 4 : end]) != crc:
        raise entry_error(InvalidMessageError, f"magic-1 message at position {pos} fails its CRC check", pos, end)
    key, value = key_value(data, pos, end, _FIELDS_AT)
    return MessageV1(key, value, attributes, timestamp, crc)


def build_message_set(
    messages: Sequence[tuple[bytes | None, bytes | None, int]],
    codec: int = NO_COMPRESSION,
    base_offset: int = 0,
    log_append_time: int | None = None,
) -> bytes:
    """A magic-1 set of ``(key, value, timestamp)`` messages with offsets from ``base_offset``.

    With ``log_append_time`` the messages are LogAppendTime ones with that timestamp. Compressed: one wrapper
    holding them with relative offsets, its own offset the last absolute one, its timestamp the largest.
    """
    timestamp_type = CREATE_TIME if log_append_time is None else LOG_APPEND_TIME
    attributes = attributes_of(NO_COMPRESSION, timestamp_type)
    stamped = [(k, v, t if log_append_time is None else log_append_time) for k, v, t in messages]
    first = 0 if codec != NO_COMPRESSION else base_offset
    inner = b"".join(
        encode_entry(first + i, encode_message(key, value, timestamp, attributes))
        for i, (key, value, timestamp) in enumerate(stamped)
    )
    if codec == NO_COMPRESSION or not stamped:
        return inner
    wrapper_timestamp = max(timestamp for _, _, timestamp in stamped)
    payload = compress(codec, inner, ALL_CODECS, magic=MAGIC)
    wrapper = encode_message(None, payload, wrapper_timestamp, attributes_of(codec, timestamp_type))
    return encode_entry(base_offset + len(stamped) - 1, wrapper)


def iter_messages(data: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> Iterator[tuple[int, MessageV1]]:
    """``(offset, message)`` of every message of a magic-1 set, wrappers expanded (each inflating to at most
    ``max_inflated`` bytes) with absolute offsets and, for LogAppendTime, the wrapper's timestamp. A partial
    trailing entry ends the set."""
    for pos, size in spans(data, FORMAT08, strict=True):
        message = decode_message(data, pos, pos + size)
        if message.codec == NO_COMPRESSION:
            yield OFFSET.unpack_from(data, pos)[0], message
        else:
            yield from wrapper_messages(data, pos, pos + size, message, max_inflated)


def wrapper_messages(
    data: Any, pos: int, end: int, wrapper: MessageV1, max_inflated: int = DEFAULT_MAX_INFLATED
) -> list[tuple[int, MessageV1]]:
    """The messages of the wrapper at ``pos`` with their absolute offsets (KIP-31), all read before any is
    returned. A wrapper with no value or no messages, a compressed or truncated inner message, or a wrapper
    offset below the last relative one raises InvalidMessageError."""
    if wrapper.value is None:
        raise _bad_wrapper(pos, end, "has no value")
    inner_set = decompress(wrapper.codec, wrapper.value, max_inflated, ALL_CODECS, magic=MAGIC)
    inner: list[tuple[int, MessageV1]] = []
    read = 0
    for at, size in spans(inner_set, FORMAT08, strict=True):
        message = decode_message(inner_set, at, at + size)
        if message.codec != NO_COMPRESSION:
            raise _bad_wrapper(pos, end, "holds a compressed message")
        inner.append((OFFSET.unpack_from(inner_set, at)[0], message))
        read = at + size
    if read != len(inner_set):
        raise _bad_wrapper(pos, end, "ends with a truncated message")
    if not inner:
        raise _bad_wrapper(pos, end, "holds no messages")
    (wrapper_offset,) = OFFSET.unpack_from(data, pos)
    last = inner[-1][0]
    if wrapper_offset != 0 and wrapper_offset < last:  # 0: some librdkafka versions write that
        raise _bad_wrapper(pos, end, f"has offset {wrapper_offset}, below its last relative offset {last}")
    base = 0 if wrapper_offset == 0 else wrapper_offset - last
    if wrapper.timestamp_type == LOG_APPEND_TIME:
        return [
            (base + relative, m._replace(timestamp=wrapper.timestamp, attributes=m.attributes | TIMESTAMP_TYPE_MASK))
            for relative, m in inner
        ]
    return [(base + relative, m) for relative, m in inner]


def _bad_wrapper(pos: int, end: int, what: str) -> InvalidMessageError:
    return entry_error(InvalidMessageError, f"compressed magic-1 message at position {pos} {what}", pos, end)
