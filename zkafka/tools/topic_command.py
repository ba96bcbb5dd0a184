"""TopicCommand: 0.8.2's kafka-topics.sh on ZooKeeper alone (create, list, describe, alter, delete), and Kafka
2.2's through the admin requests with ``--bootstrap-server`` (``admin_run``; alter adds partitions only there,
configs go through ``zkafka configs``).

``--topic`` is a whitelist regex for list, describe, alter and delete, as in 0.8.2, and an exact name for
create. The output lines are Kafka's; each action returns them so the CLI only prints.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient

from zkafka.admin.assignment import AdminOperationError
from zkafka.admin.topics import (
    TopicDescription,
    add_partitions,
    all_topics,
    change_topic_config,
    create_topic,
    create_topic_with_assignment,
    describe_topic,
    fetch_topic_config,
    live_broker_ids,
    mark_topic_for_deletion,
)
from zkafka.config08 import TOPIC_KEYS
from zkafka.errors import InvalidConfigError
from zkafka.protocol.configs import DYNAMIC_TOPIC_CONFIG, TOPIC
from zkafka.tools.admin_client import AdminClient
from zkafka.topic_count import Whitelist
from zkafka.zk.paths08 import PartitionState


def matching_topics(client: KazooClient, pattern: str | None) -> list[str]:
    """Every topic, or those the whitelist regex ``pattern`` fully matches."""
    whitelist = _whitelist(pattern)
    return [t for t in all_topics(client) if whitelist is None or whitelist.is_topic_allowed(t)]


def list_lines(descriptions: Iterable[TopicDescription]) -> list[str]:
    return [f"{d.topic} - marked for deletion" if d.marked_for_deletion else d.topic for d in descriptions]


def describe_lines(
    descriptions: Iterable[TopicDescription],
    live_brokers: Iterable[int],
    *,
    under_replicated: bool = False,
    unavailable: bool = False,
    with_overrides: bool = False,
) -> list[str]:
    """``Topic:T<TAB>PartitionCount:N...`` headers and one ``<TAB>Topic: T<TAB>Partition: p...`` line per partition.

    ``under_replicated`` keeps the partitions whose ISR is smaller than their replica list, ``unavailable``
    those without a live leader (both without the header); ``with_overrides`` shows only the headers of
    topics that have overrides.
    """
    live = set(live_brokers)
    lines = []
    for d in descriptions:
        if not (under_replicated or unavailable) and (d.config or not with_overrides):
            factor = len(next(iter(d.assignment.values()), ()))
            configs = ",".join(f"{k}={v}" for k, v in d.config.items())
            lines.append(
                f"Topic:{d.topic}\tPartitionCount:{len(d.assignment)}\tReplicationFactor:{factor}\tConfigs:{configs}"
            )
        if with_overrides:
            continue
        for partition in sorted(d.assignment):
            state = d.states.get(partition)
            isr = state.isr if state else ()
            leader = state.leader if state else None
            if under_replicated and len(isr) >= len(d.assignment[partition]):
                continue
            if unavailable and leader is not None and leader in live:
                continue
            lines.append(
                f"\tTopic: {d.topic}\tPartition: {partition}\tLeader: {'none' if leader is None else leader}"
                f"\tReplicas: {_ids(d.assignment[partition])}\tIsr: {_ids(isr)}"
            )
    return lines


def _ids(ids: Iterable[int]) -> str:
    return ",".join(map(str, ids))


def describe(client: KazooClient, pattern: str | None, **filters: bool) -> list[str]:
    descriptions = [d for d in (describe_topic(client, t) for t in matching_topics(client, pattern)) if d]
    return describe_lines(descriptions, live_broker_ids(client), **filters)


def list_topics(client: KazooClient, pattern: str | None) -> list[str]:
    return list_lines(d for d in (describe_topic(client, t) for t in matching_topics(client, pattern)) if d)


def create(
    client: KazooClient,
    topic: str,
    partitions: int | None,
    replication_factor: int | None,
    replica_assignment: str | None,
    config: Mapping[str, str],
    rng: random.Random | None = None,
) -> list[str]:
    if replica_assignment:
        create_topic_with_assignment(client, topic, replica_assignment, config)
    else:
        if partitions is None or replication_factor is None:
            raise AdminOperationError(
                "--create needs --partitions and --replication-factor (or --replica-assignment)"
            )
        create_topic(client, topic, partitions, replication_factor, config, rng=rng)
    return [f'Created topic "{topic}".']


def alter(
    client: KazooClient,
    pattern: str,
    partitions: int | None,
    replica_assignment: str | None,
    config: Mapping[str, str],
    delete_config: Iterable[str],
    rng: random.Random | None = None,
) -> list[str]:
    delete_config = list(delete_config)
    check_config_names(delete_config)
    topics = existing_topics(client, pattern)
    lines = []
    for topic in topics:
        if config or delete_config:
            merged = {**fetch_topic_config(client, topic), **config}
            for name in delete_config:
                merged.pop(name, None)
            change_topic_config(client, topic, merged)
            lines.append(f'Updated config for topic "{topic}".')
        if partitions is not None:
            lines.append(
                "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering"
                " of the messages will be affected"
            )
            add_partitions(client, topic, partitions, replica_assignment, rng=rng)
            lines.append("Adding partitions succeeded!")
    return lines


def delete(client: KazooClient, pattern: str) -> list[str]:
    """Mark the matching topics for deletion; none matching is said so and is no error (0.8.2's tool)."""
    topics = matching_topics(client, pattern)
    if not topics:
        return [f"Topic {pattern} does not exist"]
    lines = []
    for topic in topics:
        if mark_topic_for_deletion(client, topic):
            lines.append(f"Topic {topic} is marked for deletion.")
            lines.append("Note: This will have no impact if delete.topic.enable is not set to true.")
        else:
            lines.append(f"Topic {topic} is already marked for deletion.")
    return lines


def existing_topics(client: KazooClient, pattern: str) -> list[str]:
    topics = matching_topics(client, pattern)
    if not topics:
        raise AdminOperationError(f"topic {pattern} does not exist")
    return topics


def check_config_names(names: Iterable[str]) -> None:
    for name in names:
        if name not in TOPIC_KEYS:
            raise InvalidConfigError(f"{name}: unknown topic configuration")


# -- through the admin requests (--bootstrap-server, Kafka 2.2's TopicCommand.AdminClientTopicService) -------


def admin_descriptions(
    admin: AdminClient, pattern: str | None, with_configs: bool = True
) -> list[TopicDescription]:
    """The topics of Metadata v1 (matching ``pattern``) as TopicDescriptions, their overrides from DescribeConfigs."""
    whitelist = _whitelist(pattern)
    out = []
    for t in sorted(admin.metadata().topics, key=lambda t: t.topic):
        if t.error or t.is_internal or (whitelist and not whitelist.is_topic_allowed(t.topic)):
            continue
        assignment = {p.partition: list(p.replicas) for p in t.partitions}
        states = {p.partition: PartitionState(p.leader, -1, tuple(p.isr), -1) for p in t.partitions}
        config = {}
        if with_configs:
            entries = admin.describe_configs(TOPIC, t.topic)
            config = {e.name: e.value for e in entries if e.source == DYNAMIC_TOPIC_CONFIG}
        out.append(TopicDescription(t.topic, assignment, states, config))
    return out


def admin_run(admin: AdminClient, action: str, options: Mapping) -> list[str]:
    """One kafka-topics.sh action (create, list, describe, alter, delete) through ``admin``."""
    topic, config = options["topic"], options["config"]
    if action == "list":
        return list_lines(admin_descriptions(admin, topic, with_configs=False))
    if action == "describe":
        brokers = [b.node_id for b in admin.metadata([]).brokers]
        return describe_lines(admin_descriptions(admin, topic), brokers, **options["filters"])
    if action == "create":
        assignment = _manual_assignment(options["replica_assignment"])
        partitions, factor = (
            (-1, -1) if assignment else (options["partitions"] or -1, options["replication_factor"] or -1)
        )
        admin.create_topic(topic, partitions, factor, dict(config), assignment)
        return [f'Created topic "{topic}".']
    topics = [d.topic for d in admin_descriptions(admin, topic, with_configs=False)]
    if not topics:
        raise AdminOperationError(f"topic {topic} does not exist")
    if action == "delete":
        admin.delete_topics(topics)
        return [f"Topic {t} is marked for deletion." for t in topics]
    if config or options["delete_configs"]:
        raise AdminOperationError(
            "--alter with --bootstrap-server changes partitions only: use `zkafka configs`"
        )
    manual = _manual_assignment(options["replica_assignment"])
    for name in topics:
        admin.create_partitions(name, options["partitions"], list(manual.values()) if manual else None)
    return ["Adding partitions succeeded!"]


def _manual_assignment(text: str | None) -> dict[int, list[int]]:
    if not text:
        return {}
    return {p: [int(b) for b in part.split(":")] for p, part in enumerate(text.split(","))}


def _whitelist(pattern: str | None) -> Whitelist | None:
    try:
        return Whitelist(pattern) if pattern is not None else None
    except ValueError as exc:
        raise AdminOperationError(f"--topic: {exc}") from None
