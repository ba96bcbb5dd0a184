"""MetadataView: what a 0.8.2 broker answers about the cluster, from the metadata cache's latest snapshot.

Brokers are the live ones with the host and port they registered (the advertised ones). Per partition
(0.8.2's MetadataCache): a leader that is not live → LEADER_NOT_AVAILABLE (5) with leader -1 and no ISR; a
replica or ISR member that is not live → REPLICA_NOT_AVAILABLE (9) with the leader kept and both lists
filtered to live brokers. A topic the cache does not know is auto-created when ``auto.create.topics.enable``
(its assignment written to ZooKeeper) and answered LEADER_NOT_AVAILABLE (5) with no partitions, for the
client to ask again; when auto-creation is off it is UNKNOWN_TOPIC_OR_PARTITION (3). As in 0.8.2, the cache
holds only partitions that have a state (a leader elected once): a topic whose partitions have none yet is
answered as unknown (its creation then finds it exists: 5).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from zkafka.errors import UnknownTopicOrPartitionError
from zkafka.protocol import v08
from zkafka.protocol.errors import ErrorCode

log = logging.getLogger(__name__)


def partition_metadata(partition: int, meta: Any, alive: Any) -> Any:
    """One partition's answer from its replicas, its state and the live broker ids."""
    replicas = [r for r in meta.replicas if r in alive]
    if meta.leader not in alive:
        return v08.PartitionMetadata(ErrorCode.LEADER_NOT_AVAILABLE, partition, -1, replicas, [])
    isr = [r for r in meta.isr if r in alive]
    error = ErrorCode.NONE
    if len(replicas) < len(meta.replicas) or len(isr) < len(meta.isr):
        error = ErrorCode.REPLICA_NOT_AVAILABLE
    return v08.PartitionMetadata(error, partition, meta.leader, replicas, isr)


class MetadataView:
    """Metadata answers from a cluster snapshot (``snapshot()``: brokers by id, topic → partition → meta)."""

    def __init__(
        self,
        snapshot: Callable[[], Any],
        *,
        create_topic: Callable[[str], None] | None = None,
        auto_create_topics: bool = True,
    ) -> None:
        self._snapshot = snapshot
        self.create_topic = create_topic
        self.auto_create_topics = auto_create_topics and create_topic is not None

    def alive_brokers(self) -> list[tuple[int, str, int]]:
        brokers = self._snapshot().brokers
        return [
            (broker_id, brokers[broker_id].host, brokers[broker_id].port) for broker_id in sorted(brokers)
        ]

    def topic_metadata(self, topics: Iterable[str]) -> list[Any]:
        """TopicMetadata for each topic asked for (every known topic when none is)."""
        snapshot = self._snapshot()
        names = list(topics) or [t for t in sorted(snapshot.topics) if _with_state(snapshot.topics[t])]
        alive = snapshot.brokers.keys()
        answers = []
        for topic in names:
            partitions = _with_state(snapshot.topics.get(topic))
            if not partitions:
                answers.append(v08.TopicMetadata(self._unknown_topic(topic), topic, []))
                continue
            answers.append(
                v08.TopicMetadata(
                    ErrorCode.NONE,
                    topic,
                    [partition_metadata(p, partitions[p], alive) for p in sorted(partitions)],
                )
            )
        return answers

    def _unknown_topic(self, topic: str) -> int:
        """Create the topic if allowed (``create_topic`` ignores one that exists; other errors propagate)."""
        if not self.auto_create_topics:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        self.create_topic(topic)
        log.info("auto-created topic %s", topic)
        return ErrorCode.LEADER_NOT_AVAILABLE

    def ensure_topic_exists(self, topic: str) -> None:
        if not _with_state(self._snapshot().topics.get(topic)):
            raise UnknownTopicOrPartitionError(f"topic {topic} does not exist")


def _with_state(partitions: Any) -> dict:
    """The partitions that have a state (those 0.8.2's metadata cache holds)."""
    return {p: meta for p, meta in (partitions or {}).items() if meta.state is not None}
