"""zkafka's 0.9 group consumer: groups managed by the broker-side coordinator (``GroupConsumer``), in the
shape of 0.9's ``KafkaConsumer``; see ``consumer.py``."""

from zkafka.consumer09.consumer import GroupConsumer
from zkafka.consumer09.coordinator import CommitFailedError
from zkafka.consumer09.subscription import (
    ConsumerRecord,
    NoOffsetForPartitionError,
    OffsetAndMetadata,
    RebalanceListener,
    TopicPartition,
)

__all__ = [
    "CommitFailedError",
    "ConsumerRecord",
    "GroupConsumer",
    "NoOffsetForPartitionError",
    "OffsetAndMetadata",
    "RebalanceListener",
    "TopicPartition",
]
