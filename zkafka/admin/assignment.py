"""Replica assignment, as pure functions: 0.8.2's ``AdminUtils.assignReplicasToBrokers`` and the manual form.

``assign_replicas_to_brokers`` spreads partition leaders round-robin over the brokers from a random start, and
each partition's followers at a shift that grows every time the partitions wrap around the broker list, so
replicas of one broker's partitions land on different brokers. The random start and shift come from ``rng``
(seed it for a repeatable result).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from zkafka.errors import (
    AdminOperationError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

# More partitions than this cannot be one topic: their assignment would pass ZooKeeper's 1 MB znode limit
# (jute.maxbuffer) before long, and building it first would stall the controller (a hostile count).
MAX_PARTITIONS = 50_000


def assign_replicas_to_brokers(
    brokers: Sequence[int],
    partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Partition id → replica broker ids (first = preferred leader), over ``brokers`` in the given order.

    ``fixed_start_index`` (>= 0) replaces both random draws, and partitions are numbered from
    ``start_partition_id`` (>= 0), as when partitions are added to a topic.
    """
    if partitions <= 0:
        raise InvalidPartitionsError("number of partitions must be larger than 0")
    if partitions > MAX_PARTITIONS:
        raise InvalidPartitionsError(f"{partitions} partitions: one topic holds at most {MAX_PARTITIONS}")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("replication factor must be larger than 0")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"replication factor: {replication_factor} larger than available brokers: {len(brokers)}"
        )
    rng = rng or random.Random()
    n = len(brokers)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    partition = max(start_partition_id, 0)
    assignment = {}
    for _ in range(partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        assignment[partition] = replicas
        partition += 1
    return assignment


def parse_replica_assignment(text: str, first_partition: int = 0) -> dict[int, list[int]]:
    """``1:2,2:3`` → ``{first: [1, 2], first + 1: [2, 3]}``; every partition must have as many replicas, no repeats."""
    assignment: dict[int, list[int]] = {}
    for i, item in enumerate(text.split(",")):
        try:
            replicas = [int(part.strip()) for part in item.split(":")]
        except ValueError:
            raise AdminOperationError(
                f"replica assignment {text!r}: {item!r} is not a list of broker ids"
            ) from None
        duplicates = sorted({r for r in replicas if replicas.count(r) > 1})
        if duplicates:
            raise InvalidReplicaAssignmentError(
                f"partition replica lists may not contain duplicate entries: {','.join(map(str, duplicates))}"
            )
        assignment[first_partition + i] = replicas
        if len(replicas) != len(assignment[first_partition]):
            raise InvalidReplicaAssignmentError(f"partition {i} has a different replication factor: {item}")
    return assignment


def check_assignment(assignment: Mapping[int, Sequence[int]]) -> None:
    """All partitions with the same number of replicas, none listed twice (before an assignment is written)."""
    if not assignment:
        raise InvalidPartitionsError("number of partitions must be larger than 0")
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentError("all partitions should have the same number of replicas")
    for partition, replicas in assignment.items():
        if not replicas or len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"partition {partition}: duplicate or empty replica assignment {list(replicas)}"
            )
    if sorted(assignment) != list(range(len(assignment))):
        raise InvalidReplicaAssignmentError(
            f"partitions should be a consecutive 0-based integer sequence, not {sorted(assignment)}"
        )


def new_partitions(
    existing: Mapping[int, Sequence[int]],
    total_partitions: int,
    brokers: Sequence[int],
    manual: Sequence[Sequence[int]] | None = None,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """The replicas of the partitions that grow a topic from ``existing`` to ``total_partitions``: ``manual``
    lists the new ones in order; otherwise they are placed as 0.8.2 places them (start and shift = the first
    replica of partition 0), with the topic's replication factor."""
    to_add = total_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsError(
            f"topic has {len(existing)} partitions; the number of partitions can only be increased"
        )
    factor = len(existing[min(existing)])
    if manual is None:
        first = existing[min(existing)][0]
        return assign_replicas_to_brokers(brokers, to_add, factor, first, len(existing), rng=rng)
    if len(manual) != to_add:
        raise InvalidReplicaAssignmentError(
            f"increasing the number of partitions by {to_add} but {len(manual)} assignments provided"
        )
    added = {len(existing) + i: list(replicas) for i, replicas in enumerate(manual)}
    unknown = sorted({r for replicas in added.values() for r in replicas} - set(brokers))
    if unknown:
        raise InvalidReplicaAssignmentError(
            f"brokers {unknown} are not available (live brokers: {list(brokers)})"
        )
    for partition, replicas in added.items():
        if len(replicas) != factor or len(set(replicas)) != factor:
            raise InvalidReplicaAssignmentError(
                f"partition {partition}: {replicas} is not {factor} distinct brokers (the topic's replication factor)"
            )
    return added
