"""The offset management APIs of 0.8.2/0.9 (the protocol guide's "Offset Commit/Fetch API"), declared as
schemas: OffsetCommit (API key 8) v0-v2, OffsetFetch (9) v0/v1 and GroupCoordinator (10, 0.8.2's
ConsumerMetadata) v0. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import GROUP_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Int64, String

# -- OffsetCommit (8) -------------------------------------------------------------------------------------

OffsetCommitRequestPartitionV0 = struct_class(
    "OffsetCommitRequestPartitionV0", ("partition", Int32), ("offset", Int64), ("metadata", String)
)
OffsetCommitRequestPartitionV1 = struct_class(
    "OffsetCommitRequestPartitionV1",
    ("partition", Int32),
    ("offset", Int64),
    ("timestamp", Int64),  # -1: now
    ("metadata", String),
)
OffsetCommitRequestTopicV0 = struct_class(
    "OffsetCommitRequestTopicV0",
    ("topic", String),
    ("partitions", Array(OffsetCommitRequestPartitionV0.SCHEMA)),
)
OffsetCommitRequestTopicV1 = struct_class(
    "OffsetCommitRequestTopicV1",
    ("topic", String),
    ("partitions", Array(OffsetCommitRequestPartitionV1.SCHEMA)),
)
OffsetCommitResponsePartition = struct_class(
    "OffsetCommitResponsePartition", ("partition", Int32), ("error", Int16)
)
OffsetCommitResponseTopic = struct_class(
    "OffsetCommitResponseTopic",
    ("topic", String),
    ("partitions", Array(OffsetCommitResponsePartition.SCHEMA)),
)
OffsetCommitRequestV0 = api_struct(
    "OffsetCommitRequestV0",
    OFFSET_COMMIT,
    0,
    ("group_id", String),
    ("topics", Array(OffsetCommitRequestTopicV0.SCHEMA)),
)
OffsetCommitRequestV1 = api_struct(
    "OffsetCommitRequestV1",
    OFFSET_COMMIT,
    1,
    ("group_id", String),
    ("generation_id", Int32),  # -1: no group management
    ("member_id", String),
    ("topics", Array(OffsetCommitRequestTopicV1.SCHEMA)),
)
OffsetCommitRequestV2 = api_struct(
    "OffsetCommitRequestV2",
    OFFSET_COMMIT,
    2,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
    ("retention_time_ms", Int64),  # -1: the broker's default
    ("topics", Array(OffsetCommitRequestTopicV0.SCHEMA)),
)
_offset_commit_response = (("topics", Array(OffsetCommitResponseTopic.SCHEMA)),)
OffsetCommitResponseV0 = api_struct("OffsetCommitResponseV0", OFFSET_COMMIT, 0, *_offset_commit_response)
OffsetCommitResponseV1 = api_struct("OffsetCommitResponseV1", OFFSET_COMMIT, 1, *_offset_commit_response)
OffsetCommitResponseV2 = api_struct("OffsetCommitResponseV2", OFFSET_COMMIT, 2, *_offset_commit_response)

# -- OffsetFetch (9) --------------------------------------------------------------------------------------

OffsetFetchRequestTopic = struct_class(
    "OffsetFetchRequestTopic", ("topic", String), ("partitions", Array(Int32))
)
OffsetFetchResponsePartition = struct_class(
    "OffsetFetchResponsePartition",
    ("partition", Int32),
    ("offset", Int64),  # -1: nothing committed
    ("metadata", String),
    ("error", Int16),
)
OffsetFetchResponseTopic = struct_class(
    "OffsetFetchResponseTopic", ("topic", String), ("partitions", Array(OffsetFetchResponsePartition.SCHEMA))
)
_offset_fetch_request = (("group_id", String), ("topics", Array(OffsetFetchRequestTopic.SCHEMA)))
_offset_fetch_response = (("topics", Array(OffsetFetchResponseTopic.SCHEMA)),)
OffsetFetchRequestV0 = api_struct(
    "OffsetFetchRequestV0", OFFSET_FETCH, 0, *_offset_fetch_request
)  # ZooKeeper
OffsetFetchRequestV1 = api_struct("OffsetFetchRequestV1", OFFSET_FETCH, 1, *_offset_fetch_request)  # Kafka
OffsetFetchResponseV0 = api_struct("OffsetFetchResponseV0", OFFSET_FETCH, 0, *_offset_fetch_response)
OffsetFetchResponseV1 = api_struct("OffsetFetchResponseV1", OFFSET_FETCH, 1, *_offset_fetch_response)

# -- GroupCoordinator (10; 0.8.2's ConsumerMetadata) ------------------------------------------------------

GroupCoordinatorRequestV0 = api_struct(
    "GroupCoordinatorRequestV0", GROUP_COORDINATOR, 0, ("group_id", String)
)
GroupCoordinatorResponseV0 = api_struct(
    "GroupCoordinatorResponseV0",
    GROUP_COORDINATOR,
    0,
    ("error", Int16),
    ("node_id", Int32),  # -1, "", -1 when there is none
    ("host", String),
    ("port", Int32),
)
ConsumerMetadataRequest = GroupCoordinatorRequestV0
ConsumerMetadataResponse = GroupCoordinatorResponseV0
