"""The controller's decisions, as pure functions: which replica leads a partition, with which ISR and epochs.

They follow 0.8.2's partition state machine (§8.2, §8.3 of the facts sheet):

- a new partition (no state znode): leader = first live assigned replica, ISR = the live assigned replicas,
  leader epoch 0; nothing while no replica is alive;
- a partition whose leader is dead (or -1): leader = first assigned replica that is alive and in the ISR,
  ISR := its live members; with none, unclean election (on by default, per topic) takes the first live
  assigned replica with ISR = [it]; with no live replica the partition goes offline: leader -1 and the dead
  replicas leave the ISR (never emptied when unclean election is off);
- a live leader with dead ISR members: they leave the ISR;
- a broker in controlled shutdown (§8.5) is alive but not electable: a partition it leads with another live
  ISR member moves to the first such replica, and it leaves the ISR of the partitions it follows; a partition
  with no other ISR member stays with it until it goes;
- every change bumps the leader epoch; a state written by a newer controller is never touched.

The ZooKeeper side (reading the state, version-checked writes) is controller.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from zkafka.zk.paths08 import NO_LEADER, PartitionState


@dataclass(frozen=True)
class StateChange:
    """One partition's state znode to write: ``old`` is what was read (None = create the znode)."""

    topic: str
    partition: int
    old: PartitionState | None
    new: PartitionState


def new_partition_state(
    replicas: Sequence[int], live: Iterable[int], controller_epoch: int
) -> PartitionState | None:
    """The first state of a partition, or None while none of its replicas is alive."""
    live = set(live)
    live_replicas = tuple(r for r in replicas if r in live)
    if not live_replicas:
        return None
    return PartitionState(live_replicas[0], 0, live_replicas, controller_epoch)


def next_partition_state(
    replicas: Sequence[int],
    current: PartitionState,
    live: Iterable[int],
    unclean: bool,
    controller_epoch: int,
    shutting_down: Iterable[int] = (),
) -> PartitionState | None:
    """The state to write after brokers came or went (or began a controlled shutdown), or None when
    ``current`` stands."""
    if current.controller_epoch > controller_epoch:
        return None
    live = set(live)
    electable = live - set(shutting_down)
    isr = tuple(r for r in current.isr if r in electable)
    if current.leader != NO_LEADER and current.leader in live:
        if current.leader not in electable:  # its broker is shutting down: hand over within the ISR
            candidates = [r for r in replicas if r in isr]
            if candidates:
                return bump_leader_epoch(current, candidates[0], isr, controller_epoch)
            isr = tuple(r for r in current.isr if r in live)
        if isr == current.isr:
            return None
        return bump_leader_epoch(current, current.leader, isr, controller_epoch)
    candidates = [r for r in replicas if r in isr]
    if candidates:
        return bump_leader_epoch(current, candidates[0], isr, controller_epoch)
    live_replicas = [r for r in replicas if r in electable]
    if unclean and live_replicas:
        return bump_leader_epoch(current, live_replicas[0], (live_replicas[0],), controller_epoch)
    # offline: no leader; the dead leave the ISR, which is never emptied when unclean election is off
    isr = isr if (isr or unclean) else current.isr
    if current.leader == NO_LEADER and isr == current.isr:
        return None
    return bump_leader_epoch(current, NO_LEADER, isr, controller_epoch)


def bump_leader_epoch(
    current: PartitionState, leader: int, isr: tuple[int, ...], controller_epoch: int
) -> PartitionState:
    """``current`` with a new leader and ISR: the leader epoch one up, written by this controller's epoch."""
    return PartitionState(leader, current.leader_epoch + 1, tuple(isr), controller_epoch)


def partition_state_changes(
    assignments: Mapping[str, Mapping[int, Sequence[int]]],
    states: Mapping[tuple[str, int], PartitionState | None],
    live: Iterable[int],
    controller_epoch: int,
    unclean: Callable[[str], bool] = lambda topic: True,
    skip_topics: Iterable[str] = (),
    shutting_down: Iterable[int] = (),
) -> list[StateChange]:
    """Every state znode the controller should write for this view of the cluster, in topic/partition order.

    ``unclean(topic)`` says whether unclean leader election is allowed for the topic; ``skip_topics`` are
    left alone (being deleted); ``shutting_down`` are live brokers in controlled shutdown.
    """
    live = frozenset(live)
    down = frozenset(shutting_down)
    electable = live - down
    skip = set(skip_topics)
    changes = []
    for topic in sorted(assignments):
        if topic in skip:
            continue
        for partition, replicas in sorted(assignments[topic].items()):
            current = states.get((topic, partition))
            if current is None:
                new = new_partition_state(replicas, electable, controller_epoch)
            else:
                needs_unclean = current.leader not in live and not any(r in electable for r in current.isr)
                allowed = unclean(topic) if needs_unclean else True
                new = next_partition_state(replicas, current, live, allowed, controller_epoch, down)
            if new is not None:
                changes.append(StateChange(topic, partition, current, new))
    return changes


# -- preferred replicas (§8.6) ------------------------------------------------------------------------------


def preferred_replica_state(
    replicas: Sequence[int], current: PartitionState, live: Iterable[int], controller_epoch: int
) -> PartitionState | None:
    """Hand the partition back to its preferred (first assigned) replica if that one is alive, in the ISR
    and not leading already: same ISR, leader epoch + 1. None otherwise."""
    if not replicas or current.controller_epoch > controller_epoch:
        return None
    preferred = replicas[0]
    if current.leader == preferred or preferred not in set(live) or preferred not in current.isr:
        return None
    return bump_leader_epoch(current, preferred, current.isr, controller_epoch)


def preferred_replica_changes(
    assignments: Mapping[str, Mapping[int, Sequence[int]]],
    states: Mapping[tuple[str, int], PartitionState | None],
    partitions: Iterable[tuple[str, int]],
    live: Iterable[int],
    controller_epoch: int,
) -> list[StateChange]:
    """The state znodes a preferred replica election of ``partitions`` writes (those it can move)."""
    live = frozenset(live)
    changes = []
    for topic, partition in sorted(set(partitions)):
        replicas = assignments.get(topic, {}).get(partition)
        current = states.get((topic, partition))
        if replicas is None or current is None:
            continue
        new = preferred_replica_state(replicas, current, live, controller_epoch)
        if new is not None:
            changes.append(StateChange(topic, partition, current, new))
    return changes


def imbalanced_partitions(
    assignments: Mapping[str, Mapping[int, Sequence[int]]],
    states: Mapping[tuple[str, int], PartitionState | None],
    live: Iterable[int],
    imbalance_percentage: int,
) -> set[tuple[str, int]]:
    """The partitions an automatic leader rebalance hands back: for each live broker whose share of the
    partitions preferring it but led elsewhere is above ``leader.imbalance.per.broker.percentage``, those
    partitions."""
    live = frozenset(live)
    preferring: dict[int, list[tuple[str, int]]] = {}
    for topic, parts in assignments.items():
        for partition, replicas in parts.items():
            if replicas:
                preferring.setdefault(replicas[0], []).append((topic, partition))
    out: set[tuple[str, int]] = set()
    for broker, partitions in preferring.items():
        if broker not in live:
            continue
        elsewhere = [tp for tp in partitions if (s := states.get(tp)) is not None and s.leader != broker]
        if len(elsewhere) * 100 > imbalance_percentage * len(partitions):
            out.update(elsewhere)
    return out
