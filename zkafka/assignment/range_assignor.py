"""Assignment of partitions to consumer threads in the ZooKeeper consumers: range (0.7 and 0.8), roundrobin (0.8.2).

Pure functions: the connector reads the inputs from ZooKeeper and calls these; nothing here does I/O.

0.7 partition names are ``"<brokerId>-<partId>"``; both partitions and thread ids are sorted as plain strings
(``"1-10" < "1-2" < "10-0" < "2-0"``), exactly like the Scala consumer, so every consumer of a group computes
the same assignment. 0.8 partitions are ids (ints), which the same functions sort as numbers, as 0.8.2's
``RangeAssignor`` does; thread ids still sort as strings.
"""

from collections.abc import Callable, Hashable, Iterable, Mapping

from zkafka.utils.java import java_string_hash

# ``(threads per topic, partitions per topic) -> {(topic, partition): thread id}``: range (``assign``) in 0.7;
# the 0.8 consumer adds roundrobin (``roundrobin_assign``) with the same shape. A partition is a 0.7 name or
# a 0.8 id.
Assignor = Callable[
    [Mapping[str, Iterable[str]], Mapping[str, Iterable[Hashable]]], dict[tuple[str, Hashable], str]
]


def partition_name(broker_id: int, part_id: int) -> str:
    """The znode name of one broker partition, ``"<brokerId>-<partId>"``."""
    return f"{broker_id}-{part_id}"


def parse_partition_name(name: str) -> tuple[int, int]:
    """Split ``"<brokerId>-<partId>"`` into its two ints; anything else is a ValueError."""
    parts = name.split("-")
    if len(parts) != 2:
        raise ValueError(f"invalid broker partition name {name!r}")
    return int(parts[0]), int(parts[1])


def broker_partitions(counts: Mapping[int, int] | Mapping[str, int]) -> list[str]:
    """Sorted partition names of one topic from ``brokerId -> partition count`` (``/brokers/topics/<t>/*``)."""
    return sort_partitions(partition_name(b, p) for b, n in counts.items() for p in range(n))


def sort_partitions(names: Iterable[str]) -> list[str]:
    """Broker-partition names sorted lexicographically as strings: ``"1-10"`` sorts before ``"1-2"``."""
    return sorted(names)


def sort_threads(thread_ids: Iterable[str]) -> list[str]:
    """Consumer thread ids sorted lexicographically as strings: ``"g_c-10"`` sorts before ``"g_c-2"``."""
    return sorted(thread_ids)


def range_share(num_partitions: int, num_threads: int, index: int) -> tuple[int, int]:
    """``(start, count)`` of the slice of sorted partitions owned by the ``index``-th sorted thread.

    ``per = P div C`` and ``extra = P mod C``; the first ``extra`` threads get ``per + 1``, the rest ``per``.
    """
    per, extra = divmod(num_partitions, num_threads)
    start = per * index + min(index, extra)
    count = per + (1 if index < extra else 0)
    return start, count


def range_assign(partitions: Iterable[str], threads: Iterable[str]) -> dict[str, str]:
    """Map every partition of ONE topic to the thread id that owns it; empty if either input is empty.

    Both inputs are sorted here, so their order does not matter. Duplicates are a ValueError: every
    thread id and partition name is unique in ZooKeeper, and a duplicate would shift everyone's range.
    """
    parts = _sorted_unique(partitions, "partition")
    ids = _sorted_unique(threads, "thread id")
    owner: dict[str, str] = {}
    if not parts or not ids:
        return owner
    for index, thread_id in enumerate(ids):
        start, count = range_share(len(parts), len(ids), index)
        for name in parts[start : start + count]:
            owner[name] = thread_id
    return owner


def assign(
    threads_per_topic: Mapping[str, Iterable[str]], partitions_per_topic: Mapping[str, Iterable[str]]
) -> dict[tuple[str, str], str]:
    """Map ``(topic, partition)`` to its owning thread id for every topic with both partitions and threads.

    ``threads_per_topic`` holds all thread ids of the group per topic (every consumer's, not only ours);
    a topic missing from either mapping, or with an empty list, yields nothing.
    """
    owner: dict[tuple[str, str], str] = {}
    for topic in sorted(threads_per_topic):
        if topic not in partitions_per_topic:
            continue
        for name, thread_id in range_assign(partitions_per_topic[topic], threads_per_topic[topic]).items():
            owner[(topic, name)] = thread_id
    return owner


def owned_by(
    assignment: Mapping[tuple[str, str], str], thread_ids: Iterable[str]
) -> dict[str, dict[str, list[str]]]:
    """One consumer's share of an :func:`assign` result: ``topic -> thread id -> sorted partitions``.

    Only threads that own at least one partition appear (0.7 merely warns about a thread left without any).
    """
    mine = set(thread_ids)
    share: dict[str, dict[str, list[str]]] = {}
    for (topic, name), thread_id in assignment.items():
        if thread_id in mine:
            share.setdefault(topic, {}).setdefault(thread_id, []).append(name)
    for per_thread in share.values():
        for names in per_thread.values():
            names.sort()
    return share


def member_share(
    threads_per_topic: Mapping[str, Iterable[str]],
    partitions_per_topic: Mapping[str, Iterable[str]],
    my_thread_ids: Iterable[str],
    assignor: Assignor = assign,
) -> dict[tuple[str, str], str]:
    """``(topic, partition) -> thread id`` for the partitions the group's assignment gives one member's threads.

    Every member computes the whole assignment from the same inputs and keeps its own part of it.
    """
    share = owned_by(assignor(threads_per_topic, partitions_per_topic), my_thread_ids)
    return {
        (topic, name): thread_id
        for topic, per_thread in share.items()
        for thread_id, names in per_thread.items()
        for name in names
    }


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
        for partition in _sorted_unique(partitions_per_topic[topic], "partition")
    )
    return {(topic, partition): threads[i % len(threads)] for i, (_, topic, partition) in enumerate(dealt)}


ASSIGNORS = {"range": assign, "roundrobin": roundrobin_assign}  # ``partition.assignment.strategy`` (0.8)


def _sorted_unique(values: Iterable[str], what: str) -> list[str]:
    ordered = sorted(values)
    for left, right in zip(ordered, ordered[1:], strict=False):
        if left == right:
            raise ValueError(f"duplicate {what} {left!r}")
    return ordered
