"""Roundrobin assignment: partitions in a fixed order dealt to the sorted takers in turn, round and round.

``deal`` is the dealing both roundrobins share; ``roundrobin_assign`` is 0.8.2's ZooKeeper-consumer form
(every partition ordered by the Java hash of ``"[topic,partition]"``, every member subscribed alike), and
the group client's 0.9 RoundRobinAssignor deals the sorted partitions, skipping members not subscribed
to a partition's topic. Pure.
"""

from collections.abc import Hashable, Iterable, Mapping, Sequence

from zkafka.assignment.range_assignor import sort_threads, sorted_unique
from zkafka.utils.java import java_string_hash


def deal(
    partitions: Iterable[tuple[str, Hashable]],
    takers: Sequence[str],
    topics_of: Mapping[str, set[str]] | None = None,
) -> dict[tuple[str, Hashable], str]:
    """Each ``(topic, partition)``, in the order given, to the next of ``takers`` (a circle) subscribed to its
    topic per ``topics_of`` (None: every taker takes every topic). Every topic must have a subscriber."""
    owner: dict[tuple[str, Hashable], str] = {}
    at = 0
    for topic, partition in partitions:
        if topics_of is not None:
            while topic not in topics_of[takers[at]]:
                at = (at + 1) % len(takers)
        owner[(topic, partition)] = takers[at]
        at = (at + 1) % len(takers)
    return owner


def topic_partition_hash(topic: str, partition: int) -> int:
    """Java ``"[topic,partition]".hashCode`` (``TopicAndPartition.toString``): roundrobin's dealing order."""
    return java_string_hash(f"[{topic},{partition}]")


def roundrobin_assign(
    threads_per_topic: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, Iterable[int]]
) -> dict[tuple[str, int], str]:
    """0.8.2's roundrobin: every topic-partition, ordered by :func:`topic_partition_hash`, dealt in turn to
    the group's thread ids sorted as strings, round and round.

    Every consumer must subscribe to the same topics with the same stream count (the thread ids of every
    topic are the same set); otherwise ValueError, and the rebalance attempt fails as in 0.8.2. Equal hashes
    keep (topic, partition) order. Empty thread lists are ignored; no threads or no partitions give ``{}``.
    """
    subscribed = {topic: frozenset(ids) for topic, ids in threads_per_topic.items()}
    subscribed = {topic: ids for topic, ids in subscribed.items() if ids}
    if not subscribed:
        return {}
    first = min(subscribed)
    for topic in sorted(subscribed):
        if subscribed[topic] != subscribed[first]:
            raise ValueError(
                "roundrobin assignment needs every consumer of the group to subscribe to the same topics "
                f"with the same stream counts: topic {topic} has streams {sorted(subscribed[topic])}, "
                f"topic {first} has {sorted(subscribed[first])}"
            )
    threads = sort_threads(subscribed[first])
    dealt = sorted(
        (topic_partition_hash(topic, partition), topic, partition)
        for topic in subscribed
        if topic in partitions_per_topic
        for partition in sorted_unique(partitions_per_topic[topic], "partition")
    )
    return deal(((topic, partition) for _, topic, partition in dealt), threads)
