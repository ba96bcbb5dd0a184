"""Replica assignment, as pure functions: 0.8.2's ``AdminUtils.assignReplicasToBrokers`` and the manual form.

``assign_replicas_to_brokers`` spreads partition leaders round-robin over the brokers from a random start, and
each partition's followers at a shift that grows every time the partitions wrap around the broker list, so
replicas of one broker's partitions land on different brokers. The random start and shift come from ``rng``
(seed it for a repeatable result).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from zkafka.errors import KafkaError


class AdminOperationError(KafkaError):
    """An admin request that cannot be carried out (bad counts, unknown brokers, existing topic...)."""


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
        raise AdminOperationError("number of partitions must be larger than 0")
    if replication_factor <= 0:
        raise AdminOperationError("replication factor must be larger than 0")
    if replication_factor > len(brokers):
        raise AdminOperationError(
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
            raise AdminOperationError(
                f"partition replica lists may not contain duplicate entries: {','.join(map(str, duplicates))}"
            )
        assignment[first_partition + i] = replicas
        if len(replicas) != len(assignment[first_partition]):
            raise AdminOperationError(f"partition {i} has a different replication factor: {item}")
    return assignment


def check_assignment(assignment: Mapping[int, Sequence[int]]) -> None:
    """All partitions with the same number of replicas, none listed twice (before an assignment is written)."""
    if not assignment:
        raise AdminOperationError("number of partitions must be larger than 0")
    if len({len(replicas) for replicas in assignment.values()}) != 1:
        raise AdminOperationError("all partitions should have the same number of replicas")
    for partition, replicas in assignment.items():
        if len(set(replicas)) != len(replicas):
            raise AdminOperationError(f"partition {partition}: duplicate replica assignment {list(replicas)}")
