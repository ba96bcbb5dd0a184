"""Fetchers of the high-level consumer: one greenlet per broker doing MULTIFETCH for its owned partitions."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import gevent

from zkafka.consumer.partition_state import (
    FetchedChunk,
    PartitionTopicInfo,
    handed_over,
    reset_time,
    reset_time_or_fail,
)
from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.consumer.stream import FETCH_PIECE
from zkafka.consumer.stream07 import decode_chunk
from zkafka.errors import InvalidMessageSizeError, KafkaError, OffsetOutOfRangeError
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import FetchRequest
from zkafka.records.message07 import INT32
from zkafka.zk.paths07 import Broker, BrokerPartition

log = logging.getLogger(__name__)

class Fetcher:
    """The fetcher greenlets of one connector, restarted by every rebalance."""

    def __init__(
        self,
        *,
        fetch_size: int,
        backoff_ms: int,
        deep: bool = True,
        socket_timeout_ms: int,
        socket_buffersize: int,
        autooffset_reset: str,
        on_offset_reset: Callable[[PartitionTopicInfo, int], None] | None = None,
    ) -> None:
        self.fetch_size = fetch_size
        self.deep = deep
        self.backoff = backoff_ms / 1000.0
        self.socket_timeout_ms = socket_timeout_ms
        self.socket_buffersize = socket_buffersize
        self.autooffset_reset = autooffset_reset
        self.on_offset_reset = on_offset_reset
        self._greenlets: list[gevent.Greenlet] = []

    def start(self, infos: Iterable[PartitionTopicInfo]) -> None:
        """One greenlet per broker owning any of ``infos``."""
        self.stop()
        by_broker: dict[Broker, list[PartitionTopicInfo]] = {}
        for info in infos:
            by_broker.setdefault(info.broker, []).append(info)
        for broker, owned in sorted(by_broker.items()):
            greenlet = gevent.spawn(self._run, broker, owned)
            greenlet.name = f"fetcher-{broker.id}"
            self._greenlets.append(greenlet)

    def stop(self) -> None:
        """Kill every fetcher greenlet (a request in flight is abandoned and its socket closed)."""
        greenlets, self._greenlets = self._greenlets, []
        gevent.killall(greenlets, block=True)

    def initial_offset(self, topic: str, partition: BrokerPartition, broker: Broker) -> int:
        """The ``autooffset.reset`` offset of a partition without a stored offset (asks its broker)."""
        time = reset_time(self.autooffset_reset)
        with SimpleConsumer(
            broker.host, broker.port, self.socket_timeout_ms, self.socket_buffersize
        ) as consumer:
            return _offset_before(consumer, topic, partition.part_id, time)

    @property
    def running(self) -> int:
        return sum(1 for g in self._greenlets if not g.dead)

    def _run(self, broker: Broker, infos: list[PartitionTopicInfo]) -> None:
        consumer = SimpleConsumer(broker.host, broker.port, self.socket_timeout_ms, self.socket_buffersize)
        log.debug("fetcher for broker %d started for %s", broker.id, infos)
        try:
            while True:
                fetching = [info for info in infos if info.fetching and not info.revoked]
                if not fetching:
                    return
                try:
                    read = self._fetch_once(consumer, fetching)
                except (OSError, KafkaError) as exc:
                    log.warning(
                        "fetch from broker %d (%s:%d) failed: %s", broker.id, broker.host, broker.port, exc
                    )
                    consumer.close()
                    read = 0
                if read == 0:
                    gevent.sleep(self.backoff)
        finally:
            consumer.close()

    def _fetch_once(self, consumer: SimpleConsumer, infos: list[PartitionTopicInfo]) -> int:
        requests = [
            FetchRequest(info.topic, info.partition.part_id, info.fetch_offset, self.fetch_size)
            for info in infos
        ]
        results = consumer.multifetch(requests)
        read = 0
        for info, messages in zip(infos, results, strict=True):
            if info.revoked:
                continue
            error = messages.error_code
            if error == 0:
                read += self._enqueue(info, messages.buffer)
            elif error == OffsetOutOfRangeError.error_code:
                self._reset_offset(consumer, info)
            else:
                try:
                    messages.check_error()
                except KafkaError as exc:
                    info.fail(exc)
        return read

    def _enqueue(self, info: PartitionTopicInfo, buf: bytes | memoryview) -> int:
        """Decode one fetched set onto the partition's stream queue; return the bytes the fetch offset advances.

        ``buf`` (the fetch's own frame, never reused) is read in place on the native path, FETCH_PIECE messages
        at a time."""
        if not len(buf):
            return 0
        offset = info.fetch_offset
        start = 0
        while True:
            items, error, resume, end = decode_chunk(
                buf, offset, info.topic, info.partition, self.deep, start, FETCH_PIECE
            )
            if error is not None and resume is None and not items and start == 0:
                # the first entry cannot be read: fetch.size too small, or corruption
                info.fail(_first_entry_error(info, buf, self.fetch_size, error))
                return 0
            if resume is None:
                error = None  # an unreadable entry after some messages: it starts the next fetch
            if items or error is not None:
                info.queue.put(
                    FetchedChunk(info, items, error, offset + resume if error is not None else None)
                )
            if resume is None:
                info.fetch_offset = offset + end
                return end
            if error is None and not handed_over(info):  # a piece of the fetch: the stream takes it first
                return 0
            start = resume

    def _reset_offset(self, consumer: SimpleConsumer, info: PartitionTopicInfo) -> None:
        time = reset_time_or_fail(info, self.autooffset_reset)
        if time is None:
            return
        offset = _offset_before(consumer, info.topic, info.partition.part_id, time)
        log.warning(
            "offset %d of %s:%s is out of range; resetting to the %s offset %d",
            info.fetch_offset,
            info.topic,
            info.partition,
            self.autooffset_reset,
            offset,
        )
        info.reset_offset(offset, self.on_offset_reset)


def latest_offsets(infos: Iterable[PartitionTopicInfo]) -> dict[tuple[str, str], int]:
    """``(topic, "b-p") -> the broker's latest offset`` of each partition, asked of its broker now; a broker
    that cannot be asked is left out."""
    ends: dict[tuple[str, str], int] = {}
    by_broker: dict[Broker, list[PartitionTopicInfo]] = {}
    for info in infos:
        by_broker.setdefault(info.broker, []).append(info)
    for broker, owned in by_broker.items():
        try:
            with SimpleConsumer(broker.host, broker.port, socket_timeout_ms=2000) as consumer:
                for info in owned:
                    found = consumer.get_offsets_before(info.topic, info.partition.part_id, LATEST_TIME, 1)
                    if found:
                        ends[(info.topic, str(info.partition))] = found[0]
        except (OSError, KafkaError) as exc:
            log.debug("log ends from broker %s: %s", broker, exc)
    return ends


def _offset_before(consumer: SimpleConsumer, topic: str, part_id: int, time: int) -> int:
    """The newest offset before ``time`` (-2 earliest, -1 latest); 0 when the broker has none."""
    offsets = consumer.get_offsets_before(topic, part_id, time, 1)
    return offsets[0] if offsets else 0


def _first_entry_error(
    info: PartitionTopicInfo, data: bytes, fetch_size: int, error: KafkaError
) -> KafkaError:
    size = INT32.unpack_from(data, 0)[0] if len(data) >= 4 else 0
    if isinstance(error, InvalidMessageSizeError) and size >= 0:
        return InvalidMessageSizeError(
            f"the message at offset {info.fetch_offset} of {info.topic}:{info.partition} is larger than "
            f"fetch.size={fetch_size}; raise fetch.size"
        )
    return error
