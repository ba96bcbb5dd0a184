"""Metadata (API key 3) v0-v9, declared as schemas: the brokers, the controller, and each topic's partitions
with their leader, replicas and ISR. Pure: bytes in, values out.

What each version adds (Kafka's ``MetadataRequest.json`` / ``MetadataResponse.json``):
v1 (0.10.0): a null topic list asks for every topic (an empty one for none); brokers carry ``rack``, the
answer ``controller_id``, each topic ``is_internal``. v2 (0.10.1): ``cluster_id``. v3 (0.11):
``throttle_time_ms`` first. v4: the request's ``allow_auto_topic_creation``. v5 (1.0): each partition's
``offline_replicas``. v6: as v5. v7 (2.1): each partition's ``leader_epoch``. v8 (2.3): the request asks for
authorized operations; the answer has ``topic_authorized_operations`` per topic and
``cluster_authorized_operations`` (-2147483648 when not asked for). v9 (2.4): the first flexible version
(its topics are ``{name}`` structs, each with a tag buffer). Every version is one declaration
(``versioned``), each field with the versions that carry it.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import METADATA
from zkafka.protocol.flexible import CompactArray
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Boolean, Int16, Int32, Reader, String
from zkafka.protocol.versioned import Field, Nested, declare, nested_class, pairs

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)  # Integer.MIN_VALUE: "not asked for"
# AclOperation codes as a bitfield: what a broker with no authorizer allows on a topic (READ, WRITE, CREATE,
# DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) and on the cluster (CREATE, ALTER, DESCRIBE,
# CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE): Kafka's ``AclEntry.supportedOperations``.
TOPIC_OPERATIONS = sum(1 << code for code in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << code for code in (5, 7, 8, 9, 10, 11, 12))
MAX_VERSION = 9

_BROKER = Nested(
    "MetadataBroker",
    (
        Field("node_id", Int32),
        Field("host", String),
        Field("port", Int32),
        Field("rack", String, 1, nullable_since=1),
    ),
)
_PARTITION = Nested(
    "PartitionMetadata",
    (
        Field("error", Int16),
        Field("partition", Int32),
        Field("leader", Int32),
        Field("leader_epoch", Int32, 7),
        Field("replicas", Array(Int32)),
        Field("isr", Array(Int32)),
        Field("offline_replicas", Array(Int32), 5),  # assigned replicas whose broker is not live
    ),
)
_TOPIC = Nested(
    "TopicMetadata",
    (
        Field("error", Int16),
        Field("topic", String),
        Field("is_internal", Boolean, 1),
        Field("partitions", _PARTITION),
        Field("topic_authorized_operations", Int32, 8),
    ),
)
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


METADATA_REQUEST = declare(
    "MetadataRequest",
    METADATA,
    range(MAX_VERSION + 1),
    (
        Field("topics", Array(String), 0, 8, nullable_since=1),  # v0: [] = all; v1+: null = all, [] = none
        Field("topics", RequestTopicsV9(MetadataRequestTopic.SCHEMA.flexible_version(), nullable=True), 9),
        Field("allow_auto_topic_creation", Boolean, 4),
        Field("include_cluster_authorized_operations", Boolean, 8),
        Field("include_topic_authorized_operations", Boolean, 8),
    ),
    flexible_since=9,
)
METADATA_RESPONSE = declare(
    "MetadataResponse",
    METADATA,
    range(MAX_VERSION + 1),
    (
        Field("throttle_time_ms", Int32, 3),
        Field("brokers", _BROKER),
        Field("cluster_id", String, 2, nullable_since=2),
        Field("controller_id", Int32, 1),
        Field("topics", _TOPIC),
        Field("cluster_authorized_operations", Int32, 8),
    ),
    flexible_since=9,
)
METADATA_APIS = pairs(METADATA_REQUEST, METADATA_RESPONSE)
MetadataRequestV0, MetadataResponseV0 = METADATA_APIS[0]
MetadataRequestV1, MetadataResponseV1 = METADATA_APIS[1]
MetadataRequestV4, MetadataResponseV4 = METADATA_APIS[4]
MetadataRequestV9, MetadataResponseV9 = METADATA_APIS[9]
MetadataBroker, MetadataBrokerV1 = nested_class(_BROKER, 0), nested_class(_BROKER, 1)
PartitionMetadata = nested_class(_PARTITION, 0)
PartitionMetadataV5, PartitionMetadataV7 = nested_class(_PARTITION, 5), nested_class(_PARTITION, 7)
TopicMetadata = nested_class(_TOPIC, 0)


def topic_class(version: int) -> type:
    """The topic struct of a ``version`` answer."""
    return nested_class(_TOPIC, version)


def requested_topics(request: object) -> list[str] | None:
    """The topic names a request of any version asks for, without repeats; None for every topic."""
    topics = request.topics  # type: ignore[attr-defined]
    if topics is None or (request.API_VERSION == 0 and not topics):  # type: ignore[attr-defined]
        return None
    names = (t.topic for t in topics) if request.API_VERSION >= 9 else topics  # type: ignore[attr-defined]
    return list(dict.fromkeys(names))
