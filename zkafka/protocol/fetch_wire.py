"""The Fetch request body v0-v3 and its answer read and written without the generic schema walk.

A follower's replica fetcher sends Fetch v0 once per batch it copies: at acks=-1 that is one request and one
answer per follower per produce, where walking the schemas field by field cost as much as the rest of the
fetch's handling on the leader, and as the append on the follower. ``read_fetch_body`` and
``read_fetch_response`` return exactly what the schema read gives for a well-formed v0-v3 body and None for
anything else (truncated, negative counts or sizes, bad UTF-8, trailing bytes), so that the caller decodes
that one with the schema and raises its usual error. ``write_fetch_body`` and ``write_fetch_response`` append
the parts the schema write appends (an answer's message set that is a file region kept as a part, for
sendfile). From v4 (isolation level, aborted transactions) the schema reads and writes. Pure: bytes in,
values out.
"""

from __future__ import annotations

import struct
from typing import Any

from zkafka.protocol.produce_wire import read_topics, write_topic_head
from zkafka.protocol.types import part_length

LAST_VERSION = 3  # the last version read and written here
_HEAD = struct.Struct(">iii")  # replica_id, max_wait_ms, min_bytes
_HEAD_V3 = struct.Struct(">iiii")  # + max_bytes
_INT32 = struct.Struct(">i")
_PARTITION = struct.Struct(">iqi")  # partition, fetch_offset, max_bytes
_ANSWERED = struct.Struct(">ihqi")  # partition, error, high_watermark, message set size


def read_fetch_body(
    buf: memoryview, pos: int, version: int, body_class: type, topic_class: type, partition_class: type
) -> Any:
    """The ``version`` (0-3) fetch body at ``buf[pos:]`` (which it must fill) as ``body_class(replica_id,
    max_wait_ms, min_bytes, [max_bytes (v3),] [topic_class(topic, [partition_class(partition, fetch_offset,
    max_bytes), ...]), ...])``, or None if it is malformed."""
    end = len(buf)
    head = _HEAD_V3 if version >= 3 else _HEAD
    if pos + head.size > end:
        return None
    fields = head.unpack_from(buf, pos)
    new = tuple.__new__
    unpack = _PARTITION.unpack_from
    size = _PARTITION.size

    def read_partition(buf: memoryview, pos: int, end: int) -> tuple[Any, int]:
        return new(partition_class, unpack(buf, pos)), pos + size  # read_topics checked that they fit

    found = read_topics(buf, pos + head.size, end, size, topic_class, read_partition)
    if found is None or found[1] != end:
        return None
    return new(body_class, (*fields, found[0]))


def write_fetch_body(body: Any, version: int, out: list) -> bool:
    """Append the parts of a ``version`` (0-3) fetch request body (a follower's, a consumer's); False (nothing
    appended) when a list is another iterable, a topic name does not fit a string or a value is out of its
    field's range."""
    topics = body.topics
    if type(topics) not in (list, tuple):
        return False
    parts: list = []
    try:
        head = _HEAD_V3 if version >= 3 else _HEAD
        parts.append(head.pack(*body[:-1]))  # every field before the topics
        parts.append(_INT32.pack(len(topics)))
        for topic, partitions in topics:
            if not write_topic_head(topic, partitions, parts):
                return False
            parts.extend(_PARTITION.pack(*partition) for partition in partitions)
    except (struct.error, TypeError, AttributeError, ValueError):
        return False  # the schema's write says what is wrong
    out.extend(parts)
    return True


def read_fetch_response(
    buf: memoryview, pos: int, version: int, body_class: type, topic_class: type, partition_class: type
) -> Any:
    """The ``version`` (0-3) fetch response body at ``buf[pos:]`` (which it must fill) as ``body_class(
    [throttle_time_ms (v1+),] [topic_class(topic, [partition_class(partition, error, high_watermark, message
    set view), ...]), ...])``, or None if it is malformed."""
    end = len(buf)
    fields: tuple = ()
    if version >= 1:
        if pos + 4 > end:
            return None
        fields = _INT32.unpack_from(buf, pos)
        pos += 4
    new = tuple.__new__
    unpack = _ANSWERED.unpack_from
    size = _ANSWERED.size

    def read_partition(buf: memoryview, pos: int, end: int) -> tuple[Any, int] | None:
        if pos + size > end:
            return None
        partition, error, high_watermark, length = unpack(buf, pos)
        pos += size
        if length < 0 or pos + length > end:
            return None
        return new(partition_class, (partition, error, high_watermark, buf[pos : pos + length])), pos + length

    found = read_topics(buf, pos, end, size, topic_class, read_partition)
    if found is None or found[1] != end:
        return None
    return new(body_class, (*fields, found[0]))


def write_fetch_response(body: Any, version: int, out: list) -> bool:
    """Append the parts of a ``version`` (0-3) fetch response body; False (nothing appended) when a list is
    another iterable, a topic name does not fit a string or a value is out of its field's range."""
    topics = body.topics
    if type(topics) not in (list, tuple):
        return False
    parts: list = []
    try:
        if version >= 1:
            parts.append(_INT32.pack(body.throttle_time_ms))
        parts.append(_INT32.pack(len(topics)))
        for topic, partitions in topics:
            if not write_topic_head(topic, partitions, parts):
                return False
            for partition, error, high_watermark, message_set in partitions:
                length = part_length(message_set)
                parts.append(_ANSWERED.pack(partition, error, high_watermark, length))
                if length:
                    parts.append(message_set)
    except (struct.error, TypeError, AttributeError, ValueError):
        return False  # the schema's write says what is wrong
    out.extend(parts)
    return True
