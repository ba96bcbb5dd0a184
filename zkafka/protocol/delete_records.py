"""DeleteRecords (key 21) v0-v2 (Kafka 0.11's KIP-107): move partitions' log start offsets forward. v1 as v0;
v2 is flexible. Declared once (``versioned``); pure."""

from __future__ import annotations

from zkafka.protocol.api_keys import DELETE_RECORDS
from zkafka.protocol.types import Int16, Int32, Int64, String
from zkafka.protocol.versioned import Field, Nested, declare, pairs

HIGH_WATERMARK = -1  # an offset of -1 asks to delete everything below the high watermark

_PARTITION = Nested("DeleteRecordsPartition", (Field("partition", Int32), Field("offset", Int64)))
_TOPIC = Nested("DeleteRecordsTopic", (Field("name", String), Field("partitions", _PARTITION)))
_PARTITION_RESULT = Nested(
    "DeleteRecordsPartitionResult",
    (Field("partition", Int32), Field("low_watermark", Int64), Field("error", Int16)),
)
_TOPIC_RESULT = Nested(
    "DeleteRecordsTopicResult", (Field("name", String), Field("partitions", _PARTITION_RESULT))
)
DELETE_RECORDS_APIS = pairs(
    declare(
        "DeleteRecordsRequest",
        DELETE_RECORDS,
        range(3),
        (Field("topics", _TOPIC), Field("timeout_ms", Int32)),
        flexible_since=2,
    ),
    declare(
        "DeleteRecordsResponse",
        DELETE_RECORDS,
        range(3),
        (Field("throttle_time_ms", Int32), Field("topics", _TOPIC_RESULT)),
        flexible_since=2,
    ),
)
