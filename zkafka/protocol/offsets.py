"""ListOffsets (API key 2, 0.8.2's Offsets) v0, declared as schemas: a partition's offsets before a time.

The times ``LATEST_TIME`` / ``EARLIEST_TIME`` both lines share are ``zkafka.protocol``'s. Pure: bytes in,
values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import LIST_OFFSETS, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Int64, String

ListOffsetsRequestPartition = struct_class(
    "ListOffsetsRequestPartition", ("partition", Int32), ("time", Int64), ("max_num_offsets", Int32)
)
ListOffsetsRequestTopic = struct_class(
    "ListOffsetsRequestTopic", ("topic", String), ("partitions", Array(ListOffsetsRequestPartition.SCHEMA))
)
ListOffsetsResponsePartition = struct_class(
    "ListOffsetsResponsePartition", ("partition", Int32), ("error", Int16), ("offsets", Array(Int64))
)
ListOffsetsResponseTopic = struct_class(
    "ListOffsetsResponseTopic", ("topic", String), ("partitions", Array(ListOffsetsResponsePartition.SCHEMA))
)
ListOffsetsRequestV0 = api_struct(
    "ListOffsetsRequestV0",
    LIST_OFFSETS,
    0,
    ("replica_id", Int32),
    ("topics", Array(ListOffsetsRequestTopic.SCHEMA)),
)
ListOffsetsResponseV0 = api_struct(
    "ListOffsetsResponseV0", LIST_OFFSETS, 0, ("topics", Array(ListOffsetsResponseTopic.SCHEMA))
)
