"""``LogConfig``: the settings of one 0.8 log (0.8 line only; Kafka's ``kafka.log.LogConfig``): the broker's
``log.*`` defaults with a topic's overrides (``segment.bytes``, ``retention.ms``, ...) applied."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zkafka.config import LONG_MAX
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, ZSTD
from zkafka.records.format_version import magic_of

# ``compression.type`` (broker and topic, Kafka's BrokerCompressionCodec): the codec a log stores; ``producer``
# keeps what the producer sent.
COMPRESSION_TYPES = {
    "uncompressed": NO_COMPRESSION,
    "gzip": GZIP,
    "snappy": SNAPPY,
    "lz4": LZ4,
    "zstd": ZSTD,
    "producer": None,
}


@dataclass(frozen=True)
class LogConfig:
    """The settings of one 0.8 log (broker defaults with the topic's overrides applied)."""

    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 3600 * 1000
    segment_jitter_ms: int = 0
    index_max_bytes: int = 10 * 1024 * 1024
    index_interval_bytes: int = 4096
    flush_interval_messages: int = LONG_MAX
    flush_interval_ms: int = LONG_MAX
    retention_bytes: int = -1
    retention_ms: int = 7 * 24 * 3600 * 1000
    max_message_size: int = 1000012
    file_delete_delay_ms: int = 60000
    compact: bool = False
    delete_retention_ms: int = 24 * 3600 * 1000
    min_cleanable_ratio: float = 0.5
    message_format_magic: int = 0  # what ``message.format.version`` names: the magic the log stores
    log_append_time: bool = False  # ``message.timestamp.type`` LogAppendTime (else CreateTime)
    producer_id_expiration_ms: int = 7 * 24 * 3600 * 1000  # the broker's ``transactional.id.expiration.ms``
    unclean_leader_election_enable: bool = True  # a follower halts rather than truncate below its HW when off
    compression: int | None = None  # ``compression.type``'s codec; None: ``producer`` (the producer's kept)

    _TOPIC_KEYS = {
        "segment.bytes": "segment_bytes",
        "segment.ms": "segment_ms",
        "segment.jitter.ms": "segment_jitter_ms",
        "segment.index.bytes": "index_max_bytes",
        "index.interval.bytes": "index_interval_bytes",
        "flush.messages": "flush_interval_messages",
        "flush.ms": "flush_interval_ms",
        "retention.bytes": "retention_bytes",
        "retention.ms": "retention_ms",
        "max.message.bytes": "max_message_size",
        "file.delete.delay.ms": "file_delete_delay_ms",
        "delete.retention.ms": "delete_retention_ms",
        "min.cleanable.dirty.ratio": "min_cleanable_ratio",
        "unclean.leader.election.enable": "unclean_leader_election_enable",
    }

    @classmethod
    def from_broker_config(cls, config: Mapping[str, Any]) -> LogConfig:
        """The broker-wide settings (``log.*`` keys) every partition gets unless its topic overrides them."""
        return cls(
            segment_bytes=config["log.segment.bytes"],
            segment_ms=config["log.roll.ms"],
            segment_jitter_ms=config["log.roll.jitter.ms"],
            index_max_bytes=config["log.index.size.max.bytes"],
            index_interval_bytes=config["log.index.interval.bytes"],
            flush_interval_messages=config["log.flush.interval.messages"],
            flush_interval_ms=config["log.flush.interval.ms"],
            retention_bytes=config["log.retention.bytes"],
            retention_ms=config["log.retention.ms"],
            max_message_size=config["message.max.bytes"],
            file_delete_delay_ms=config["log.segment.delete.delay.ms"],
            compact=config["log.cleanup.policy"] == "compact",
            delete_retention_ms=config["log.cleaner.delete.retention.ms"],
            min_cleanable_ratio=config["log.cleaner.min.cleanable.ratio"],
            message_format_magic=magic_of(config["log.message.format.version"]),
            log_append_time=config["log.message.timestamp.type"] == "LogAppendTime",
            producer_id_expiration_ms=config["transactional.id.expiration.ms"],
            unclean_leader_election_enable=config["unclean.leader.election.enable"],
            compression=COMPRESSION_TYPES[config["compression.type"]],
        )

    @classmethod
    def from_topic_config(cls, values: Mapping[str, Any]) -> LogConfig:
        """From typed topic-level keys (``segment.bytes``, ``retention.ms``, ...); others are ignored."""
        fields = {name: values[key] for key, name in cls._TOPIC_KEYS.items() if values.get(key) is not None}
        if values.get("cleanup.policy") is not None:
            fields["compact"] = values["cleanup.policy"] == "compact"
        if values.get("message.format.version") is not None:
            fields["message_format_magic"] = magic_of(values["message.format.version"])
        if values.get("compression.type") is not None:
            fields["compression"] = COMPRESSION_TYPES[values["compression.type"]]
        if values.get("message.timestamp.type") is not None:
            fields["log_append_time"] = values["message.timestamp.type"] == "LogAppendTime"
        return cls(**fields)
