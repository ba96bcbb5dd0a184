"""zkafka's 0.9 group consumer: groups managed by the broker-side coordinator (``GroupConsumer``), in the
shape of 0.9's ``KafkaConsumer``; see ``consumer.py``. The 0.8 line only (0.7 has no group coordinator)."""

from zkafka.consumer.group.consumer import GroupConsumer
from zkafka.consumer.group.consumer_coordinator import CommitFailedError
from zkafka.consumer.group.subscription import (
    ConsumerRecord,
    NoOffsetForPartitionError,
    OffsetAndMetadata,
    RebalanceListener,
    TopicPartition,
)
from zkafka.errors import RebalanceInProgressError

__all__ = [
    "CommitFailedError",
    "ConsumerRecord",
    "GroupConsumer",
    "NoOffsetForPartitionError",
    "OffsetAndMetadata",
    "RebalanceInProgressError",
    "RebalanceListener",
    "TopicPartition",
]
