"""The Produce request body (every version up to v8) and its answer read and written without the generic
schema walk.

A produce request is the broker's and the producer's most frequent one, and at 0.8.2's default acks (0) it
is all they exchange: walking its schema field by field cost more than the rest of the request's handling.
``read_produce_body`` returns exactly what the schema read gives for a well-formed body (v3+: the
transactional id first) and None for anything else (truncated, negative counts or sizes, bad UTF-8,
trailing bytes), so that the caller decodes that one with the schema and raises its usual error.
``write_produce_body`` appends the parts the schema write appends. ``read_produce_response`` and
``write_produce_response`` do the same for the answer (one per request at acks 1 or -1: a pipelined
producer reads one every request), whose partitions grow by version (v2 log_append_time_ms, v5
log_start_offset, v8 record_errors and error_message: taken here only when there are none) and which ends
with throttle_time_ms from v1. Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from typing import Any

_HEAD = struct.Struct(">hii")  # acks, timeout_ms, topic count
_ACKS_TIMEOUT = struct.Struct(">hi")  # read_topics reads the topic count
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_PARTITION_HEAD = struct.Struct(">ii")  # partition, message set size
# partition, error, base offset; v2 + log_append_time_ms; v5 + log_start_offset
_STATUS = {0: struct.Struct(">ihq"), 2: struct.Struct(">ihqq"), 5: struct.Struct(">ihqqq")}
_NO_RECORD_ERRORS = b"\x00\x00\x00\x00\xff\xff"  # v8: an empty record_errors, a null error_message
_SEQUENCES = (list, tuple)
_TOPIC_MIN = 6  # a string's length and a partition count
_PARTITION_MIN = 8


def _read_string(buf: memoryview, pos: int, end: int) -> tuple[Any, int] | None:
    """The nullable string at ``pos`` and where it ends, or None if it runs past ``end`` or is not UTF-8."""
    if pos + 2 > end:
        return None
    (size,) = _INT16.unpack_from(buf, pos)
    pos += 2
    if size < 0:
        return None, pos
    if pos + size > end:
        return None
    try:
        return str(buf[pos : pos + size], "utf-8"), pos + size
    except UnicodeDecodeError:
        return None


def _read_array_size(buf: memoryview, pos: int, end: int, entry_min: int) -> tuple[int, int] | None:
    """An array's int32 count at ``pos`` and where its entries start, or None if the count is negative or its
    entries, ``entry_min`` bytes each at least, cannot fit before ``end``."""
    if pos + 4 > end:
        return None
    (count,) = _INT32.unpack_from(buf, pos)
    pos += 4
    if count < 0 or count * entry_min > end - pos:
        return None
    return count, pos


def read_topic_head(buf: memoryview, pos: int, end: int, entry_min: int) -> tuple[Any, int, int] | None:
    """A topic's name and partition count at ``pos`` and where its partitions start, or None if malformed
    (the partitions, ``entry_min`` bytes each at least, must fit before ``end``)."""
    name = _read_string(buf, pos, end)
    if name is None:
        return None
    count = _read_array_size(buf, name[1], end, entry_min)
    if count is None:
        return None
    return name[0], *count


def read_topics(
    buf: memoryview, pos: int, end: int, entry_min: int, topic_class: type, read_partition: Any
) -> tuple[list, int] | None:
    """The topic array at ``pos`` (an int32 count; each topic's name, partition count and partitions, each
    read by ``read_partition(buf, pos, end) -> (value, after) | None`` and ``entry_min`` bytes at least) as
    ``topic_class(topic, [value, ...])`` values, and where it ends; None if malformed."""
    count = _read_array_size(buf, pos, end, _TOPIC_MIN)
    if count is None:
        return None
    topic_count, pos = count
    new = tuple.__new__
    topics = []
    for _ in range(topic_count):
        head = read_topic_head(buf, pos, end, entry_min)
        if head is None:
            return None
        topic, partition_count, pos = head
        partitions = []
        for _ in range(partition_count):
            found = read_partition(buf, pos, end)
            if found is None:
                return None
            value, pos = found
            partitions.append(value)
        topics.append(new(topic_class, (topic, partitions)))
    return topics, pos


def _write_string(value: str | None, parts: list) -> bool:
    """Append a nullable string; False when it does not fit one."""
    if value is None:
        parts.append(b"\xff\xff")
        return True
    name = value.encode("utf-8")
    if len(name) > 0x7FFF:
        return False
    parts.append(_INT16.pack(len(name)) + name)
    return True


def write_topic_head(topic: str | None, partitions: Any, parts: list) -> bool:
    """Append a topic's name and partition count; False when the name does not fit a string or the
    partitions are not a list or tuple."""
    if not _write_string(topic, parts):
        return False
    if type(partitions) not in _SEQUENCES:
        return False
    parts.append(_INT32.pack(len(partitions)))
    return True


def read_produce_body(
    buf: memoryview, pos: int, body_class: type, topic_class: type, partition_class: type, transactional: bool
) -> Any:
    """The produce body at ``buf[pos:]`` (which it must fill) as ``body_class(acks, timeout_ms, [topic_class(
    topic, [partition_class(partition, message_set view), ...]), ...])`` (``transactional``, v3+: the
    transactional id first), or None if it is malformed."""
    end = len(buf)
    transactional_id: tuple = ()
    if transactional:
        found = _read_string(buf, pos, end)
        if found is None:
            return None
        transactional_id, pos = (found[0],), found[1]
    if pos + _ACKS_TIMEOUT.size > end:
        return None
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(buf, pos)
    new = tuple.__new__

    def read_partition(buf: memoryview, pos: int, end: int) -> tuple[Any, int] | None:
        if pos + _PARTITION_MIN > end:
            return None
        partition, size = _PARTITION_HEAD.unpack_from(buf, pos)
        pos += _PARTITION_MIN
        if size < 0 or pos + size > end:
            return None
        return new(partition_class, (partition, buf[pos : pos + size])), pos + size

    found = read_topics(buf, pos + _ACKS_TIMEOUT.size, end, _PARTITION_MIN, topic_class, read_partition)
    if found is None or found[1] != end:
        return None
    return new(body_class, (*transactional_id, acks, timeout_ms, found[0]))


def write_produce_body(body: Any, out: list, transactional: bool) -> bool:
    """Append the parts of a produce body whose message sets are all byte strings (``transactional``, v3+:
    its transactional id first); False (nothing appended) when one is not (a file region: the schema writes
    that), or a list of topics or partitions is another iterable."""
    if type(body.topics) not in _SEQUENCES:
        return False
    parts: list = []
    if transactional and not _write_string(body.transactional_id, parts):
        return False
    parts.append(_HEAD.pack(body.acks, body.timeout_ms, len(body.topics)))
    for topic, partitions in body.topics:
        if not write_topic_head(topic, partitions, parts):
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


def _status(version: int) -> struct.Struct:
    return _STATUS[5 if version >= 5 else 2 if version >= 2 else 0]


def read_produce_response(
    buf: memoryview, pos: int, version: int, body_class: type, topic_class: type, partition_class: type
) -> Any:
    """The ``version`` produce response body at ``buf[pos:]`` (which it must fill) as ``body_class([
    topic_class(topic, [partition_class(partition, error, offset, ...), ...]), ...], throttle_time_ms)``
    (v0: no throttle time), or None if it is malformed or a v8 partition has record errors or a message."""
    end = len(buf) - (4 if version >= 1 else 0)
    new = tuple.__new__
    status = _status(version)
    tail = _NO_RECORD_ERRORS if version >= 8 else b""
    size = status.size + len(tail)

    def read_partition(buf: memoryview, pos: int, end: int) -> tuple[Any, int] | None:
        fields = status.unpack_from(buf, pos)  # read_topics checked that the partitions fit
        if tail:
            if buf[pos + status.size : pos + size] != tail:
                return None
            fields = (*fields, [], None)
        return new(partition_class, fields), pos + size

    found = read_topics(buf, pos, end, size, topic_class, read_partition)
    if found is None or found[1] != end:
        return None
    topics = found[0]
    if version >= 1:
        return new(body_class, (topics, _INT32.unpack_from(buf, end)[0]))
    return new(body_class, (topics,))


def write_produce_response(body: Any, version: int, out: list) -> bool:
    """Append the parts of a ``version`` produce response body; False (nothing appended) when a list is
    another iterable, a topic name does not fit a string, or a v8 partition has record errors or a message."""
    topics = body.topics
    if type(topics) not in _SEQUENCES:
        return False
    status = _status(version)
    parts: list = [_INT32.pack(len(topics))]
    for topic, partitions in topics:
        if not write_topic_head(topic, partitions, parts):
            return False
        try:
            if version >= 8:
                if any(p[5] or p[6] is not None for p in partitions):
                    return False
                parts.extend(status.pack(*p[:5]) + _NO_RECORD_ERRORS for p in partitions)
            else:
                parts.extend(status.pack(*p) for p in partitions)
        except (struct.error, TypeError):
            return False  # a value out of range: the schema's write says which
    if version >= 1:
        try:
            parts.append(_INT32.pack(body.throttle_time_ms))
        except (struct.error, TypeError):
            return False
    out.extend(parts)
    return True
