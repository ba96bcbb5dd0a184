"""Consumers: SimpleConsumer (one broker) and the ZooKeeper high-level consumer."""
