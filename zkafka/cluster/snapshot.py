"""The cluster at one moment, as the 0.8 line's controller context publishes it and a broker's metadata cache
keeps it: live brokers and every partition's assigned replicas and state (immutable)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from zkafka.zk.paths08 import NO_LEADER, BrokerRegistration, PartitionState

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class PartitionMetadata:
    """One partition: its assigned replicas (first = preferred) and its state (None before it has one)."""

    replicas: tuple[int, ...]
    state: PartitionState | None = None

    @property
    def leader(self) -> int:
        return self.state.leader if self.state else NO_LEADER

    @property
    def isr(self) -> tuple[int, ...]:
        return self.state.isr if self.state else ()


@dataclass(frozen=True)
class ClusterSnapshot:
    """What the cache knew at one moment: live brokers and topic → partition id → PartitionMetadata."""

    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)
    topics: Mapping[str, Mapping[int, PartitionMetadata]] = field(default_factory=dict)

    def partition(self, topic: str, partition: int) -> PartitionMetadata | None:
        return self.topics.get(topic, {}).get(partition)

    def leader_of(self, topic: str, partition: int) -> BrokerRegistration | None:
        """The live broker leading the partition, or None."""
        meta = self.partition(topic, partition)
        return self.brokers.get(meta.leader) if meta else None

    def partitions_led_by(self, broker_id: int) -> frozenset[TopicPartition]:
        return frozenset(
            (topic, p)
            for topic, parts in self.topics.items()
            for p, meta in parts.items()
            if meta.leader == broker_id
        )

    def assignments(self) -> dict[str, dict[int, tuple[int, ...]]]:
        return {
            topic: {p: meta.replicas for p, meta in parts.items()} for topic, parts in self.topics.items()
        }

    def states(self) -> dict[TopicPartition, PartitionState | None]:
        return {(topic, p): meta.state for topic, parts in self.topics.items() for p, meta in parts.items()}
