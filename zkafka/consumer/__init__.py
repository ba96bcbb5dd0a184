"""Consumers: SimpleConsumer and SimpleConsumer08 (one broker) and the ZooKeeper high-level consumers (0.7, 0.8).

The names are imported on first use, so ``from zkafka.consumer import SimpleConsumer`` (a Spark executor, the
tools) does not load the high-level consumer.
"""

from zkafka.utils import lazy_exports

_EXPORTS = {
    "Blacklist": "zkafka.topic_count",
    "ConsumerIdConflictError": "membership",
    "ConsumerRebalanceFailedError": "rebalancer",
    "ConsumerTimeoutError": "stream",
    "KafkaStream": "stream",
    "MessageAndMetadata": "stream07",
    "MessageAndMetadata08": "stream08",
    "SimpleConsumer": "simple07",
    "SimpleConsumer08": "simple08",
    "Whitelist": "zkafka.topic_count",
    "ZookeeperConsumerConnector": "connector07",
    "ZookeeperConsumerConnector08": "connector08",
    "create_consumer_connector": "connector07",
    "create_consumer_connector08": "connector08",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
