"""What a ZooKeeper consumer group member reads to compute its share (both lines): the ``GroupView``.

A line's reader (``group_view07.read_group_view``, ``group_view08.read_group_view08``) does the reads with
``read_members`` through the member's ``WatchedZNodes`` (pipelined, each znode read once and again only after
its watch fired; the watches trigger the next rebalance); everything it reads
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
from zkafka.topic_count import TopicCount, WildcardTopicCount
from zkafka.zk.paths import BROKER_TOPICS_PATH, ZKGroupDirs
from zkafka.zk.watched import Reads, WatchedZNodes

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


@dataclass
class MemberReads:
    """What ``read_members`` found: the line's own reads of both rounds, and the group's members."""

    first: Reads
    second: Reads
    all_topics: list[str]
    my_threads: dict[str, list[str]]
    consumers: list[str]
    counts: dict[str, str | None]  # member -> its registration (None: it left after the listing)


# The line's reads of the second round, from the first round's and my threads per topic: (children, values).
SecondReads = Callable[[Reads, dict[str, list[str]]], tuple[Mapping[str, bool], Mapping[str, bool]]]


def read_members(
    nodes: WatchedZNodes,
    dirs: ZKGroupDirs,
    topic_count: TopicCount,
    first: tuple[Mapping[str, bool], Mapping[str, bool]],
    second: SecondReads,
) -> MemberReads:
    """The reads both lines make, in two pipelined rounds (``nodes`` answers what it holds without asking):
    ``/brokers/topics`` (watched for a wildcard subscription), the member list (watched) and the line's
    ``first`` ``(children, values)``; then the members' registrations (quiet: a member's change is its list's
    change) with the line's ``second`` reads."""
    wildcard = isinstance(topic_count, WildcardTopicCount)
    children, values = first
    got = nodes.read({BROKER_TOPICS_PATH: wildcard, dirs.consumer_registry_dir: True, **children}, values)
    all_topics = got.children[BROKER_TOPICS_PATH]
    consumers = got.children[dirs.consumer_registry_dir]
    my_threads = topic_count.threads_per_topic(all_topics)
    children, values = second(got, my_threads)
    paths = {c: dirs.consumer_path(c) for c in consumers}
    more = nodes.read(children, {**{p: False for p in paths.values()}, **values})
    counts = {c: more.values[p] for c, p in paths.items()}
    return MemberReads(got, more, all_topics, my_threads, consumers, counts)
