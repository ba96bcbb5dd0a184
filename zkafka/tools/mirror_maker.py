"""MirrorMaker: copy topics from one or more source clusters into a target cluster.

Each source is consumed by a ZookeeperConsumerConnector in shallow mode, so a compressed wrapper travels
as one message, byte for byte, and is never decompressed and compressed again. Messages are re-sent with
no key (a random partition of the target) under the same topic name. The source group's offsets are
committed only when every message its streams have handed out was given to a producer: a mirror that dies
loses nothing and repeats at most the batch it was working on. The migration tool (``migration``) is this
machinery with deep consumers and a 0.8 producer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gevent
import gevent.event

from zkafka.config07 import ConsumerConfig, ProducerConfig
from zkafka.consumer.connector07 import ZookeeperConsumerConnector
from zkafka.consumer.stream import ConsumerTimeoutError, KafkaStream
from zkafka.consumer.stream07 import MessageAndMetadata
from zkafka.producer.producer07 import Producer
from zkafka.topic_count import TopicFilter

log = logging.getLogger(__name__)

# The longest a stream waits for a message before handing over a partial batch.
POLL_TIMEOUT_MS = 200


@dataclass
class MirrorStats:
    """What a mirror has copied so far."""

    started: float = field(default_factory=time.monotonic)
    messages: int = 0
    bytes: int = 0
    commits: int = 0

    def rate(self) -> float:
        return self.messages / max(time.monotonic() - self.started, 1e-9)


class _Source:
    """One source cluster: its connector, its streams and the messages taken but not yet produced."""

    def __init__(
        self, config: ConsumerConfig, topic_filter: TopicFilter, num_streams: int, shallow: bool = True
    ) -> None:
        mirror_config = config.with_overrides(
            shallowiterator_enable=str(shallow).lower(),
            autocommit_enable="false",
            consumer_timeout_ms=str(POLL_TIMEOUT_MS),
        )
        self.connector = ZookeeperConsumerConnector(mirror_config)
        self.streams: list[KafkaStream] = self.connector.create_message_streams_by_filter(
            topic_filter, num_streams
        )
        self.pending = [0] * len(self.streams)


class MirrorMaker:
    """Consumers on the source clusters, producers on the target, and a greenlet per stream between them.

    Subclasses change what is consumed (``shallow``) and how it is produced (``_make_producer``, ``_send``).
    """

    shallow = True  # forward compressed wrappers as they are

    def __init__(
        self,
        consumer_configs: Sequence[ConsumerConfig],
        producer_config: Any,
        topic_filter: TopicFilter,
        *,
        num_streams: int = 1,
        num_producers: int = 1,
        batch_size: int = 200,
    ) -> None:
        if not consumer_configs:
            raise ValueError("at least one consumer config is needed")
        self.topic_filter = topic_filter
        self.batch_size = batch_size
        self.stats = MirrorStats()
        self._stopping = gevent.event.Event()
        self._producers: list[Any] = []
        self._next_producer = 0
        self._sources: list[_Source] = []
        try:
            self._producers = [self._make_producer(producer_config) for _ in range(num_producers)]
            for config in consumer_configs:
                self._sources.append(_Source(config, topic_filter, num_streams, self.shallow))
        except BaseException:
            self.close()
            raise
        self._greenlets = [
            gevent.spawn(self._mirror_stream, source, index)
            for source in self._sources
            for index in range(len(source.streams))
        ]

    def run(
        self,
        until: Callable[[], bool] | None = None,
        report: Callable[[MirrorStats], None] | None = None,
        report_interval: float = 5.0,
    ) -> None:
        """Mirror until ``stop()`` (or ``until()`` turns true), reporting the stats every ``report_interval``."""
        last_report = time.monotonic()
        while not self._stopping.wait(0.1):
            if until is not None and until():
                break
            if any(g.dead for g in self._greenlets):
                failed = next(g for g in self._greenlets if g.dead)
                if failed.exception is not None:
                    raise failed.exception
            if report is not None and time.monotonic() - last_report >= report_interval:
                report(self.stats)
                last_report = time.monotonic()
        self.stop()

    def stop(self) -> None:
        """Hand over the batches in hand, commit, and stop the streams (the connectors and producers stay)."""
        self._stopping.set()
        gevent.joinall(self._greenlets, timeout=30)
        for source in self._sources:
            self._commit_if_settled(source)

    def close(self) -> None:
        """Stop, then shut down the consumers (committing) and close the producers."""
        if self._sources and not self._stopping.is_set():
            self.stop()
        for source in self._sources:
            source.connector.shutdown()
        for producer in self._producers:
            producer.close()

    def _mirror_stream(self, source: _Source, index: int) -> None:
        stream = source.streams[index]
        batch: list[MessageAndMetadata] = []
        while not self._stopping.is_set():
            try:
                message = next(stream)
            except ConsumerTimeoutError:
                message = None
            except StopIteration:
                break
            if message is not None:
                batch.append(message)
                source.pending[index] = len(batch)
            if batch and (message is None or len(batch) >= self.batch_size):
                self._produce(batch)
                batch = []
                source.pending[index] = 0
                self._commit_if_settled(source)
        if batch:
            self._produce(batch)
            source.pending[index] = 0

    def _produce(self, batch: list[MessageAndMetadata]) -> None:
        by_topic: dict[str, list[MessageAndMetadata]] = {}
        for message in batch:
            by_topic.setdefault(message.topic, []).append(message)
        producer = self._producers[self._next_producer]
        self._next_producer = (self._next_producer + 1) % len(self._producers)
        for topic, messages in by_topic.items():
            self._send(producer, topic, messages)
            self.stats.messages += len(messages)
            self.stats.bytes += sum(len(m.payload) for m in messages)

    def _make_producer(self, config: ProducerConfig) -> Producer:
        return Producer(config)

    def _send(self, producer: Producer, topic: str, messages: list[MessageAndMetadata]) -> None:
        """Hand ``messages`` to ``producer``; returning means they are the producer's."""
        producer.send(topic, messages)

    def _commit_if_settled(self, source: _Source) -> None:
        """Commit the source group's offsets only when no stream holds a message it has not produced."""
        if not any(source.pending):
            source.connector.commit_offsets()
            self.stats.commits += 1
