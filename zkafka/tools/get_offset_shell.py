"""GetOffsetShell (``kafka-get-offsets.sh`` since Kafka 3.0): each partition's offset at a time, asked of its
leader.

``-1`` is the log end (the high watermark), ``-2`` the log start, any other time (ms since the epoch) the
first record stamped at or after it, as ``KafkaConsumer.offsetsForTimes`` finds it with ListOffsets v1+
(KIP-79), empty when no record is that late. A log of message format v0 has no timestamps (the broker answers
UNSUPPORTED_FOR_MESSAGE_FORMAT), and a 0.8.2 broker knows only ListOffsets v0: there the answer is what
0.8's GetOffsetShell printed, the start of the newest segment older than the time, and a note says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from zkafka.client08.topic_metadata import BrokerEndPoint, TopicMetadataCache
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.errors import KafkaError, UnsupportedForMessageFormatError, UnsupportedVersionError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME

SEGMENT_NOTE = (
    "no record timestamps here (ListOffsets v0): the start of the newest segment older than the time"
)


class NoMatchingTopicError(KafkaError):
    """No topic of the cluster matches (kafka-get-offsets.sh: "Could not match any topic-partitions")."""


class PartitionOffset(NamedTuple):
    """One line of the answer: ``offset`` None when no record is that late (or the partition has no leader);
    ``note`` says when the offset is 0.8's segment start or why there is none."""

    topic: str
    partition: int
    offset: int | None
    note: str | None = None

    def line(self) -> str:
        """``topic:partition:offset``, GetOffsetShell's output (the offset empty when there is none)."""
        return f"{self.topic}:{self.partition}:{'' if self.offset is None else self.offset}"


def get_offsets(
    bootstrap: Sequence[tuple[str, int]],
    topic: str,
    time: int,
    partitions: Sequence[int] = (),
    client_id: str = "GetOffsetShell",
    timeout_ms: int = 10000,
    secure: Any = None,
) -> list[PartitionOffset]:
    """The offsets at ``time`` of the partitions (all when none given) of ``topic``, a name or (as
    kafka-get-offsets.sh takes it) a regular expression matching whole topic names; ``secure``: TLS and SASL
    for each connection (``command_config.client_secure``)."""
    if time < EARLIEST_TIME:
        raise ValueError(f"--time {time}: give -1 (latest), -2 (earliest) or a timestamp in ms")
    cache = TopicMetadataCache(bootstrap, client_id, timeout_ms, secure=secure)
    cache.update([])
    pattern = re.compile(topic)
    topics = sorted(t for t in cache.topics if pattern.fullmatch(t))
    wanted = [p for t in topics for p in cache.partitions(t) if not partitions or p.partition in partitions]
    if not wanted:  # asking for the topic by name would create it (auto.create.topics.enable)
        listed = f" partitions {','.join(map(str, partitions))} of" if partitions else ""
        raise NoMatchingTopicError(f"no{listed} topic matching {topic!r} on {_names(bootstrap)}")
    consumers: dict[int, SimpleConsumer08] = {}

    def consumer_of(leader: BrokerEndPoint) -> SimpleConsumer08:
        if leader.id not in consumers:
            consumers[leader.id] = SimpleConsumer08(
                leader.host, leader.port, timeout_ms, client_id=client_id, secure=secure
            )
        return consumers[leader.id]

    try:
        return [_offset_of(cache, consumer_of, p.topic, p.partition, time) for p in wanted]
    finally:
        for consumer in consumers.values():
            consumer.close()


def _offset_of(
    cache: TopicMetadataCache,
    consumer_of: Callable[[BrokerEndPoint], SimpleConsumer08],
    topic: str,
    partition: int,
    time: int,
) -> PartitionOffset:
    leader = cache.leader(topic, partition)
    if leader is None:
        return PartitionOffset(topic, partition, None, "no leader")
    consumer = consumer_of(leader)
    try:
        found = consumer.offset_for_time(topic, partition, time)
        return PartitionOffset(topic, partition, None if found is None else found[0])
    except (UnsupportedVersionError, UnsupportedForMessageFormatError):
        before = consumer.get_offsets_before(topic, partition, time, 1)
        note = None if time in (LATEST_TIME, EARLIEST_TIME) else SEGMENT_NOTE
        return PartitionOffset(topic, partition, before[0] if before else None, note)


def _names(bootstrap: Sequence[tuple[str, int]]) -> str:
    return ",".join(f"{host}:{port}" for host, port in bootstrap)


def offset_lines(offsets: Sequence[PartitionOffset]) -> Iterator[str]:
    """The output lines, in topic and partition order."""
    for offset in sorted(offsets):
        yield offset.line()
