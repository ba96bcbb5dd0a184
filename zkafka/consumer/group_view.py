"""What a 0.7 consumer group member reads from ZooKeeper to compute its share: brokers, members, partitions.

``read_group_view`` does the reads (and arms the watches that trigger the next rebalance); everything it
reads goes into a ``GroupView`` of plain data, whose ``my_share`` and ``locate`` are pure. Another
ZooKeeper layout (the 0.8 consumer's partition ids) supplies its own reader and view with the same two
methods, and the rebalancer works with either.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kazoo.exceptions import NoNodeError

from zkafka.errors import KafkaError
from zkafka.rebalance import Assignor, assign, broker_partitions, member_share
from zkafka.topic_count import TopicCount, WildcardTopicCount, parse_topic_count
from zkafka.zk.paths07 import (
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    Broker,
    BrokerPartition,
    ZKGroupDirs,
    broker_topic_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)


@dataclass
class GroupView:
    """The inputs of one rebalance attempt, as read from ZooKeeper."""

    brokers: dict[int, Broker]
    consumers: list[str]
    threads_per_topic: dict[str, list[str]]  # every member's thread ids, per topic I subscribe to
    partitions_per_topic: dict[str, list[str]]
    my_threads_per_topic: dict[str, list[str]]

    def my_share(self, assignor: Assignor = assign) -> dict[tuple[str, str], str]:
        """``(topic, "b-p") -> my thread id`` for every partition the group's assignment gives me."""
        mine = [tid for ids in self.my_threads_per_topic.values() for tid in ids]
        return member_share(self.threads_per_topic, self.partitions_per_topic, mine, assignor)

    def locate(self, topic: str, name: str) -> tuple[BrokerPartition, Broker]:
        """The partition named ``"b-p"`` and the broker serving it; KafkaError if that broker is not registered."""
        partition = BrokerPartition.parse(name)
        broker = self.brokers.get(partition.broker_id)
        if broker is None:
            raise KafkaError(f"broker {partition.broker_id} of {topic}:{name} is not registered")
        return partition, broker


def group_threads(
    member_counts: Mapping[str, str | None],
    all_topics: Iterable[str],
    topics: Iterable[str] | None,
    parse: Callable[[str, str], TopicCount] = parse_topic_count,
) -> dict[str, list[str]]:
    """Every member's thread ids for each of ``topics`` (None: every topic any member has), from the members'
    registered topic counts, read with ``parse`` (the 0.7 form by default).

    ``member_counts`` maps a consumer id to its ``/consumers/<g>/ids/<id>`` value (None: it left after the
    listing). A value that cannot be read is logged and its member left out.
    """
    all_topics = list(all_topics)
    threads: dict[str, list[str]] = {topic: [] for topic in topics or ()}
    for member, value in member_counts.items():
        if value is None:
            continue  # left after the listing; its departure is another event
        try:
            theirs = parse(member, value).threads_per_topic(all_topics)
        except ValueError:
            log.warning("ignoring consumer %s with an unreadable topic count %r", member, value)
            continue
        for topic, ids in theirs.items():
            if topics is None:
                threads.setdefault(topic, []).extend(ids)
            elif topic in threads:
                threads[topic].extend(ids)
    return threads


def get_many(zk: KazooClient, paths: Iterable[str], watch: Callable | None = None) -> dict[str, str | None]:
    """Values of several znodes read concurrently (None for a node that does not exist)."""
    pending = {path: zk.get_async(path, watch=watch) for path in paths}
    values: dict[str, str | None] = {}
    for path, result in pending.items():
        try:
            values[path] = result.get()[0].decode("utf-8")
        except NoNodeError:
            values[path] = None
    return values


def children(zk: KazooClient, path: str, watch: Callable | None = None) -> list[str]:
    """Children of a znode with a child watch; for a missing node, an exists watch on its creation."""
    try:
        return zk.get_children(path, watch=watch)
    except NoNodeError:
        if watch is not None and zk.exists(path, watch=watch) is not None:
            return children(zk, path, watch)
        return []


def read_group_view(
    zk: KazooClient, dirs: ZKGroupDirs, topic_count: TopicCount, watch: Callable | None = None
) -> GroupView:
    """Read every input of the assignment, arming ``watch`` on what 0.7 watches (and a little more).

    Watched: the group's member list, ``/brokers/topics`` for a wildcard subscription, the broker list of
    each subscribed topic and each broker's partition count for it.
    """
    wildcard = isinstance(topic_count, WildcardTopicCount)
    broker_ids = children(zk, BROKER_IDS_PATH)
    broker_values = get_many(zk, [f"{BROKER_IDS_PATH}/{b}" for b in broker_ids])
    brokers = {}
    for b in broker_ids:
        value = broker_values[f"{BROKER_IDS_PATH}/{b}"]
        if value is not None:
            brokers[int(b)] = Broker.from_zk(b, value)
    all_topics = children(zk, BROKER_TOPICS_PATH, watch if wildcard else None)
    my_threads = topic_count.threads_per_topic(all_topics)

    consumers = sorted(children(zk, dirs.consumer_registry_dir, watch))
    values = get_many(zk, [dirs.consumer_path(c) for c in consumers])
    threads_per_topic = group_threads(
        {member: values[dirs.consumer_path(member)] for member in consumers}, all_topics, my_threads
    )

    partitions_per_topic: dict[str, list[str]] = {}
    for topic in my_threads:
        holders = children(zk, broker_topic_path(topic), watch)
        counts = get_many(zk, [broker_topic_path(topic, int(b)) for b in holders], watch)
        partitions_per_topic[topic] = broker_partitions(
            {b: int(v) for b in holders if (v := counts[broker_topic_path(topic, int(b))]) is not None}
        )
    return GroupView(brokers, consumers, threads_per_topic, partitions_per_topic, my_threads)
