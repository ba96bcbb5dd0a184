"""The records of ``__consumer_offsets`` (Kafka 3.4's OffsetCommitKey/Value and GroupMetadataKey/Value, versions
0-3) and which partition a group uses.

Every key and value starts with an ``int16`` version. Keys: an offset key (version 0 from 0.8.2, 1 from 0.9;
the same layout) ``group · topic · partition``, or a group key (version 2) ``group``. Offset values: v0
``offset · metadata · commit_timestamp`` (0.8.2), v1 adds ``expire_timestamp`` (0.9), v2 drops it again (2.1,
KIP-211), v3 adds ``leader_epoch`` after the offset (2.1). Group values: v0 the generation, protocol, leader
and every member's subscription and assignment (0.9), v1 each member's ``rebalance_timeout`` (0.10.1), v2 the
group's ``current_state_timestamp`` (2.1), v3 each member's ``group_instance_id`` (2.3). A null value is a
tombstone. Which versions a broker writes follows its ``inter.broker.protocol.version`` as Kafka 3.4 decides
(``record_versions``; unset: 0.9's offset value v1 and group value v0); readers take every version. Each
value is declared once (``Field`` versions, as the JSON files) and read into its newest shape. Pure.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from zkafka.errors import InvalidRequestError
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Bytes, Int16, Int32, Int64, Reader, String
from zkafka.protocol.versioned import Field, Nested, fields_at, make
from zkafka.records.format_version import version_order
from zkafka.utils.java import java_string_hash, kafka_abs

DEFAULT_NUM_PARTITIONS = 50

OFFSET_KEY_VERSION = 1  # 0.8.2 wrote 0; same layout
GROUP_KEY_VERSION = 2
NO_LEADER_EPOCH = -1

OffsetKey = struct_class(
    "OffsetKey",
    ("group", String),
    ("topic", String),
    ("partition", Int32),
    doc="The key of a committed offset (versions 0 and 1).",
)
GroupKey = struct_class("GroupKey", ("group", String), doc="The key of a group's metadata (version 2).")

_OFFSET_VALUE = (
    Field("offset", Int64),
    Field("leader_epoch", Int32, since=3),
    Field("metadata", String),
    Field("commit_timestamp", Int64),
    Field("expire_timestamp", Int64, since=1, until=1),
)
_GROUP_MEMBER = Nested(
    "GroupMemberRecord",
    (
        Field("member_id", String),
        Field("group_instance_id", String, since=3, nullable_since=3),
        Field("client_id", String),
        Field("client_host", String),
        Field("rebalance_timeout", Int32, since=1),
        Field("session_timeout", Int32),
        Field("subscription", Bytes),  # the member's metadata for the group's protocol
        Field("assignment", Bytes),
    ),
)
_GROUP_VALUE = (
    Field("protocol_type", String),
    Field("generation", Int32),
    Field("protocol", String, nullable_since=0),  # null: an Empty group
    Field("leader", String, nullable_since=0),
    Field("current_state_timestamp", Int64, since=2),
    Field("members", _GROUP_MEMBER),
)
OFFSET_VALUES = tuple(struct_class(f"OffsetValueV{v}", *fields_at(_OFFSET_VALUE, v)) for v in range(4))
GROUP_VALUES = tuple(struct_class(f"GroupValueV{v}", *fields_at(_GROUP_VALUE, v)) for v in range(4))
GroupValue = GROUP_VALUES[3]  # a group value of any version, as the coordinator keeps it
GroupMemberRecord = GroupValue.SCHEMA.fields[-1][1].item.record

_OFFSET_KEY_VERSIONS = (0, 1)


class OffsetAndMetadata(NamedTuple):
    """A committed offset as the coordinator keeps it (values without an expire time get commit time +
    retention)."""

    offset: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    leader_epoch: int = NO_LEADER_EPOCH  # OffsetCommit v6+'s committed_leader_epoch (offset value v3)


class RecordVersions(NamedTuple):
    """The offset value and group value versions a broker writes."""

    offset_value: int
    group_value: int


DEFAULT_RECORD_VERSIONS = RecordVersions(1, 0)  # what zkafka (as 0.9) writes when inter.broker.protocol.version is unset
_GROUP_VALUE_SINCE = (("2.3-IV0", 3), ("2.1-IV0", 2), ("0.10.1-IV0", 1))  # 3.4's groupMetadataValue


def record_versions(inter_broker_protocol_version: str | None) -> RecordVersions:
    """The versions Kafka 3.4 writes for ``inter.broker.protocol.version``: offset value v1 before 2.1-IV0, v2
    before 2.1-IV1, then v3; group value v0 before 0.10.1, v1 before 2.1, v2 before 2.3, then v3."""
    if inter_broker_protocol_version is None:
        return DEFAULT_RECORD_VERSIONS
    ibp = version_order(inter_broker_protocol_version)
    offset = 1 if ibp < version_order("2.1-IV0") else 2 if ibp < version_order("2.1-IV1") else 3
    group = next((version for since, version in _GROUP_VALUE_SINCE if ibp >= version_order(since)), 0)
    return RecordVersions(offset, group)


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


def offset_value(value: OffsetAndMetadata, version: int = DEFAULT_RECORD_VERSIONS.offset_value) -> bytes:
    """The value bytes of a committed offset at ``version`` (0-3)."""
    return _versioned(version, make(OFFSET_VALUES[version], **value._asdict()))


def group_value(value: Any, version: int = DEFAULT_RECORD_VERSIONS.group_value) -> bytes:
    """The value bytes of a group's metadata (a ``GroupValue``) at ``version`` (0-3)."""
    members = [m._asdict() for m in value.members]
    return _versioned(version, make(GROUP_VALUES[version], **(value._asdict() | {"members": members})))


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
    """A committed offset from a v0-v3 value (without v1's expire time: commit time + ``retention_ms``)."""
    reader = Reader(data)
    version = reader.unpack(Int16.fmt)
    if not 0 <= version < len(OFFSET_VALUES):
        raise InvalidRequestError(f"unknown offset value version {version}")
    value = _read(OFFSET_VALUES[version], reader, f"offset value v{version}")
    expire = value.expire_timestamp if version == 1 else value.commit_timestamp + retention_ms
    epoch = value.leader_epoch if version >= 3 else NO_LEADER_EPOCH
    return OffsetAndMetadata(value.offset, value.metadata or "", value.commit_timestamp, expire, epoch)


def read_group_value(data: bytes | memoryview) -> Any:
    """A ``GroupValue`` from a v0-v3 value (v0's rebalance timeouts are the session timeouts; before v2 no state
    timestamp: -1; before v3 no instance ids); InvalidRequestError for another version or bad bytes."""
    reader = Reader(data)
    version = reader.unpack(Int16.fmt)
    if not 0 <= version < len(GROUP_VALUES):
        raise InvalidRequestError(f"unknown group metadata value version {version}")
    value = _read(GROUP_VALUES[version], reader, f"group value v{version}")
    members = [
        {"group_instance_id": None, "rebalance_timeout": m.session_timeout} | m._asdict() for m in value.members
    ]
    return make(GroupValue, **({"current_state_timestamp": -1} | value._asdict() | {"members": members}))
