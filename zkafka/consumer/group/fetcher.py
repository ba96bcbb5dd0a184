"""Long-poll fetches for a 0.9 group consumer: one greenlet per leader broker keeps one Fetch (the newest version both know; v1 to a 0.8.2 broker) in flight
for the assigned partitions that broker leads (``fetch.max.wait.ms``, ``fetch.min.bytes``), and buffers at
most one answer per partition until ``poll`` drains it.

An answer is kept only if its partition is still assigned with the position it was fetched from, and
``drain`` checks that again when it hands records out, so nothing of a partition that was given up or sought
elsewhere reaches the application. OFFSET_OUT_OF_RANGE asks for a reset by ``auto.offset.reset``; leader
errors and lost connections ask for fresh metadata, after which the partitions go to their new leaders. A
leader that has not answered within ``fetch.max.wait.ms`` and the cluster's lookup timeout counts as lost (a
frozen or killed broker does not close its connections).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import gevent
from gevent.event import Event

from zkafka.client08.api_versions import version_for
from zkafka.consumer.fetched_partition08 import FetchedPartition
from zkafka.consumer.group.cluster import Cluster
from zkafka.consumer.group.subscription import ConsumerRecord, SubscriptionState, TopicPartition
from zkafka.errors import KafkaError
from zkafka.protocol.api_keys import FETCH
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.protocol.fetch import fetch_request
from zkafka.records import native
from zkafka.records.fetched import FetchedRecord
from zkafka.utils.hub import end_greenlets

log = logging.getLogger(__name__)

LEADER_ERRORS = {
    ErrorCode.NOT_LEADER_FOR_PARTITION,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
}


# How the native decoder builds a ConsumerRecord of a message; the call's constants are (topic, partition,
# no timestamp, no headers).
_RECORD = native.layout(ConsumerRecord, (0, 1, "offset", "key", "value", 2, 2, 3))
_NO_TIMESTAMP = -1


def _converter(topic: str, partition: int) -> Callable[[int, Any], ConsumerRecord]:
    """The record of a message the native decoder does not build (all of them on the pure path)."""
    new = tuple.__new__  # spares the NamedTuple's Python-level constructor

    def record(offset: int, message: Any) -> ConsumerRecord:
        return new(ConsumerRecord, (topic, partition, offset, message.key, message.value, -1, -1, ()))

    return record


def _from_record(topic: str, partition: int) -> Callable[[FetchedRecord], ConsumerRecord]:
    """The ConsumerRecord of a record of a batch."""
    new = tuple.__new__

    def record(r: FetchedRecord) -> ConsumerRecord:
        fields = (topic, partition, r.offset, r.key, r.value, r.timestamp, r.timestamp_type, r.headers)
        return new(ConsumerRecord, fields)

    return record


class Fetcher:
    """The fetch greenlets and the buffer of answers not handed out yet."""

    def __init__(
        self,
        cluster: Cluster,
        subscriptions: SubscriptionState,
        *,
        max_partition_fetch_bytes: int = 1024 * 1024,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        retry_backoff_ms: int = 100,
        on_data: Callable[[], None] = lambda: None,
    ) -> None:
        self.cluster = cluster
        self.subscriptions = subscriptions
        self.max_bytes = max_partition_fetch_bytes
        self.max_wait_ms = fetch_max_wait_ms
        self.min_bytes = fetch_min_bytes
        self.retry_backoff_s = retry_backoff_ms / 1000.0
        self.on_data = on_data
        self.buffer: dict[TopicPartition, FetchedPartition] = {}
        # records decoded but not handed out (``max.poll.records``), and the offset after them
        self.leftovers: dict[TopicPartition, tuple[list[ConsumerRecord], int]] = {}
        self._workers: dict[int, gevent.Greenlet] = {}
        self._changed = Event()

    def changed(self) -> None:
        """Wake the workers: the assignment, positions or buffer changed."""
        event, self._changed = self._changed, Event()
        event.set()

    def _mine(self, broker_id: int) -> dict[TopicPartition, int]:
        """Partition -> fetch offset of what ``broker_id`` leads and is fetchable now (nothing buffered)."""
        out = {}
        for tp, position in self.subscriptions.fetchable().items():
            leader = self.cluster.leader(tp)
            if (
                leader is not None
                and leader.id == broker_id
                and tp not in self.buffer
                and tp not in self.leftovers
            ):
                out[tp] = position
        return out

    def ensure_workers(self) -> None:
        """A greenlet for every broker leading a fetchable partition; a partition with no known leader asks
        for fresh metadata."""
        for tp in self.subscriptions.fetchable():
            leader = self.cluster.leader(tp)
            if leader is None:
                self.cluster.request_refresh()
                continue
            worker = self._workers.get(leader.id)
            if worker is None or worker.dead:
                self._workers[leader.id] = gevent.spawn(self._work, leader.id)

    def _leads_any(self, broker_id: int) -> bool:
        return any(
            (leader := self.cluster.leader(tp)) is not None and leader.id == broker_id
            for tp in self.subscriptions.fetchable()
        )

    def _work(self, broker_id: int) -> None:
        channel = None
        try:
            while self._leads_any(broker_id):
                leader = self.cluster.metadata.brokers.get(broker_id)
                if leader is None:
                    return
                if channel is None or (channel.host, channel.port) != (leader.host, leader.port):
                    if channel is not None:
                        channel.close()
                    # a live leader answers within fetch.max.wait.ms and a moment: a silent one is dead
                    timeout_ms = self.max_wait_ms + self.cluster.lookup_timeout_ms
                    channel = self.cluster.channel(leader.host, leader.port, timeout_ms)
                fetches = self._mine(broker_id)
                if not fetches:
                    self._changed.wait(1.0)
                    continue
                if not self._fetch(channel, fetches):
                    channel.close()
                    channel = None
                    gevent.sleep(self.retry_backoff_s)
        finally:
            if channel is not None:
                channel.close()
            if self._workers.get(broker_id) is gevent.getcurrent():
                del self._workers[broker_id]

    def _fetch(self, channel, fetches: dict[TopicPartition, int]) -> bool:
        try:
            version = version_for(channel, FETCH) or 1  # 0.8.2's broker: v1, as the 0.9 consumer sent
            request = fetch_request(
                version,
                [(tp.topic, tp.partition, offset, self.max_bytes) for tp, offset in fetches.items()],
                max_wait_ms=self.max_wait_ms,
                min_bytes=self.min_bytes,
            )
            response = channel.request(request, retries=0)
        except (OSError, KafkaError) as exc:
            log.info("fetch from %s:%d failed: %s", channel.host, channel.port, exc)
            if isinstance(exc, OSError):
                self.cluster.failed(channel.host, channel.port)
            self.cluster.request_refresh()
            return False
        arrived = False
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.topic, p.partition)
                offset = fetches.get(tp)
                state = self.subscriptions.assignment.get(tp)
                if offset is None or state is None or state.position != offset:
                    continue  # given up or sought elsewhere meanwhile
                if p.error == ErrorCode.NONE:
                    if len(p.message_set):
                        self.buffer[tp] = FetchedPartition(
                            tp.topic, tp.partition, offset, 0, p.high_watermark, p.message_set, self.max_bytes
                        )
                        arrived = True
                elif p.error == ErrorCode.OFFSET_OUT_OF_RANGE:
                    log.info("%s-%d: offset %d out of range; resetting", tp.topic, tp.partition, offset)
                    self.subscriptions.request_reset(tp)
                    arrived = True
                elif p.error in LEADER_ERRORS:
                    self.cluster.request_refresh()
                else:
                    log.warning("fetch of %s-%d: %s", tp.topic, tp.partition, error_name(p.error))
        if arrived:
            self.on_data()
        return True

    def drain(self, max_records: int | None = None) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Buffered records (at most ``max_records``: ``max.poll.records``) of partitions still assigned at
        the position they were fetched from; the positions move past what is handed out, and what is left
        of an answer is handed out first next time."""
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        budget = max_records if max_records is not None else 1 << 62
        leftovers, self.leftovers = self.leftovers, {}
        buffered, self.buffer = self.buffer, {}
        for tp, (records, next_offset) in leftovers.items():
            budget = self._hand_out(out, tp, records[0].offset, records, next_offset, budget)
        for tp, fetched in buffered.items():
            if budget <= 0:
                self.buffer[tp] = fetched  # not decoded yet: kept for the next poll
                continue
            # one ConsumerRecord a message, made by the native decoder (the fetch offset and on)
            records = fetched.records(
                _RECORD,
                _converter(tp.topic, tp.partition),
                (tp.topic, tp.partition, _NO_TIMESTAMP, ()),
                2,
                _from_record(tp.topic, tp.partition),
            )
            budget = self._hand_out(out, tp, fetched.fetch_offset, records, fetched.next_offset, budget)
        if buffered or leftovers:
            self.changed()
        return out

    def _hand_out(
        self, out: dict, tp: TopicPartition, start: int, records: list, next_offset: int, budget: int
    ) -> int:
        """Up to ``budget`` of ``records`` (fetched from ``start``) into ``out`` if ``tp`` is still assigned
        at ``start``; the rest kept as leftovers. The budget left."""
        state = self.subscriptions.assignment.get(tp)
        if state is None or state.paused or state.position != start:
            return budget
        taken, rest = records[:budget], records[budget:]
        state.position = rest[0].offset if rest else next_offset
        if rest:
            self.leftovers[tp] = (rest, next_offset)
        if taken:
            out[tp] = taken
        return budget - len(taken)

    def clear(self) -> None:
        self.buffer.clear()
        self.leftovers.clear()
        self.changed()

    def close(self) -> None:
        """End the workers now, a fetch under way cut short and its connection closed (not left to a hub that
        may not run again)."""
        workers = list(self._workers.values())
        self._workers.clear()
        end_greenlets(workers)
