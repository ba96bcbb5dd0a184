"""What the 0.8 high-level consumer's streams hand out: ``MessageAndMetadata08``, decoded by ``decode_chunk08``.

The streams themselves are the 0.7 ``KafkaStream`` (with its ownership rule: nothing of a partition the
consumer gave up is handed out); only the items differ. A 0.8 message has a key, logical offsets, and the
consumer resumes at ``offset + 1`` (``next_offset``). A fetch answer is raw log bytes: a compressed wrapper
may hold messages before the fetch offset (skipped), and its last entry may be cut short (not a message:
the next fetch starts there).
"""

from __future__ import annotations

import gc
import struct
import zlib
from typing import NamedTuple

from zkafka.consumer.stream import _in_partition
from zkafka.errors import KafkaError
from zkafka.records import native
from zkafka.records.compression import DEFAULT_MAX_INFLATED
from zkafka.records.entries import entry_messages, walk
from zkafka.records.format08 import CODEC_MASK, FORMAT08, MIN_MESSAGE_SIZE, key_value
from zkafka.records.native_runs import DONE, WALK, decode_in_place

_unpack_offset = struct.Struct(">q").unpack_from
_unpack_int = struct.Struct(">i").unpack_from
_HEAD = struct.Struct(">qiIBBi")  # offset, N, crc, magic, attributes, key length
_HEAD_SIZE = _HEAD.size + 4  # and the value length: the smallest whole entry
_unpack_head = _HEAD.unpack_from


class MessageAndMetadata08(NamedTuple):
    """A consumed 0.8 message: key and message (the value; None when null), topic, partition id, offset."""

    key: bytes | None
    message: bytes | None
    topic: str
    partition: int
    offset: int

    @property
    def value(self) -> bytes | None:
        return self.message

    @property
    def next_offset(self) -> int:
        """The offset a consumer resumes from after this message."""
        return self.offset + 1


_new_item = tuple.__new__
_LAYOUT = native.layout(MessageAndMetadata08, ("key", "value", 0, 1, "offset"))  # constants: topic, partition


def decode_chunk08(
    data: bytes | memoryview,
    fetch_offset: int,
    topic: str,
    partition: int,
    start: int = 0,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    max_items: int = -1,
) -> tuple[list[MessageAndMetadata08], KafkaError | None, int | None, int]:
    """Decode a fetched message set from byte ``start``: ``(items, error, resume, next_offset)``.

    ``items`` are the messages at or past ``fetch_offset`` before the first bad entry; ``error`` is that
    entry's error (None if there is none); ``resume`` the byte position after it to decode on from (None when
    nothing after it can be read); ``next_offset`` where the next fetch starts: past the bad entry when it can
    be skipped, else past the last whole entry read (``fetch_offset`` if none). A wrapper that inflates to
    more than ``max_inflated`` bytes is a bad entry (MessageSizeTooLargeError), found before it is all inflated.
    A ``data`` that is not bytes (a received frame) is read in place by the native core, and copied only if an
    entry needs the Python walker; there ``max_items`` (-1: no limit) may stop the native run early: then
    ``error`` is None and ``resume`` is where to decode on from.
    """
    collecting = gc.isenabled()
    if collecting:
        gc.disable()  # one object per message and no greenlet switch: skip the young-generation passes
    try:
        items: list[MessageAndMetadata08] = []
        next_offset = fetch_offset
        if type(data) is not bytes:  # a received frame: the native core reads it in place
            start, last, rest = decode_in_place(
                data, FORMAT08, start, 0, fetch_offset, _LAYOUT, (topic, partition), items, max_items
            )
            next_offset = max(next_offset, last + 1)
            if rest is not WALK:
                return items, None, None if rest is DONE else start, next_offset
            data = bytes(data)
        return _decode(data, fetch_offset, topic, partition, start, max_inflated, items, next_offset)
    finally:
        if collecting:
            gc.enable()


def _decode(
    data: bytes,
    fetch_offset: int,
    topic: str,
    partition: int,
    start: int,
    max_inflated: int,
    items: list[MessageAndMetadata08],
    next_offset: int,
) -> tuple[list[MessageAndMetadata08], KafkaError | None, int | None, int]:
    new_item, cls = _new_item, MessageAndMetadata08
    head, unpack_int, crc32 = _unpack_head, _unpack_int, zlib.crc32
    append = items.append
    end = len(data)
    pos = start
    lib = native.lib
    while True:
        if lib is not None:  # the same fast path, compiled
            pos, last = lib.decode(data, 8, pos, 0, fetch_offset, _LAYOUT, (topic, partition), items)
            next_offset = max(next_offset, last + 1)
        # The fast path: a whole plain message with a good CRC, read with two unpacks.
        while end - pos >= _HEAD_SIZE:
            offset, size, crc, magic, attributes, key_size = head(data, pos)
            after = pos + 12 + size
            if magic or attributes & CODEC_MASK or size < MIN_MESSAGE_SIZE or after > end:
                break
            if crc32(data[pos + 16 : after]) != crc:
                break
            if key_size < 0:
                key, at = None, pos + 22
            else:
                key, at = data[pos + 22 : pos + 22 + key_size], pos + 22 + key_size
            if at + 4 > after:
                break
            (value_size,) = unpack_int(data, at)
            if at + 4 + value_size > after:
                break
            if offset >= fetch_offset:
                value = data[at + 4 : at + 4 + value_size] if value_size >= 0 else None
                append(new_item(cls, (key, value, topic, partition, offset)))
            if offset >= next_offset:
                next_offset = offset + 1
            pos = after
        # Anything else (a wrapper, a short or bad entry, the end): one entry through the checked walk.
        try:
            entry = next(walk(data, FORMAT08, pos), None)
            if entry is None:
                return items, None, None, next_offset  # the end, or a partial entry
            _, after, magic, attributes, crc, body = entry
            (offset,) = _unpack_offset(data, pos)
            if attributes & CODEC_MASK:
                try:
                    inner = entry_messages(
                        data, FORMAT08, pos, after, magic, attributes, crc, body, 0, max_inflated
                    )
                except KafkaError as err:
                    return items, _in_partition(err, topic, partition), after, max(next_offset, offset + 1)
                for inner_offset, message in inner:
                    if inner_offset >= fetch_offset:
                        append(new_item(cls, (message.key, message.value, topic, partition, inner_offset)))
            elif offset >= fetch_offset:
                key, value = key_value(data, pos, after)
                append(new_item(cls, (key, value, topic, partition, offset)))
        except KafkaError as err:
            resume = getattr(err, "resume", None)
            if resume is not None:
                (bad_offset,) = _unpack_offset(data, err.position)
                next_offset = max(next_offset, bad_offset + 1)
            return items, _in_partition(err, topic, partition), resume, next_offset
        if offset >= next_offset:
            next_offset = offset + 1
        pos = after
