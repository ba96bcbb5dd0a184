"""What a 0.8 consumer group member reads from ZooKeeper to compute its share: the members and partition ids.

The 0.8 layout keys partitions by id (``/brokers/topics/<t>`` holds ``{"partitions":{"0":[1,2],...}}``) and
members register JSON. The rebalance needs no broker: a partition's leader is found later by the fetcher,
from the brokers' metadata. ``read_group_view08`` does the reads and arms the watches 0.8.2 arms (the
member list, each subscribed topic's assignment, ``/brokers/topics`` for wildcards); the ``GroupView08`` it
returns is plain data, divided by a pure assignor (``zkafka.assignment``: range or roundrobin).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from zkafka.consumer.group_view import GroupView, group_threads, read_members
from zkafka.topic_count import TopicCount, WildcardTopicCount
from zkafka.topic_count08 import parse_topic_count08
from zkafka.zk.paths import BROKER_IDS_PATH, ZKGroupDirs
from zkafka.zk.paths08 import parse_topic_assignment, topic_path
from zkafka.zk.watched import Reads

if TYPE_CHECKING:
    from zkafka.zk.watched import WatchedZNodes


@dataclass
class GroupView08(GroupView):
    """The inputs of one 0.8 rebalance attempt. ``threads_per_topic`` holds every topic any member
    subscribes to (roundrobin checks they all have the same threads); partitions are ids; no brokers."""

    def locate(self, topic: str, name: int) -> tuple[int, None]:
        """The partition id, and no broker: the fetcher finds each partition's leader itself."""
        return name, None


def read_group_view08(
    nodes: WatchedZNodes, dirs: ZKGroupDirs, topic_count: TopicCount, exclude_internal_topics: bool = True
) -> GroupView08:
    """Read every input of the assignment (two pipelined rounds at most, none for what ``nodes`` holds),
    watching the member list, each subscribed topic's partition assignment (its creation, for a topic that
    does not exist yet) and, for a wildcard subscription, ``/brokers/topics``."""
    static = [] if isinstance(topic_count, WildcardTopicCount) else topic_count.threads_per_topic()
    def second(first: Reads, my_threads: dict[str, list[str]]) -> tuple[dict, dict]:
        brokers = {f"{BROKER_IDS_PATH}/{b}": False for b in first.children[BROKER_IDS_PATH]}
        return {}, {**brokers, **{topic_path(t): True for t in my_threads}}

    # The registered brokers are no input of the assignment: read (quietly) in the same round trips, a new
    # member's fetcher then finds them kept (``connector08.registered_brokers``) instead of asking twice more.
    first = ({BROKER_IDS_PATH: False}, {topic_path(t): True for t in static})
    group = read_members(nodes, dirs, topic_count, first, second)
    parse = partial(parse_topic_count08, exclude_internal_topics=exclude_internal_topics)
    threads_per_topic = group_threads(group.counts, group.all_topics, None, parse)
    partitions_per_topic: dict[str, list[int]] = {}
    for topic in group.my_threads:
        text = group.second.values[topic_path(topic)]
        if text is not None:
            partitions_per_topic[topic] = sorted(parse_topic_assignment(topic, text))
    return GroupView08({}, group.consumers, threads_per_topic, partitions_per_topic, group.my_threads)
