"""PreferredReplicaLeaderElectionCommand: 0.8.2's kafka-preferred-replica-election.sh on ZooKeeper alone.

It writes ``/admin/preferred_replica_election`` with the partitions to hand back to their preferred (first
assigned) replica, every partition of every topic unless a JSON file names some
(``{"partitions":[{"topic":"t","partition":0}]}``); the controller elects and deletes the znode. An election
still in progress (the znode exists) refuses a new one.
"""

from __future__ import annotations

import json

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from zkafka.admin.assignment import AdminOperationError
from zkafka.admin.topics import all_topics, topic_assignment
from zkafka.zk.paths08 import (
    PREFERRED_REPLICA_ELECTION_PATH,
    ZkDataError,
    encode_partition_list,
    parse_partition_list,
)

TopicPartition = tuple[str, int]


def partitions_from_json(text: str, source: str = "the JSON file") -> set[TopicPartition]:
    """The partitions of an election file; duplicates or a malformed file raise AdminOperationError."""
    try:
        entries = json.loads(text).get("partitions")
        partitions = parse_partition_list(source, text)
    except (ValueError, AttributeError, ZkDataError) as exc:
        raise AdminOperationError(f"{source}: not a preferred replica election file: {exc}") from None
    if len(partitions) != len(entries):
        raise AdminOperationError(f"{source}: preferred replica election data contains duplicate partitions")
    return partitions


def all_partitions(client: KazooClient) -> set[TopicPartition]:
    return {(t, p) for t in all_topics(client) for p in (topic_assignment(client, t) or {})}


def start_election(client: KazooClient, partitions: set[TopicPartition] | None) -> list[str]:
    """Write the election znode; the lines 0.8.2 prints."""
    chosen = all_partitions(client) if partitions is None else partitions
    data = encode_partition_list(chosen)
    try:
        client.create(PREFERRED_REPLICA_ELECTION_PATH, data.encode(), makepath=True)
    except NodeExistsError:
        running = parse_partition_list(
            PREFERRED_REPLICA_ELECTION_PATH, client.get(PREFERRED_REPLICA_ELECTION_PATH)[0]
        )
        raise AdminOperationError(
            f"preferred replica leader election currently in progress for {_names(running)}; aborting"
        ) from None
    return [
        f"Created preferred replica election path with {data}",
        f"Successfully started preferred replica election for partitions {_names(chosen)}",
    ]


def _names(partitions: set[TopicPartition]) -> str:
    return ", ".join(f"[{t},{p}]" for t, p in sorted(partitions)) or "(none)"
