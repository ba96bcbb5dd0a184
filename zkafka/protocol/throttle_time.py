"""Where a response carries ``throttle_time_ms`` (Kafka 2.x answers every client request over its request quota
with its throttle time, KIP-124): the field's byte position in each encoded response version, found from the
declared schemas, and the write of a throttle time into an answer already encoded. Pure."""

from __future__ import annotations

from functools import cache

from zkafka.protocol.types import Int32
from zkafka.protocol.v08 import RESPONSE_HEADER, SCHEMAS, response_header_version

THROTTLE_TIME_MS = "throttle_time_ms"


@cache
def throttle_time_position(api_key: int, api_version: int) -> int | None:
    """The byte offset of ``throttle_time_ms`` in a whole response frame of ``(api_key, api_version)``: from
    the frame's start when only fixed-size fields come before it (most answers: it comes first), negative
    from its end when only fixed-size fields come after it (Produce v1+, ApiVersions v1+); None when the
    version has no such field."""
    entry = SCHEMAS.get((api_key, api_version))
    if entry is None:
        return None
    response = entry[1]
    schema = response.SCHEMA
    names = [name for name, _ in schema.fields]
    if THROTTLE_TIME_MS not in names:
        return None
    index = names.index(THROTTLE_TIME_MS)
    before, after = schema.types[:index], schema.types[index + 1 :]
    if all(_fixed_size(t) is not None for t in before):
        return RESPONSE_HEADER.size + response_header_version(response) + sum(map(_fixed_size, before))
    if all(_fixed_size(t) is not None for t in after):  # a flexible one ends with its (empty) tag buffer
        return -(Int32.fmt.size + sum(map(_fixed_size, after)) + schema.flexible)
    return None


def _fixed_size(field_type: object) -> int | None:
    fmt = getattr(field_type, "fmt", None)
    return fmt.size if fmt is not None else None


def set_throttle_time(parts: list, position: int, throttle_ms: int) -> int:
    """Write ``throttle_ms`` at ``position`` of the encoded answer ``parts`` (in place) unless the answer holds
    a longer one (a byte quota's): the throttle time the answer now carries. An answer whose field is not in
    its first (or, from the end, last) byte string, or whose trailing tag buffer is not empty, is left as is."""
    index = 0 if position >= 0 else len(parts) - 1
    part = parts[index] if parts else None
    if not isinstance(part, bytes | bytearray | memoryview) or len(part) < abs(position) + Int32.fmt.size:
        return throttle_ms
    start = position if position >= 0 else len(part) + position
    if position < 0 and start + Int32.fmt.size < len(part) and part[-1] != 0:
        return throttle_ms  # tagged fields after the throttle time: not where the schema says
    (carried,) = Int32.fmt.unpack_from(part, start)
    throttle_ms = max(carried, throttle_ms)
    parts[index] = bytes(part[:start]) + Int32.fmt.pack(throttle_ms) + bytes(part[start + Int32.fmt.size :])
    return throttle_ms
