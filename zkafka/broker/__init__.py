"""The Kafka 0.7 broker: the log, the socket server, the request handlers and the ZooKeeper registry."""
