"""The 0.7 line's configuration: ``server.properties``, ``producer.properties`` and ``consumer.properties``
keys with 0.7.2's defaults. An existing 0.7 file loads as it is."""

from __future__ import annotations

import os

from zkafka.config import (
    METRICS_PORT,
    Config,
    Key,
    bool_key,
    int_key,
    key_table,
    long_key,
    map_key,
    parse_props_list,
    str_key,
)
from zkafka.errors import InvalidConfigError

ZK_KEYS = (
    str_key("zk.connect"),
    int_key("zk.sessiontimeout.ms", 6000, 1),
    int_key("zk.connectiontimeout.ms", lambda c: c["zk.sessiontimeout.ms"], 1),
    int_key("zk.synctime.ms", 2000, 0),
)


class BrokerConfig(Config):
    """``server.properties``: the broker's keys and 0.7.2 defaults."""

    kind = "broker"
    keys = key_table(
        *ZK_KEYS,
        int_key("brokerid", None, 0, required=True),
        str_key("hostname"),
        int_key("port", 6667, 0, 65535),
        METRICS_PORT,
        int_key("num.threads", os.cpu_count() or 1, 1),
        int_key("socket.send.buffer", 102400, 1),
        int_key("socket.receive.buffer", 102400, 1),
        int_key("max.socket.request.bytes", 104857600, 1),
        int_key("max.message.size", 1000000, 0),
        int_key("monitoring.period.secs", 600, 1),
        int_key("num.partitions", 1, 1),
        map_key("topic.partition.count.map"),
        str_key("log.dir", required=True),
        int_key("log.file.size", 1073741824, 5),
        map_key("topic.log.file.size"),
        int_key("log.roll.hours", 24 * 7, 1),
        map_key("topic.log.roll.hours"),
        int_key("log.retention.hours", 24 * 7, 1),
        map_key("topic.log.retention.hours"),
        long_key("log.retention.size", -1),
        map_key("topic.log.retention.size"),
        int_key("log.cleanup.interval.mins", 10, 1),
        int_key("log.cleanup.initial.delay.ms", 60000, 0),  # zkafka: 0.7 hard-coded 60 s
        int_key("log.flush.interval", 500, 1),
        int_key("log.default.flush.scheduler.interval.ms", 3000, 1),
        int_key("log.default.flush.interval.ms", lambda c: c["log.default.flush.scheduler.interval.ms"], 1),
        map_key("topic.flush.intervals.ms"),
        int_key("max.topic.name.length", 255, 1),
        bool_key("enable.zookeeper", True),
    )

    def validate(self) -> None:
        if self["enable.zookeeper"] and not self["zk.connect"]:
            raise InvalidConfigError("zk.connect: required when enable.zookeeper=true")

    def partitions_for(self, topic: str) -> int:
        """Partitions this broker hosts for a topic (``topic.partition.count.map`` else ``num.partitions``)."""
        return self["topic.partition.count.map"].get(topic, self["num.partitions"])


class ProducerConfig(Config):
    """``producer.properties``: sync/async producer keys and 0.7.2 defaults."""

    kind = "producer"
    keys = key_table(
        *ZK_KEYS,
        str_key("broker.list"),
        str_key("producer.type", "sync"),
        str_key("serializer.class", "kafka.serializer.DefaultEncoder"),
        str_key("partitioner.class"),
        str_key("compression.codec", "0"),
        Key("compressed.topics", lambda k, v: [t.strip() for t in v.split(",") if t.strip()], []),
        int_key("num.retries", 0, 0),
        int_key("zk.read.num.retries", 3, 0),
        int_key("buffer.size", 102400, 1),
        int_key("connect.timeout.ms", 5000, 0),
        int_key("socket.timeout.ms", 30000, 0),
        int_key("reconnect.interval", 30000, 1),
        long_key("reconnect.time.interval.ms", 10000000),
        int_key("max.message.size", 1000000, 0),
        int_key("queue.time", 5000, 0),
        int_key("queue.size", 10000, 1),
        int_key("queue.enqueueTimeout.ms", 0),
        int_key("batch.size", 200, 1),
        str_key("event.handler"),
        Key("event.handler.props", lambda k, v: parse_props_list(v), {}),
        str_key("callback.handler"),
        Key("callback.handler.props", lambda k, v: parse_props_list(v), {}),
    )

    def validate(self) -> None:
        from zkafka.records.compression import parse_codec

        if bool(self["zk.connect"]) == bool(self["broker.list"]):
            raise InvalidConfigError("zk.connect, broker.list: exactly one of the two must be set")
        if self["broker.list"] and self["partitioner.class"]:
            raise InvalidConfigError("partitioner.class: cannot be used together with broker.list")
        if self["producer.type"] not in ("sync", "async"):
            raise InvalidConfigError(f"producer.type: {self['producer.type']!r} is not sync or async")
        try:
            self._values["compression.codec"] = parse_codec(self["compression.codec"])
        except Exception:
            raise InvalidConfigError(
                f"compression.codec: {self.raw.get('compression.codec')!r} is not 0/1/2 or none/gzip/snappy"
            ) from None


class ConsumerConfig(Config):
    """``consumer.properties``: the high-level consumer's keys and 0.7.2 defaults."""

    kind = "consumer"
    keys = key_table(
        *ZK_KEYS,
        str_key("groupid", required=True),
        str_key("consumerid"),
        int_key("socket.timeout.ms", 30000, 0),
        int_key("socket.buffersize", 64 * 1024, 1),
        int_key("fetch.size", 1024 * 1024, 1),
        int_key("fetcher.backoff.ms", 1000, 0),
        bool_key("autocommit.enable", True),
        int_key("autocommit.interval.ms", 10000, 1),
        int_key("queuedchunks.max", 10, 1),
        int_key("rebalance.retries.max", 4, 1),
        int_key("rebalance.backoff.ms", lambda c: c["zk.synctime.ms"], 0),
        str_key("autooffset.reset", "smallest"),
        int_key("consumer.timeout.ms", -1),
        bool_key("shallowiterator.enable", False),
        METRICS_PORT,
    )

    def validate(self) -> None:
        if not self["zk.connect"]:
            raise InvalidConfigError("zk.connect: required by the ZooKeeper consumer")
