"""The ZooKeeper consumers' assignors by ``partition.assignment.strategy`` and one member's share of a result.

Every member of a ZooKeeper group computes the whole assignment from the same inputs (every member's
thread ids per topic, every subscribed topic's partitions) and keeps its own threads' part of it.
"""

from collections.abc import Callable, Hashable, Iterable, Mapping

from zkafka.assignment.range_assignor import assign
from zkafka.assignment.roundrobin_assignor import roundrobin_assign

# ``(threads per topic, partitions per topic) -> {(topic, partition): thread id}``: range (``assign``) in 0.7;
# the 0.8 consumer adds roundrobin (``roundrobin_assign``) with the same shape. A partition is a 0.7 name or
# a 0.8 id.
Assignor = Callable[
    [Mapping[str, Iterable[str]], Mapping[str, Iterable[Hashable]]], dict[tuple[str, Hashable], str]
]

ASSIGNORS = {"range": assign, "roundrobin": roundrobin_assign}  # ``partition.assignment.strategy`` (0.8)


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
