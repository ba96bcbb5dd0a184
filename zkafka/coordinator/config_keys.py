"""The broker keys of the group coordinator and its offsets (0.8.2's offset manager, 0.9's coordinator, the
later group limits), declared for the 0.8 line's ``server.properties`` table."""

from __future__ import annotations

from zkafka.config import int_key, long_key

COORDINATOR_KEYS = (
    int_key("offset.metadata.max.bytes", 4096),
    int_key("offsets.load.buffer.size", 5 * 1024 * 1024, 1),
    int_key("offsets.topic.replication.factor", 3, 1, 2**15 - 1),
    int_key("offsets.topic.num.partitions", 50, 1),
    int_key("offsets.topic.segment.bytes", 100 * 1024 * 1024, 1),
    int_key("offsets.retention.minutes", 7 * 24 * 60, 1),  # Kafka 2.0+ (KIP-186; 0.9: 1440)
    long_key("offsets.retention.check.interval.ms", 600000, 1),
    int_key("offsets.commit.timeout.ms", 5000, 1),
    int_key("offsets.commit.required.acks", -1, -1, 2**15 - 1),
    int_key("group.min.session.timeout.ms", 6000, 0),  # 0.9
    int_key("group.max.session.timeout.ms", 1800000, 0),  # Kafka 2.x (0.9: 30000)
    int_key("group.initial.rebalance.delay.ms", 0, 0),  # zkafka option (0.11's key; 0.9 has no delay)
    int_key("group.max.size", 2**31 - 1, 1),  # Kafka 2.2 (KIP-389)
)
