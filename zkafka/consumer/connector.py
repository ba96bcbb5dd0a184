"""ZookeeperConsumerConnector: the 0.7 high-level consumer of a group, with offsets kept in ZooKeeper.

Everything runs on the gevent hub of the thread that created the connector (kazoo's gevent handler, the
fetchers, the rebalance watcher, autocommit); a stream's ``next()`` waits on that hub, which is what lets
the rest run, so an ordinary script just iterates its streams. Do not use a connector from another thread.
Iteration yields to the hub at least once per chunk; code that blocks the thread for longer than the
ZooKeeper session timeout between messages loses the session (and its partitions).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import gevent
import gevent.event
import gevent.lock
from gevent.queue import Queue
from kazoo.client import KazooState
from kazoo.exceptions import NodeExistsError

from zkafka.config import ConsumerConfig
from zkafka.consumer.fetcher import Fetcher, PartitionTopicInfo
from zkafka.consumer.rebalancer import ConsumerRebalanceFailedError, ZKRebalancer, release
from zkafka.consumer.stream import SHUTDOWN, KafkaStream
from zkafka.errors import KafkaError
from zkafka.topic_count import (
    StaticTopicCount,
    TopicCount,
    TopicFilter,
    Whitelist,
    WildcardTopicCount,
    consumer_id,
    thread_ids,
)
from zkafka.zk.client import (
    create_ephemeral_expect_conflict,
    gevent_handler,
    make_zk_client,
    start_zk_client,
    update_persistent,
)
from zkafka.zk.paths07 import BrokerPartition, ZKGroupDirs

log = logging.getLogger(__name__)


class ConsumerIdConflictError(KafkaError):
    """Another live consumer is registered under this consumer's id (``consumerid`` reused)."""


class ZookeeperConsumerConnector:
    """A member of a consumer group: registers in ZooKeeper, takes its share of partitions and feeds streams."""

    def __init__(self, config: ConsumerConfig | Mapping[str, str]) -> None:
        self.config = config if isinstance(config, ConsumerConfig) else ConsumerConfig(config)
        cfg = self.config
        self.group: str = cfg["groupid"]
        self.dirs = ZKGroupDirs(self.group)
        self.consumer_id = consumer_id(self.group, cfg["consumerid"])
        self._hub = gevent.get_hub()
        self._lock = gevent.lock.RLock()
        self._rebalance_requested = gevent.event.Event()
        self._connected = gevent.event.Event()
        self._resumed = gevent.event.Event()
        self._resumed.set()
        self._closed = False
        self._shutdown_done = gevent.event.Event()
        self._session_lost = False
        self._session_epoch = 0  # bumped when a session is lost: owner nodes of older epochs are gone
        self._registered = False
        self._topic_count: TopicCount | None = None
        self._queues: dict = {}
        self._streams: list[KafkaStream] = []
        self._owned: dict[tuple[str, BrokerPartition], PartitionTopicInfo] = {}
        self._owned_epoch = -1
        self._greenlets: list[gevent.Greenlet] = []
        self._fetcher = Fetcher(
            fetch_size=cfg["fetch.size"],
            backoff_ms=cfg["fetcher.backoff.ms"],
            deep=not cfg["shallowiterator.enable"],
            socket_timeout_ms=cfg["socket.timeout.ms"],
            socket_buffersize=cfg["socket.buffersize"],
            autooffset_reset=cfg["autooffset.reset"],
            on_offset_reset=self._write_reset_offset,
        )
        self.rebalancer = ZKRebalancer(self)
        self.zk = make_zk_client(
            cfg["zk.connect"],
            cfg["zk.sessiontimeout.ms"],
            cfg["zk.connectiontimeout.ms"],
            handler=gevent_handler(),
        )
        self.zk.add_listener(self._on_zk_state)
        try:
            start_zk_client(self.zk)
        except BaseException:
            self.zk.stop()
            self.zk.close()
            raise
        self._connected.set()
        log.info("consumer %s connected to ZooKeeper", self.consumer_id)

    # -- public API --------------------------------------------------------------------------------------

    def create_message_streams(self, topic_count_map: Mapping[str, int]) -> dict[str, list[KafkaStream]]:
        """``{topic: n}`` -> ``{topic: [n streams]}``; each stream gets its own share of the topic's partitions."""
        counts = dict(topic_count_map)
        for topic, n in counts.items():
            if not topic or not isinstance(n, int) or n < 1:
                raise ValueError(f"invalid topic count {topic!r}: {n!r}")
        self._check_first_use()
        streams: dict[str, list[KafkaStream]] = {}
        for topic, n in counts.items():
            for tid in thread_ids(self.consumer_id, n):
                streams.setdefault(topic, []).append(self._new_stream((topic, tid), f"{topic}/{tid}"))
        self._start(StaticTopicCount(self.consumer_id, counts))
        return streams

    def create_message_streams_by_filter(
        self, topic_filter: TopicFilter | str, num_streams: int = 1
    ) -> list[KafkaStream]:
        """``num_streams`` streams sharing every topic the filter allows, including topics created later.

        Stream ``i`` gets the partitions assigned to thread ``<consumer id>-i`` in every allowed topic (0.7.x
        sent them all to the last stream, KAFKA-550).
        """
        if isinstance(topic_filter, str):
            topic_filter = Whitelist(topic_filter)
        if num_streams < 1:
            raise ValueError(f"num_streams must be at least 1, not {num_streams}")
        self._check_first_use()
        streams = [self._new_stream(tid, tid) for tid in thread_ids(self.consumer_id, num_streams)]
        self._start(WildcardTopicCount(self.consumer_id, topic_filter, num_streams))
        return streams

    def commit_offsets(self) -> None:
        """Write the consumed offset of every partition this consumer owns to ``/consumers/<g>/offsets``."""
        self._check_thread()
        with self._lock:
            self._commit()

    def owned_partitions(self) -> dict[tuple[str, str], str]:
        """``(topic, "b-p") -> thread id`` of the partitions currently owned (and not revoked)."""
        return {
            (topic, partition.name): info.thread_id
            for (topic, partition), info in list(self._owned.items())
            if not info.revoked
        }

    def consumed_offsets(self) -> dict[tuple[str, str], int]:
        """``(topic, "b-p") -> consumed offset`` of the partitions currently owned."""
        return {(t, p.name): info.consumed_offset for (t, p), info in list(self._owned.items())}

    def shutdown(self) -> None:
        """Stop fetching, end the streams, commit (with autocommit), release the partitions, end the session."""
        if self._closed:
            self._shutdown_done.wait()  # another greenlet is shutting down: return when it is done
            return
        self._check_thread()
        self._closed = True
        log.info("consumer %s shutting down", self.consumer_id)
        current = gevent.getcurrent()
        gevent.killall([g for g in self._greenlets if g is not current], block=True)
        self._greenlets = []
        try:
            self._close()
        finally:
            self._shutdown_done.set()
        log.info("consumer %s shut down", self.consumer_id)

    def _close(self) -> None:
        with self._lock:
            try:
                self._stop_consuming(commit=self.config["autocommit.enable"])
            except Exception:
                log.exception("%s: could not commit and release on shutdown", self.consumer_id)
            for stream in self._streams:
                stream.clear()
                stream.queue.put_nowait(SHUTDOWN)
            self._resumed.set()
            try:
                self.zk.stop()
            finally:
                self.zk.close()

    def __enter__(self) -> ZookeeperConsumerConnector:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"ZookeeperConsumerConnector({self.consumer_id!r}, owns {len(self._owned)} partitions)"

    # -- streams and start-up ----------------------------------------------------------------------------

    def _check_thread(self) -> None:
        if gevent.get_hub() is not self._hub:
            raise RuntimeError("a ZookeeperConsumerConnector is used only on the thread that created it")

    def _check_first_use(self) -> None:
        self._check_thread()
        if self._closed:
            raise KafkaError("the consumer connector has been shut down")
        if self._topic_count is not None:
            raise KafkaError("create_message_streams can be called only once per connector")

    def _new_stream(self, key, name: str) -> KafkaStream:
        queue = Queue(self.config["queuedchunks.max"])
        self._queues[key] = queue
        stream = KafkaStream(queue, self.config["consumer.timeout.ms"], resumed=self._resumed, name=name)
        self._streams.append(stream)
        return stream

    def _queue_for(self, topic: str, thread_id: str) -> Queue:
        queue = self._queues.get((topic, thread_id))
        return queue if queue is not None else self._queues[thread_id]

    def _start(self, topic_count: TopicCount) -> None:
        self._topic_count = topic_count
        with self._lock:
            self._register()
            self.rebalancer.rebalance()
        self._greenlets.append(gevent.spawn(self._watch_loop))
        if self.config["autocommit.enable"]:
            self._greenlets.append(gevent.spawn(self._autocommit_loop))

    def _register(self) -> None:
        path = self.dirs.consumer_path(self.consumer_id)
        try:
            create_ephemeral_expect_conflict(self.zk, path, self._topic_count.db_string())
        except NodeExistsError:
            raise ConsumerIdConflictError(f"{path} is registered by another live consumer") from None
        self._session_lost = False
        self._registered = True
        log.info("registered consumer %s: %s", self.consumer_id, self._topic_count.db_string())

    def _ensure_registered(self) -> None:
        if self._session_lost or not self._registered:
            self._register()

    # -- ownership -----------------------------------------------------------------------------------------

    def _install(self, infos: dict[tuple[str, BrokerPartition], PartitionTopicInfo], epoch: int) -> None:
        self._owned = infos
        self._owned_epoch = epoch
        self._fetcher.start(infos.values())

    def _stop_consuming(self, commit: bool = True) -> None:
        """Rebalance steps 2-3: stop the fetchers, drop what is queued, commit, release the owner nodes."""
        self._fetcher.stop()
        owned = list(self._owned.values())
        for info in owned:
            info.revoke()
        for stream in self._streams:
            stream.clear()
        if commit:
            self._commit()
        release(self.zk, [self.dirs.owner_path(i.topic, i.partition.name) for i in owned])
        self._owned = {}

    def _commit(self) -> None:
        if not self._connected.is_set():
            return  # no connection, so no knowing we still own anything: the next commit writes it
        for info in list(self._owned.values()):
            offset = info.consumed_offset
            if offset == info.committed_offset:
                continue
            if (info.topic, info.partition) not in self._owned:
                continue  # released (or the session was lost) while we were committing others
            try:
                update_persistent(
                    self.zk, self.dirs.offset_path(info.topic, info.partition.name), str(offset)
                )
                info.committed_offset = offset
                log.debug("%s: committed %s:%s at %d", self.consumer_id, info.topic, info.partition, offset)
            except Exception as exc:
                log.warning(
                    "%s: could not commit %s:%s: %r", self.consumer_id, info.topic, info.partition, exc
                )

    def _write_reset_offset(self, info: PartitionTopicInfo, offset: int) -> None:
        """After OffsetOutOfRange with smallest/largest: store the new offset at once, as 0.7 does."""
        if self._owned.get((info.topic, info.partition)) is not info:
            return
        update_persistent(self.zk, self.dirs.offset_path(info.topic, info.partition.name), str(offset))
        info.committed_offset = offset

    # -- events --------------------------------------------------------------------------------------------

    def _on_watch(self, event) -> None:
        """ZooKeeper watch callback: only flags the change (it runs on kazoo's event greenlet)."""
        log.debug("%s: watch fired: %s", self.consumer_id, event)
        self._rebalance_requested.set()

    def _on_zk_state(self, state: str) -> None:
        """kazoo state listener: must not block. Pause on a lost connection, revoke on a lost session."""
        if self._closed:
            return
        if state == KazooState.SUSPENDED:
            log.warning("%s: ZooKeeper connection lost; pausing the streams", self.consumer_id)
            self._connected.clear()
            self._resumed.clear()
            for info in list(self._owned.values()):
                info.active = False
        elif state == KazooState.LOST:
            log.warning("%s: ZooKeeper session expired; its partitions are no longer ours", self.consumer_id)
            self._connected.clear()
            self._session_epoch += 1
            self._session_lost = True
            for info in list(self._owned.values()):
                info.revoke()
            self._owned = {}
            self._resumed.set()
            self._rebalance_requested.set()
        elif state == KazooState.CONNECTED:
            self._connected.set()
            if not self._session_lost:
                for info in list(self._owned.values()):
                    if not info.revoked:
                        info.active = True
            self._resumed.set()
            self._rebalance_requested.set()  # kazoo dropped our watches with the connection

    def _watch_loop(self) -> None:
        """Run one rebalance per batch of events, serialised with commits and shutdown."""
        while not self._closed:
            self._rebalance_requested.wait()
            self._connected.wait()
            if self._closed:
                return
            with self._lock:
                if self._closed or not self._rebalance_requested.is_set():
                    continue
                try:
                    self.rebalancer.rebalance()
                except ConsumerRebalanceFailedError as exc:
                    log.error("%s: %s; trying again later", self.consumer_id, exc)
                    gevent.spawn_later(self.rebalancer.backoff, self._rebalance_requested.set)
                except Exception:
                    log.exception("%s: rebalance failed; trying again later", self.consumer_id)
                    gevent.spawn_later(self.rebalancer.backoff, self._rebalance_requested.set)

    def _autocommit_loop(self) -> None:
        interval = self.config["autocommit.interval.ms"] / 1000.0
        while not self._closed:
            gevent.sleep(interval)
            with self._lock:
                if not self._closed:
                    self._commit()


def create_consumer_connector(config: ConsumerConfig | Mapping[str, str]) -> ZookeeperConsumerConnector:
    """The 0.7 ``Consumer.create(config)``."""
    return ZookeeperConsumerConnector(config)
