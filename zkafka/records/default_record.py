"""The records inside a record batch of magic 2 (Kafka 0.11+, KIP-98), as Kafka's ``DefaultRecord``.

A record is ``length varint | attributes int8 (unused) | timestampDelta varlong | offsetDelta varint |
key length varint | key | value length varint | value | header count varint | headers``, a header
``key length varint | key (UTF-8) | value length varint | value``; a length of -1 is a null key or value
(a header key may not be null), ``length`` counts the bytes after itself. Varints are zig-zag (``varint``).
Offsets and timestamps are deltas from the batch's base offset and base timestamp.

Reading is bounded by what is there: a length is checked against the bytes left before anything is sliced
or a list grows, so a record that announces more than it holds raises InvalidMessageError without
allocating it. Pure: bytes in, values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from zkafka.errors import InvalidMessageError
from zkafka.records import native
from zkafka.records.varint import read_varint, read_varlong, write_varint, write_varlong

NULL_LENGTH = write_varint(-1)
NO_HEADERS = write_varint(0)


class Header(NamedTuple):
    """A record header: a string key and a value (None when null)."""

    key: str
    value: bytes | None


class Record(NamedTuple):
    """A record as read from a batch, or to write into one: absolute offset and timestamp."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]] = (),
) -> bytes:
    """The bytes of one record, its length first."""
    body = b"".join((b"\x00", write_varlong(timestamp_delta), write_varint(offset_delta), _field(key), _field(value)))
    if not headers:
        return b"".join((write_varint(len(body) + 1), body, NO_HEADERS))
    parts = [body, write_varint(len(headers))]
    for header_key, header_value in headers:
        parts += (_field(header_key.encode()), _field(header_value))
    body = b"".join(parts)
    return write_varint(len(body)) + body


def _field(value: bytes | None) -> bytes:
    if value is None:
        return NULL_LENGTH
    return write_varint(len(value)) + bytes(value)


def decode_records(
    data: Any,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None = None,
) -> list[Record]:
    """The ``count`` records that ``data[pos:end]`` holds, exactly: fewer, or bytes left after them, raise
    InvalidMessageError. With ``log_append_time`` (a LogAppendTime batch) every record has that timestamp."""
    if count < 0:
        raise InvalidMessageError(f"invalid record count {count}")
    lib = native.lib
    if lib is not None:
        found = lib.decode_records(data, pos, end, count, base_offset, base_timestamp, log_append_time, Record)
        if found is not None:  # None: headers or damage, which the loop below reads or names
            return found
    records: list[Record] = []
    at = pos
    for index in range(count):
        if at >= end:
            raise InvalidMessageError(f"the batch declares {count} records but holds {index}")
        record, at = _record(data, at, end, base_offset, base_timestamp, log_append_time)
        records.append(record)
    if at != end:
        raise InvalidMessageError(f"{end - at} bytes follow the {count} records the batch declares")
    return records


def _record(
    data: Any, pos: int, end: int, base_offset: int, base_timestamp: int, log_append_time: int | None
) -> tuple[Record, int]:
    size, at = read_varint(data, pos, end)
    if size < 0 or at + size > end:
        raise InvalidMessageError(f"record at {pos}: a length of {size} runs past the end of the records")
    stop = at + size
    if at >= stop:
        raise InvalidMessageError(f"record at {pos} has no attributes")
    timestamp_delta, at = read_varlong(data, at + 1, stop)  # the attributes byte is unused
    offset_delta, at = read_varint(data, at, stop)
    key, at = _read_field(data, at, stop, pos)
    value, at = _read_field(data, at, stop, pos)
    if at + 1 == stop and data[at] == 0:  # no headers, the common case
        headers, at = (), stop
    else:
        headers, at = _read_headers(data, at, stop, pos)
    if at != stop:
        raise InvalidMessageError(f"record at {pos} declares {size} bytes but its fields take {at - stop + size}")
    timestamp = base_timestamp + timestamp_delta if log_append_time is None else log_append_time
    return Record(base_offset + offset_delta, timestamp, key, value, headers), stop


def _read_headers(data: Any, at: int, stop: int, pos: int) -> tuple[tuple[Header, ...], int]:
    count, at = read_varint(data, at, stop)
    if count < 0:
        raise InvalidMessageError(f"record at {pos} has an invalid header count {count}")
    headers = []
    for _ in range(count):
        if at >= stop:
            raise InvalidMessageError(f"record at {pos} declares {count} headers but holds {len(headers)}")
        key, at = _read_field(data, at, stop, pos)
        if key is None:
            raise InvalidMessageError(f"record at {pos} has a header with a null key")
        value, at = _read_field(data, at, stop, pos)
        headers.append(Header(key.decode("utf-8", "replace"), value))  # as Java's new String(bytes, UTF_8)
    return tuple(headers), at


def _read_field(data: Any, at: int, stop: int, pos: int) -> tuple[bytes | None, int]:
    length, at = read_varint(data, at, stop)
    if length == -1:
        return None, at
    if length < 0:
        raise InvalidMessageError(f"record at {pos} has an invalid length {length}")
    if at + length > stop:
        raise InvalidMessageError(f"record at {pos}: a length of {length} runs past its end")
    return bytes(data[at : at + length]), at + length
