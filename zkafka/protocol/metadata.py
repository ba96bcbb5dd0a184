"""Metadata (API key 3) v0 of the 0.8/0.9 line, declared as schemas: the brokers, and each topic's
partitions with their leader, replicas and ISR. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import METADATA, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, String

MetadataBroker = struct_class("MetadataBroker", ("node_id", Int32), ("host", String), ("port", Int32))
PartitionMetadata = struct_class(
    "PartitionMetadata",
    ("error", Int16),
    ("partition", Int32),
    ("leader", Int32),
    ("replicas", Array(Int32)),
    ("isr", Array(Int32)),
)
TopicMetadata = struct_class(
    "TopicMetadata", ("error", Int16), ("topic", String), ("partitions", Array(PartitionMetadata.SCHEMA))
)
MetadataRequestV0 = api_struct("MetadataRequestV0", METADATA, 0, ("topics", Array(String)))  # [] = all
MetadataResponseV0 = api_struct(
    "MetadataResponseV0",
    METADATA,
    0,
    ("brokers", Array(MetadataBroker.SCHEMA)),
    ("topics", Array(TopicMetadata.SCHEMA)),
)
