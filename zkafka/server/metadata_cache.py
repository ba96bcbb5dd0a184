"""MetadataCache: the cluster as the controller last described it, and the Metadata answers a 0.8 broker gives from it.

As 0.8.2's MetadataCache, it is fed only by the controller's UpdateMetadata requests: each replaces the list of
live brokers and upserts the partition states it carries (leader -2 removes the partition: its topic is being
deleted). The picture is an immutable ``ClusterSnapshot`` (the same shape the controller's watch-based
ControllerContext publishes), which the group coordinator's handlers read too.

Answers (0.8.2's ``getTopicMetadata``): brokers are the live ones with the host and port they registered (the
advertised ones). Per partition: a leader that is not live → LEADER_NOT_AVAILABLE (5) with leader -1 and no
ISR; a replica or ISR member that is not live → REPLICA_NOT_AVAILABLE (9) with the leader kept and both lists
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

from zkafka.cluster.snapshot import ClusterSnapshot, PartitionMetadata
from zkafka.controller.request_planner import LEADER_DURING_DELETE
from zkafka.errors import UnknownTopicOrPartitionError
from zkafka.protocol import metadata
from zkafka.protocol.errors import ErrorCode
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

log = logging.getLogger(__name__)

PLAINTEXT = 0


def partition_metadata(partition: int, meta: Any, alive: Any) -> Any:
    """One partition's answer from its replicas, its state and the live broker ids."""
    replicas = [r for r in meta.replicas if r in alive]
    if meta.leader not in alive:
        return metadata.PartitionMetadata(ErrorCode.LEADER_NOT_AVAILABLE, partition, -1, replicas, [])
    isr = [r for r in meta.isr if r in alive]
    error = ErrorCode.NONE
    if len(replicas) < len(meta.replicas) or len(isr) < len(meta.isr):
        error = ErrorCode.REPLICA_NOT_AVAILABLE
    return metadata.PartitionMetadata(error, partition, meta.leader, replicas, isr)


class MetadataCache:
    """The cluster as the controller last described it to this broker, and the Metadata answers from it.

    ``create_topic(topic)`` auto-creates a topic a Metadata request names (when ``auto_create_topics``).
    """

    def __init__(
        self,
        *,
        create_topic: Callable[[str], None] | None = None,
        auto_create_topics: bool = True,
        snapshot: ClusterSnapshot | None = None,
    ) -> None:
        self._snapshot = snapshot if snapshot is not None else ClusterSnapshot()
        self.create_topic = create_topic
        self.auto_create_topics = auto_create_topics and create_topic is not None
        self._listeners: list[Callable[[ClusterSnapshot], None]] = []

    def snapshot(self) -> ClusterSnapshot:
        return self._snapshot

    def add_listener(self, listener: Callable[[ClusterSnapshot], None]) -> None:
        """Call ``listener(snapshot)`` after every update."""
        self._listeners.append(listener)

    def update(self, request: Any) -> None:
        """Apply an UpdateMetadata request (v0 brokers, or v1 brokers with their PLAINTEXT end point)."""
        brokers = {}
        for broker in request.live_brokers:
            registration = _registration(broker)
            if registration is not None:
                brokers[registration.id] = registration
        topics = {topic: dict(parts) for topic, parts in self._snapshot.topics.items()}
        for entry in request.partition_states:
            state = entry.state
            if state.leader == LEADER_DURING_DELETE:
                parts = topics.get(entry.topic, {})
                parts.pop(entry.partition, None)
                if not parts:
                    topics.pop(entry.topic, None)
                continue
            topics.setdefault(entry.topic, {})[entry.partition] = PartitionMetadata(
                tuple(state.replicas),
                PartitionState(
                    state.leader,
                    state.leader_epoch,
                    tuple(state.isr),
                    state.controller_epoch,
                    state.zk_version,
                ),
            )
        self._snapshot = ClusterSnapshot(brokers, topics)
        for listener in list(self._listeners):
            try:
                listener(self._snapshot)
            except Exception:
                log.exception("metadata listener %r failed", listener)

    def leaders(self) -> dict[tuple[str, int], int]:
        """Every partition known with its leader id."""
        return {
            (t, p): meta.leader for t, parts in self._snapshot.topics.items() for p, meta in parts.items()
        }

    # -- the Metadata answers ------------------------------------------------------------------------------

    def alive_brokers(self) -> list[tuple[int, str, int]]:
        brokers = self._snapshot.brokers
        return [
            (broker_id, brokers[broker_id].host, brokers[broker_id].port) for broker_id in sorted(brokers)
        ]

    def topic_metadata(self, topics: Iterable[str]) -> list[Any]:
        """TopicMetadata for each topic asked for (every known topic when none is)."""
        snapshot = self._snapshot
        names = list(topics) or [t for t in sorted(snapshot.topics) if _with_state(snapshot.topics[t])]
        alive = snapshot.brokers.keys()
        answers = []
        for topic in names:
            partitions = _with_state(snapshot.topics.get(topic))
            if not partitions:
                answers.append(metadata.TopicMetadata(self._unknown_topic(topic), topic, []))
                continue
            answers.append(
                metadata.TopicMetadata(
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
        if not _with_state(self._snapshot.topics.get(topic)):
            raise UnknownTopicOrPartitionError(f"topic {topic} does not exist")


def _registration(broker: Any) -> BrokerRegistration | None:
    if hasattr(broker, "end_points"):
        for end_point in broker.end_points:
            if end_point.security_protocol == PLAINTEXT:
                return BrokerRegistration(broker.node_id, end_point.host, end_point.port)
        return None
    return BrokerRegistration(broker.node_id, broker.host, broker.port)


def _with_state(partitions: Any) -> dict:
    """The partitions that have a state (those 0.8.2's metadata cache holds)."""
    return {p: meta for p, meta in (partitions or {}).items() if meta.state is not None}
