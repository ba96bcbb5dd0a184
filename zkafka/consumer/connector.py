"""The ZooKeeper high-level consumer of a group: the connector machinery both lines share.

``BaseConsumerConnector`` is a group member for either ZooKeeper layout: the session and registration,
the rebalancer, the owned partitions with their fetcher, the streams, autocommit and shutdown. A line
supplies its config keys, znode layout, topic-count form, group reader, assignor and fetcher:
``connector07`` is 0.7's (offsets in ZooKeeper by broker partition, sorted-range assignment, MULTIFETCH
to the broker holding each partition); ``connector08`` is 0.8's.

Everything runs on the gevent hub of the thread that created the connector (kazoo's gevent handler, the
fetchers, the rebalance watcher, autocommit); a stream's ``next()`` waits on that hub, which is what lets
the rest run, so an ordinary script just iterates its streams. Do not use a connector from another thread.
Iteration yields to the hub at least once per chunk; code that blocks the thread for longer than the
ZooKeeper session timeout between messages loses the session (and its partitions).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, NamedTuple

import gevent
import gevent.event
import gevent.lock
from gevent.queue import Queue
from kazoo.client import KazooState

from zkafka.assignment.assignor import Assignor
from zkafka.config import Config
from zkafka.consumer.membership import ConsumerIdConflictError, GroupDirs, GroupMembership
from zkafka.consumer.ownership import OwnedPartitions, PartitionFetcher
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.consumer.rebalancer import ConsumerRebalanceFailedError, ViewReader, ZKRebalancer
from zkafka.consumer.stream import SHUTDOWN, KafkaStream
from zkafka.errors import KafkaError
from zkafka.topic_count import TopicCount, TopicFilter, Whitelist, consumer_id, thread_ids
from zkafka.zk.client import gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths import ZKGroupDirs

__all__ = ["BaseConsumerConnector", "ConnectorSettings", "ConsumerIdConflictError"]

log = logging.getLogger(__name__)


class ConnectorSettings(NamedTuple):
    """The connector's settings under either line's key names."""

    group: str
    consumer_id: str | None  # the configured suffix (``consumerid`` / ``consumer.id``), or None
    zk_connect: str
    zk_session_timeout_ms: int
    zk_connection_timeout_ms: int
    rebalance_retries: int
    rebalance_backoff_ms: int
    queued_chunks: int
    consumer_timeout_ms: int
    autocommit: bool
    autocommit_interval_ms: int


class BaseConsumerConnector:
    """A member of a consumer group: registers in ZooKeeper, takes its share of partitions and feeds streams.

    Its parts: ``membership`` (the session and registration), ``owned`` (the owned partitions, their
    fetcher and queues) and ``rebalancer`` (which divides the group and moves ``owned`` along). Subclasses
    give the line: ``config_class`` and the ``_settings`` ... ``_partition_key`` hooks.
    """

    config_class: type[Config]

    def __init__(self, config: Config | Mapping[str, str]) -> None:
        self.config = config if isinstance(config, self.config_class) else self.config_class(config)
        settings = self.settings = self._settings()
        self.group: str = settings.group
        self.dirs = self._group_dirs()
        self.consumer_id = consumer_id(self.group, settings.consumer_id)
        self._hub = gevent.get_hub()
        self._lock = gevent.lock.RLock()
        self._resumed = gevent.event.Event()
        self._resumed.set()
        self._closed = False
        self._shutdown_done = gevent.event.Event()
        self._greenlets: list[gevent.Greenlet] = []
        self.zk = make_zk_client(
            settings.zk_connect,
            settings.zk_session_timeout_ms,
            settings.zk_connection_timeout_ms,
            handler=gevent_handler(),
        )
        read_view, assignor = self._rebalance_rules()
        self.membership = GroupMembership(self.zk, self.dirs, self.consumer_id)
        self.owned = OwnedPartitions(self.membership, self._make_fetcher())
        self.rebalancer = ZKRebalancer(
            self.membership,
            self.owned,
            retries=settings.rebalance_retries,
            backoff_ms=settings.rebalance_backoff_ms,
            read_view=read_view,
            assignor=assignor,
        )
        self._zk_interrupted = False  # the connection went (SUSPENDED or LOST) and has not come back yet
        self.zk.add_listener(self._on_zk_state)
        try:
            start_zk_client(self.zk)
        except BaseException:
            self.zk.stop()
            self.zk.close()
            raise
        self.membership.connected.set()
        log.info("consumer %s connected to ZooKeeper", self.consumer_id)
        self.metrics = None
        if self.config.get("metrics.port") is not None:
            from zkafka.metrics import ConsumerMetrics

            self.metrics = ConsumerMetrics(self, self._log_ends)
            self.metrics.serve("0.0.0.0", self.config["metrics.port"])

    # -- what a line supplies ------------------------------------------------------------------------------

    def _settings(self) -> ConnectorSettings:
        raise NotImplementedError

    def _group_dirs(self) -> GroupDirs:
        """Where the group lives in ZooKeeper: ``/consumers/<group>`` in both lines."""
        return ZKGroupDirs(self.group)

    def _make_fetcher(self) -> PartitionFetcher:
        raise NotImplementedError

    def _rebalance_rules(self) -> tuple[ViewReader, Assignor]:
        """How the group is read from ZooKeeper and divided."""
        raise NotImplementedError

    def _static_count(self, counts: dict[str, int]) -> TopicCount:
        raise NotImplementedError

    def _wildcard_count(self, topic_filter: TopicFilter, num_streams: int) -> TopicCount:
        raise NotImplementedError

    def _partition_key(self, partition: Any) -> Any:
        """How ``owned_partitions`` and ``consumed_offsets`` name a partition."""
        raise NotImplementedError

    def _log_ends(self, infos: list[PartitionTopicInfo]) -> dict[tuple[str, str], int]:
        """``(topic, str(partition)) -> log end`` of owned partitions, for the lag metric (``metrics.port``)."""
        raise NotImplementedError

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
        self._start(self._static_count(counts))
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
        self._start(self._wildcard_count(topic_filter, num_streams))
        return streams

    def commit_offsets(self) -> None:
        """Write the consumed offset of every partition this consumer owns to ``/consumers/<g>/offsets``."""
        self._check_thread()
        with self._lock:
            self.owned.commit()

    def owned_partitions(self) -> dict[tuple[str, Any], str]:
        """``(topic, partition) -> thread id`` of the partitions currently owned (and not revoked); a partition
        is named ``"b-p"`` in 0.7, by its id in 0.8."""
        return {
            (topic, self._partition_key(partition)): info.thread_id
            for (topic, partition), info in list(self.owned.infos.items())
            if not info.revoked
        }

    def consumed_offsets(self) -> dict[tuple[str, Any], int]:
        """``(topic, partition) -> consumed offset`` of the partitions currently owned."""
        return {
            (t, self._partition_key(p)): info.consumed_offset
            for (t, p), info in list(self.owned.infos.items())
        }

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
            if self.metrics is not None:
                self.metrics.close()
            self._shutdown_done.set()
        log.info("consumer %s shut down", self.consumer_id)

    def _close(self) -> None:
        with self._lock:
            try:
                self.owned.stop(commit=self.settings.autocommit)
            except Exception:
                log.exception("%s: could not commit and release on shutdown", self.consumer_id)
            for stream in self.owned.streams:
                stream.clear()
                stream.queue.put_nowait(SHUTDOWN)
            self._resumed.set()
            try:
                self.zk.stop()
            finally:
                self.zk.close()

    def __enter__(self) -> BaseConsumerConnector:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.consumer_id!r}, owns {len(self.owned.infos)} partitions)"

    # -- streams and start-up ----------------------------------------------------------------------------

    def _check_thread(self) -> None:
        if gevent.get_hub() is not self._hub:
            raise RuntimeError(f"a {type(self).__name__} is used only on the thread that created it")

    def _check_first_use(self) -> None:
        self._check_thread()
        if self._closed:
            raise KafkaError("the consumer connector has been shut down")
        if self.membership.topic_count is not None:
            raise KafkaError("create_message_streams can be called only once per connector")

    def _new_stream(self, key, name: str) -> KafkaStream:
        queue = Queue(self.settings.queued_chunks)
        stream = KafkaStream(queue, self.settings.consumer_timeout_ms, resumed=self._resumed, name=name)
        self.owned.add_stream(key, stream)
        return stream

    def _start(self, topic_count: TopicCount) -> None:
        self.membership.topic_count = topic_count
        with self._lock:
            self.membership.register()
            self.rebalancer.rebalance()
        self._greenlets.append(gevent.spawn(self._watch_loop))
        if self.settings.autocommit:
            self._greenlets.append(gevent.spawn(self._autocommit_loop))

    # -- events --------------------------------------------------------------------------------------------

    def _on_zk_state(self, state: str) -> None:
        """kazoo state listener: must not block. Pause on a lost connection, revoke on a lost session."""
        if self._closed:
            return
        membership = self.membership
        if state != KazooState.CONNECTED:
            self._zk_interrupted = True
        if state == KazooState.SUSPENDED:
            log.warning("%s: ZooKeeper connection lost; pausing the streams", self.consumer_id)
            membership.connected.clear()
            self._resumed.clear()
            self.owned.pause()
        elif state == KazooState.LOST:
            log.warning("%s: ZooKeeper session expired; its partitions are no longer ours", self.consumer_id)
            membership.session_expired()
            self.owned.revoke_all()
            self._resumed.set()
            membership.rebalance_requested.set()
        elif state == KazooState.CONNECTED:
            membership.connected.set()
            if self._zk_interrupted:
                self._zk_interrupted = False
                log.warning(
                    "%s: ZooKeeper connection back%s",
                    self.consumer_id,
                    " in a new session; rebalancing" if membership.session_lost else "; resuming the streams",
                )
            if not membership.session_lost:
                self.owned.resume()
            self._resumed.set()
            membership.rebalance_requested.set()  # kazoo dropped our watches with the connection

    def _watch_loop(self) -> None:
        """Run one rebalance per batch of events, serialised with commits and shutdown."""
        requested = self.membership.rebalance_requested
        while not self._closed:
            requested.wait()
            self.membership.connected.wait()
            if self._closed:
                return
            with self._lock:
                if self._closed or not requested.is_set():
                    continue
                try:
                    self.rebalancer.rebalance()
                except ConsumerRebalanceFailedError as exc:
                    log.error("%s: %s; trying again later", self.consumer_id, exc)
                    gevent.spawn_later(self.rebalancer.backoff, requested.set)
                except Exception:
                    log.exception("%s: rebalance failed; trying again later", self.consumer_id)
                    gevent.spawn_later(self.rebalancer.backoff, requested.set)

    def _autocommit_loop(self) -> None:
        interval = self.settings.autocommit_interval_ms / 1000.0
        while not self._closed:
            gevent.sleep(interval)
            with self._lock:
                if not self._closed:
                    self.owned.commit()
