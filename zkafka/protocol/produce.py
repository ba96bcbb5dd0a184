"""Produce (API key 0) v0-v8, declared as schemas. Pure: bytes in, values out.

A partition's ``message_set`` is a ``MessageSet`` field (reads give a memoryview; writes take bytes or a file
region); its entries are ``zkafka.records``' business. ``produce_wire`` reads and writes the request body and
the answer of every version directly on the hot path.

What each version adds (Kafka's ``ProduceRequest.json`` / ``ProduceResponse.json``): v1 (0.9) the answer's
``throttle_time_ms``. v2 (0.10) each partition's ``log_append_time_ms`` (-1 for CreateTime). v3 (0.11) the
request's nullable ``transactional_id`` first, and its records must be one record batch (magic 2). v4 as v3.
v5 (1.0) each partition's ``log_start_offset``. v6, v7 (2.1: zstd allowed) as v5. v8 (2.4) each partition's
``record_errors`` and ``error_message``. v9 is the first flexible version (not declared).
"""

from __future__ import annotations

from zkafka.protocol.api_keys import PRODUCE, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Int64, MessageSet, NullableString, String

MAX_VERSION = 8
FIRST_BATCH_VERSION = 3  # from v3 the records are one record batch (magic 2)
FIRST_ZSTD_VERSION = 7
NO_TIMESTAMP = -1  # log_append_time_ms of a CreateTime topic

ProduceRequestPartition = struct_class(
    "ProduceRequestPartition", ("partition", Int32), ("message_set", MessageSet)
)
ProduceRequestTopic = struct_class(
    "ProduceRequestTopic", ("topic", String), ("partitions", Array(ProduceRequestPartition.SCHEMA))
)
_PARTITION_V0 = (("partition", Int32), ("error", Int16), ("offset", Int64))  # offset: the base offset
ProduceResponsePartition = struct_class("ProduceResponsePartition", *_PARTITION_V0)
ProduceResponsePartitionV2 = struct_class(
    "ProduceResponsePartitionV2", *_PARTITION_V0, ("log_append_time_ms", Int64)
)
ProduceResponsePartitionV5 = struct_class(
    "ProduceResponsePartitionV5", *_PARTITION_V0, ("log_append_time_ms", Int64), ("log_start_offset", Int64)
)
RecordError = struct_class("RecordError", ("batch_index", Int32), ("batch_index_error_message", NullableString))
ProduceResponsePartitionV8 = struct_class(
    "ProduceResponsePartitionV8",
    *_PARTITION_V0,
    ("log_append_time_ms", Int64),
    ("log_start_offset", Int64),
    ("record_errors", Array(RecordError.SCHEMA)),
    ("error_message", NullableString),
)
ProduceResponseTopic = struct_class(
    "ProduceResponseTopic", ("topic", String), ("partitions", Array(ProduceResponsePartition.SCHEMA))
)


def response_partition_class(version: int) -> type:
    """The partition struct of a ``version`` answer."""
    if version >= 8:
        return ProduceResponsePartitionV8
    if version >= 5:
        return ProduceResponsePartitionV5
    return ProduceResponsePartitionV2 if version >= 2 else ProduceResponsePartition


_TOPICS = {ProduceResponsePartition: ProduceResponseTopic} | {
    partition: struct_class(
        f"ProduceResponseTopic{partition.__name__[-2:]}", ("topic", String), ("partitions", Array(partition.SCHEMA))
    )
    for partition in (ProduceResponsePartitionV2, ProduceResponsePartitionV5, ProduceResponsePartitionV8)
}


def response_topic_class(version: int) -> type:
    """The topic struct of a ``version`` answer."""
    return _TOPICS[response_partition_class(version)]


_produce_request = (("acks", Int16), ("timeout_ms", Int32), ("topics", Array(ProduceRequestTopic.SCHEMA)))


def _request(version: int) -> type:
    fields = (("transactional_id", NullableString), *_produce_request) if version >= 3 else _produce_request
    return api_struct(f"ProduceRequestV{version}", PRODUCE, version, *fields)


def _response(version: int) -> type:
    topics = ("topics", Array(response_topic_class(version).SCHEMA))
    if version == 0:
        return api_struct("ProduceResponseV0", PRODUCE, 0, topics)
    return api_struct(f"ProduceResponseV{version}", PRODUCE, version, topics, ("throttle_time_ms", Int32))


PRODUCE_APIS = tuple((_request(version), _response(version)) for version in range(MAX_VERSION + 1))
ProduceRequestV0, ProduceResponseV0 = PRODUCE_APIS[0]
ProduceRequestV1, ProduceResponseV1 = PRODUCE_APIS[1]

