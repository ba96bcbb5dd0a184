"""Produce (API key 0) v0/v1 of the 0.8/0.9 line, declared as schemas.

A partition's ``message_set`` is a ``MessageSet`` field (reads give a memoryview; writes take bytes or a file
region); its entries are ``zkafka.records``' business. ``produce_wire`` reads and writes these same classes
directly on the hot path. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import PRODUCE, api_struct
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int16, Int32, Int64, MessageSet, String

ProduceRequestPartition = struct_class(
    "ProduceRequestPartition", ("partition", Int32), ("message_set", MessageSet)
)
ProduceRequestTopic = struct_class(
    "ProduceRequestTopic", ("topic", String), ("partitions", Array(ProduceRequestPartition.SCHEMA))
)
ProduceResponsePartition = struct_class(
    "ProduceResponsePartition",
    ("partition", Int32),
    ("error", Int16),
    ("offset", Int64),  # base offset
)
ProduceResponseTopic = struct_class(
    "ProduceResponseTopic", ("topic", String), ("partitions", Array(ProduceResponsePartition.SCHEMA))
)
_produce_request = (("acks", Int16), ("timeout_ms", Int32), ("topics", Array(ProduceRequestTopic.SCHEMA)))
ProduceRequestV0 = api_struct("ProduceRequestV0", PRODUCE, 0, *_produce_request)
ProduceRequestV1 = api_struct("ProduceRequestV1", PRODUCE, 1, *_produce_request)
ProduceResponseV0 = api_struct(
    "ProduceResponseV0", PRODUCE, 0, ("topics", Array(ProduceResponseTopic.SCHEMA))
)
ProduceResponseV1 = api_struct(
    "ProduceResponseV1",
    PRODUCE,
    1,
    ("topics", Array(ProduceResponseTopic.SCHEMA)),
    ("throttle_time_ms", Int32),  # last
)
