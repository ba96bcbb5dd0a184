"""What a ZooKeeper consumer group member reads to compute its share (both lines): the ``GroupView``.

A line's reader (``group_view07.read_group_view``, ``group_view08.read_group_view08``) does the reads with
``children`` and ``get_many`` (and arms the watches that trigger the next rebalance); everything it reads
goes into a ``GroupView`` of plain data, whose ``my_share`` (and the line's ``locate``) are pure. The members'
thread ids per topic come from their registered topic counts (``group_threads``). The rebalancer works with
either line's view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kazoo.exceptions import NoNodeError

from zkafka.assignment.assignor import Assignor, member_share
from zkafka.assignment.range_assignor import assign
from zkafka.consumer.partition_state import BrokerRef, PartitionRef
from zkafka.topic_count import TopicCount

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)


@dataclass
class GroupView:
    """The inputs of one rebalance attempt, as read from ZooKeeper."""

    brokers: dict[int, BrokerRef]  # 0.7: the registered brokers; 0.8: none (fetchers find the leaders)
    consumers: list[str]
    threads_per_topic: dict[str, list[str]]  # every member's thread ids, per topic I subscribe to
    partitions_per_topic: dict[str, list]  # 0.7: "b-p" names; 0.8: ids
    my_threads_per_topic: dict[str, list[str]]

    def my_share(self, assignor: Assignor = assign) -> dict[tuple[str, Any], str]:
        """``(topic, partition) -> my thread id`` for every partition the group's assignment gives me."""
        mine = [tid for ids in self.my_threads_per_topic.values() for tid in ids]
        return member_share(self.threads_per_topic, self.partitions_per_topic, mine, assignor)

    def locate(self, topic: str, name: Any) -> tuple[PartitionRef, BrokerRef | None]:
        """The partition a ``my_share`` name stands for and the broker serving it (None: found later)."""
        raise NotImplementedError


def group_threads(
    member_counts: Mapping[str, str | None],
    all_topics: Iterable[str],
    topics: Iterable[str] | None,
    parse: Callable[[str, str], TopicCount],
) -> dict[str, list[str]]:
    """Every member's thread ids for each of ``topics`` (None: every topic any member has), from the members'
    registered topic counts, read with the line's ``parse``.

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


class Registrations:
    """The members' registrations (``/consumers/<g>/ids/<id>`` values) read so far: each is read once, with a
    data watch that drops it when its znode changes or goes, so a rebalance reads only newcomers'."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def get_many(self, zk: KazooClient, paths: Iterable[str]) -> dict[str, str | None]:
        """The values of ``paths`` (None for a node that does not exist), reading only those not known."""
        paths = list(paths)
        fresh = get_many(zk, [p for p in paths if p not in self._values], watch=self._changed)
        self._values.update((p, v) for p, v in fresh.items() if v is not None)
        return {p: self._values.get(p) for p in paths}

    def _changed(self, event) -> None:
        self._values.pop(event.path, None)

    def clear(self) -> None:
        """The session is gone, and the watches with it."""
        self._values.clear()


def children(zk: KazooClient, path: str, watch: Callable | None = None) -> list[str]:
    """Children of a znode with a child watch; for a missing node, an exists watch on its creation."""
    try:
        return zk.get_children(path, watch=watch)
    except NoNodeError:
        if watch is not None and zk.exists(path, watch=watch) is not None:
            return children(zk, path, watch)
        return []
