"""MetadataCache: what a 0.8 broker answers Metadata requests from, as 0.8.2's MetadataCache keeps it.

Fed only by the controller's UpdateMetadata requests: each replaces the list of live brokers and upserts the
partition states it carries (leader -2 removes the partition: its topic is being deleted). The picture is an
immutable ``ClusterSnapshot`` (the same shape the controller's watch-based ControllerContext publishes), so
MetadataView and the group coordinator read it unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.cluster.snapshot import ClusterSnapshot, PartitionMetadata
from zkafka.controller.request_planner import LEADER_DURING_DELETE
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

log = logging.getLogger(__name__)

PLAINTEXT = 0


class MetadataCache:
    """The cluster as the controller last described it to this broker."""

    def __init__(self) -> None:
        self._snapshot = ClusterSnapshot()
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


def _registration(broker: Any) -> BrokerRegistration | None:
    if hasattr(broker, "end_points"):
        for end_point in broker.end_points:
            if end_point.security_protocol == PLAINTEXT:
                return BrokerRegistration(broker.node_id, end_point.host, end_point.port)
        return None
    return BrokerRegistration(broker.node_id, broker.host, broker.port)
