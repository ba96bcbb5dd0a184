"""The 0.8 entry format (message format v0) as ``FORMAT08``, and what the broker and clients do with it.

An entry is ``int64 offset | int32 N | crc32 | magic 0 | attributes | bytes key | bytes value``: the CRC
covers everything from the magic byte on, the codec is ``attributes & 0x07``, a null key or value has
length -1. Offsets are logical (message numbers) and assigned by the leader when it appends: plain
messages get theirs written in place; a set with any compressed entry becomes one new wrapper whose inner
messages carry absolute offsets and whose own offset is the last of them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from zkafka.errors import InvalidMessageError, KafkaError, MessageSizeTooLargeError, UnknownMagicByteError
from zkafka.records import native
from zkafka.records.compression import ALL_CODECS, DEFAULT_MAX_INFLATED, NO_COMPRESSION, compress
from zkafka.records.deep_iterator import decoded_messages, messages
from zkafka.records.entries import INT32, UINT32, EntryFormat, entry_error, spans, validate, walk

MAGIC = 0
LOG_OVERHEAD = 12  # int64 offset, int32 N
MIN_MESSAGE_SIZE = 14  # crc, magic, attributes, key length, value length
CODEC_MASK = 0x07
# A record batch (magic 2, ``record_batch``) shares the entry framing; its last offset is base + this delta.
_BATCH_MAGIC = 2
_MIN_BATCH_SIZE = 61
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_LAST_OFFSET_DELTA_AT = 23

OFFSET = struct.Struct(">q")
_ENTRY_HEAD = struct.Struct(">qiIBB")  # offset, N, crc, magic, attributes
_FAST_HEADER = struct.Struct(">8xiIBB")  # N, crc, magic, attributes
_MAGIC_ATTRIBUTES = struct.Struct(">BB")
_ENTRY_HEAD = struct.Struct(">qiI")  # offset, N, the message's CRC
_NULL_KEY_HEAD = _MAGIC_ATTRIBUTES.pack(MAGIC, 0) + b"\xff\xff\xff\xff"  # magic, attributes, a null key
_ENTRY_START = struct.Struct(">qiI")  # offset, N, crc
_unpack_int = INT32.unpack_from
_unpack_uint = UINT32.unpack_from
_unpack_offset = OFFSET.unpack_from
_unpack_offset_size = struct.Struct(">qi").unpack_from


class Message08(NamedTuple):
    """A 0.8 message as read: key and value (None when null), attributes, CRC."""

    key: bytes | None
    value: bytes | None
    attributes: int
    crc: int

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK


class MessageAndOffset08(NamedTuple):
    """A 0.8 message with its offset; a consumer fetches ``next_offset`` after it."""

    offset: int
    key: bytes | None
    value: bytes | None
    codec: int
    crc: int

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    # A message of magic 0 has no timestamp and no headers (as a record batch's records do: FetchedRecord)
    timestamp = property(lambda self: -1)
    timestamp_type = property(lambda self: -1)
    headers = property(lambda self: ())


class AssignedSet(NamedTuple):
    """A message set as the leader appends it: its bytes with offsets assigned, and what they are."""

    data: bytes
    first_offset: int
    last_offset: int
    count: int


class OffsetsOutOfOrderError(KafkaError):
    """A follower was handed entries whose offsets do not increase, or start below its log end."""


class Format08(EntryFormat):
    """0.8 entries (message format v0), logs in ``.log`` files."""

    name = "0.8"
    log_suffix = ".log"
    overhead = LOG_OVERHEAD
    size_at = 8
    magic_at = 16
    min_size = MIN_MESSAGE_SIZE
    codec_mask = CODEC_MASK
    codecs = ALL_CODECS
    fast_header = _FAST_HEADER
    crc_first = True
    fast_magic = MAGIC
    fast_min_size = MIN_MESSAGE_SIZE
    fast_crc_from = 16
    native_line = 8

    def size_problem(self, size: int, pos: int, base: int, partial: bool) -> KafkaError | None:
        if size < MIN_MESSAGE_SIZE:
            return entry_error(
                InvalidMessageError,
                f"message found with corrupt size {size} at position {base + pos} (the minimum is 14)",
                pos,
                None,
            )
        return None  # a partial trailing entry, even the first: normal in a fetch response

    def header(self, data: Any, pos: int, end: int) -> tuple[int, int, int, int]:
        magic, attributes = _MAGIC_ATTRIBUTES.unpack_from(data, pos + 16)
        if magic != MAGIC:
            raise entry_error(
                UnknownMagicByteError, f"magic byte {magic} at position {pos} is not 0", pos, end
            )
        return magic, attributes, _unpack_uint(data, pos + 12)[0], pos + 16

    def entry_offset(self, data: Any, pos: int, end: int, base: int) -> int:
        return _unpack_offset(data, pos)[0]

    def wrapper_offsets(self, pos: int, end: int, base: int, inner: list[int]) -> list[int]:
        return inner

    def wrapper_payload(self, data: Any, pos: int, end: int, body: Any) -> Any:
        value = key_value(data, pos, end)[1]
        if value is None:
            raise entry_error(
                InvalidMessageError, f"compressed message at position {pos} has no value", pos, end
            )
        return value

    def make_message(
        self, data: Any, pos: int, end: int, magic: int, attributes: int, crc: int, body: Any
    ) -> Message08:
        key, value = key_value(data, pos, end)
        return Message08(key, value, attributes, crc)

    def entry_limits(self, max_message_size: int) -> dict[int, int]:
        return {MAGIC: max_message_size}

    def too_large(self, entry_size: int, magic: int, max_message_size: int) -> KafkaError:
        return MessageSizeTooLargeError(
            f"message of {entry_size} bytes (with its offset and size) exceeds message.max.bytes {max_message_size}"
        )

    def inflate_limit(self, max_message_size: int) -> int:
        # The leader stores what a set holds as one wrapper: its inflated messages count against the limit
        # like a message does, so any consumer whose fetch size fits the largest message can read them.
        return max_message_size


FORMAT08 = Format08()


def key_value(data: Any, pos: int, end: int, fields_at: int = 18) -> tuple[bytes | None, bytes | None]:
    """Key and value of the entry at ``pos`` (None for a null one); they start ``fields_at`` bytes into it
    (magic 1 puts its timestamp before them)."""
    out = []
    at = pos + fields_at
    for _ in range(2):
        if at + 4 > end:
            raise entry_error(
                InvalidMessageError, f"message at position {pos}: a length field runs past its end", pos, end
            )
        (length,) = _unpack_int(data, at)
        at += 4
        if length < 0:
            out.append(None)
            continue
        if at + length > end:
            raise entry_error(
                InvalidMessageError,
                f"message at position {pos}: a length of {length} runs past its end",
                pos,
                end,
            )
        out.append(bytes(data[at : at + length]))
        at += length
    return out[0], out[1]


def encode_message(key: bytes | None, value: bytes | None, attributes: int = 0) -> bytes:
    """The bytes of one message (no offset, no N)."""
    body = _MAGIC_ATTRIBUTES.pack(MAGIC, attributes) + bytes_field(key) + bytes_field(value)
    return UINT32.pack(zlib.crc32(body)) + body


def bytes_field(value: bytes | None) -> bytes:
    """``value`` as messages of magic 0 and 1 hold a key or value: int32 length (-1: null), the bytes."""
    return b"\xff\xff\xff\xff" if value is None else INT32.pack(len(value)) + bytes(value)


def encode_entry(offset: int, message: bytes) -> bytes:
    return OFFSET.pack(offset) + INT32.pack(len(message)) + message


def build_message_set(
    messages: Iterable[tuple[bytes | None, bytes | None]], codec: int = NO_COMPRESSION, base_offset: int = 0
) -> bytes:
    """A message set of ``(key, value)`` pairs as a producer sends it.

    Uncompressed: entries with offsets ``base_offset``, +1, ... Compressed: one wrapper (null key) whose
    inner entries carry ``base_offset``... and whose own offset is the last of them.
    """
    lib = native.lib
    if lib is not None:
        messages = messages if isinstance(messages, list | tuple) else list(messages)
        try:
            inner, count = lib.build_set08(messages, base_offset)
        except TypeError:  # not (bytes-like | None) pairs: the pure path accepts or refuses them itself
            inner = None
    if lib is None or inner is None:
        inner, count = _plain_entries(messages, base_offset)
    if codec == NO_COMPRESSION or not inner:
        return inner
    return _wrap(inner, codec, base_offset + count - 1)


def _plain_entries(
    messages: Iterable[tuple[bytes | None, bytes | None]], base_offset: int
) -> tuple[bytes, int]:
    """The pure path of ``build_message_set``'s entries: each one's head packed in one call, its CRC after."""
    out = []
    head, crc32 = _ENTRY_HEAD.pack, zlib.crc32
    for offset, (key, value) in enumerate(messages, base_offset):
        if key is None and value is not None:
            body = b"".join((_NULL_KEY_HEAD, INT32.pack(len(value)), value))
        else:
            body = _MAGIC_ATTRIBUTES.pack(MAGIC, 0) + bytes_field(key) + bytes_field(value)
        out += (head(offset, len(body) + 4, crc32(body)), body)
    return b"".join(out), len(out) // 2


def build_value_set(
    values: Sequence[bytes | None],
    key: bytes | None = None,
    codec: int = NO_COMPRESSION,
    base_offset: int = 0,
) -> bytes:
    """``build_message_set`` of ``(key, value)`` for each value: a producer's batch sharing one key."""
    lib = native.lib
    if lib is not None:
        try:
            inner, count = lib.build_values08(values, key, base_offset)
        except TypeError:  # not bytes-like values: the pure path accepts or refuses them itself
            lib = None
    if lib is None:
        head = _MAGIC_ATTRIBUTES.pack(MAGIC, 0) + bytes_field(key)  # the same for every value
        pack_entry, crc32 = _ENTRY_START.pack, zlib.crc32
        parts = []
        for i, value in enumerate(values):
            body = head + bytes_field(value)
            parts += (pack_entry(base_offset + i, len(body) + 4, crc32(body)), body)
        inner = b"".join(parts)
        count = len(parts) // 2
    if codec == NO_COMPRESSION or not inner:
        return inner
    return _wrap(inner, codec, base_offset + count - 1)


def _wrap(inner: bytes, codec: int, offset: int) -> bytes:
    return encode_entry(offset, encode_message(None, compress(codec, inner), codec & CODEC_MASK))


def entries(buf: Any) -> Iterator[tuple[int, int, int]]:
    """``(offset, position, entry size)`` of each whole top-level entry, reading only offsets and lengths (a
    record batch's offset is its last one, as a wrapper's is)."""
    for pos, size in spans(buf, FORMAT08):
        yield entry_offset(buf, pos, size), pos, size


def entry_offset(buf: Any, pos: int, size: int) -> int:
    """The offset of the whole entry of ``size`` bytes at ``pos``: the last one it holds (a record batch's
    base offset plus its lastOffsetDelta)."""
    (offset,) = _unpack_offset(buf, pos)
    if size >= _MIN_BATCH_SIZE and buf[pos + 16] == _BATCH_MAGIC:
        last = offset + _unpack_int(buf, pos + _LAST_OFFSET_DELTA_AT)[0]
        if not _INT64_MIN <= last <= _INT64_MAX:  # a damaged batch's: the sum wraps, as a Java long's does
            last = (last - _INT64_MIN) % 2**64 + _INT64_MIN
        return last
    return offset


def find_offset(buf: Any, target: int, start: int = 0, end: int | None = None) -> tuple[int, int] | None:
    """``(offset, position)`` of the first whole top-level entry in ``buf[start:end]`` whose offset (a record
    batch's: its last) is at or past ``target`` (None if there is none): the log's search after an index lookup, reading only headers.

    Stops, like ``spans``, at a partial entry or a size below the smallest message.
    """
    lib = native.lib
    if lib is not None:
        return lib.find_offset08(buf, target, start, -1 if end is None else end)
    end = len(buf) if end is None else end
    pos = start
    while end - pos >= LOG_OVERHEAD:
        offset, size = _unpack_offset_size(buf, pos)
        if size < MIN_MESSAGE_SIZE or pos + LOG_OVERHEAD + size > end:
            return None
        if buf[pos + 16] == _BATCH_MAGIC:
            offset = entry_offset(buf, pos, LOG_OVERHEAD + size)
        if offset >= target:
            return offset, pos
        pos += LOG_OVERHEAD + size
    return None


def iter_messages(
    buf: Any, start_offset: int = 0, deep: bool = True, max_inflated: int = DEFAULT_MAX_INFLATED
) -> Iterator[MessageAndOffset08]:
    """The messages of a set with the 0.8 rules, skipping those before ``start_offset`` (a fetch that lands
    inside a wrapper gets the wrapper's earlier messages too); a wrapper inflating to more than
    ``max_inflated`` bytes raises MessageSizeTooLargeError."""
    data = buf if type(buf) is bytes else bytes(buf)
    if native.lib is not None:
        return decoded_messages(data, FORMAT08, 0, deep, _LAYOUT, _with_offset, start_offset, max_inflated)
    return (
        MessageAndOffset08(offset, message.key, message.value, message.codec, message.crc)
        for offset, message in messages(data, FORMAT08, 0, deep, max_inflated=max_inflated)
        if offset >= start_offset
    )


def _with_offset(offset: int, message: Message08) -> MessageAndOffset08:
    return MessageAndOffset08(offset, message.key, message.value, message.codec, message.crc)


_LAYOUT = native.layout(MessageAndOffset08, ("offset", "key", "value", "codec", "crc"))


def assign_offsets(buf: Any, next_offset: int, max_message_size: int | None = None) -> AssignedSet:
    """The leader's append: validate (size limit, CRCs), drop a partial tail, then assign offsets from
    ``next_offset``: in place when nothing is compressed; else every message goes into ONE new wrapper with
    the codec of the last compressed entry, absolute inner offsets and the last of them as its own."""
    lib = native.lib
    if lib is not None:  # a set of whole plain entries (what producers send) in one call
        limit = -1 if max_message_size is None else FORMAT08.entry_limits(max_message_size)[MAGIC]
        plain = lib.assign08(buf, next_offset, limit)
        if plain is not None:
            return AssignedSet(plain[0], next_offset, next_offset + plain[1] - 1, plain[1])
    data = buf if type(buf) is bytes else bytes(buf)
    valid = validate(data, FORMAT08, max_message_size).valid_bytes
    out = bytearray(data[:valid])
    if lib is not None:
        offset, codec = lib.stamp_offsets(out, next_offset)
    else:
        offset = next_offset
        codec = NO_COMPRESSION
        for pos, _ in spans(out, FORMAT08):
            OFFSET.pack_into(out, pos, offset)
            offset += 1
            codec = out[pos + 17] & CODEC_MASK or codec
    if codec == NO_COMPRESSION:
        return AssignedSet(bytes(out), next_offset, offset - 1, offset - next_offset)
    limit = FORMAT08.inflate_limit(max_message_size) if max_message_size is not None else DEFAULT_MAX_INFLATED
    found = messages(data[:valid], FORMAT08, max_inflated=limit)
    inner = [encode_message(m.key, m.value, m.attributes) for _, m in found]
    if not inner:
        return AssignedSet(b"", next_offset, next_offset - 1, 0)
    last = next_offset + len(inner) - 1
    inner_set = b"".join(encode_entry(next_offset + i, m) for i, m in enumerate(inner))
    if len(inner_set) > limit:
        raise MessageSizeTooLargeError(
            f"the {len(inner)} messages of the set take {len(inner_set)} bytes inflated, over the limit of {limit}"
        )
    wrapper = _wrap(inner_set, codec, last)
    if max_message_size is not None and len(wrapper) > max_message_size:
        raise FORMAT08.too_large(len(wrapper), MAGIC, max_message_size)
    return AssignedSet(wrapper, next_offset, last, len(inner))


def check_follower_offsets(buf: Any, log_end_offset: int) -> tuple[int, int]:
    """A follower's append keeps the leader's offsets: top-level offsets must increase strictly and start at
    or after ``log_end_offset``. Returns the first and last top-level offsets (as 0.8.2 does, a wrapper counts
    with its own offset, the last inside it); ``(log_end_offset, log_end_offset - 1)`` for an empty set. The
    native core reads a set ``buf`` whose entries are whole and valid from the headers alone."""
    lib = native.lib
    if lib is not None:
        found = lib.top_offsets08(buf)
        if found is None:
            return log_end_offset, log_end_offset - 1
        first, last, ordered = found
        if ordered and first >= log_end_offset:
            return first, last
        # out of order: the walk below says where
    first = last = None
    for pos, _, _, _, _, _ in walk(buf, FORMAT08):
        (offset,) = _unpack_offset(buf, pos)
        if first is None:
            first = offset
            if offset < log_end_offset:
                raise OffsetsOutOfOrderError(
                    f"first offset {offset} is below the log end offset {log_end_offset}"
                )
        elif offset <= last:
            raise OffsetsOutOfOrderError(f"offset {offset} at position {pos} does not follow {last}")
        last = offset
    if first is None:
        return log_end_offset, log_end_offset - 1
    return first, last
