"""zkafka: the ZooKeeper-era Apache Kafka 0.7 cluster in Python."""

__version__ = "0.1.0"
