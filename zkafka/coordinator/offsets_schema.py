"""The records of ``__consumer_offsets`` (0.9.0.1's GroupMetadataManager schemas) and which partition a group uses.

Every key and value starts with an ``int16`` version. Keys: an offset key (version 0 from 0.8.2, 1 from 0.9;
the same layout) ``group · topic · partition``, or a group key (version 2) ``group``. Values: an offset value
v0 ``offset · metadata · timestamp`` (0.8.2) or v1 ``offset · metadata · commit_timestamp · expire_timestamp``
(0.9), or a group value v0 with the generation, protocol, leader and every member's subscription and
assignment. A null value is a tombstone. 0.9 writes offset key v1, offset value v1, group key v2 and group
value v0; readers take all of them. Pure: bytes in, values out.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from zkafka.errors import InvalidRequestError
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Bytes, Int16, Int32, Int64, Reader, String
from zkafka.utils.java import java_string_hash, kafka_abs

DEFAULT_NUM_PARTITIONS = 50

OFFSET_KEY_VERSION = 1  # 0.8.2 wrote 0; same layout
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 1
GROUP_VALUE_VERSION = 0

OffsetKey = struct_class(
    "OffsetKey",
    ("group", String),
    ("topic", String),
    ("partition", Int32),
    doc="The key of a committed offset (versions 0 and 1).",
)
GroupKey = struct_class("GroupKey", ("group", String), doc="The key of a group's metadata (version 2).")
OffsetValueV0 = struct_class("OffsetValueV0", ("offset", Int64), ("metadata", String), ("timestamp", Int64))
OffsetValueV1 = struct_class(
    "OffsetValueV1",
    ("offset", Int64),
    ("metadata", String),
    ("commit_timestamp", Int64),
    ("expire_timestamp", Int64),
)
GroupMemberRecord = struct_class(
    "GroupMemberRecord",
    ("member_id", String),
    ("client_id", String),
    ("client_host", String),
    ("session_timeout", Int32),
    ("subscription", Bytes),  # the member's metadata for the group's protocol
    ("assignment", Bytes),
)
GroupValueV0 = struct_class(
    "GroupValueV0",
    ("protocol_type", String),
    ("generation", Int32),
    ("protocol", String),
    ("leader", String),
    ("members", Array(GroupMemberRecord.SCHEMA)),
    doc="A group's metadata as stored when its leader's assignment is synced.",
)

_OFFSET_KEY_VERSIONS = (0, 1)


class OffsetAndMetadata(NamedTuple):
    """A committed offset as the coordinator keeps it (v0 values get expire = timestamp + retention)."""

    offset: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int


def partition_for(group: str, num_partitions: int = DEFAULT_NUM_PARTITIONS) -> int:
    """The offsets partition of a group: ``abs(String.hashCode(group)) % n`` with 0.9's ``Utils.abs``
    (``abs(-2^31) = 0``)."""
    return kafka_abs(java_string_hash(group)) % num_partitions


def _versioned(version: int, value: Any) -> bytes:
    out: list = []
    Int16.write(version, out)
    value.SCHEMA.write(value, out)
    return b"".join(out)


def offset_key(group: str, topic: str, partition: int) -> bytes:
    """The key bytes of a committed offset (version 1)."""
    return _versioned(OFFSET_KEY_VERSION, OffsetKey(group, topic, partition))


def group_key(group: str) -> bytes:
    """The key bytes of a group's metadata (version 2)."""
    return _versioned(GROUP_KEY_VERSION, GroupKey(group))


def offset_value(value: OffsetAndMetadata) -> bytes:
    """The value bytes of a committed offset (version 1)."""
    return _versioned(OFFSET_VALUE_VERSION, OffsetValueV1(*value))


def group_value(value: Any) -> bytes:
    """The value bytes of a group's metadata (a ``GroupValueV0``)."""
    return _versioned(GROUP_VALUE_VERSION, value)


def _read(schema_class: Any, reader: Reader, what: str) -> Any:
    try:
        value = schema_class.read_from(reader)
        reader.expect_end()
    except InvalidRequestError as exc:
        raise InvalidRequestError(f"malformed {what}: {exc}") from None
    return value


def read_key(data: bytes | memoryview) -> Any:
    """An ``OffsetKey`` or a ``GroupKey``; InvalidRequestError for another version or bad bytes."""
    reader = Reader(data)
    version = reader.unpack(Int16.fmt)
    if version in _OFFSET_KEY_VERSIONS:
        return _read(OffsetKey, reader, f"offset key v{version}")
    if version == GROUP_KEY_VERSION:
        return _read(GroupKey, reader, "group key")
    raise InvalidRequestError(f"unknown __consumer_offsets key version {version}")


def read_offset_value(data: bytes | memoryview, retention_ms: int) -> OffsetAndMetadata:
    """A committed offset from a v0 or v1 value (v0: expire = timestamp + ``retention_ms``)."""
    reader = Reader(data)
    version = reader.unpack(Int16.fmt)
    if version == 0:
        v0 = _read(OffsetValueV0, reader, "offset value v0")
        return OffsetAndMetadata(v0.offset, v0.metadata or "", v0.timestamp, v0.timestamp + retention_ms)
    if version == 1:
        v1 = _read(OffsetValueV1, reader, "offset value v1")
        return OffsetAndMetadata(v1.offset, v1.metadata or "", v1.commit_timestamp, v1.expire_timestamp)
    raise InvalidRequestError(f"unknown offset value version {version}")


def read_group_value(data: bytes | memoryview) -> Any:
    """A ``GroupValueV0``; InvalidRequestError for another version or bad bytes."""
    reader = Reader(data)
    version = reader.unpack(Int16.fmt)
    if version != GROUP_VALUE_VERSION:
        raise InvalidRequestError(f"unknown group metadata value version {version}")
    return _read(GroupValueV0, reader, "group value v0")
