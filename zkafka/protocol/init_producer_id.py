"""InitProducerId (key 22) v0-v4 (Kafka 0.11's KIP-98): a producer asks for its producer id and epoch. v1 as
v0; v2 is flexible; v3 (KIP-360) names the producer's current id and epoch; v4 as v3 (PRODUCER_FENCED).
Declared once (``versioned``); pure."""

from __future__ import annotations

from zkafka.protocol.api_keys import INIT_PRODUCER_ID
from zkafka.protocol.types import Int16, Int32, Int64, String
from zkafka.protocol.versioned import Field, declare, pairs

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1

INIT_PRODUCER_ID_APIS = pairs(
    declare(
        "InitProducerIdRequest",
        INIT_PRODUCER_ID,
        range(5),
        (
            Field("transactional_id", String, nullable_since=0),
            Field("transaction_timeout_ms", Int32),
            Field("producer_id", Int64, since=3),
            Field("producer_epoch", Int16, since=3),
        ),
        flexible_since=2,
    ),
    declare(
        "InitProducerIdResponse",
        INIT_PRODUCER_ID,
        range(5),
        (
            Field("throttle_time_ms", Int32),
            Field("error", Int16),
            Field("producer_id", Int64),
            Field("producer_epoch", Int16),
        ),
        flexible_since=2,
    ),
)
