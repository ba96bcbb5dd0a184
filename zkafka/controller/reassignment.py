"""Partition reassignment (§8.7), as a pure decision: where one partition's move from its old replicas (OAR) to
the new ones (RAR) stands, and the next write it calls for.

0.8.2's controller walks each partition through these steps, and so does this one, one step per pass, from
what ZooKeeper holds (the assignment, the state znode, the live brokers):

1. a new replica that is not alive: the move is abandoned (removed from ``/admin/reassign_partitions``);
2. the assignment becomes OAR + the new replicas (in RAR's order), with the leader epoch raised so every
   replica hears of the new list (LeaderAndIsr), and the new replicas start fetching;
3. wait until every new replica is in the ISR (the leader adds them as they catch up);
4. the assignment becomes RAR; a leader outside RAR (or dead) gives way to the first live RAR member of the
   ISR; the ISR keeps only RAR members; the leader epoch goes up. The controller then tells the dropped
   replicas to delete their logs (StopReplica with delete) and removes the partition from the admin znode.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkafka.controller.leader_selector import bump_leader_epoch
from zkafka.zk.paths08 import PartitionState


@dataclass(frozen=True)
class ReassignmentStep:
    """What to do for one partition: ``action`` is ``done``, ``abort``, ``wait``, ``expand`` or ``finish``;
    ``replicas`` and ``state`` are the assignment and the state znode to write (for expand and finish)."""

    action: str
    replicas: tuple[int, ...] = ()
    state: PartitionState | None = None


def reassignment_step(
    target: Sequence[int],
    replicas: Sequence[int],
    state: PartitionState | None,
    live: Iterable[int],
    controller_epoch: int,
) -> ReassignmentStep:
    """The next step of moving a partition with ``replicas`` and ``state`` to ``target``."""
    target, replicas, live = tuple(target), tuple(replicas), frozenset(live)
    if replicas == target:
        return ReassignmentStep("done")
    if not target or len(set(target)) != len(target) or any(r not in live for r in target):
        return ReassignmentStep("abort")
    if state is None:
        return ReassignmentStep("wait")
    if not set(target) <= set(replicas):
        expanded = replicas + tuple(r for r in target if r not in replicas)
        return ReassignmentStep("expand", expanded, bump_leader_epoch(state, state.leader, state.isr, controller_epoch))
    if not set(target) <= set(state.isr):
        return ReassignmentStep("wait")
    isr = tuple(r for r in state.isr if r in target)
    leader = state.leader
    if leader not in target or leader not in live:
        leader = next(r for r in target if r in isr)
    return ReassignmentStep("finish", target, bump_leader_epoch(state, leader, isr, controller_epoch))
