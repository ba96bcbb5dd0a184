"""The offset management APIs, every version Kafka 3.4 serves in ZooKeeper mode, each declared once
(``versioned``): OffsetCommit (API key 8) v0-v8, OffsetFetch (9) v0-v8, FindCoordinator (10; 0.8.2's
ConsumerMetadata, 0.9's GroupCoordinator) v0-v4 and OffsetDelete (47) v0.

What the versions add: OffsetCommit v1 the group's generation and member id and a per-partition
``timestamp`` (v1 only), v2-v4 ``retention_time_ms``, v3 ``throttle_time_ms``, v6 ``committed_leader_epoch``,
v7 ``group_instance_id`` (KIP-345), v8 flexible; OffsetFetch v1 reads ``__consumer_offsets`` (v0:
ZooKeeper), v2 null ``topics`` (every partition) and a top-level ``error``, v3 ``throttle_time_ms``, v5
``committed_leader_epoch``, v6 flexible, v7 ``require_stable``, v8 batched ``groups``; FindCoordinator v1
``key_type`` and ``error_message``, v3 flexible, v4 batched ``coordinator_keys``. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import GROUP_COORDINATOR, OFFSET_COMMIT, OFFSET_DELETE, OFFSET_FETCH
from zkafka.protocol.types import Array, Boolean, Int8, Int16, Int32, Int64, String
from zkafka.protocol.versioned import Field, Nested, declare, nested_class, pairs

DEFAULT_RETENTION = -1  # OffsetCommit v2-v4 retention_time_ms: the broker's offsets.retention.minutes

NO_LEADER_EPOCH = -1

# -- OffsetCommit (8) -------------------------------------------------------------------------------------

_COMMIT_PARTITION = Nested(
    "OffsetCommitRequestPartition",
    (
        Field("partition", Int32),
        Field("offset", Int64),
        Field("committed_leader_epoch", Int32, 6),
        Field("timestamp", Int64, 1, 1),  # -1: now
        Field("metadata", String, nullable_since=0),
    ),
    aliases={0: "OffsetCommitRequestPartitionV0"},
)
_COMMIT_TOPIC = Nested(
    "OffsetCommitRequestTopic",
    (Field("topic", String), Field("partitions", _COMMIT_PARTITION)),
    aliases={0: "OffsetCommitRequestTopicV0"},
)
_COMMITTED_PARTITION = Nested(
    "OffsetCommitResponsePartition", (Field("partition", Int32), Field("error", Int16))
)
_COMMITTED_TOPIC = Nested(
    "OffsetCommitResponseTopic", (Field("topic", String), Field("partitions", _COMMITTED_PARTITION))
)
OFFSET_COMMIT_REQUEST = declare(
    "OffsetCommitRequest",
    OFFSET_COMMIT,
    range(9),
    (
        Field("group_id", String),
        Field("generation_id", Int32, 1),  # -1: no group management
        Field("member_id", String, 1),
        Field("group_instance_id", String, 7, nullable_since=7),
        Field("retention_time_ms", Int64, 2, 4),  # -1: the broker's default
        Field("topics", _COMMIT_TOPIC),
    ),
    flexible_since=8,
)
OFFSET_COMMIT_RESPONSE = declare(
    "OffsetCommitResponse",
    OFFSET_COMMIT,
    range(9),
    (Field("throttle_time_ms", Int32, 3), Field("topics", _COMMITTED_TOPIC)),
    flexible_since=8,
)

# -- OffsetFetch (9) --------------------------------------------------------------------------------------

_FETCH_TOPIC = Nested("OffsetFetchRequestTopic", (Field("topic", String), Field("partitions", Array(Int32))))
_FETCH_GROUP = Nested(
    "OffsetFetchRequestGroup", (Field("group_id", String), Field("topics", _FETCH_TOPIC, nullable_since=8))
)
_FETCHED_PARTITION = Nested(
    "OffsetFetchResponsePartition",
    (
        Field("partition", Int32),
        Field("offset", Int64),  # -1: nothing committed
        Field("committed_leader_epoch", Int32, 5),
        Field("metadata", String, nullable_since=0),
        Field("error", Int16),
    ),
)
_FETCHED_TOPIC = Nested(
    "OffsetFetchResponseTopic", (Field("topic", String), Field("partitions", _FETCHED_PARTITION))
)
_FETCHED_GROUP = Nested(
    "OffsetFetchResponseGroup",
    (Field("group_id", String), Field("topics", _FETCHED_TOPIC), Field("error", Int16)),
)
OFFSET_FETCH_REQUEST = declare(
    "OffsetFetchRequest",
    OFFSET_FETCH,
    range(9),
    (
        Field("group_id", String, 0, 7),
        Field("topics", _FETCH_TOPIC, 0, 7, nullable_since=2),  # None (v2+): every committed partition
        Field("groups", _FETCH_GROUP, 8),
        Field("require_stable", Boolean, 7),
    ),
    flexible_since=6,
)
OFFSET_FETCH_RESPONSE = declare(
    "OffsetFetchResponse",
    OFFSET_FETCH,
    range(9),
    (
        Field("throttle_time_ms", Int32, 3),
        Field("topics", _FETCHED_TOPIC, 0, 7),
        Field("error", Int16, 2, 7),
        Field("groups", _FETCHED_GROUP, 8),
    ),
    flexible_since=6,
)

# -- FindCoordinator (10) -----------------------------------------------------------------------------------

GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE = 0, 1
_COORDINATOR = Nested(
    "Coordinator",
    (
        Field("key", String),
        Field("node_id", Int32),
        Field("host", String),
        Field("port", Int32),
        Field("error", Int16),
        Field("error_message", String, nullable_since=0),
    ),
)
FIND_COORDINATOR_REQUEST = declare(
    "FindCoordinatorRequest",
    GROUP_COORDINATOR,
    range(5),
    (
        Field("group_id", String, 0, 3),  # Kafka's ``key``: a group id when ``key_type`` is 0
        Field("key_type", Int8, 1),
        Field("coordinator_keys", Array(String), 4),
    ),
    flexible_since=3,
)
FIND_COORDINATOR_RESPONSE = declare(
    "FindCoordinatorResponse",
    GROUP_COORDINATOR,
    range(5),
    (
        Field("throttle_time_ms", Int32, 1),
        Field("error", Int16, 0, 3),
        Field("error_message", String, 1, 3, nullable_since=1),
        Field("node_id", Int32, 0, 3),  # -1, "", -1 when there is none
        Field("host", String, 0, 3),
        Field("port", Int32, 0, 3),
        Field("coordinators", _COORDINATOR, 4),
    ),
    flexible_since=3,
)

# -- OffsetDelete (47) --------------------------------------------------------------------------------------

_DELETE_TOPIC = Nested(
    "OffsetDeleteRequestTopic",
    (
        Field("topic", String),
        Field("partitions", Nested("OffsetDeleteRequestPartition", (Field("partition", Int32),))),
    ),
)
OFFSET_DELETE_REQUEST = declare(
    "OffsetDeleteRequest",
    OFFSET_DELETE,
    range(1),
    (Field("group_id", String), Field("topics", _DELETE_TOPIC)),
)
OFFSET_DELETE_RESPONSE = declare(
    "OffsetDeleteResponse",
    OFFSET_DELETE,
    range(1),
    (
        Field("error", Int16),
        Field("throttle_time_ms", Int32),
        Field(
            "topics",
            Nested(
                "OffsetDeleteResponseTopic",
                (Field("topic", String), Field("partitions", _COMMITTED_PARTITION)),
            ),
        ),
    ),
)

OFFSET_APIS = (
    *pairs(OFFSET_COMMIT_REQUEST, OFFSET_COMMIT_RESPONSE),
    *pairs(OFFSET_FETCH_REQUEST, OFFSET_FETCH_RESPONSE),
    *pairs(FIND_COORDINATOR_REQUEST, FIND_COORDINATOR_RESPONSE),
    *pairs(OFFSET_DELETE_REQUEST, OFFSET_DELETE_RESPONSE),
)

# The classes zkafka's own clients and tests name (0.8.2's and 0.9.0.1's versions).
OffsetCommitRequestV0, OffsetCommitResponseV0 = OFFSET_COMMIT_REQUEST[0], OFFSET_COMMIT_RESPONSE[0]
OffsetCommitRequestV1, OffsetCommitResponseV1 = OFFSET_COMMIT_REQUEST[1], OFFSET_COMMIT_RESPONSE[1]
OffsetCommitRequestV2, OffsetCommitResponseV2 = OFFSET_COMMIT_REQUEST[2], OFFSET_COMMIT_RESPONSE[2]
OffsetFetchRequestV0, OffsetFetchResponseV0 = OFFSET_FETCH_REQUEST[0], OFFSET_FETCH_RESPONSE[0]
OffsetFetchRequestV1, OffsetFetchResponseV1 = OFFSET_FETCH_REQUEST[1], OFFSET_FETCH_RESPONSE[1]
GroupCoordinatorRequestV0, GroupCoordinatorResponseV0 = (
    FIND_COORDINATOR_REQUEST[0],
    FIND_COORDINATOR_RESPONSE[0],
)
ConsumerMetadataRequest = GroupCoordinatorRequestV0
ConsumerMetadataResponse = GroupCoordinatorResponseV0
OffsetCommitRequestPartitionV0 = nested_class(_COMMIT_PARTITION, 0)
OffsetCommitRequestPartitionV1 = nested_class(_COMMIT_PARTITION, 1)
OffsetCommitRequestTopicV0 = nested_class(_COMMIT_TOPIC, 0)
OffsetCommitRequestTopicV1 = nested_class(_COMMIT_TOPIC, 1)
OffsetCommitResponsePartition = nested_class(_COMMITTED_PARTITION, 0)
OffsetCommitResponseTopic = nested_class(_COMMITTED_TOPIC, 0)
OffsetFetchRequestTopic = nested_class(_FETCH_TOPIC, 0)
OffsetFetchResponsePartition = nested_class(_FETCHED_PARTITION, 0)
OffsetFetchResponseTopic = nested_class(_FETCHED_TOPIC, 0)
