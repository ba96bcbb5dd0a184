"""One consumer's side of a group rebalance: read the group from ZooKeeper, give up, assign, claim, resume.

The steps of one attempt follow 0.7.2's ``ZKRebalancerListener.rebalance``: read the inputs (brokers, every
member's topic count, every subscribed topic's partitions); stop the fetchers and drop queued chunks;
commit; release the owned partitions; compute this consumer's share with the pure range assignment
(``zkafka.rebalance``); claim ``/owners/<t>/<b-p>`` for each of them; read their offsets (or apply
``autooffset.reset``); start the fetchers. A failed attempt is retried after ``rebalance.backoff.ms``, at
most ``rebalance.retries.max`` times.

Where zkafka differs from 0.7 (each keeps the group protocol, so 0.7 members can share the group):
- an attempt whose share equals what is already owned, in the same session, changes nothing (0.7.0 did
  this too); its watches are re-armed by the reads;
- a claim that meets a node still held by another member waits (up to ``rebalance.backoff.ms``) for that
  member to release it, instead of failing the whole attempt at once; it gives up early when a newer group
  change arrives, and such an attempt is restarted at once without counting as a failure;
- offsets are read *after* the claim, so the previous owner's final commit (made before its release) is
  always seen; 0.7 read them before and could resume from an older offset.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import gevent
import gevent.event
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkafka.consumer.fetcher import PartitionTopicInfo, reset_time
from zkafka.consumer.simple import SimpleConsumer
from zkafka.errors import InvalidConfigError, KafkaError
from zkafka.rebalance import assign, owned_by
from zkafka.topic_count import TopicCount, WildcardTopicCount, parse_topic_count
from zkafka.zk.client import create_ephemeral_expect_conflict, delete_if_owned, session_id
from zkafka.zk.paths07 import (
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    Broker,
    BrokerPartition,
    ZKGroupDirs,
    broker_topic_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

    from zkafka.consumer.connector import ZookeeperConsumerConnector

log = logging.getLogger(__name__)

MAX_RESTARTS = 50  # attempts given up for a newer group change; they do not count as failures


class ConsumerRebalanceFailedError(KafkaError):
    """The consumer could not take its share of the group within ``rebalance.retries.max`` attempts."""


class _Restart(Exception):
    """A newer group change arrived during the attempt: start again from fresh inputs."""


@dataclass
class GroupView:
    """The inputs of one rebalance attempt, as read from ZooKeeper."""

    brokers: dict[int, Broker]
    consumers: list[str]
    threads_per_topic: dict[str, list[str]]  # every member's thread ids, per topic I subscribe to
    partitions_per_topic: dict[str, list[str]]
    my_threads_per_topic: dict[str, list[str]]
    counts: dict[str, str] = field(default_factory=dict)

    def my_share(self) -> dict[tuple[str, str], str]:
        """``(topic, "b-p") -> my thread id`` for every partition the range assignment gives me."""
        assignment = assign(self.threads_per_topic, self.partitions_per_topic)
        mine = {tid for ids in self.my_threads_per_topic.values() for tid in ids}
        share = owned_by(assignment, mine)
        return {
            (topic, name): tid for topic, per in share.items() for tid, names in per.items() for name in names
        }


def _get_many(zk: KazooClient, paths: Iterable[str], watch: Callable | None = None) -> dict[str, str | None]:
    """Values of several znodes read concurrently (None for a node that does not exist)."""
    pending = {path: zk.get_async(path, watch=watch) for path in paths}
    values: dict[str, str | None] = {}
    for path, result in pending.items():
        try:
            values[path] = result.get()[0].decode("utf-8")
        except NoNodeError:
            values[path] = None
    return values


def _children(zk: KazooClient, path: str, watch: Callable | None = None) -> list[str]:
    """Children of a znode with a child watch; for a missing node, an exists watch on its creation."""
    try:
        return zk.get_children(path, watch=watch)
    except NoNodeError:
        if watch is not None and zk.exists(path, watch=watch) is not None:
            return _children(zk, path, watch)
        return []


def read_group_view(
    zk: KazooClient, dirs: ZKGroupDirs, topic_count: TopicCount, watch: Callable | None = None
) -> GroupView:
    """Read every input of the assignment, arming ``watch`` on what 0.7 watches (and a little more).

    Watched: the group's member list, ``/brokers/topics`` for a wildcard subscription, the broker list of
    each subscribed topic and each broker's partition count for it.
    """
    wildcard = isinstance(topic_count, WildcardTopicCount)
    broker_ids = _children(zk, BROKER_IDS_PATH)
    broker_values = _get_many(zk, [f"{BROKER_IDS_PATH}/{b}" for b in broker_ids])
    brokers = {}
    for b in broker_ids:
        value = broker_values[f"{BROKER_IDS_PATH}/{b}"]
        if value is not None:
            brokers[int(b)] = Broker.from_zk(b, value)
    all_topics = _children(zk, BROKER_TOPICS_PATH, watch if wildcard else None)
    my_threads = topic_count.threads_per_topic(all_topics)

    consumers = sorted(_children(zk, dirs.consumer_registry_dir, watch))
    counts = _get_many(zk, [dirs.consumer_path(c) for c in consumers])
    threads_per_topic: dict[str, list[str]] = {topic: [] for topic in my_threads}
    for member in consumers:
        value = counts[dirs.consumer_path(member)]
        if value is None:
            continue  # left after the listing; its departure is another event
        try:
            theirs = parse_topic_count(member, value).threads_per_topic(all_topics)
        except ValueError:
            log.warning("ignoring consumer %s with an unreadable topic count %r", member, value)
            continue
        for topic, ids in theirs.items():
            if topic in threads_per_topic:
                threads_per_topic[topic].extend(ids)

    partitions_per_topic: dict[str, list[str]] = {}
    for topic in my_threads:
        holders = _children(zk, broker_topic_path(topic), watch)
        values = _get_many(zk, [broker_topic_path(topic, int(b)) for b in holders], watch)
        names = []
        for b in holders:
            value = values[broker_topic_path(topic, int(b))]
            if value is not None:
                names.extend(f"{b}-{p}" for p in range(int(value)))
        partitions_per_topic[topic] = sorted(names)
    return GroupView(brokers, consumers, threads_per_topic, partitions_per_topic, my_threads)


class ZKRebalancer:
    """Runs rebalance attempts for one connector (the caller serialises them)."""

    def __init__(self, connector: ZookeeperConsumerConnector) -> None:
        self.connector = connector
        config = connector.config
        self.retries = config["rebalance.retries.max"]
        self.backoff = config["rebalance.backoff.ms"] / 1000.0
        self.autooffset_reset = config["autooffset.reset"]
        self.attempts = 0  # attempts made over the connector's life (for tests and tools)
        self.changes = 0  # attempts that changed the owned partitions

    def rebalance(self) -> None:
        """Attempt until success; ConsumerRebalanceFailedError after ``rebalance.retries.max`` failures."""
        failures = restarts = 0
        last_error: BaseException | None = None
        while True:
            self.attempts += 1
            try:
                if self._attempt():
                    return
                last_error = None
            except _Restart:
                restarts += 1
                self._undo()
                if restarts <= MAX_RESTARTS:
                    continue
                last_error = None
            except InvalidConfigError as exc:
                self._undo()
                raise ConsumerRebalanceFailedError(f"{self.connector.consumer_id}: {exc}") from exc
            except Exception as exc:
                log.warning("%s: rebalance attempt failed: %r", self.connector.consumer_id, exc)
                last_error = exc
            self._undo()
            failures += 1
            if failures >= self.retries:
                raise ConsumerRebalanceFailedError(
                    f"{self.connector.consumer_id} can't rebalance after {failures} retries"
                ) from last_error
            gevent.sleep(self.backoff)

    def _attempt(self) -> bool:
        c = self.connector
        c._rebalance_requested.clear()
        c._ensure_registered()
        epoch = c._session_epoch
        view = read_group_view(c.zk, c.dirs, c._topic_count, c._on_watch)
        if c.consumer_id not in view.consumers:
            c._session_lost = True  # our registration vanished: write it again on the next attempt
            raise KafkaError(f"{c.dirs.consumer_path(c.consumer_id)} is missing")
        share = view.my_share()
        wanted = {}
        for (topic, name), thread_id in share.items():
            partition = BrokerPartition.parse(name)
            broker = view.brokers.get(partition.broker_id)
            if broker is None:
                raise KafkaError(f"broker {partition.broker_id} of {topic}:{name} is not registered")
            wanted[(topic, partition)] = (thread_id, broker)
        if self._unchanged(wanted, epoch):
            log.debug("%s: share unchanged (%d partitions)", c.consumer_id, len(wanted))
            return True

        log.info(
            "%s: rebalancing; consumers %s; my share %s",
            c.consumer_id,
            view.consumers,
            sorted(f"{t}:{p}" for t, p in wanted),
        )
        c._stop_consuming()
        created = self._claim(wanted)
        if created is None:
            return False
        try:
            infos = self._read_offsets(wanted)
            if c._session_epoch != epoch:
                raise KafkaError("the ZooKeeper session changed during the rebalance")
        except BaseException:
            self._delete(created)
            raise
        c._install(infos, epoch)
        self.changes += 1
        log.info("%s: owns %d partitions", c.consumer_id, len(infos))
        return True

    def _unchanged(self, wanted: dict, epoch: int) -> bool:
        c = self.connector
        owned = c._owned
        if c._owned_epoch != epoch or owned.keys() != wanted.keys():
            return False
        for key, (thread_id, broker) in wanted.items():
            info = owned[key]
            if info.revoked or info.thread_id != thread_id or info.broker != broker:
                return False
        return self._still_held([c.dirs.owner_path(t, p.name) for t, p in owned])

    def _still_held(self, paths: list[str]) -> bool:
        """Whether this session still holds every one of these owner nodes (nobody deleted them under us)."""
        zk = self.connector.zk
        me = session_id(zk)
        pending = [zk.get_async(path) for path in paths]
        for result in pending:
            try:
                _, stat = result.get()
            except NoNodeError:
                return False
            if stat.ephemeralOwner != me:
                return False
        return True

    def _claim(self, wanted: dict) -> list[str] | None:
        """Create every owner node (waiting for members still releasing them); None if one stays taken."""
        c = self.connector
        created: list[str] = []
        deadline = time.monotonic() + self.backoff
        try:
            for (topic, partition), (thread_id, _) in sorted(wanted.items()):
                path = c.dirs.owner_path(topic, partition.name)
                while True:
                    try:
                        create_ephemeral_expect_conflict(c.zk, path, thread_id)
                        created.append(path)
                        break
                    except NodeExistsError:
                        if not self._wait_released(path, deadline):
                            log.info("%s: %s is still owned by another consumer", c.consumer_id, path)
                            self._delete(created)
                            return None
        except BaseException:
            self._delete(created)
            raise
        return created

    def _wait_released(self, path: str, deadline: float) -> bool:
        """True when ``path`` is gone (or changed); False at the deadline; _Restart on a newer group change."""
        c = self.connector
        gone = gevent.event.Event()
        if c.zk.exists(path, watch=lambda event: gone.set()) is None:
            return True
        remaining = deadline - time.monotonic()
        if remaining > 0:
            gevent.wait([gone, c._rebalance_requested], timeout=remaining, count=1)
        if c._rebalance_requested.is_set():
            raise _Restart
        return gone.is_set()

    def _read_offsets(self, wanted: dict) -> dict[tuple[str, BrokerPartition], PartitionTopicInfo]:
        c = self.connector
        paths = {key: c.dirs.offset_path(key[0], key[1].name) for key in wanted}
        stored = _get_many(c.zk, paths.values())
        infos = {}
        for key, (thread_id, broker) in sorted(wanted.items()):
            topic, partition = key
            value = stored[paths[key]]
            if value is not None:
                offset = committed = int(value)
            else:
                offset, committed = self._reset_offset(topic, partition, broker), None
            infos[key] = PartitionTopicInfo(
                topic, partition, broker, c._queue_for(topic, thread_id), thread_id, offset, committed
            )
            log.debug("%s: %s:%s from offset %d", c.consumer_id, topic, partition, offset)
        return infos

    def _reset_offset(self, topic: str, partition: BrokerPartition, broker: Broker) -> int:
        time_ = reset_time(self.autooffset_reset)
        config = self.connector.config
        with SimpleConsumer(
            broker.host, broker.port, config["socket.timeout.ms"], config["socket.buffersize"]
        ) as consumer:
            offsets = consumer.get_offsets_before(topic, partition.part_id, time_, 1)
        return offsets[0] if offsets else 0

    def _undo(self) -> None:
        """After a failed attempt: nothing fetched, nothing queued, nothing owned (0.7 ``resetState``)."""
        self.connector._stop_consuming()

    def _delete(self, paths: list[str]) -> None:
        release(self.connector.zk, paths)


def release(zk: KazooClient, paths: Iterable[str]) -> None:
    """Delete the owner nodes this session holds among ``paths`` (the others are not ours any more)."""
    for path in paths:
        try:
            delete_if_owned(zk, path)
        except Exception as exc:  # the session is gone, and the node with it
            log.debug("could not delete %s: %r", path, exc)
