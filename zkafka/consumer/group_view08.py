"""What a 0.8 consumer group member reads from ZooKeeper to compute its share: the members and partition ids.

The 0.8 layout keys partitions by id (``/brokers/topics/<t>`` holds ``{"partitions":{"0":[1,2],...}}``) and
members register JSON. The rebalance needs no broker: a partition's leader is found later by the fetcher,
from the brokers' metadata. ``read_group_view08`` does the reads and arms the watches 0.8.2 arms (the
member list, each subscribed topic's assignment, ``/brokers/topics`` for wildcards); the ``GroupView08`` it
returns is plain data, divided by a pure assignor (``zkafka.assignment``: range or roundrobin).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from zkafka.consumer.group_view import GroupView, Registrations, children, get_many, group_threads
from zkafka.topic_count import TopicCount, WildcardTopicCount
from zkafka.topic_count08 import parse_topic_count08
from zkafka.zk.paths import BROKER_TOPICS_PATH, ZKGroupDirs
from zkafka.zk.paths08 import parse_topic_assignment, topic_path

if TYPE_CHECKING:
    from kazoo.client import KazooClient


@dataclass
class GroupView08(GroupView):
    """The inputs of one 0.8 rebalance attempt. ``threads_per_topic`` holds every topic any member
    subscribes to (roundrobin checks they all have the same threads); partitions are ids; no brokers."""

    def locate(self, topic: str, name: int) -> tuple[int, None]:
        """The partition id, and no broker: the fetcher finds each partition's leader itself."""
        return name, None


def read_group_view08(
    zk: KazooClient,
    dirs: ZKGroupDirs,
    topic_count: TopicCount,
    watch: Callable | None = None,
    registrations: Registrations | None = None,
    exclude_internal_topics: bool = True,
) -> GroupView08:
    """Read every input of the assignment, arming ``watch`` on the member list, on each subscribed topic's
    partition assignment (its creation, for a topic that does not exist yet) and, for a wildcard
    subscription, on ``/brokers/topics``."""
    wildcard = isinstance(topic_count, WildcardTopicCount)
    all_topics = children(zk, BROKER_TOPICS_PATH, watch if wildcard else None)
    my_threads = topic_count.threads_per_topic(all_topics)

    consumers = sorted(children(zk, dirs.consumer_registry_dir, watch))
    paths = [dirs.consumer_path(c) for c in consumers]
    values = registrations.get_many(zk, paths) if registrations is not None else get_many(zk, paths)
    parse = partial(parse_topic_count08, exclude_internal_topics=exclude_internal_topics)
    threads_per_topic = group_threads(
        {member: values[dirs.consumer_path(member)] for member in consumers}, all_topics, None, parse
    )

    paths = {topic: topic_path(topic) for topic in my_threads}
    assignments = get_many(zk, paths.values(), watch)
    partitions_per_topic: dict[str, list[int]] = {}
    for topic, path in paths.items():
        text = assignments[path]
        if text is None and watch is not None and zk.exists(path, watch=watch) is not None:
            text = get_many(zk, [path], watch)[path]  # created between the two reads
        if text is not None:
            partitions_per_topic[topic] = sorted(parse_topic_assignment(topic, text))
    return GroupView08({}, consumers, threads_per_topic, partitions_per_topic, my_threads)
