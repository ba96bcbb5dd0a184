"""Magic-1 messages (0.10's format: a timestamp after the attributes) converted to the 0.8/0.9 format.

A client that learnt from ApiVersions that the broker answers ApiVersions takes it for 0.10 or later and
may write magic-1 messages (kafka-python 2.x does, whatever Produce version it is allowed). zkafka's logs
hold magic 0, so the produce path converts them down first, as a 0.10 broker does for a topic whose
``message.format.version`` is 0.9.0: the timestamp and its type are dropped, the CRC is computed again, and
a compressed wrapper is decompressed, its inner messages converted, and compressed again with its codec.
An lz4 wrapper of magic 1 has the LZ4 spec's frame header checksum (KIP-57); it is written back with Kafka's
0.8.2 one, which magic 0 needs.

Pure: bytes in, bytes out. Only a set whose first entry is magic 1 is converted (a producer writes one
format per set); any other set is returned as is, so the 0.8 path costs one byte comparison. Each wrapper
inflates to at most ``max_inflated`` bytes (MessageSizeTooLargeError past that, before the rest of it is
inflated), as every other reader of wrappers does.
"""

from __future__ import annotations

import struct
from typing import Any

from zkafka.records.compression import DEFAULT_MAX_INFLATED, NO_COMPRESSION, compress, decompress
from zkafka.records.format08 import LOG_OVERHEAD, encode_entry, encode_message
from zkafka.records.message_v1 import MAGIC as MAGIC_V1
from zkafka.records.message_v1 import decode_message

MAGIC_AT = LOG_OVERHEAD + 4  # int64 offset, int32 N, crc32
_HEAD = struct.Struct(">qiIBB")  # offset, N, crc, magic, attributes


def is_magic1(message_set: Any) -> bool:
    """Whether the set's first entry is a magic-1 message."""
    return len(message_set) > MAGIC_AT and message_set[MAGIC_AT] == MAGIC_V1


def to_magic0(message_set: Any, max_inflated: int = DEFAULT_MAX_INFLATED) -> Any:
    """The set with every magic-1 entry rewritten as magic 0 (offsets kept); a set that does not start with a
    magic-1 entry comes back unchanged. A damaged magic-1 entry raises InvalidMessageError, a wrapper
    inflating past ``max_inflated`` bytes MessageSizeTooLargeError; a partial tail is kept as is (the append
    drops it as it drops any partial tail)."""
    if not is_magic1(message_set):
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
