"""What a 0.7 consumer group member reads from ZooKeeper to compute its share: brokers, members, partitions.

``read_group_view`` does the reads (and arms the watches that trigger the next rebalance) into a
``GroupView07``, whose partitions are ``b-p`` names located at their registered broker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zkafka.assignment.range_assignor import broker_partitions
from zkafka.consumer.group_view import GroupView, Registrations, children, get_many, group_threads
from zkafka.errors import KafkaError
from zkafka.topic_count import TopicCount, WildcardTopicCount
from zkafka.topic_count07 import parse_topic_count
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, ZKGroupDirs
from zkafka.zk.paths07 import Broker, BrokerPartition, broker_topic_path

if TYPE_CHECKING:
    from kazoo.client import KazooClient


@dataclass
class GroupView07(GroupView):
    """The inputs of one 0.7 rebalance attempt: partitions are ``b-p`` names on the registered brokers."""

    def locate(self, topic: str, name: str) -> tuple[BrokerPartition, Broker]:
        """The partition named ``"b-p"`` and the broker serving it; KafkaError if that broker is not registered."""
        partition = BrokerPartition.parse(name)
        broker = self.brokers.get(partition.broker_id)
        if broker is None:
            raise KafkaError(f"broker {partition.broker_id} of {topic}:{name} is not registered")
        return partition, broker


def read_group_view(
    zk: KazooClient,
    dirs: ZKGroupDirs,
    topic_count: TopicCount,
    watch: Callable | None = None,
    registrations: Registrations | None = None,
) -> GroupView07:
    """Read every input of the assignment, arming ``watch`` on what 0.7 watches (and a little more); the
    members' registrations through ``registrations`` when given (only newcomers' are read).

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
    paths = [dirs.consumer_path(c) for c in consumers]
    values = registrations.get_many(zk, paths) if registrations is not None else get_many(zk, paths)
    threads_per_topic = group_threads(
        {member: values[dirs.consumer_path(member)] for member in consumers},
        all_topics,
        my_threads,
        parse_topic_count,
    )

    partitions_per_topic: dict[str, list[str]] = {}
    for topic in my_threads:
        holders = children(zk, broker_topic_path(topic), watch)
        counts = get_many(zk, [broker_topic_path(topic, int(b)) for b in holders], watch)
        partitions_per_topic[topic] = broker_partitions(
            {b: int(v) for b in holders if (v := counts[broker_topic_path(topic, int(b))]) is not None}
        )
    return GroupView07(brokers, consumers, threads_per_topic, partitions_per_topic, my_threads)
