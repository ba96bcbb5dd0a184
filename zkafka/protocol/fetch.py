"""Fetch (API key 1) v0-v11, declared once (``versioned``), and the ``replica_id`` values of Fetch and
ListOffsets. Pure: bytes in, values out.

What each version adds (Kafka's ``FetchRequest.json`` / ``FetchResponse.json``): v1 (0.9) the answer's
``throttle_time_ms``. v2 (0.10) as v1 (message format v1 may be returned). v3 (0.10.1, KIP-74) the request's
``max_bytes`` for the whole answer. v4 (0.11) ``isolation_level``; each answered partition's
``last_stable_offset`` and nullable ``aborted_transactions``. v5 (1.0) ``log_start_offset`` both ways. v6 as
v5. v7 (1.1, KIP-227) fetch sessions: the request's ``session_id``, ``session_epoch`` and
``forgotten_topics_data``, the answer's top-level ``error`` and ``session_id``. v8 as v7. v9 (2.1) each
requested partition's ``current_leader_epoch``. v10 (2.1) as v9 (zstd may be returned). v11 (2.3, KIP-392)
the request's ``rack_id``, each answered partition's ``preferred_read_replica``. v12 is the first flexible
version and v13 names topics by id (not declared).

A partition's ``message_set`` is a ``MessageSet`` field: a broker answers with file regions sent with
sendfile.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from zkafka.protocol.api_keys import FETCH
from zkafka.protocol.types import Array, Int8, Int16, Int32, Int64, MessageSet, String
from zkafka.protocol.versioned import Field, Nested, declare, make, nested_class, pairs

MAX_VERSION = 11
FIRST_SESSION_VERSION = 7  # KIP-227
FIRST_MAX_BYTES_VERSION = 3  # KIP-74: the response-level limit, and the first message always whole

# replica_id values of Fetch and ListOffsets
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2  # may read from a follower, still capped at the high watermark

READ_UNCOMMITTED, READ_COMMITTED = 0, 1  # isolation_level
NO_PREFERRED_READ_REPLICA = -1

_REQUEST_PARTITION = Nested(
    "FetchRequestPartition",
    (
        Field("partition", Int32),
        Field("current_leader_epoch", Int32, 9),  # -1: not known to the client
        Field("fetch_offset", Int64),
        Field("log_start_offset", Int64, 5),  # a follower's; -1 from consumers
        Field("max_bytes", Int32),
    ),
)
_REQUEST_TOPIC = Nested(
    "FetchRequestTopic", (Field("topic", String), Field("partitions", _REQUEST_PARTITION))
)
_FORGOTTEN_TOPIC = Nested(
    "ForgottenTopic", (Field("topic", String), Field("partitions", Array(Int32))), {7: "ForgottenTopic"}
)
_ABORTED_TRANSACTION = Nested(
    "AbortedTransaction",
    (Field("producer_id", Int64), Field("first_offset", Int64)),
    {4: "AbortedTransaction"},
)
_RESPONSE_PARTITION = Nested(
    "FetchResponsePartition",
    (
        Field("partition", Int32),
        Field("error", Int16),
        Field("high_watermark", Int64),
        Field("last_stable_offset", Int64, 4),
        Field("log_start_offset", Int64, 5),
        Field("aborted_transactions", _ABORTED_TRANSACTION, 4, nullable_since=4),
        Field("preferred_read_replica", Int32, 11),
        Field("message_set", MessageSet),
    ),
)
_RESPONSE_TOPIC = Nested(
    "FetchResponseTopic", (Field("topic", String), Field("partitions", _RESPONSE_PARTITION))
)

FETCH_REQUEST = declare(
    "FetchRequest",
    FETCH,
    range(MAX_VERSION + 1),
    (
        Field("replica_id", Int32),
        Field("max_wait_ms", Int32),
        Field("min_bytes", Int32),
        Field("max_bytes", Int32, 3),
        Field("isolation_level", Int8, 4),
        Field("session_id", Int32, 7),
        Field("session_epoch", Int32, 7),
        Field("topics", _REQUEST_TOPIC),
        Field("forgotten_topics_data", _FORGOTTEN_TOPIC, 7),
        Field("rack_id", String, 11),
    ),
)
FETCH_RESPONSE = declare(
    "FetchResponse",
    FETCH,
    range(MAX_VERSION + 1),
    (
        Field("throttle_time_ms", Int32, 1),
        Field("error", Int16, 7),
        Field("session_id", Int32, 7),
        Field("topics", _RESPONSE_TOPIC),
    ),
)
FETCH_APIS = pairs(FETCH_REQUEST, FETCH_RESPONSE)
FetchRequestV0, FetchResponseV0 = FETCH_APIS[0]
FetchRequestV1, FetchResponseV1 = FETCH_APIS[1]
FetchRequestPartition = nested_class(_REQUEST_PARTITION, 0)
FetchRequestTopic = nested_class(_REQUEST_TOPIC, 0)
FetchResponsePartition = nested_class(_RESPONSE_PARTITION, 0)
FetchResponseTopic = nested_class(_RESPONSE_TOPIC, 0)


@cache
def response_partition_class(version: int) -> type:
    """The answered-partition struct of a ``version`` response."""
    return nested_class(_RESPONSE_PARTITION, version)


@cache
def response_topic_class(version: int) -> type:
    """The answered-topic struct of a ``version`` response."""
    return nested_class(_RESPONSE_TOPIC, version)


def fetch_request(
    version: int,
    partitions: Iterable[tuple[str, int, int, int]],
    *,
    forgotten: Iterable[tuple[str, int]] = (),
    leader_epochs: Iterable[int] | None = None,
    **fields: Any,
) -> Any:
    """A ``version`` request for ``(topic, partition, fetch offset, max bytes)`` partitions (grouped by topic
    in order), with ``forgotten`` ``(topic, partition)`` pairs (v7+) and each partition's leader epoch (v9+);
    ``fields`` set the top-level ones, the rest take their defaults (a consumer's: replica -1, no wait, no
    response limit, read_uncommitted, no session)."""
    partitions = list(partitions)
    epochs = list(leader_epochs) if leader_epochs is not None else [-1] * len(partitions)
    topics: dict[str, list] = {}
    for (topic, partition, offset, max_bytes), epoch in zip(partitions, epochs, strict=True):
        topics.setdefault(topic, []).append(
            {
                "partition": partition,
                "current_leader_epoch": epoch,
                "fetch_offset": offset,
                "log_start_offset": -1,
                "max_bytes": max_bytes,
            }
        )
    forgotten_topics: dict[str, list] = {}
    for topic, partition in forgotten:
        forgotten_topics.setdefault(topic, []).append(partition)
    values = {
        "replica_id": CONSUMER_REPLICA_ID,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 2**31 - 1,
        "isolation_level": READ_UNCOMMITTED,
        "session_id": 0,
        "session_epoch": -1,
        "rack_id": "",
        **fields,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [{"topic": t, "partitions": ps} for t, ps in forgotten_topics.items()],
    }
    return make(FETCH_REQUEST[version], **values)
