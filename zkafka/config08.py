"""Configuration of the 0.8 line: 0.8.2 broker, topic-override, producer and consumer keys (+ the 0.9 consumer).

The ``.properties`` loader and the Key machinery are config.py's; this module holds the 0.8.2 key tables and
defaults and their precedence rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from zkafka.cluster.end_point import LISTENER_KEYS, BrokerListeners
from zkafka.config import (
    HOUR_MS,
    INT_MAX,
    LINE_08,
    LONG_MAX,
    METRICS_PORT,
    Config,
    Key,
    bool_key,
    choice_key,
    csv_key,
    float_key,
    int_key,
    key_table,
    long_key,
    str_key,
)
from zkafka.coordinator.config_keys import COORDINATOR_KEYS
from zkafka.errors import InvalidConfigError
from zkafka.log.log_config import COMPRESSION_TYPES
from zkafka.network.client_security import CLIENT_SECURITY_KEYS
from zkafka.network.connection_quotas import parse_overrides
from zkafka.network.sasl_authenticator import SASL_KEYS
from zkafka.network.ssl_factory import SSL_KEYS
from zkafka.quota.quota_manager import QUOTA_KEYS
from zkafka.records.format08 import LOG_OVERHEAD
from zkafka.records.format_version import default_format_version, parse_format_version
from zkafka.security.authorizer import AUTHORIZER_KEYS
from zkafka.zk.acls import ZK_ACL_KEYS

DEFAULT_FETCH_MESSAGE_MAX_BYTES = 1024 * 1024

MINUTE_MS = 60 * 1000

# 0.8.2's Message.MinHeaderSize and MessageSet.LogOverhead.
MESSAGE_MIN_HEADER_SIZE = 14

TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_CLIENT_ID = re.compile(r"[a-zA-Z0-9._-]*")
CODECS_08 = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3}


def parse_codec08(key: str, text: str) -> int:
    """0.8.2's ``compression.codec``: a name (none/gzip/snappy/lz4) or its id (0-3)."""
    value = text.strip().lower()
    if value.isdigit() and int(value) in CODECS_08.values():
        return int(value)
    if value in CODECS_08:
        return CODECS_08[value]
    raise InvalidConfigError(f"{key}: {text!r} is not 0/1/2/3 or none/gzip/snappy/lz4")


def validate_client_id(key: str, value: str) -> None:
    """0.8.2's rule for client and group ids: ASCII alphanumerics, '.', '_' and '-'."""
    if not _CLIENT_ID.fullmatch(value):
        raise InvalidConfigError(
            f"{key}: {value!r} contains a character other than ASCII alphanumerics, '.', '_' and '-'"
        )


ZK_KEYS_08 = (
    str_key("zookeeper.connect"),
    int_key("zookeeper.session.timeout.ms", 6000, 1),
    int_key("zookeeper.connection.timeout.ms", lambda c: c["zookeeper.session.timeout.ms"], 1),
    int_key("zookeeper.sync.time.ms", 2000, 0),
)


class BrokerConfig08(Config):
    """``server.properties`` of a 0.8.2 broker: every key with 0.8.2's default and precedence.

    Resolved values: ``log.dirs`` is a list (``log.dir`` when unset), ``log.roll.ms`` and
    ``log.roll.jitter.ms`` fall back on their ``.hours`` keys, ``log.retention.ms`` on ``.minutes`` then
    ``.hours``, ``advertised.*`` on ``host.name``/``port``, ``log.flush.interval.ms`` on the scheduler interval.
    """

    kind = "broker"
    keys = key_table(
        *ZK_KEYS_08,
        int_key("broker.id", None, 0, required=True),
        int_key("message.max.bytes", 1000000 + LOG_OVERHEAD, 0),
        int_key("num.network.threads", 3, 1),
        int_key("num.io.threads", 8, 1),
        int_key("background.threads", 10, 1),
        int_key("queued.max.requests", 500, 1),
        int_key("port", 9092, 0, 65535),
        METRICS_PORT,
        str_key("host.name"),
        str_key("advertised.host.name", lambda c: c["host.name"]),
        int_key("advertised.port", lambda c: c["port"], 0, 65535),
        *LISTENER_KEYS,
        *SSL_KEYS,
        *SASL_KEYS,
        *ZK_ACL_KEYS,
        *AUTHORIZER_KEYS,
        str_key("broker.rack"),  # 0.10 (KIP-36): in the registration and Metadata v1+
        int_key("socket.send.buffer.bytes", 100 * 1024, 1),
        int_key("socket.receive.buffer.bytes", 100 * 1024, 1),
        int_key("socket.request.max.bytes", 100 * 1024 * 1024, 1),
        int_key("max.connections.per.ip", INT_MAX, 1),
        Key("max.connections.per.ip.overrides", parse_overrides, {}),
        long_key("connections.max.idle.ms", 10 * MINUTE_MS),
        int_key("num.partitions", 1, 1),
        str_key("log.dir", "/tmp/kafka-logs"),
        csv_key("log.dirs", lambda c: [c["log.dir"]]),
        int_key("log.segment.bytes", 1024 * 1024 * 1024, MESSAGE_MIN_HEADER_SIZE),
        int_key("log.roll.hours", 24 * 7, 1),
        long_key("log.roll.ms", lambda c: c["log.roll.hours"] * HOUR_MS, 1),
        int_key("log.roll.jitter.hours", 0, 0),
        long_key("log.roll.jitter.ms", lambda c: c["log.roll.jitter.hours"] * HOUR_MS, 0),
        int_key("log.retention.hours", 24 * 7, 1),
        int_key("log.retention.minutes", lambda c: c["log.retention.hours"] * 60, 1),
        long_key("log.retention.ms", lambda c: c["log.retention.minutes"] * MINUTE_MS, 1),
        long_key("log.retention.bytes", -1),
        long_key("log.retention.check.interval.ms", 5 * MINUTE_MS, 1),
        choice_key("log.cleanup.policy", "delete", ("delete", "compact")),
        int_key("log.cleaner.threads", 1, 0),
        float_key("log.cleaner.io.max.bytes.per.second", float("inf")),
        long_key("log.cleaner.dedupe.buffer.size", 500 * 1024 * 1024, 0),
        int_key("log.cleaner.io.buffer.size", 512 * 1024, 0),
        float_key("log.cleaner.io.buffer.load.factor", 0.9),
        long_key("log.cleaner.backoff.ms", 15 * 1000, 0),
        float_key("log.cleaner.min.cleanable.ratio", 0.5, 0.0, 1.0),
        bool_key("log.cleaner.enable", False),
        long_key("log.cleaner.delete.retention.ms", 24 * HOUR_MS),
        int_key("log.index.size.max.bytes", 10 * 1024 * 1024, 4),
        int_key("log.index.interval.bytes", 4096, 0),
        Key(
            "inter.broker.protocol.version", parse_format_version
        ),  # the format's default, the offsets records' versions
        Key(
            "log.message.format.version",
            parse_format_version,
            lambda c: default_format_version(c["inter.broker.protocol.version"]),
        ),
        choice_key("log.message.timestamp.type", "CreateTime", TIMESTAMP_TYPES),
        choice_key("compression.type", "producer", tuple(COMPRESSION_TYPES)),
        long_key("log.flush.interval.messages", LONG_MAX, 1),
        int_key("transactional.id.expiration.ms", 7 * 24 * HOUR_MS, 1),  # 2.x: producer ids expire with it
        int_key("producer.id.expiration.check.interval.ms", 600000, 1),
        long_key("log.segment.delete.delay.ms", 60000, 0),
        long_key("log.flush.scheduler.interval.ms", LONG_MAX),
        long_key("log.flush.interval.ms", lambda c: c["log.flush.scheduler.interval.ms"]),
        int_key("log.flush.offset.checkpoint.interval.ms", 60000, 0),
        int_key("num.recovery.threads.per.data.dir", 1, 1),
        bool_key("auto.create.topics.enable", True),
        int_key("min.insync.replicas", 1, 1),
        int_key("controller.socket.timeout.ms", 30000),
        int_key("controller.message.queue.size", INT_MAX),
        int_key("default.replication.factor", 1, 1),
        long_key("replica.lag.time.max.ms", 10000),
        long_key("replica.lag.max.messages", 4000),
        int_key("replica.socket.timeout.ms", 30 * 1000),
        int_key("replica.socket.receive.buffer.bytes", 64 * 1024),
        int_key("replica.fetch.max.bytes", 1024 * 1024),
        int_key("replica.fetch.wait.max.ms", 500),
        int_key("replica.fetch.min.bytes", 1),
        int_key("num.replica.fetchers", 1, 1),
        long_key("replica.high.watermark.checkpoint.interval.ms", 5000),
        int_key("fetch.purgatory.purge.interval.requests", 10000),
        int_key("producer.purgatory.purge.interval.requests", 10000),
        bool_key("auto.leader.rebalance.enable", True),
        int_key("leader.imbalance.per.broker.percentage", 10),
        int_key("leader.imbalance.check.interval.seconds", 300),
        bool_key("unclean.leader.election.enable", True),
        int_key("controlled.shutdown.max.retries", 3),
        int_key("controlled.shutdown.retry.backoff.ms", 5000),
        bool_key("controlled.shutdown.enable", True),
        *COORDINATOR_KEYS,
        Key("offsets.topic.compression.codec", parse_codec08, 0),
        int_key("max.incremental.fetch.session.cache.slots", 1000, 0),  # Kafka 1.1 (KIP-227)
        *QUOTA_KEYS,
        bool_key("delete.topic.enable", False),
    )

    def validate(self) -> None:
        if not self["zookeeper.connect"]:
            raise InvalidConfigError("zookeeper.connect: required broker key is missing")
        if not self["log.dirs"]:
            raise InvalidConfigError("log.dirs: names no directory")
        BrokerListeners.from_config(self)
        if self["replica.fetch.wait.max.ms"] > self["replica.socket.timeout.ms"]:
            raise InvalidConfigError("replica.fetch.wait.max.ms: must not exceed replica.socket.timeout.ms")
        if self["replica.fetch.max.bytes"] < self["message.max.bytes"]:
            raise InvalidConfigError("replica.fetch.max.bytes: must be at least message.max.bytes")
        if self["offsets.commit.required.acks"] > self["offsets.topic.replication.factor"]:
            raise InvalidConfigError(
                "offsets.commit.required.acks: larger than offsets.topic.replication.factor"
            )

    @property
    def line(self) -> str:
        return LINE_08

    def topic_defaults(self) -> dict[str, Any]:
        """The topic-level log settings every topic starts from (0.8.2's ``defaultLogConfig``)."""
        return {topic_key: self[broker_key] for topic_key, broker_key in TOPIC_KEY_DEFAULTS.items()}


# -- topic-level overrides (/config/topics/<t>, `zkafka topics --config`) ------------------------------------

TOPIC_KEY_DEFAULTS = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "compression.type": "compression.type",
}

TOPIC_KEYS = key_table(
    int_key("segment.bytes", None, MESSAGE_MIN_HEADER_SIZE),
    long_key("segment.ms", None, 1),
    long_key("segment.jitter.ms", None, 0),
    int_key("segment.index.bytes", None, 4),
    long_key("flush.messages", None, 1),
    long_key("flush.ms", None, 0),
    long_key("retention.bytes", None),
    long_key("retention.ms", None),
    int_key("max.message.bytes", None, 0),
    int_key("index.interval.bytes", None, 0),
    long_key("delete.retention.ms", None, 0),
    long_key("file.delete.delay.ms", None, 0),
    float_key("min.cleanable.dirty.ratio", None, 0.0, 1.0),
    choice_key("cleanup.policy", None, ("delete", "compact")),
    bool_key("unclean.leader.election.enable", None),
    int_key("min.insync.replicas", None, 1),
    Key("message.format.version", parse_format_version),
    choice_key("message.timestamp.type", None, TIMESTAMP_TYPES),
    choice_key("compression.type", None, tuple(COMPRESSION_TYPES)),
)


def parse_topic_overrides(props: Mapping[str, str]) -> dict[str, Any]:
    """Typed topic overrides; an unknown name or a bad value raises InvalidConfigError naming it."""
    out = {}
    for name, text in props.items():
        key = TOPIC_KEYS.get(name)
        if key is None:
            raise InvalidConfigError(f"{name}: unknown topic configuration")
        out[name] = key.parse(name, str(text))
    return out


def topic_config(broker: BrokerConfig08, overrides: Mapping[str, str]) -> dict[str, Any]:
    """The effective log settings of one topic: the broker's defaults with the topic's overrides on top."""
    return {**broker.topic_defaults(), **parse_topic_overrides(overrides)}


# -- clients -------------------------------------------------------------------------------------------------


class ProducerConfig08(Config):
    """``producer.properties`` of the 0.8.2 (Scala) producer."""

    kind = "producer"
    keys = key_table(
        csv_key("metadata.broker.list", required=True),
        int_key("request.required.acks", 0, -(2**15), 2**15 - 1),
        int_key("request.timeout.ms", 10000, 1),
        str_key("producer.type", "sync"),
        str_key("serializer.class", "kafka.serializer.DefaultEncoder"),
        str_key("key.serializer.class", lambda c: c["serializer.class"]),
        str_key("partitioner.class", "kafka.producer.DefaultPartitioner"),
        Key("compression.codec", parse_codec08, 0),
        csv_key("compressed.topics", []),
        int_key("message.send.max.retries", 3, 0),
        int_key("retry.backoff.ms", 100, 0),
        int_key("topic.metadata.refresh.interval.ms", 600000),
        int_key("queue.buffering.max.ms", 5000, 0),
        int_key("queue.buffering.max.messages", 10000, 1),
        int_key("queue.enqueue.timeout.ms", -1),
        int_key("batch.num.messages", 200, 1),
        int_key("send.buffer.bytes", 100 * 1024, 1),
        str_key("client.id", ""),
        # The new producer's (KafkaProducer's) setting; 1 is the Scala producer's one request at a time.
        int_key("max.in.flight.requests.per.connection", 1, 1),
        # librdkafka's: ask each broker its ApiVersions and speak the newest both know (false: 0.8.2's)
        bool_key("api.version.request", True),
        bool_key("enable.idempotence", False),  # KIP-98: producer id and sequences (Produce v3+, acks -1)
    )

    def validate(self) -> None:
        validate_client_id("client.id", self["client.id"])
        if self["enable.idempotence"]:
            check_idempotence(self)
        if self["producer.type"] not in ("sync", "async"):
            raise InvalidConfigError(f"producer.type: {self['producer.type']!r} is not sync or async")
        if (
            self["producer.type"] == "async"
            and self["batch.num.messages"] > self["queue.buffering.max.messages"]
        ):
            raise InvalidConfigError("batch.num.messages: larger than queue.buffering.max.messages")


MAX_IN_FLIGHT = (
    5  # idempotence: a broker keeps a producer's last five batches (more in flight cannot be deduped)
)


def check_idempotence(config: ProducerConfig08) -> None:
    """``enable.idempotence=true`` needs what the Java producer needs: acks all, retries, at most five in flight."""
    if config["request.required.acks"] != -1:
        raise InvalidConfigError("request.required.acks: must be -1 (all) with enable.idempotence=true")
    if config["message.send.max.retries"] < 1:
        raise InvalidConfigError("message.send.max.retries: must be at least 1 with enable.idempotence=true")
    if config["max.in.flight.requests.per.connection"] > MAX_IN_FLIGHT:
        raise InvalidConfigError(
            f"max.in.flight.requests.per.connection: at most {MAX_IN_FLIGHT} with enable.idempotence=true"
        )


class ConsumerConfig08(Config):
    """``consumer.properties`` of the 0.8.2 high-level (ZooKeeper) consumer."""

    kind = "consumer"
    keys = key_table(
        *ZK_KEYS_08,
        str_key("group.id", required=True),
        str_key("consumer.id"),
        int_key("socket.timeout.ms", 30 * 1000, 0),
        int_key("socket.receive.buffer.bytes", 64 * 1024, 1),
        int_key("fetch.message.max.bytes", DEFAULT_FETCH_MESSAGE_MAX_BYTES, 1),
        int_key("num.consumer.fetchers", 1, 1),
        bool_key("auto.commit.enable", True),
        int_key("auto.commit.interval.ms", 60 * 1000, 1),
        int_key("queued.max.message.chunks", 2, 1),
        int_key("rebalance.max.retries", 4, 1),
        int_key("fetch.min.bytes", 1, 0),
        int_key("fetch.wait.max.ms", 100, 0),
        int_key("rebalance.backoff.ms", lambda c: c["zookeeper.sync.time.ms"], 0),
        int_key("refresh.leader.backoff.ms", 200, 0),
        int_key("offsets.channel.backoff.ms", 1000, 0),
        int_key("offsets.channel.socket.timeout.ms", 10000, 0),
        int_key("offsets.commit.max.retries", 5, 0),
        choice_key("auto.offset.reset", "largest", ("smallest", "largest")),
        int_key("consumer.timeout.ms", -1),
        str_key("client.id", lambda c: c["group.id"]),
        bool_key("exclude.internal.topics", True),
        choice_key("partition.assignment.strategy", "range", ("range", "roundrobin")),
        choice_key("offsets.storage", "zookeeper", ("zookeeper", "kafka")),
        bool_key("dual.commit.enabled", lambda c: c["offsets.storage"] == "kafka"),
        METRICS_PORT,
    )

    def validate(self) -> None:
        validate_client_id("group.id", self["group.id"])
        validate_client_id("client.id", self["client.id"])
        if not self["zookeeper.connect"]:
            raise InvalidConfigError("zookeeper.connect: required by the ZooKeeper consumer")
        if self["socket.timeout.ms"] < self["fetch.wait.max.ms"]:
            raise InvalidConfigError("socket.timeout.ms: must be at least fetch.wait.max.ms")


class ConsumerConfig09(Config):
    """The 0.9 (Java, group-coordinator) consumer's keys, for the consumer built on the 0.9 group APIs."""

    kind = "consumer"
    keys = key_table(
        csv_key("bootstrap.servers", required=True),
        str_key("group.id", ""),
        str_key("group.instance.id", ""),  # 2.3 (KIP-345): a static member; "" for a dynamic one
        int_key("session.timeout.ms", 30000, 1),
        int_key("heartbeat.interval.ms", 3000, 1),
        int_key("max.poll.interval.ms", 300000, 1),  # 0.10.1 (KIP-62): poll() at least this often
        int_key("max.poll.records", 500, 1),  # 0.10.0 (KIP-41)
        csv_key("partition.assignment.strategy", ["org.apache.kafka.clients.consumer.RangeAssignor"]),
        long_key("metadata.max.age.ms", 5 * MINUTE_MS, 0),
        bool_key("enable.auto.commit", True),
        long_key("auto.commit.interval.ms", 5000, 0),
        str_key("client.id", ""),
        int_key("max.partition.fetch.bytes", 1024 * 1024, 0),
        int_key("send.buffer.bytes", 128 * 1024, 0),
        int_key("receive.buffer.bytes", 32 * 1024, 0),
        int_key("fetch.min.bytes", 1, 0),
        int_key("fetch.max.wait.ms", 500, 0),
        long_key("reconnect.backoff.ms", 50, 0),
        long_key("retry.backoff.ms", 100, 0),
        choice_key("auto.offset.reset", "latest", ("earliest", "latest", "none")),
        bool_key("check.crcs", True),
        int_key("request.timeout.ms", 40 * 1000, 0),
        long_key("connections.max.idle.ms", 9 * MINUTE_MS),
        str_key("key.deserializer"),
        str_key("value.deserializer"),
        *CLIENT_SECURITY_KEYS,  # security.protocol, ssl.truststore.*, sasl.mechanism, sasl.jaas.config
    )

    def validate(self) -> None:
        if self["heartbeat.interval.ms"] >= self["session.timeout.ms"]:
            raise InvalidConfigError("heartbeat.interval.ms: must be lower than session.timeout.ms")
        if self["request.timeout.ms"] <= self["session.timeout.ms"]:
            raise InvalidConfigError("request.timeout.ms: must be larger than session.timeout.ms")
