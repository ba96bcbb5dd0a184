"""ListOffsets (API key 2, 0.8.2's Offsets) v0-v5, declared once (``versioned``): a partition's offsets before
a time (v0) or the offset of a time (v1+). Pure: bytes in, values out.

What each version adds (Kafka's ``ListOffsetsRequest.json`` / ``ListOffsetsResponse.json``): v1 (0.10.1,
KIP-79) drops ``max_num_offsets`` and answers one ``timestamp`` and ``offset`` instead of a list. v2 (0.11) the
request's ``isolation_level``, the answer's ``throttle_time_ms`` first. v3 as v2. v4 (2.1) each requested
partition's ``current_leader_epoch`` and each answered partition's ``leader_epoch``. v5 as v4. v6 is the first
flexible version (not declared).

The times ``LATEST_TIME`` / ``EARLIEST_TIME`` both lines share are ``zkafka.protocol``'s.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import LIST_OFFSETS
from zkafka.protocol.types import Array, Int8, Int16, Int32, Int64, String
from zkafka.protocol.versioned import Field, Nested, declare, nested_class, pairs

MAX_VERSION = 5
NO_TIMESTAMP = -1  # v1+: the timestamp of an answer to -1 (latest) or -2 (earliest)

_REQUEST_PARTITION = Nested(
    "ListOffsetsRequestPartition",
    (
        Field("partition", Int32),
        Field("current_leader_epoch", Int32, 4),  # -1: not known to the client
        Field("time", Int64),
        Field("max_num_offsets", Int32, 0, 0),
    ),
)
_REQUEST_TOPIC = Nested(
    "ListOffsetsRequestTopic", (Field("topic", String), Field("partitions", _REQUEST_PARTITION))
)
_RESPONSE_PARTITION = Nested(
    "ListOffsetsResponsePartition",
    (
        Field("partition", Int32),
        Field("error", Int16),
        Field("offsets", Array(Int64), 0, 0),
        Field("timestamp", Int64, 1),
        Field("offset", Int64, 1),
        Field("leader_epoch", Int32, 4),
    ),
)
_RESPONSE_TOPIC = Nested(
    "ListOffsetsResponseTopic", (Field("topic", String), Field("partitions", _RESPONSE_PARTITION))
)
LIST_OFFSETS_REQUEST = declare(
    "ListOffsetsRequest",
    LIST_OFFSETS,
    range(MAX_VERSION + 1),
    (
        Field("replica_id", Int32),
        Field("isolation_level", Int8, 2),
        Field("topics", _REQUEST_TOPIC),
    ),
)
LIST_OFFSETS_RESPONSE = declare(
    "ListOffsetsResponse",
    LIST_OFFSETS,
    range(MAX_VERSION + 1),
    (Field("throttle_time_ms", Int32, 2), Field("topics", _RESPONSE_TOPIC)),
)
LIST_OFFSETS_APIS = pairs(LIST_OFFSETS_REQUEST, LIST_OFFSETS_RESPONSE)
ListOffsetsRequestV0, ListOffsetsResponseV0 = LIST_OFFSETS_APIS[0]
ListOffsetsRequestPartition = nested_class(_REQUEST_PARTITION, 0)
ListOffsetsRequestTopic = nested_class(_REQUEST_TOPIC, 0)
ListOffsetsResponsePartition = nested_class(_RESPONSE_PARTITION, 0)
ListOffsetsResponseTopic = nested_class(_RESPONSE_TOPIC, 0)


def response_partition_class(version: int) -> type:
    """The answered-partition struct of a ``version`` response."""
    return nested_class(_RESPONSE_PARTITION, version)


def list_offsets_request(version: int, replica_id: int, partitions: list[tuple[str, int, int]]) -> object:
    """A ``version`` request (v1+: one offset per partition) for ``(topic, partition, time)`` partitions,
    grouped by topic in order; v4+ sends no current leader epoch (-1), v2+ read_uncommitted."""
    request_class = LIST_OFFSETS_APIS[version][0]
    partition_class, topic_class = (
        nested_class(_REQUEST_PARTITION, version),
        nested_class(_REQUEST_TOPIC, version),
    )
    topics: dict[str, list] = {}
    for topic, partition, time in partitions:
        fields = {"partition": partition, "current_leader_epoch": -1, "time": time, "max_num_offsets": 1}
        topics.setdefault(topic, []).append(
            partition_class(**{f: fields[f] for f in partition_class._fields})
        )
    wire_topics = [topic_class(t, ps) for t, ps in topics.items()]
    top = {"replica_id": replica_id, "isolation_level": 0, "topics": wire_topics}
    return request_class(**{f: top[f] for f in request_class._fields})
