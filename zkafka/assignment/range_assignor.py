"""Range assignment: per topic, the sorted partitions cut into one contiguous slice per sorted taker.

The ZooKeeper consumers' range (0.7 and 0.8: ``assign``, over every member's thread ids) and the group
client's range (0.9's RangeAssignor, over member ids) are this one algorithm. Pure: nothing here does I/O.

0.7 partition names are ``"<brokerId>-<partId>"``; both partitions and thread ids are sorted as plain strings
(``"1-10" < "1-2" < "10-0" < "2-0"``), exactly like the Scala consumer, so every consumer of a group computes
the same assignment. 0.8 partitions are ids (ints), which the same functions sort as numbers, as 0.8.2's
``RangeAssignor`` does; thread ids still sort as strings.
"""

from collections.abc import Iterable, Mapping


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
    parts = sorted_unique(partitions, "partition")
    ids = sorted_unique(threads, "thread id")
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


def sorted_unique(values: Iterable, what: str) -> list:
    """The values sorted; a duplicate is a ValueError naming it as ``what``."""
    ordered = sorted(values)
    for left, right in zip(ordered, ordered[1:], strict=False):
        if left == right:
            raise ValueError(f"duplicate {what} {left!r}")
    return ordered
