"""ReassignPartitionsCommand: 0.8.2's kafka-reassign-partitions.sh on ZooKeeper alone.

``generate`` proposes an assignment of whole topics (``{"topics":[{"topic":"t"}],"version":1}``) over a broker
list, placing replicas as topic creation does (§8.4) with each topic's replication factor; ``execute`` writes
a reassignment file (``{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}``) to
``/admin/reassign_partitions`` for the controller, printing the current assignment to roll back with;
``verify`` says per partition whether its move completed, failed or is still in progress. Output lines are
0.8.2's; each function returns them so the CLI only prints.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence

from kazoo.client import KazooClient

from zkafka.admin.assignment import AdminOperationError, assign_replicas_to_brokers
from zkafka.admin.reassignment import pending_reassignments, start_reassignment
from zkafka.admin.topics import live_broker_ids, topic_assignment
from zkafka.zk.paths08 import ZkDataError, encode_reassignment, parse_reassignment

TopicPartition = tuple[str, int]


def topics_to_move(text: str, source: str = "--topics-to-move-json-file") -> list[str]:
    """The topics of a ``{"topics":[{"topic":"t"}],"version":1}`` file."""
    try:
        topics = [entry["topic"] for entry in json.loads(text)["topics"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise AdminOperationError(f"{source}: not a topics-to-move file: {exc!r}") from None
    if not topics or not all(isinstance(t, str) for t in topics):
        raise AdminOperationError(f"{source}: names no topic")
    if len(set(topics)) != len(topics):
        raise AdminOperationError(f"{source}: a topic is listed twice")
    return topics


def reassignment_file(text: str, source: str = "--reassignment-json-file") -> dict[TopicPartition, list[int]]:
    """The moves of a reassignment file: non-empty replica lists without duplicates, each partition once."""
    try:
        moves = parse_reassignment(text)
        entries = json.loads(text)["partitions"]
    except (ValueError, KeyError, TypeError, ZkDataError) as exc:
        raise AdminOperationError(f"{source}: not a reassignment file: {exc}") from None
    if not moves:
        raise AdminOperationError(f"{source}: partition reassignment data file is empty")
    if len(entries) != len(moves):
        raise AdminOperationError(f"{source}: a partition is listed twice")
    for (topic, partition), replicas in moves.items():
        if not replicas or len(set(replicas)) != len(replicas):
            raise AdminOperationError(f"{source}: [{topic},{partition}] has replicas {replicas}")
    return moves


def parse_broker_list(text: str) -> list[int]:
    try:
        brokers = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise AdminOperationError(
            f"--broker-list: {text!r} is not a comma-separated list of broker ids"
        ) from None
    if not brokers or len(set(brokers)) != len(brokers):
        raise AdminOperationError(f"--broker-list: {text!r} names no broker, or one twice")
    return brokers


def current_assignment(
    client: KazooClient, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, list[int]]:
    """The replicas of each partition; AdminOperationError naming a partition that does not exist."""
    by_topic: dict[str, dict[int, list[int]]] = {}
    out = {}
    for topic, partition in partitions:
        if topic not in by_topic:
            by_topic[topic] = topic_assignment(client, topic) or {}
        if partition not in by_topic[topic]:
            raise AdminOperationError(f"partition [{topic},{partition}] does not exist")
        out[(topic, partition)] = by_topic[topic][partition]
    return out


def generate(
    client: KazooClient, topics: Sequence[str], brokers: Sequence[int], rng: random.Random | None = None
) -> list[str]:
    current: dict[TopicPartition, list[int]] = {}
    proposed: dict[TopicPartition, list[int]] = {}
    for topic in topics:
        assignment = topic_assignment(client, topic)
        if not assignment:
            raise AdminOperationError(f'topic "{topic}" does not exist')
        current.update({(topic, p): r for p, r in assignment.items()})
        factor = len(assignment[min(assignment)])
        placed = assign_replicas_to_brokers(sorted(brokers), len(assignment), factor, rng=rng)
        proposed.update({(topic, p): r for p, r in placed.items()})
    return [
        "Current partition replica assignment",
        "",
        encode_reassignment(current),
        "Proposed partition reassignment configuration",
        "",
        encode_reassignment(proposed),
    ]


def execute(client: KazooClient, moves: Mapping[TopicPartition, Sequence[int]]) -> list[str]:
    """Start the reassignment; refused when it names a broker that is not registered (as Kafka 2.x's tool)."""
    live = set(live_broker_ids(client))
    missing = sorted({b for replicas in moves.values() for b in replicas} - live)
    if missing:
        raise AdminOperationError(
            "The proposed assignment contains non-existent brokerIDs: " + ",".join(map(str, missing))
        )
    current = current_assignment(client, sorted(moves))
    written = start_reassignment(client, moves)
    return [
        "Current partition replica assignment",
        "",
        encode_reassignment(current),
        "",
        "Save this to use as the --reassignment-json-file option during rollback",
        f"Successfully started reassignment of partitions {written}",
    ]


def verify(client: KazooClient, moves: Mapping[TopicPartition, Sequence[int]]) -> list[str]:
    running = pending_reassignments(client)
    lines = ["Status of partition reassignment:"]
    for (topic, partition), replicas in sorted(moves.items()):
        if (topic, partition) in running:
            status = "is still in progress"
        elif (topic_assignment(client, topic) or {}).get(partition) == list(replicas):
            status = "completed successfully"
        else:
            status = "failed"
        lines.append(f"Reassignment of partition [{topic},{partition}] {status}")
    return lines
