"""What a 0.7 consumer group member reads from ZooKeeper to compute its share: brokers, members, partitions.

``read_group_view`` does the reads (and arms the watches that trigger the next rebalance) into a
``GroupView07``, whose partitions are ``b-p`` names located at their registered broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from zkafka.assignment.range_assignor import broker_partitions
from zkafka.consumer.group_view import GroupView, group_threads, read_members
from zkafka.errors import KafkaError
from zkafka.topic_count import TopicCount, WildcardTopicCount
from zkafka.topic_count07 import parse_topic_count
from zkafka.zk.paths import BROKER_IDS_PATH, ZKGroupDirs
from zkafka.zk.paths07 import Broker, BrokerPartition, broker_topic_path
from zkafka.zk.watched import Reads

if TYPE_CHECKING:
    from zkafka.zk.watched import WatchedZNodes


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


def read_group_view(nodes: WatchedZNodes, dirs: ZKGroupDirs, topic_count: TopicCount) -> GroupView07:
    """Read every input of the assignment (three pipelined rounds at most, none for what ``nodes`` holds),
    watching what 0.7 watches (and a little more): the group's member list, ``/brokers/topics`` for a
    wildcard subscription, the broker list of each subscribed topic and each broker's partition count for it.
    The registered brokers are read quietly (kept until they change)."""
    static = [] if isinstance(topic_count, WildcardTopicCount) else topic_count.threads_per_topic()

    def second(first: Reads, my_threads: dict[str, list[str]]) -> tuple[dict, dict]:
        holders = {t: first.children[broker_topic_path(t)] for t in static}
        counts = {broker_topic_path(t, int(b)): True for t, bs in holders.items() for b in bs}
        brokers = {f"{BROKER_IDS_PATH}/{b}": False for b in first.children[BROKER_IDS_PATH]}
        return {broker_topic_path(t): True for t in my_threads}, {**brokers, **counts}

    first = ({BROKER_IDS_PATH: False, **{broker_topic_path(t): True for t in static}}, {})
    group = read_members(nodes, dirs, topic_count, first, second)
    brokers = {}
    for b in group.first.children[BROKER_IDS_PATH]:
        value = group.second.values.get(f"{BROKER_IDS_PATH}/{b}")
        if value is not None:
            brokers[int(b)] = Broker.from_zk(b, value)
    threads_per_topic = group_threads(group.counts, group.all_topics, group.my_threads, parse_topic_count)
    holders = {t: group.second.children[broker_topic_path(t)] for t in group.my_threads}
    counts = nodes.read(values={broker_topic_path(t, int(b)): True for t, bs in holders.items() for b in bs})
    partitions_per_topic = {
        topic: broker_partitions(
            {b: int(v) for b in bs if (v := counts.values[broker_topic_path(topic, int(b))]) is not None}
        )
        for topic, bs in holders.items()
    }
    return GroupView07(brokers, group.consumers, threads_per_topic, partitions_per_topic, group.my_threads)
