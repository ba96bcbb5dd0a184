"""The fetch state of one owned partition, shared by its fetcher (the writer) and its stream (the reader).

``PartitionTopicInfo`` holds the fetch and consumed offsets of a partition owned in one rebalance
generation and the queue its chunks go to; ``FetchedChunk`` is what travels on that queue. Neither knows
the fetcher or the stream: the fetcher fills chunks, a stream hands their messages out and reports its
position through the ``ChunkReader`` it registers as the partition's ``reader``. Both lines' fetchers also
share the rules here for a partition out of range (``reset_time_or_fail``) and for handing a fetch over a
piece at a time (``handed_over``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

import gevent
from gevent.queue import Queue

from zkafka.errors import InvalidConfigError, OffsetOutOfRangeError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME

log = logging.getLogger(__name__)

# A partition as its line names it (0.7: a zk.paths07.BrokerPartition; 0.8: its id) and the broker its
# fetcher takes it from (0.7: a zk.paths07.Broker; 0.8: None, the fetcher finds the leader). The shared
# consumer code only compares them and passes them on to the line's fetcher.
PartitionRef = Hashable
BrokerRef = Hashable


class ChunkReader(Protocol):
    """The stream iterating a chunk of a partition right now: it knows how far it has handed messages out."""

    def last_offset(self) -> int | None:
        """Where the partition resumes after the last message handed out from the current chunk (None if
        none yet)."""


class PartitionTopicInfo:
    """One owned partition: its broker, the stream queue it feeds, and its fetch and consumed offsets.

    In the 0.8 consumer the partition is an id and the broker None (its fetcher follows the leader); the
    offsets are logical, and -1 until the fetcher applies ``auto.offset.reset``.

    ``active`` is checked by the stream before each message it hands out: False while ownership is in
    doubt (ZooKeeper connection down). ``revoked`` is final: the partition is no longer ours in this
    rebalance generation, and the stream drops what it still holds of it.
    """

    __slots__ = (
        "topic",
        "partition",
        "broker",
        "queue",
        "thread_id",
        "fetch_offset",
        "_consumed",
        "reader",
        "committed_offset",
        "active",
        "revoked",
        "fetching",
        "log_end",
    )

    def __init__(
        self,
        topic: str,
        partition: PartitionRef,
        broker: BrokerRef | None,
        queue: Queue,
        thread_id: str,
        offset: int,
        committed_offset: int | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.broker = broker
        self.queue = queue
        self.thread_id = thread_id
        self.fetch_offset = offset
        self._consumed = offset
        self.reader: ChunkReader | None = None  # the stream iterating a chunk of this partition right now
        self.committed_offset = committed_offset
        self.active = True
        self.revoked = False
        self.fetching = True
        self.log_end: int | None = (
            None  # 0.8: the high watermark of the last fetch (the consumer's lag metric)
        )

    @property
    def consumed_offset(self) -> int:
        """Offset of the last message handed out (the offset a consumer resumes from), or the start offset."""
        reader = self.reader
        if reader is not None:
            offset = reader.last_offset()
            if offset is not None:
                return offset
        return self._consumed

    @consumed_offset.setter
    def consumed_offset(self, offset: int) -> None:
        self._consumed = offset

    def fail(self, exc: BaseException) -> None:
        """Hand the error to the partition's stream and stop fetching the partition."""
        log.error("stopped fetching %s:%s: %s", self.topic, self.partition, exc)
        self.fetching = False
        self.queue.put(FetchedChunk(self, error=exc))

    def reset_offset(self, offset: int, on_reset: Callable[[PartitionTopicInfo, int], None] | None) -> None:
        """Fetch and consume from ``offset`` on (``auto.offset.reset``), telling ``on_reset``; not once revoked."""
        if self.revoked:
            return
        self.fetch_offset = self.consumed_offset = offset
        if on_reset is not None:
            on_reset(self, offset)

    def revoke(self) -> None:
        """The partition is no longer ours: streams drop what they hold of it, fetchers stop fetching it."""
        self.active = False
        self.revoked = True

    def __repr__(self) -> str:
        return (
            f"PartitionTopicInfo({self.topic}:{self.partition} fetched={self.fetch_offset} "
            f"consumed={self.consumed_offset} thread={self.thread_id})"
        )


class FetchedChunk:
    """Decoded messages of one fetch of one partition, or the error that stopped them, for a stream's queue.

    ``items`` are the partition's messages: a list of ``MessageAndMetadata`` (0.7) or a ``MessageBatch08``
    (0.8). ``error`` is raised after ``items`` are handed out;
    ``error_offset`` (when not None) is where reading goes on after the bad entry, and becomes the consumed
    offset when the error is raised.
    """

    __slots__ = ("info", "items", "error", "error_offset")

    def __init__(
        self,
        info: PartitionTopicInfo,
        items: Sequence[Any] | None = None,
        error: BaseException | None = None,
        error_offset: int | None = None,
    ) -> None:
        self.info = info
        self.items = items if items is not None else []
        self.error = error
        self.error_offset = error_offset


# ``autooffset.reset`` (0.7) and ``auto.offset.reset`` (0.8): where a partition without a valid offset starts
SMALLEST = "smallest"
LARGEST = "largest"


def reset_time_or_fail(info: PartitionTopicInfo, autooffset_reset: str) -> int | None:
    """The OFFSETS time to move an out-of-range partition to; None after handing its stream
    OffsetOutOfRangeError when the policy is neither smallest nor largest."""
    try:
        return reset_time(autooffset_reset)
    except InvalidConfigError:
        info.fail(OffsetOutOfRangeError(f"offset {info.fetch_offset} of {info.topic}:{info.partition}"))
        return None


def reset_time(autooffset_reset: str) -> int:
    """The OFFSETS time for ``autooffset.reset``: smallest = -2 (earliest), largest = -1 (latest)."""
    if autooffset_reset == SMALLEST:
        return EARLIEST_TIME
    if autooffset_reset == LARGEST:
        return LATEST_TIME
    raise InvalidConfigError(f"autooffset.reset: {autooffset_reset!r} is not smallest or largest")


def handed_over(info: PartitionTopicInfo) -> bool:
    """Let the partition's stream take the piece just queued while it is in the CPU's cache; False when the
    partition was given up meanwhile (the rest of the fetch is not wanted)."""
    gevent.sleep(0)
    return not info.revoked
