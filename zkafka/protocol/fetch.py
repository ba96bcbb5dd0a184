"""Fetch (API key 1) v0/v1 of the 0.8/0.9 line, declared as schemas, and the ``replica_id`` values of Fetch
and ListOffsets.

A partition's ``message_set`` is a ``MessageSet`` field: a broker answers with file regions sent with
sendfile. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import FETCH, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Int64, MessageSet, String

# replica_id values of Fetch and ListOffsets
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2  # may read from a follower, still capped at the high watermark

FetchRequestPartition = struct_class(
    "FetchRequestPartition", ("partition", Int32), ("fetch_offset", Int64), ("max_bytes", Int32)
)
FetchRequestTopic = struct_class(
    "FetchRequestTopic", ("topic", String), ("partitions", Array(FetchRequestPartition.SCHEMA))
)
FetchResponsePartition = struct_class(
    "FetchResponsePartition",
    ("partition", Int32),
    ("error", Int16),
    ("high_watermark", Int64),
    ("message_set", MessageSet),
)
FetchResponseTopic = struct_class(
    "FetchResponseTopic", ("topic", String), ("partitions", Array(FetchResponsePartition.SCHEMA))
)
_fetch_request = (
    ("replica_id", Int32),
    ("max_wait_ms", Int32),
    ("min_bytes", Int32),
    ("topics", Array(FetchRequestTopic.SCHEMA)),
)
FetchRequestV0 = api_struct("FetchRequestV0", FETCH, 0, *_fetch_request)
FetchRequestV1 = api_struct("FetchRequestV1", FETCH, 1, *_fetch_request)
FetchResponseV0 = api_struct("FetchResponseV0", FETCH, 0, ("topics", Array(FetchResponseTopic.SCHEMA)))
FetchResponseV1 = api_struct(
    "FetchResponseV1",
    FETCH,
    1,
    ("throttle_time_ms", Int32),  # first
    ("topics", Array(FetchResponseTopic.SCHEMA)),
)
