"""The Produce request body (v0 and v1: the same fields) and the v0 response body read and written without
the generic schema walk.

A produce request is the broker's and the producer's most frequent one, and at 0.8.2's default acks (0) it
is all they exchange: walking its schema field by field cost more than the rest of the request's handling.
``read_produce_body`` returns exactly what the schema read gives for a well-formed body and None for
anything else (truncated, negative counts or sizes, bad UTF-8, trailing bytes), so that the caller decodes
that one with the schema and raises its usual error. ``write_produce_body`` appends the parts the schema
write appends. ``read_produce_response`` and ``write_produce_response`` do the same for the v0 answer (one
per request at acks 1 or -1: a pipelined producer reads one every request). Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from typing import Any

_HEAD = struct.Struct(">hii")  # acks, timeout_ms, topic count
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_PARTITION_HEAD = struct.Struct(">ii")  # partition, message set size
_PARTITION_STATUS = struct.Struct(">ihq")  # partition, error, base offset
_SEQUENCES = (list, tuple)
_TOPIC_MIN = 6  # a string's length and a partition count
_PARTITION_MIN = 8


def _read_topic_head(buf: memoryview, pos: int, end: int, entry_min: int) -> tuple[Any, int, int] | None:
    """A topic's name and partition count at ``pos`` and where its partitions start, or None if malformed
    (the partitions, ``entry_min`` bytes each at least, must fit before ``end``)."""
    if pos + 2 > end:
        return None
    (size,) = _INT16.unpack_from(buf, pos)
    pos += 2
    if size < 0:
        topic = None
    else:
        if pos + size > end:
            return None
        try:
            topic = str(buf[pos : pos + size], "utf-8")
        except UnicodeDecodeError:
            return None
        pos += size
    if pos + 4 > end:
        return None
    (partition_count,) = _INT32.unpack_from(buf, pos)
    pos += 4
    if partition_count < 0 or partition_count * entry_min > end - pos:
        return None
    return topic, partition_count, pos


def _write_topic_head(topic: str | None, partitions: Any, parts: list) -> bool:
    """Append a topic's name and partition count; False when the name does not fit a string or the
    partitions are not a list or tuple."""
    if topic is None:
        parts.append(b"\xff\xff")
    else:
        name = topic.encode("utf-8")
        if len(name) > 0x7FFF:
            return False
        parts.append(_INT16.pack(len(name)) + name)
    if type(partitions) not in _SEQUENCES:
        return False
    parts.append(_INT32.pack(len(partitions)))
    return True


def read_produce_body(
    buf: memoryview, pos: int, body_class: type, topic_class: type, partition_class: type
) -> Any:
    """The produce body at ``buf[pos:]`` (which it must fill) as ``body_class(acks, timeout_ms, [topic_class(
    topic, [partition_class(partition, message_set view), ...]), ...])``, or None if it is malformed."""
    end = len(buf)
    if pos + _HEAD.size > end:
        return None
    acks, timeout_ms, topic_count = _HEAD.unpack_from(buf, pos)
    pos += _HEAD.size
    if topic_count < 0 or topic_count * _TOPIC_MIN > end - pos:
        return None
    new = tuple.__new__
    topics = []
    for _ in range(topic_count):
        head = _read_topic_head(buf, pos, end, _PARTITION_MIN)
        if head is None:
            return None
        topic, partition_count, pos = head
        partitions = []
        for _ in range(partition_count):
            if pos + _PARTITION_MIN > end:
                return None
            partition, size = _PARTITION_HEAD.unpack_from(buf, pos)
            pos += _PARTITION_MIN
            if size < 0 or pos + size > end:
                return None
            partitions.append(new(partition_class, (partition, buf[pos : pos + size])))
            pos += size
        topics.append(new(topic_class, (topic, partitions)))
    if pos != end:
        return None
    return new(body_class, (acks, timeout_ms, topics))


def write_produce_body(body: Any, out: list) -> bool:
    """Append the parts of a produce body whose message sets are all byte strings; False (nothing appended)
    when one is not (a file region: the schema writes that), or a list of topics or partitions is another
    iterable."""
    if type(body.topics) not in _SEQUENCES:
        return False
    parts: list = [_HEAD.pack(body.acks, body.timeout_ms, len(body.topics))]
    for topic, partitions in body.topics:
        if not _write_topic_head(topic, partitions, parts):
            return False
        for partition, message_set in partitions:
            if not isinstance(message_set, bytes | bytearray | memoryview):
                return False
            length = len(message_set)
            parts.append(_PARTITION_HEAD.pack(partition, length))
            if length:
                parts.append(message_set)
    out.extend(parts)
    return True


def read_produce_response(
    buf: memoryview, pos: int, body_class: type, topic_class: type, partition_class: type
) -> Any:
    """The v0 produce response body at ``buf[pos:]`` (which it must fill) as ``body_class([topic_class(topic,
    [partition_class(partition, error, offset), ...]), ...])``, or None if it is malformed."""
    end = len(buf)
    if pos + 4 > end:
        return None
    (topic_count,) = _INT32.unpack_from(buf, pos)
    pos += 4
    if topic_count < 0 or topic_count * _TOPIC_MIN > end - pos:
        return None
    new = tuple.__new__
    status = _PARTITION_STATUS
    topics = []
    for _ in range(topic_count):
        head = _read_topic_head(buf, pos, end, status.size)
        if head is None:
            return None
        topic, partition_count, pos = head
        partitions = []
        for _ in range(partition_count):
            partitions.append(new(partition_class, status.unpack_from(buf, pos)))
            pos += status.size
        topics.append(new(topic_class, (topic, partitions)))
    if pos != end:
        return None
    return new(body_class, (topics,))


def write_produce_response(topics: Any, out: list) -> bool:
    """Append the parts of a v0 produce response body with ``topics``; False (nothing appended) when a list
    is another iterable or a topic name does not fit a string."""
    if type(topics) not in _SEQUENCES:
        return False
    parts: list = [_INT32.pack(len(topics))]
    for topic, partitions in topics:
        if not _write_topic_head(topic, partitions, parts):
            return False
        try:
            parts.extend(_PARTITION_STATUS.pack(*p) for p in partitions)
        except (struct.error, TypeError):
            return False  # a value out of range: the schema's write says which
    out.extend(parts)
    return True
