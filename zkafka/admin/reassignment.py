"""Partition reassignment in ZooKeeper (§7, §8.7): ``/admin/reassign_partitions`` and the topics' assignments.

``start_reassignment`` writes the moves for the controller (refused while another runs);
``pending_reassignments`` reads them; ``remove_reassignments`` drops the finished ones (the znode goes
with the last); ``write_partition_replicas`` rewrites some partitions' replica lists of a topic, conditional
on the version read (retried on a conflict).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkafka.admin.assignment import AdminOperationError
from zkafka.zk.paths08 import (
    REASSIGN_PARTITIONS_PATH,
    encode_reassignment,
    encode_topic_assignment,
    parse_reassignment,
    parse_topic_assignment,
    topic_path,
)

TopicPartition = tuple[str, int]


def start_reassignment(client: KazooClient, moves: Mapping[TopicPartition, Sequence[int]]) -> str:
    """Write ``/admin/reassign_partitions``; the JSON written. AdminOperationError while another runs."""
    data = encode_reassignment(moves)
    try:
        client.create(REASSIGN_PARTITIONS_PATH, data.encode(), makepath=True)
    except NodeExistsError:
        raise AdminOperationError("there is an existing assignment running") from None
    return data


def pending_reassignments(
    client: KazooClient, watch: Callable | None = None
) -> dict[TopicPartition, list[int]]:
    """The moves still listed (watched for changes when ``watch`` is given); empty when there are none."""
    try:
        data, _ = client.get(REASSIGN_PARTITIONS_PATH, watch=watch)
    except NoNodeError:
        client.exists(REASSIGN_PARTITIONS_PATH, watch=watch)
        return {}
    return parse_reassignment(data)


def remove_reassignments(client: KazooClient, done: Iterable[TopicPartition]) -> None:
    """Take finished (or abandoned) partitions off the list; delete the znode when none is left."""
    done = set(done)
    while done:
        try:
            data, stat = client.get(REASSIGN_PARTITIONS_PATH)
        except NoNodeError:
            return
        left = {tp: r for tp, r in parse_reassignment(data).items() if tp not in done}
        try:
            if left:
                client.set(REASSIGN_PARTITIONS_PATH, encode_reassignment(left).encode(), version=stat.version)
            else:
                client.delete(REASSIGN_PARTITIONS_PATH, version=stat.version)
            return
        except (BadVersionError, NoNodeError):
            continue


def write_partition_replicas(client: KazooClient, topic: str, replicas: Mapping[int, Sequence[int]]) -> None:
    """Set the replica lists of some partitions of ``topic`` (a version-checked read-modify-write)."""
    while True:
        data, stat = client.get(topic_path(topic))
        assignment = parse_topic_assignment(topic, data)
        assignment.update({p: list(r) for p, r in replicas.items()})
        try:
            client.set(topic_path(topic), encode_topic_assignment(assignment).encode(), version=stat.version)
            return
        except BadVersionError:
            continue
