"""OffsetForLeaderEpoch (key 23, Kafka 0.11's KIP-101) v0-v4: where a leader epoch ends on the leader, asked by a
follower before it truncates. v1 answers the epoch found (KIP-279), v2 adds ``current_leader_epoch`` (fencing)
and ``throttle_time_ms``, v3 ``replica_id``, v4 is flexible. Declared once (``versioned``); pure."""

from __future__ import annotations

from zkafka.protocol.api_keys import OFFSET_FOR_LEADER_EPOCH
from zkafka.protocol.types import Int16, Int32, Int64, String
from zkafka.protocol.versioned import Field, Nested, declare, pairs

DEBUG_REPLICA = -2  # v3's default replica id: a debug consumer

_PARTITION = Nested(
    "OffsetForLeaderPartition",
    (Field("partition", Int32), Field("current_leader_epoch", Int32, since=2), Field("leader_epoch", Int32)),
)
_TOPIC = Nested("OffsetForLeaderTopic", (Field("topic", String), Field("partitions", _PARTITION)))
_END_OFFSET = Nested(
    "EpochEndOffset",
    (
        Field("error", Int16),
        Field("partition", Int32),
        Field("leader_epoch", Int32, since=1),
        Field("end_offset", Int64),
    ),
)
_TOPIC_RESULT = Nested(
    "OffsetForLeaderTopicResult", (Field("topic", String), Field("partitions", _END_OFFSET))
)
OFFSET_FOR_LEADER_EPOCH_APIS = pairs(
    declare(
        "OffsetForLeaderEpochRequest",
        OFFSET_FOR_LEADER_EPOCH,
        range(5),
        (Field("replica_id", Int32, since=3), Field("topics", _TOPIC)),
        flexible_since=4,
    ),
    declare(
        "OffsetForLeaderEpochResponse",
        OFFSET_FOR_LEADER_EPOCH,
        range(5),
        (Field("throttle_time_ms", Int32, since=2), Field("topics", _TOPIC_RESULT)),
        flexible_since=4,
    ),
)
