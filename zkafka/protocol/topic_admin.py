"""The topic admin APIs, declared as schemas: CreateTopics (key 19) v0-v5, DeleteTopics (key 20) v0-v4 and
CreatePartitions (key 37) v0-v2. Pure: bytes in, values out.

What each version adds (Kafka's message JSONs): CreateTopics v1 (0.10.2) ``validate_only`` and a per-topic
``error_message``; v2 ``throttle_time_ms``; v3 as v2; v4 (2.4, KIP-464) lets ``num_partitions`` and
``replication_factor`` be -1 for the broker's defaults; v5 is flexible and answers each created topic's
partitions, replication factor and configs (``topic_config_error_code`` as tagged field 0). DeleteTopics v1
adds ``throttle_time_ms``; v2, v3 as v1; v4 is flexible. CreatePartitions (1.0, KIP-195): v1 as v0; v2 is
flexible.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import CREATE_PARTITIONS, CREATE_TOPICS, DELETE_TOPICS, api_struct
from zkafka.protocol.flexible import TaggedField
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Boolean, Int8, Int16, Int32, NullableString, String

DEFAULT_PARTITIONS = (
    DEFAULT_REPLICATION_FACTOR
) = -1  # v4+: the broker's num.partitions / default.replication.factor

# -- CreateTopics ------------------------------------------------------------------------------------------

ReplicaAssignment = struct_class("ReplicaAssignment", ("partition", Int32), ("broker_ids", Array(Int32)))
TopicConfig = struct_class("TopicConfig", ("name", String), ("value", NullableString))
CreatableTopic = struct_class(
    "CreatableTopic",
    ("topic", String),
    ("num_partitions", Int32),
    ("replication_factor", Int16),
    ("assignments", Array(ReplicaAssignment.SCHEMA)),
    ("configs", Array(TopicConfig.SCHEMA)),
)
CreatedTopicConfig = struct_class(
    "CreatedTopicConfig",
    ("name", String),
    ("value", NullableString),
    ("read_only", Boolean),
    ("config_source", Int8),
    ("is_sensitive", Boolean),
)
CreateTopicResult = struct_class("CreateTopicResult", ("topic", String), ("error", Int16))
CreateTopicResultV1 = struct_class(
    "CreateTopicResultV1", ("topic", String), ("error", Int16), ("error_message", NullableString)
)
CreateTopicResultV5 = struct_class(
    "CreateTopicResultV5",
    ("topic", String),
    ("error", Int16),
    ("error_message", NullableString),
    ("num_partitions", Int32),
    ("replication_factor", Int16),
    ("configs", Array(CreatedTopicConfig.SCHEMA, nullable=True)),
    flexible=True,
    tagged=(TaggedField(0, "topic_config_error_code", Int16, 0),),
)


def _create_topics(version: int) -> tuple[type, type]:
    request = [("topics", Array(CreatableTopic.SCHEMA)), ("timeout_ms", Int32)]
    if version >= 1:
        request.append(("validate_only", Boolean))
    result = (
        CreateTopicResultV5 if version >= 5 else CreateTopicResultV1 if version >= 1 else CreateTopicResult
    )
    response = [("throttle_time_ms", Int32)] if version >= 2 else []
    response.append(("topics", Array(result.SCHEMA)))
    flexible = version >= 5
    return (
        api_struct(f"CreateTopicsRequestV{version}", CREATE_TOPICS, version, *request, flexible=flexible),
        api_struct(f"CreateTopicsResponseV{version}", CREATE_TOPICS, version, *response, flexible=flexible),
    )


CREATE_TOPICS_APIS = tuple(_create_topics(version) for version in range(6))

# -- DeleteTopics ------------------------------------------------------------------------------------------

DeleteTopicResult = struct_class("DeleteTopicResult", ("topic", String), ("error", Int16))


def _delete_topics(version: int) -> tuple[type, type]:
    response = [("throttle_time_ms", Int32)] if version >= 1 else []
    response.append(("topics", Array(DeleteTopicResult.SCHEMA)))
    flexible = version >= 4
    request = (("topics", Array(String)), ("timeout_ms", Int32))
    return (
        api_struct(f"DeleteTopicsRequestV{version}", DELETE_TOPICS, version, *request, flexible=flexible),
        api_struct(f"DeleteTopicsResponseV{version}", DELETE_TOPICS, version, *response, flexible=flexible),
    )


DELETE_TOPICS_APIS = tuple(_delete_topics(version) for version in range(5))

# -- CreatePartitions --------------------------------------------------------------------------------------

PartitionsAssignment = struct_class("PartitionsAssignment", ("broker_ids", Array(Int32)))
PartitionsTopic = struct_class(
    "PartitionsTopic",
    ("topic", String),
    ("count", Int32),
    ("assignments", Array(PartitionsAssignment.SCHEMA, nullable=True)),  # null: the broker places them
)
PartitionsResult = struct_class(
    "PartitionsResult", ("topic", String), ("error", Int16), ("error_message", NullableString)
)


def _create_partitions(version: int) -> tuple[type, type]:
    request = (("topics", Array(PartitionsTopic.SCHEMA)), ("timeout_ms", Int32), ("validate_only", Boolean))
    response = (("throttle_time_ms", Int32), ("results", Array(PartitionsResult.SCHEMA)))
    flexible = version >= 2
    return (
        api_struct(
            f"CreatePartitionsRequestV{version}", CREATE_PARTITIONS, version, *request, flexible=flexible
        ),
        api_struct(
            f"CreatePartitionsResponseV{version}", CREATE_PARTITIONS, version, *response, flexible=flexible
        ),
    )


CREATE_PARTITIONS_APIS = tuple(_create_partitions(version) for version in range(3))
TOPIC_ADMIN_APIS = (*CREATE_TOPICS_APIS, *DELETE_TOPICS_APIS, *CREATE_PARTITIONS_APIS)
