"""What the controller tells each broker, as a pure planner: LeaderAndIsr, UpdateMetadata and StopReplica requests.

The controller keeps, per live broker (per registration: a broker that restarted is a new one), what it has
told it so far. ``RequestPlanner.plan(view)`` compares the cluster view (the partition states as last read or
written, the assignments, the live brokers, those in controlled shutdown, the topics being deleted) with
that, and returns the requests that bring every broker up to date, in 0.8.2's batch order (per broker:
LeaderAndIsr, UpdateMetadata, StopReplica):

- LeaderAndIsr to each live replica of a partition whose leader epoch is newer than the one it was told
  (§8.2, §8.3: a new leader, an ISR shrunk by the controller, a broker that just started);
- UpdateMetadata to every live broker, with the partitions whose state it has not seen (the leader's own ISR
  changes included, as 0.9's ISR change notifications do) and the live brokers, whenever either changed; a
  partition gone from the view is sent with leader -2 (deleted);
- StopReplica(delete=0) to a broker in controlled shutdown for each partition it no longer leads (§8.5), and
  StopReplica(delete=1) to the replicas of a topic being deleted (§8.8) and to a replica reassigned away from
  a broker that was told it hosts the partition (§8.7).

A state older than one already told (a view read before the controller's own write) is never sent again.
What was told about a topic being deleted is forgotten (as Kafka's controller context drops the topic), so
the same topic created again, whose leader epochs start at 0 again, is told in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zkafka.cluster.end_point import registered_end_point, registered_end_points
from zkafka.protocol import inter_broker as admin
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

TopicPartition = tuple[str, int]
LEADER_DURING_DELETE = -2


@dataclass(frozen=True)
class ClusterView:
    """What the controller knows: partition states and assignments, live brokers, and its own plans."""

    states: Mapping[TopicPartition, PartitionState]
    assignments: Mapping[TopicPartition, tuple[int, ...]]
    brokers: Mapping[int, BrokerRegistration]
    shutting_down: frozenset[int] = frozenset()
    deleting: frozenset[str] = frozenset()


@dataclass
class BrokerTold:
    """What one registration of a broker has been told."""

    registration: BrokerRegistration
    leader_epochs: dict[TopicPartition, int] = field(default_factory=dict)
    metadata: dict[TopicPartition, tuple[int, int]] = field(
        default_factory=dict
    )  # (leader epoch, zk version)
    live_brokers: frozenset[BrokerRegistration] | None = None
    stopped: set[TopicPartition] = field(default_factory=set)


def _version(state: PartitionState) -> tuple[int, int]:
    return state.leader_epoch, state.zk_version


def wire_state(state: PartitionState, replicas: Iterable[int], controller_epoch: int | None = None) -> Any:
    """The wire ``PartitionState`` of a state znode (its controller epoch unless told otherwise)."""
    return admin.PartitionState(
        state.controller_epoch if controller_epoch is None else controller_epoch,
        state.leader,
        state.leader_epoch,
        list(state.isr),
        state.zk_version,
        list(replicas),
    )


def wire_broker(registration: BrokerRegistration, listener: str | None = None) -> Any:
    """A broker as LeaderAndIsr and UpdateMetadata v0 carry it: its end point of ``listener`` (the inter-broker
    listener, where followers fetch) when it has one, else its registered host and port."""
    end_point = registered_end_point(registration, listener) if listener else None
    if end_point is None:
        return admin.Broker(registration.id, registration.host, registration.port)
    return admin.Broker(registration.id, end_point.host, end_point.port)


def update_metadata_request(controller_id: int, epoch: int, entries: list, brokers: list) -> Any:
    """UpdateMetadata v0 (every 0.8.2 broker reads it), or v3 (Kafka 0.10.2) when a broker has a rack or
    listeners: every end point with its listener name, so a client on each listener is answered that
    listener's addresses."""
    if all(b.rack is None and not b.protocol_map for b in brokers):
        return admin.UpdateMetadataRequestV0(controller_id, epoch, entries, [wire_broker(b) for b in brokers])
    live = [admin.ListenerBroker(b.id, _wire_end_points(b), b.rack) for b in brokers]
    return admin.UpdateMetadataRequestV3(controller_id, epoch, entries, live)


def _wire_end_points(registration: BrokerRegistration) -> list:
    return [
        admin.ListenerEndPoint(e.port, e.host, e.listener_name, e.protocol_id)
        for e in registered_end_points(registration)
    ]


class RequestPlanner:
    """Tracks what every broker was told by this controller (one reign) and plans what to tell it next."""

    def __init__(self, controller_id: int, controller_epoch: int, listener: str = "PLAINTEXT") -> None:
        self.controller_id = controller_id
        self.controller_epoch = controller_epoch
        self.listener = (
            listener  # the inter-broker listener: LeaderAndIsr names the leaders' end points of it
        )
        self.told: dict[int, BrokerTold] = {}

    def stopped(self, broker_id: int, partitions: Iterable[TopicPartition]) -> None:
        """Record a StopReplica(delete=0) sent to the broker outside a plan (a controlled shutdown's first step)."""
        told = self.told.get(broker_id)
        if told is not None:
            told.stopped.update(partitions)

    def stop_failed(self, broker_id: int, partitions: Iterable[TopicPartition]) -> None:
        """A StopReplica the broker refused for these partitions: the next plan sends it again (0.8.2's
        TopicDeletionManager marks such a replica ineligible and retries its deletion)."""
        told = self.told.get(broker_id)
        if told is not None:
            told.stopped.difference_update(partitions)

    def plan(self, view: ClusterView) -> list[tuple[int, Any]]:
        """The requests to send, as ``(broker id, request body)`` in sending order; records them as told."""
        for gone in [b for b in self.told if b not in view.brokers]:
            del self.told[gone]
        live = frozenset(view.brokers.values())
        requests: list[tuple[int, Any]] = []
        for broker_id in sorted(view.brokers):
            registration = view.brokers[broker_id]
            told = self.told.get(broker_id)
            if told is None or told.registration != registration:
                told = self.told[broker_id] = BrokerTold(registration)
            leader_and_isr = self._leader_and_isr(broker_id, told, view)
            if leader_and_isr is not None:
                requests.append((broker_id, leader_and_isr))
            update = self._update_metadata(told, view, live)
            if update is not None:
                requests.append((broker_id, update))
            requests.extend((broker_id, stop) for stop in self._stop_replicas(broker_id, told, view))
        return requests

    def _leader_and_isr(self, broker_id: int, told: BrokerTold, view: ClusterView) -> Any:
        entries = []
        for tp in sorted(view.states):
            state, replicas = view.states[tp], view.assignments.get(tp, ())
            if broker_id not in replicas or tp[0] in view.deleting:
                continue
            if broker_id in view.shutting_down and state.leader != broker_id:
                continue  # told with StopReplica instead
            if state.leader_epoch <= told.leader_epochs.get(tp, -1):
                continue
            told.leader_epochs[tp] = state.leader_epoch
            told.stopped.discard(tp)
            entries.append(admin.PartitionStateEntry(tp[0], tp[1], wire_state(state, replicas)))
        if not entries:
            return None
        leader_ids = {entry.state.leader for entry in entries}
        leaders = [
            wire_broker(view.brokers[b], self.listener) for b in sorted(leader_ids) if b in view.brokers
        ]
        return admin.LeaderAndIsrRequestV0(self.controller_id, self.controller_epoch, entries, leaders)

    def _update_metadata(self, told: BrokerTold, view: ClusterView, live: frozenset) -> Any:
        entries = []
        for tp in sorted(view.states):
            state = view.states[tp]
            if tp[0] in view.deleting:
                continue
            seen = told.metadata.get(tp)
            if seen is not None and _version(state) <= seen:
                continue
            told.metadata[tp] = _version(state)
            entries.append(
                admin.PartitionStateEntry(tp[0], tp[1], wire_state(state, view.assignments.get(tp, ())))
            )
        for tp in sorted(tp for tp in told.metadata if tp not in view.states):
            del told.metadata[tp]
            deleted = PartitionState(LEADER_DURING_DELETE, 0, (), self.controller_epoch)
            entries.append(admin.PartitionStateEntry(tp[0], tp[1], wire_state(deleted, ())))
        if not entries and told.live_brokers == live:
            return None
        told.live_brokers = live
        brokers = [view.brokers[b] for b in sorted(view.brokers)]
        return update_metadata_request(self.controller_id, self.controller_epoch, entries, brokers)

    def _stop_replicas(self, broker_id: int, told: BrokerTold, view: ClusterView) -> list[Any]:
        keep, delete = [], []
        for tp in sorted(
            tp for tp in told.leader_epochs if broker_id not in view.assignments.get(tp, (broker_id,))
        ):
            del told.leader_epochs[tp]  # reassigned away: its replica goes
            delete.append(tp)
        for tp in sorted(view.assignments):
            if broker_id not in view.assignments[tp] or tp in told.stopped:
                continue
            if tp[0] in view.deleting:
                _forget(told, tp)
                delete.append(tp)
            elif (
                broker_id in view.shutting_down and tp in view.states and view.states[tp].leader != broker_id
            ):
                keep.append(tp)
        requests = []
        for flag, partitions in ((0, keep), (1, delete)):
            if partitions:
                told.stopped.update(partitions)
                requests.append(
                    admin.StopReplicaRequestV0(
                        self.controller_id,
                        self.controller_epoch,
                        flag,
                        [admin.TopicPartition(topic, partition) for topic, partition in partitions],
                    )
                )
        return requests


def _forget(told: BrokerTold, tp: TopicPartition) -> None:
    """A partition being deleted: its leader epochs and metadata were told for the old topic, and the same
    topic created again starts at leader epoch 0 and znode version 0 (its metadata is still told as deleted
    once the partition is gone from the view)."""
    told.leader_epochs.pop(tp, None)
    if tp in told.metadata:
        told.metadata[tp] = (-1, -1)
