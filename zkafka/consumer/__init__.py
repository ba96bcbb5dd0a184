"""Consumers: SimpleConsumer (one broker) and the ZooKeeper high-level consumer."""

from zkafka.consumer.connector import (
    ConsumerIdConflictError,
    ZookeeperConsumerConnector,
    create_consumer_connector,
)
from zkafka.consumer.rebalancer import ConsumerRebalanceFailedError
from zkafka.consumer.simple import SimpleConsumer
from zkafka.consumer.stream import ConsumerTimeoutError, KafkaStream, MessageAndMetadata
from zkafka.topic_count import Blacklist, Whitelist

__all__ = [
    "Blacklist",
    "ConsumerIdConflictError",
    "ConsumerRebalanceFailedError",
    "ConsumerTimeoutError",
    "KafkaStream",
    "MessageAndMetadata",
    "SimpleConsumer",
    "Whitelist",
    "ZookeeperConsumerConnector",
    "create_consumer_connector",
]
