"""One consumer's side of a group rebalance: read the group from ZooKeeper, give up, assign, claim, resume.

The steps of one attempt follow 0.7.2's ``ZKRebalancerListener.rebalance``: read the inputs (brokers, every
member's topic count, every subscribed topic's partitions); stop the fetchers and drop queued chunks;
commit; release the owned partitions; compute this consumer's share with the pure range assignment
(``zkafka.assignment.range_assignor``); claim ``/owners/<t>/<b-p>`` for each of them; read their offsets (or apply
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
from collections.abc import Callable
from typing import TYPE_CHECKING

import gevent
import gevent.event
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkafka.assignment.assignor import Assignor
from zkafka.consumer.group_view import GroupView, Registrations, get_many
from zkafka.consumer.membership import GroupDirs, GroupMembership
from zkafka.consumer.ownership import OwnedPartitions, PartitionKey, release
from zkafka.consumer.partition_state import BrokerRef, PartitionTopicInfo
from zkafka.errors import InvalidConfigError, KafkaError
from zkafka.topic_count import TopicCount
from zkafka.zk.client import create_ephemeral_expect_conflict, create_ephemerals, session_id

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)

MAX_RESTARTS = 50  # attempts given up for a newer group change; they do not count as failures

# Reads a group's inputs and arms the watch: group_view07.read_group_view, group_view08.read_group_view08.
ViewReader = Callable[["KazooClient", GroupDirs, TopicCount, Callable | None, Registrations], GroupView]
# My share: (topic, partition) -> (thread id, its broker); the 0.8 consumer's fetcher finds leaders: None.
Wanted = dict[PartitionKey, tuple[str, BrokerRef | None]]


class ConsumerRebalanceFailedError(KafkaError):
    """The consumer could not take its share of the group within ``rebalance.retries.max`` attempts."""


class _Restart(Exception):
    """A newer group change arrived during the attempt: start again from fresh inputs."""


class ZKRebalancer:
    """Runs rebalance attempts for one group member (the caller serialises them).

    It reads the group through ``membership`` (with the line's ``read_view``), divides it with ``assignor``
    (range, or 0.8's roundrobin) and stops, claims and installs partitions through ``owned``.
    """

    def __init__(
        self,
        membership: GroupMembership,
        owned: OwnedPartitions,
        *,
        retries: int,
        backoff_ms: int,
        read_view: ViewReader,
        assignor: Assignor,
    ) -> None:
        self.membership = membership
        self.owned = owned
        self.retries = retries
        self.backoff = backoff_ms / 1000.0
        self.read_view = read_view
        self.assignor = assignor
        self.attempts = 0  # attempts made over the connector's life (for tests and tools)
        self.changes = 0  # attempts that changed the owned partitions

    def rebalance(self) -> None:
        """Attempt until success; ConsumerRebalanceFailedError after ``rebalance.retries.max`` failures."""
        consumer_id = self.membership.consumer_id
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
                raise ConsumerRebalanceFailedError(f"{consumer_id}: {exc}") from exc
            except Exception as exc:
                log.warning("%s: rebalance attempt failed: %r", consumer_id, exc)
                last_error = exc
            self._undo()
            failures += 1
            if failures >= self.retries:
                cause = f"; the last attempt failed: {last_error}" if last_error is not None else ""
                raise ConsumerRebalanceFailedError(
                    f"{consumer_id} can't rebalance after {failures} retries{cause}"
                ) from last_error
            gevent.sleep(self.backoff)

    def _attempt(self) -> bool:
        m, owned = self.membership, self.owned
        m.rebalance_requested.clear()
        m.ensure_registered()
        epoch = m.session_epoch
        view = self.read_view(m.zk, m.dirs, m.topic_count, m.on_watch, m.registrations)
        if m.consumer_id not in view.consumers:
            m.registration_lost()
            raise KafkaError(f"{m.dirs.consumer_path(m.consumer_id)} is missing")
        wanted: Wanted = {}
        for (topic, name), thread_id in view.my_share(self.assignor).items():
            partition, broker = view.locate(topic, name)
            wanted[(topic, partition)] = (thread_id, broker)
        if owned.matches(wanted, epoch) and self._still_held(owned.owner_paths()):
            log.debug("%s: share unchanged (%d partitions)", m.consumer_id, len(wanted))
            return True

        log.info(
            "%s: rebalancing; consumers %s; my share %s",
            m.consumer_id,
            view.consumers,
            sorted(f"{t}:{p}" for t, p in wanted),
        )
        owned.stop()
        created = self._claim(wanted)
        if created is None:
            return False
        try:
            infos = self._read_offsets(wanted)
            if m.session_epoch != epoch:
                raise KafkaError("the ZooKeeper session changed during the rebalance")
        except BaseException:
            release(m.zk, created)
            raise
        owned.install(infos, epoch)
        self.changes += 1
        log.info("%s: owns %d partitions", m.consumer_id, len(infos))
        return True

    def _still_held(self, paths: list[str]) -> bool:
        """Whether this session still holds every one of these owner nodes (nobody deleted them under us)."""
        zk = self.membership.zk
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

    def _claim(self, wanted: Wanted) -> list[str] | None:
        """Create every owner node in one transaction; a node someone else holds is waited for (until its
        member releases it) and the rest tried again. The nodes created; None if one stays taken."""
        m = self.membership
        nodes = {
            m.dirs.owner_path(topic, str(partition)): thread_id
            for (topic, partition), (thread_id, _) in sorted(wanted.items())
        }
        created: list[str] = []
        deadline = time.monotonic() + self.backoff
        try:
            while nodes:
                taken = create_ephemerals(m.zk, nodes)
                if taken is None:
                    created += nodes
                    break
                try:  # ours from an earlier connection or session, else another member's
                    create_ephemeral_expect_conflict(m.zk, taken, nodes[taken])
                except NodeExistsError:
                    if not self._wait_released(taken, deadline):
                        log.info("%s: %s is still owned by another consumer", m.consumer_id, taken)
                        release(m.zk, created)
                        return None
                    continue
                created.append(taken)
                del nodes[taken]
        except BaseException:
            release(m.zk, created)
            raise
        return created

    def _wait_released(self, path: str, deadline: float) -> bool:
        """True when ``path`` is gone (or changed); False at the deadline; _Restart on a newer group change."""
        m = self.membership
        gone = gevent.event.Event()
        if m.zk.exists(path, watch=lambda event: gone.set()) is None:
            return True
        remaining = deadline - time.monotonic()
        if remaining > 0:
            gevent.wait([gone, m.rebalance_requested], timeout=remaining, count=1)
        if m.rebalance_requested.is_set():
            raise _Restart
        return gone.is_set()

    def _read_offsets(self, wanted: Wanted) -> dict[PartitionKey, PartitionTopicInfo]:
        m, owned = self.membership, self.owned
        paths = {key: m.dirs.offset_path(key[0], str(key[1])) for key in wanted}
        stored = get_many(m.zk, paths.values())
        infos = {}
        for key, (thread_id, broker) in sorted(wanted.items()):
            topic, partition = key
            value = stored[paths[key]]
            if value is not None:
                offset = committed = int(value)
            else:
                offset = owned.fetcher.initial_offset(topic, partition, broker)
                committed = None
            infos[key] = PartitionTopicInfo(
                topic, partition, broker, owned.queue_for(topic, thread_id), thread_id, offset, committed
            )
            log.debug("%s: %s:%s from offset %d", m.consumer_id, topic, partition, offset)
        return infos

    def _undo(self) -> None:
        """After a failed attempt: nothing fetched, nothing queued, nothing owned (0.7 ``resetState``)."""
        self.owned.stop()
