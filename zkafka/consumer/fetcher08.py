"""Fetchers of the 0.8 high-level consumer: find each owned partition's leader, then long-poll it.

As 0.8.2's ``ConsumerFetcherManager``: a leader finder asks the brokers registered in ZooKeeper for the
metadata of the topics whose partitions have no fetcher yet, and hands each partition to a fetcher of its
leader (``num.consumer.fetchers`` greenlets per leader broker, a partition's by the hash of its topic and
id). A fetcher sends one Fetch for all its partitions with ``fetch.wait.max.ms`` and ``fetch.min.bytes``, so
the broker holds it until there is data. A partition whose fetch answers an error other than
OFFSET_OUT_OF_RANGE (NOT_LEADER_FOR_PARTITION after a leader change, UNKNOWN_TOPIC_OR_PARTITION, ...), or
whose leader's connection fails, goes back to the leader finder, which looks again every
``refresh.leader.backoff.ms``. A partition without a committed offset starts at -1 and gets its
``auto.offset.reset`` offset from its leader when a fetcher takes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import gevent
import gevent.event

from zkafka.client08.fetcher_manager import fetcher_id
from zkafka.client08.topic_metadata import fetch_topic_metadata
from zkafka.consumer.partition_state import FetchedChunk, PartitionTopicInfo, handed_over, reset_time_or_fail
from zkafka.consumer.simple08 import FetchedPartition, SimpleConsumer08
from zkafka.consumer.stream import FETCH_PIECE
from zkafka.consumer.stream08 import decode_batch08
from zkafka.errors import KafkaError, MessageSizeTooLargeError
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.records import native

log = logging.getLogger(__name__)

INVALID_OFFSET = -1  # a partition's offset before auto.offset.reset has been applied

# A leader broker as (id, host, port) and the fetcher key (broker id, host, port, fetcher id).
LeaderKey = tuple[int, str, int, int]
Fetch = tuple[str, int, int, int]  # what a fetch asks of a partition: topic, partition, offset, max bytes


class Fetcher08:
    """The leader finder and the fetcher greenlets of one 0.8 connector, restarted by every rebalance.

    ``brokers`` returns the ``(host, port)`` of the brokers registered in ZooKeeper (where metadata is asked).
    """

    def __init__(
        self,
        *,
        brokers: Callable[[], list[tuple[str, int]]],
        fetch_size: int,
        min_bytes: int,
        max_wait_ms: int,
        socket_timeout_ms: int,
        socket_buffersize: int,
        auto_offset_reset: str,
        refresh_leader_backoff_ms: int,
        num_fetchers: int = 1,
        client_id: str = "",
        on_offset_reset: Callable[[PartitionTopicInfo, int], None] | None = None,
    ) -> None:
        self.brokers = brokers
        self.fetch_size = fetch_size
        self.min_bytes = min_bytes
        self.max_wait_ms = max_wait_ms
        self.socket_timeout_ms = socket_timeout_ms
        self.socket_buffersize = socket_buffersize
        self.auto_offset_reset = auto_offset_reset
        self.backoff = refresh_leader_backoff_ms / 1000.0
        self.num_fetchers = num_fetchers
        self.client_id = client_id
        self.on_offset_reset = on_offset_reset
        self._finder: gevent.Greenlet | None = None
        self._fetchers: dict[LeaderKey, tuple[gevent.Greenlet, list[PartitionTopicInfo]]] = {}
        self._no_leader: list[PartitionTopicInfo] = []
        self._leaderless = gevent.event.Event()

    def start(self, infos: Iterable[PartitionTopicInfo]) -> None:
        """Find the leaders of ``infos`` and fetch them."""
        self.stop()
        self._no_leader = list(infos)
        if self._no_leader:
            self._leaderless.set()
            self._finder = gevent.spawn(self._find_leaders)
            self._finder.name = "leader-finder"

    def stop(self) -> None:
        """Kill the leader finder and every fetcher (a request in flight is abandoned, its socket closed)."""
        greenlets = [g for g, _ in self._fetchers.values()]
        if self._finder is not None:
            greenlets.append(self._finder)
        self._finder = None
        self._fetchers = {}
        self._no_leader = []
        self._leaderless.clear()
        gevent.killall(greenlets, block=True)

    def initial_offset(self, topic: str, partition: int, broker: object = None) -> int:
        """INVALID_OFFSET: the fetcher asks the partition's leader for the ``auto.offset.reset`` offset."""
        return INVALID_OFFSET

    @property
    def running(self) -> int:
        """Fetcher greenlets alive (the leader finder not counted)."""
        return sum(1 for g, _ in self._fetchers.values() if not g.dead)

    def leaders(self) -> dict[tuple[str, int], int]:
        """``(topic, partition) -> leader broker id`` of the partitions being fetched now."""
        return {(i.topic, i.partition): key[0] for key, (_, infos) in self._fetchers.items() for i in infos}

    # -- the leader finder ---------------------------------------------------------------------------------

    def _find_leaders(self) -> None:
        while True:
            self._leaderless.wait()
            self._leaderless.clear()
            pending = [info for info in self._no_leader if info.fetching and not info.revoked]
            self._no_leader = []
            if pending:
                self._assign_leaders(pending)
            gevent.sleep(self.backoff)

    def _assign_leaders(self, pending: list[PartitionTopicInfo]) -> None:
        try:
            brokers = self.brokers()
            if not brokers:
                raise KafkaError("no broker is registered in ZooKeeper")
            response = fetch_topic_metadata(
                {info.topic for info in pending}, brokers, self.client_id, self.socket_timeout_ms
            )
        except (OSError, KafkaError) as exc:
            log.warning("could not find the leaders of %d partitions: %s", len(pending), exc)
            self._back_to_finder(pending)
            return
        endpoints = {b.node_id: (b.node_id, b.host, b.port) for b in response.brokers}
        leaders = {
            (t.topic, p.partition): endpoints.get(p.leader)
            for t in response.topics
            for p in t.partitions
            if p.leader >= 0
        }
        for info in pending:
            leader = leaders.get((info.topic, info.partition))
            if leader is None:
                log.info("%s:%d has no leader yet", info.topic, info.partition)
                self._back_to_finder([info])
            else:
                self._add(info, leader)

    def _back_to_finder(self, infos: Iterable[PartitionTopicInfo]) -> None:
        self._no_leader.extend(infos)
        self._leaderless.set()

    def _add(self, info: PartitionTopicInfo, leader: tuple[int, str, int]) -> None:
        key = (*leader, fetcher_id(info.topic, info.partition, self.num_fetchers))
        entry = self._fetchers.get(key)
        if entry is not None and not entry[0].dead:
            entry[1].append(info)
            return
        infos = [info]
        greenlet = gevent.spawn(self._run, key, infos)
        greenlet.name = f"fetcher-{leader[0]}-{key[3]}"
        self._fetchers[key] = (greenlet, infos)

    # -- a fetcher -----------------------------------------------------------------------------------------

    def _run(self, key: LeaderKey, infos: list[PartitionTopicInfo]) -> None:
        broker_id, host, port, _ = key
        # Fetch at the negotiated version, as Kafka's Fetcher: the log's entries as stored (message sets or
        # record batches), which the stream decodes in place; no broker converts batches down for it.
        consumer = SimpleConsumer08(host, port, self.socket_timeout_ms, self.socket_buffersize, self.client_id)
        log.debug("fetcher for broker %d started for %s", broker_id, infos)
        ahead: list[Fetch] | None = None  # the fetch sent ahead, its answer not read yet
        try:
            while True:
                infos[:] = [info for info in infos if info.fetching and not info.revoked]
                if not infos:
                    return
                try:
                    ahead = self._fetch_once(consumer, infos, ahead)
                except (OSError, KafkaError) as exc:
                    log.warning("fetch from broker %d (%s:%d) failed: %s", broker_id, host, port, exc)
                    self._back_to_finder(infos)
                    infos.clear()
                    return
        finally:
            consumer.close()
            entry = self._fetchers.get(key)
            if entry is not None and entry[1] is infos:
                del self._fetchers[key]

    def _fetch_once(
        self, consumer: SimpleConsumer08, infos: list[PartitionTopicInfo], ahead: list[Fetch] | None
    ) -> list[Fetch] | None:
        """Fetch ``infos`` once and decode the answer onto their streams; returns the fetch sent ahead, if any.

        On the native core, when every partition answered and some with messages, the next fetch (each partition from where its
        answer's whole entries end) is sent before this answer is decoded: the broker reads and sends it
        while this process decodes, instead of the two waiting on each other. Its answer is used if it asked
        for just what is wanted next (same partitions, same offsets), else read and dropped."""
        if ahead is not None and any(info.fetch_offset < 0 for info in infos):
            consumer.receive_fetch(ahead)  # an offset reset asks the broker first: the channel must be idle
            ahead = None
        for info in list(infos):
            if info.fetch_offset < 0:
                self._reset_offset(consumer, info, infos, initial=True)
        fetching = [info for info in infos if info.fetch_offset >= 0]
        requests = [(info.topic, info.partition, info.fetch_offset, self.fetch_size) for info in fetching]
        if ahead is not None and ahead != requests:
            consumer.receive_fetch(ahead)  # what it asked for is no longer wanted
            ahead = None
        if not fetching:
            return None
        answers = self._answers(consumer, requests, ahead)
        ahead = None
        if (
            native.lib is not None  # where the answers' extents are read natively (a Python walk costs more)
            and all(a.error == ErrorCode.NONE for a in answers)
            and any(len(a.data) for a in answers)
        ):
            ahead = [
                (t, p, a.next_offset, size) for a, (t, p, _, size) in zip(answers, requests, strict=True)
            ]
            consumer.send_fetch(ahead, self.max_wait_ms, self.min_bytes)
        read = 0
        for info, answer in zip(fetching, answers, strict=True):
            if info.revoked:
                continue
            error = answer.error
            if error == ErrorCode.NONE:
                if answer.high_watermark >= 0:  # -1: a throttled answer, which says nothing of the log
                    info.log_end = answer.high_watermark
                read += self._enqueue(info, answer.data)
            elif error == ErrorCode.OFFSET_OUT_OF_RANGE:
                self._reset_offset(consumer, info, infos)
            else:
                log.info(
                    "fetch of %s:%d from broker %s: %s; looking for its leader again",
                    info.topic,
                    info.partition,
                    consumer.host,
                    error_name(error),
                )
                infos.remove(info)
                self._back_to_finder([info])
        if not read and self.max_wait_ms <= 0:
            gevent.sleep(self.backoff)  # no long poll to wait in: do not spin
        return ahead

    def _answers(
        self, consumer: SimpleConsumer08, requests: list[Fetch], ahead: list[Fetch] | None
    ) -> list[FetchedPartition]:
        """The answers to ``requests``: those of the fetch sent ahead for them, else of a fetch sent now (which,
        as any request, is tried again once on a new connection after a socket error)."""
        if ahead is not None:
            try:
                return consumer.receive_fetch(ahead)
            except OSError as exc:
                log.info("fetch ahead from %s failed (%s); fetching again", consumer.host, exc)
        return consumer.multifetch(requests, self.max_wait_ms, self.min_bytes)

    def _enqueue(self, info: PartitionTopicInfo, buf) -> int:
        """Decode one fetched set onto the partition's stream queue; returns the number of messages.

        ``buf`` (the fetch's own frame, never reused) is read in place on the native path, FETCH_PIECE messages
        at a time, each piece a ``MessageBatch08`` of columns."""
        if not len(buf):
            return 0
        fetch_offset = info.fetch_offset
        start = count = 0
        while True:
            items, error, resume, next_offset = decode_batch08(
                buf, fetch_offset, info.topic, info.partition, start, self.fetch_size, FETCH_PIECE
            )
            if start == 0 and not items and next_offset == fetch_offset:
                # not one whole entry: the message there is larger than a fetch may return
                info.fail(error or _too_large(info, self.fetch_size))
                return 0
            if resume is None:
                error = None  # an unreadable entry after some messages: the next fetch starts at it
            if items or error is not None:
                info.queue.put(FetchedChunk(info, items, error, next_offset if error is not None else None))
            count += len(items)
            if not info.revoked:
                info.fetch_offset = max(info.fetch_offset, next_offset)
            if resume is None:
                return count
            if error is None and not handed_over(info):  # a piece of the fetch: the stream takes it first
                return count
            start = resume

    def _reset_offset(
        self,
        consumer: SimpleConsumer08,
        info: PartitionTopicInfo,
        infos: list[PartitionTopicInfo],
        initial: bool = False,
    ) -> None:
        """Move a partition to its ``auto.offset.reset`` offset (no committed offset, or out of range)."""
        time = reset_time_or_fail(info, self.auto_offset_reset)
        if time is None:
            return
        try:
            offsets = consumer.get_offsets_before(info.topic, info.partition, time, 1)
        except KafkaError as exc:
            if isinstance(exc, OSError):
                raise
            log.info("offsets of %s:%d from broker %s: %s", info.topic, info.partition, consumer.host, exc)
            infos.remove(info)
            self._back_to_finder([info])
            return
        offset = offsets[0] if offsets else 0
        log.log(
            logging.INFO if initial else logging.WARNING,
            "%s:%d %s; starting at the %s offset %d",
            info.topic,
            info.partition,
            "has no committed offset" if initial else f"offset {info.fetch_offset} is out of range",
            self.auto_offset_reset,
            offset,
        )
        info.reset_offset(offset, self.on_offset_reset)


def _too_large(info: PartitionTopicInfo, fetch_size: int) -> KafkaError:
    return MessageSizeTooLargeError(
        f"the message at offset {info.fetch_offset} of {info.topic}:{info.partition} is larger than "
        f"fetch.message.max.bytes={fetch_size}; raise fetch.message.max.bytes"
    )
