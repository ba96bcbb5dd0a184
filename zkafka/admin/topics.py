"""Topics on the 0.8 line, read and written in ZooKeeper as 0.8.2's AdminUtils does.

Creating a topic writes ``/config/topics/<t>`` (its overrides, possibly none) and then the assignment
``/brokers/topics/<t>``; the controller reacts to the new assignment by electing leaders. Adding partitions
rewrites the assignment; changing a config rewrites ``/config/topics/<t>`` and leaves a change notification;
deleting only marks the topic under ``/admin/delete_topics`` (the controller acts when deletion is enabled).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkafka.admin.assignment import (
    AdminOperationError,
    assign_replicas_to_brokers,
    check_assignment,
    new_partitions,
    parse_replica_assignment,
)
from zkafka.config08 import BrokerConfig08, parse_topic_overrides
from zkafka.errors import TopicExistsError
from zkafka.topic import validate_topic_08
from zkafka.zk.client import get_children, get_data, update_persistent
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH
from zkafka.zk.paths08 import (
    CONFIG_CHANGE_PREFIX,
    CONFIG_CHANGES_PATH,
    PartitionState,
    delete_topic_path,
    encode_config_change,
    encode_topic_assignment,
    encode_topic_config,
    parse_topic_assignment,
    parse_topic_config,
    partition_state_path,
    topic_config_path,
    topic_path,
)


@dataclass(frozen=True)
class TopicDescription:
    """One topic as ZooKeeper holds it: assignment, partition states (None = no state yet) and overrides."""

    topic: str
    assignment: Mapping[int, Sequence[int]]
    states: Mapping[int, PartitionState | None]
    config: Mapping[str, str]
    marked_for_deletion: bool = False


def live_broker_ids(client: KazooClient) -> list[int]:
    """Registered broker ids, sorted (0.8.2's ``getSortedBrokerList``)."""
    return sorted(int(child) for child in get_children(client, BROKER_IDS_PATH) if child.isdigit())


def all_topics(client: KazooClient) -> list[str]:
    return sorted(get_children(client, BROKER_TOPICS_PATH))


def topic_assignment(client: KazooClient, topic: str) -> dict[int, list[int]] | None:
    """Partition id → replicas of a topic, or None when it does not exist."""
    data = get_data(client, topic_path(topic))
    return None if data is None else parse_topic_assignment(topic, data)


def fetch_topic_config(client: KazooClient, topic: str) -> dict[str, str]:
    """The topic's overrides (``{}`` when it has none)."""
    data = get_data(client, topic_config_path(topic))
    return {} if data is None else parse_topic_config(topic, data)


def partition_state(client: KazooClient, topic: str, partition: int) -> PartitionState | None:
    try:
        data, stat = client.get(partition_state_path(topic, partition))
    except NoNodeError:
        return None
    return PartitionState.parse(topic, partition, data, zk_version=stat.version)


def describe_topic(client: KazooClient, topic: str) -> TopicDescription | None:
    """Everything ``topics --describe`` shows about one topic, or None when it does not exist."""
    assignment = topic_assignment(client, topic)
    if assignment is None:
        return None
    states = {p: partition_state(client, topic, p) for p in assignment}
    marked = client.exists(delete_topic_path(topic)) is not None
    return TopicDescription(topic, assignment, states, fetch_topic_config(client, topic), marked)


def create_topic(
    client: KazooClient,
    topic: str,
    partitions: int,
    replication_factor: int,
    config: Mapping[str, str] | None = None,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Create a topic spread over the live brokers (§8.4); return its assignment."""
    validate_topic_08(topic)
    parse_topic_overrides(config or {})
    brokers = live_broker_ids(client)
    assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor, rng=rng)
    write_topic(client, topic, assignment, config)
    return assignment


def create_topic_with_assignment(
    client: KazooClient, topic: str, replica_assignment: str, config: Mapping[str, str] | None = None
) -> dict[int, list[int]]:
    """Create a topic from a manual ``1:2,2:3`` assignment."""
    validate_topic_08(topic)
    assignment = parse_replica_assignment(replica_assignment)
    write_topic(client, topic, assignment, config)
    return assignment


def auto_create_topic(client: KazooClient, config: BrokerConfig08, topic: str) -> bool:
    """Create a topic a client asked for with the broker's ``num.partitions`` and ``default.replication.factor``.

    True when this call created it, False when it existed already.
    """
    try:
        create_topic(client, topic, config["num.partitions"], config["default.replication.factor"])
    except TopicExistsError:
        return False
    return True


def write_topic(
    client: KazooClient, topic: str, assignment: Mapping[int, Sequence[int]], config: Mapping[str, str] | None
) -> None:
    """Validate, then write the topic's config and its assignment (refusing an existing topic)."""
    validate_topic_08(topic)
    check_assignment(assignment)
    overrides = {k: str(v) for k, v in (config or {}).items()}
    parse_topic_overrides(overrides)
    if client.exists(topic_path(topic)):
        raise TopicExistsError(f'topic "{topic}" already exists')
    update_persistent(client, topic_config_path(topic), encode_topic_config(overrides))
    try:
        client.create(topic_path(topic), encode_topic_assignment(assignment).encode(), makepath=True)
    except NodeExistsError:
        raise TopicExistsError(f'topic "{topic}" already exists') from None


def add_partitions(
    client: KazooClient,
    topic: str,
    total_partitions: int,
    replica_assignment: str | None = None,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """Grow a topic to ``total_partitions``; return the new partitions' assignment.

    Without ``replica_assignment`` the new replicas are placed as 0.8.2 places them (start and shift = the
    first replica of partition 0). A manual assignment lists either the new partitions only, or all of them
    (the existing ones are then skipped, as 0.8.2 does).
    """
    existing = topic_assignment(client, topic)
    if existing is None:
        raise AdminOperationError(f'topic "{topic}" does not exist')
    manual = None
    if replica_assignment:
        items = replica_assignment.split(",")
        if len(items) == total_partitions:
            items = items[len(existing) :]
        manual = list(parse_replica_assignment(",".join(items)).values())
    added = new_partitions(existing, total_partitions, live_broker_ids(client), manual, rng)
    write_added_partitions(client, topic, existing, added)
    return added


def write_added_partitions(
    client: KazooClient, topic: str, existing: Mapping[int, Sequence[int]], added: Mapping[int, Sequence[int]]
) -> None:
    """Rewrite the topic's assignment with the ``added`` partitions (the controller then elects leaders)."""
    client.set(topic_path(topic), encode_topic_assignment({**existing, **added}).encode())


def change_topic_config(
    client: KazooClient, topic: str, config: Mapping[str, str], notification_version: int = 0
) -> None:
    """Replace a topic's overrides and notify the brokers through ``/config/changes`` (0.8.2's notification,
    or ``notification_version=2`` Kafka 1.1's, as the AlterConfigs request writes it)."""
    if client.exists(topic_path(topic)) is None:
        raise AdminOperationError(f'topic "{topic}" does not exist')
    overrides = {k: str(v) for k, v in config.items()}
    parse_topic_overrides(overrides)
    update_persistent(client, topic_config_path(topic), encode_topic_config(overrides))
    client.create(
        f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}",
        encode_config_change(topic, notification_version).encode(),
        sequence=True,
        makepath=True,
    )


def mark_topic_for_deletion(client: KazooClient, topic: str) -> bool:
    """Write ``/admin/delete_topics/<topic>``; False when it was marked already."""
    try:
        client.create(delete_topic_path(topic), b"", makepath=True)
    except NodeExistsError:
        return False
    return True
