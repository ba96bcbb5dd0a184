"""Metadata (API key 3) v0-v9, declared as schemas: the brokers, the controller, and each topic's partitions
with their leader, replicas and ISR. Pure: bytes in, values out.

What each version adds (Kafka's ``MetadataRequest.json`` / ``MetadataResponse.json``):
v1 (0.10.0): a null topic list asks for every topic (an empty one for none); brokers carry ``rack``, the
answer ``controller_id``, each topic ``is_internal``. v2 (0.10.1): ``cluster_id``. v3 (0.11):
``throttle_time_ms`` first. v4: the request's ``allow_auto_topic_creation``. v5 (1.0): each partition's
``offline_replicas``. v6: as v5. v7 (2.1): each partition's ``leader_epoch``. v8 (2.3): the request asks for
authorized operations; the answer has ``topic_authorized_operations`` per topic and
``cluster_authorized_operations`` (-2147483648 when not asked for). v9 (2.4): the first flexible version
(its topics are ``{name}`` structs, each with a tag buffer).
"""

from __future__ import annotations

from zkafka.protocol.api_keys import METADATA, api_struct
from zkafka.protocol.flexible import CompactArray
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Boolean, Int16, Int32, NullableString, Reader, String

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)  # Integer.MIN_VALUE: "not asked for"
# AclOperation codes as a bitfield: what a broker with no authorizer allows on a topic (READ, WRITE, CREATE,
# DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) and on the cluster (CREATE, ALTER, DESCRIBE,
# CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE): Kafka's ``AclEntry.supportedOperations``.
TOPIC_OPERATIONS = sum(1 << code for code in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << code for code in (5, 7, 8, 9, 10, 11, 12))
MAX_VERSION = 9

MetadataBroker = struct_class("MetadataBroker", ("node_id", Int32), ("host", String), ("port", Int32))
MetadataBrokerV1 = struct_class(
    "MetadataBrokerV1", ("node_id", Int32), ("host", String), ("port", Int32), ("rack", NullableString)
)
_PARTITION_V0 = (("error", Int16), ("partition", Int32), ("leader", Int32))
_REPLICA_LISTS = (("replicas", Array(Int32)), ("isr", Array(Int32)))
PartitionMetadata = struct_class("PartitionMetadata", *_PARTITION_V0, *_REPLICA_LISTS)
PartitionMetadataV5 = struct_class(
    "PartitionMetadataV5", *_PARTITION_V0, *_REPLICA_LISTS, ("offline_replicas", Array(Int32))
)
PartitionMetadataV7 = struct_class(
    "PartitionMetadataV7",
    *_PARTITION_V0,
    ("leader_epoch", Int32),
    *_REPLICA_LISTS,
    ("offline_replicas", Array(Int32)),
)
TopicMetadata = struct_class(
    "TopicMetadata", ("error", Int16), ("topic", String), ("partitions", Array(PartitionMetadata.SCHEMA))
)


def partition_class(version: int) -> type:
    """The partition struct of a ``version`` answer."""
    return PartitionMetadataV7 if version >= 7 else PartitionMetadataV5 if version >= 5 else PartitionMetadata


def _topic_class(version: int) -> type:
    """The topic struct of a v1+ answer: ``is_internal`` after the name; v8 adds authorized operations."""
    partitions = Array(partition_class(version).SCHEMA)
    fields = [("error", Int16), ("topic", String), ("is_internal", Boolean), ("partitions", partitions)]
    if version >= 8:
        fields.append(("topic_authorized_operations", Int32))
    return struct_class(f"TopicMetadataV{version}", *fields)


TOPIC_CLASSES = {0: TopicMetadata, **{v: _topic_class(v) for v in (1, 5, 7, 8)}}
MetadataRequestTopic = struct_class("MetadataRequestTopic", ("topic", String))  # v9's topic entry


class RequestTopicsV9(CompactArray):
    """v9's topics (compact, nullable), also read as librdkafka (up to 2.16 at least, its issue #5049) writes
    "every topic": the 4-byte placeholder of its array count left in place (``00 00 00 00``) where a null
    varint (``00``) belongs. Only that exact shape (three zero bytes after the null, then the three flags and
    an empty tag buffer ending the body) is read that way; Kafka's broker, which ignores bytes left after a
    body, happens to accept it too."""

    def read(self, reader: Reader) -> list | None:
        start = reader.pos
        if (
            reader.remaining == 8
            and bytes(reader.buf[start : start + 4]) == bytes(4)
            and reader.buf[start + 7] == 0
        ):
            reader.pos = start + 4
            return None
        return super().read(reader)


def topic_class(version: int) -> type:
    """The topic struct of a ``version`` answer."""
    return TOPIC_CLASSES[max(v for v in TOPIC_CLASSES if v <= version)]


def _request_fields(version: int) -> list:
    if version == 0:
        return [("topics", Array(String))]  # [] = all
    topics = Array(String, nullable=True)  # null = all, [] = none
    if version >= 9:
        topics = RequestTopicsV9(MetadataRequestTopic.SCHEMA.flexible_version(), nullable=True)
    fields: list = [("topics", topics)]
    if version >= 4:
        fields.append(("allow_auto_topic_creation", Boolean))
    if version >= 8:
        fields.append(("include_cluster_authorized_operations", Boolean))
        fields.append(("include_topic_authorized_operations", Boolean))
    return fields


def _response_fields(version: int) -> list:
    broker = MetadataBroker if version == 0 else MetadataBrokerV1
    fields: list = [("throttle_time_ms", Int32)] if version >= 3 else []
    fields.append(("brokers", Array(broker.SCHEMA)))
    if version >= 2:
        fields.append(("cluster_id", NullableString))
    if version >= 1:
        fields.append(("controller_id", Int32))
    fields.append(("topics", Array(topic_class(version).SCHEMA)))
    if version >= 8:
        fields.append(("cluster_authorized_operations", Int32))
    return fields


METADATA_APIS = tuple(
    (
        api_struct(f"MetadataRequestV{v}", METADATA, v, *_request_fields(v), flexible=v >= 9),
        api_struct(f"MetadataResponseV{v}", METADATA, v, *_response_fields(v), flexible=v >= 9),
    )
    for v in range(MAX_VERSION + 1)
)
MetadataRequestV0, MetadataResponseV0 = METADATA_APIS[0]
MetadataRequestV1, MetadataResponseV1 = METADATA_APIS[1]
MetadataRequestV4, MetadataResponseV4 = METADATA_APIS[4]
MetadataRequestV9, MetadataResponseV9 = METADATA_APIS[9]


def requested_topics(request: object) -> list[str] | None:
    """The topic names a request of any version asks for, without repeats; None for every topic."""
    topics = request.topics  # type: ignore[attr-defined]
    if topics is None or (request.API_VERSION == 0 and not topics):  # type: ignore[attr-defined]
        return None
    names = (t.topic for t in topics) if request.API_VERSION >= 9 else topics  # type: ignore[attr-defined]
    return list(dict.fromkeys(names))
