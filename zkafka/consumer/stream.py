"""The streams of the high-level consumer (both lines): the per-stream iterator over fetched chunks.

A fetcher decodes what one fetch returned for one partition into a chunk of messages (``stream07``'s
``MessageAndMetadata`` lists, ``stream08``'s ``MessageBatch08``) and puts it on a stream's queue, at most
``FETCH_PIECE`` messages a chunk; the stream hands the messages out one by one or a batch at a time.

Ownership rule: every chunk belongs to the ``PartitionTopicInfo`` of the rebalance that fetched it. When
the consumer stops owning that partition (a rebalance starts, the session expires, shutdown) the info is
*revoked*, and the iterator drops every chunk of it, including the one it is in the middle of; while the
ZooKeeper connection is down (ownership unknown) the info is *paused* and the iterator waits. So a stream
never hands out a message of a partition its consumer no longer owns, whatever is still queued.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import gevent
import gevent.event
from gevent.queue import Empty, Queue

from zkafka.consumer.partition_state import FetchedChunk, PartitionTopicInfo
from zkafka.errors import KafkaError
from zkafka.records import native

# Put on a stream's queue by shutdown(): the stream ends.
SHUTDOWN = object()


class ConsumerTimeoutError(KafkaError):
    """No message arrived within ``consumer.timeout.ms``; the stream stays usable."""


# Messages a fetcher decodes at a time from one fetch on the native path (each lot goes on the stream's queue
# as a chunk of its own): a lot's objects are still in the CPU's cache when the stream hands them out and
# frees them, which a whole 1 MB fetch's (some megabytes of objects) are not.
FETCH_PIECE = 2048


def in_partition(err: KafkaError, topic: str, partition: object) -> KafkaError:
    """The error with the partition it was found in named in its text."""
    err.args = (f"{topic}:{partition}: {err.args[0] if err.args else err}",)
    return err


class _NoChunk:
    """Stands for "no chunk being iterated": never active, never revoked."""

    active = False
    revoked = False


_NO_CHUNK = _NoChunk()
_EMPTY_ITERATOR = iter(())


class _StreamCore:
    """The per-message step of a stream, in Python (the native core's ``StreamCore`` is the same, compiled)."""

    _info: PartitionTopicInfo | _NoChunk
    _it: Iterator

    def __iter__(self) -> _StreamCore:
        return self

    def __next__(self) -> Any:
        if self._info.active:
            for item in self._it:
                return item
        return self._next_slow(0)

    def _next_slow(self, batch: int) -> Any:
        raise NotImplementedError


# The base is chosen once, at import, from what is built: a class's base cannot change under the streams already
# made, and the fetchers feeding them decode for the same core (stream08 reads ``native.built`` too). The pure
# path is a per-process choice, ZKAFKA_NO_EXTENSIONS=1 in the environment before zkafka is imported (what
# scripts/test.sh runs an integration subset and a drill under); ``native.use(False)`` switches only the codec.
class KafkaStream(native.built.StreamCore if native.built is not None else _StreamCore):
    """An iterator of messages (``MessageAndMetadata``, ``MessageAndMetadata08``) over one consumer thread's queue of fetched chunks.

    ``consumer.timeout.ms`` >= 0 makes ``next()`` raise ConsumerTimeoutError when nothing arrives in time;
    the stream stays usable. The stream ends (StopIteration) when its connector shuts down. The consumed
    offset of a partition is the offset of the last message handed out for it (read lazily from the
    position in the current chunk, so handing out a message costs one ownership check and a list step).
    """

    def __init__(
        self,
        queue: Queue,
        consumer_timeout_ms: int = -1,
        resumed: gevent.event.Event | None = None,
        name: str = "",
    ) -> None:
        self.queue = queue
        self.consumer_timeout = consumer_timeout_ms / 1000.0 if consumer_timeout_ms >= 0 else None
        self.name = name
        self._resumed = resumed if resumed is not None else gevent.event.Event()
        if resumed is None:
            self._resumed.set()
        self._items: Sequence[Any] = []  # the chunk's list of messages (0.8: its MessageBatch08)
        self._it = _EMPTY_ITERATOR
        self._info: PartitionTopicInfo | _NoChunk = _NO_CHUNK
        self._chunk: FetchedChunk | None = None
        self._ended = False

    def next_batch(self, max_messages: int | None = None) -> Sequence[Any]:
        """The next messages at once: those of the current chunk (one fetch piece of one partition) not yet
        handed out, at most ``max_messages`` of them; never empty. On the 0.7 line a list of
        ``MessageAndMetadata``; on the 0.8 line a ``stream08.MessageBatch08``, a sequence of
        ``MessageAndMetadata08`` that also reads as columns (``keys``, ``values``, ``offsets``) without
        making an object per message.

        The batch form of ``next()``, with the same guarantees: it waits for a chunk as ``next()`` does
        (ConsumerTimeoutError after ``consumer.timeout.ms``; StopIteration once the stream ended), never
        holds a message of a partition the consumer gave up, and raises a chunk's error after its messages.
        Handing out a batch hands out every message of it: the consumed offset (what a commit stores) moves
        to after its last one. Cheaper per message than ``next()``: ``zkafka perf consume`` reads with it.
        """
        if max_messages is not None and max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        return self._next_slow(max_messages or -1)

    def batches(self, max_messages: int | None = None) -> Iterator[Sequence[Any]]:
        """``next_batch()`` until the stream ends. A ConsumerTimeoutError raised through it ends this iterator,
        not the stream: call ``batches()`` again to go on."""
        while True:
            try:
                batch = self._next_slow(max_messages or -1)
            except StopIteration:
                return
            yield batch

    def _next_slow(self, batch: int) -> Any:
        """The next message (``batch`` 0) or batch of at most ``batch`` messages (-1: the rest of a chunk)."""
        deadline = None if self.consumer_timeout is None else time.monotonic() + self.consumer_timeout
        while True:
            info = self._info
            if info is not _NO_CHUNK:
                if info.revoked:
                    self._drop_chunk()
                    continue
                if not info.active:
                    self._wait_resumed(deadline)
                    continue
                if batch:
                    taken = self._take_batch(batch)
                    if taken:
                        return taken
                else:
                    for item in self._it:
                        return item
                self._finish_chunk()
                continue
            if self._ended:
                raise StopIteration
            self._take_chunk(deadline)

    def _take_batch(self, most: int) -> Sequence[Any]:
        """Hand out the chunk's next messages (at most ``most``; -1: all of them): a slice of the chunk's list
        or batch."""
        items, it = self._items, self._it
        left = it.__length_hint__()
        if not left:
            return []  # used up: the state stays as it is, for last_offset()
        taken = len(items) - left
        if most < 0 or most >= left:
            if taken:
                items = items[taken:]
            # The caller gets the list (or batch) itself, not a copy (on the native path the decoder left its
            # lists untracked by the cyclic GC: a young list of thousands of messages would make each
            # collection walk them); last_offset() needs only its last message.
            self._items, self._it = items[-1:], _EMPTY_ITERATOR
            return items
        it.__setstate__(taken + most)
        return items[taken : taken + most]

    def last_offset(self) -> int | None:
        """Where the partition resumes after the last message handed out from the current chunk (None if
        none yet): the item's ``next_offset``."""
        taken = len(self._items) - self._it.__length_hint__()
        return self._items[taken - 1].next_offset if taken else None

    def _finish_chunk(self) -> None:
        """The chunk's messages are used up: raise its error, if it carries one, then drop it."""
        chunk, info = self._chunk, self._info
        self._drop_chunk()
        if info.revoked or chunk.error is None:
            return
        if chunk.error_offset is not None:
            info.consumed_offset = chunk.error_offset  # past the bad entry: a commit does not bring it back
        raise chunk.error

    def _take_chunk(self, deadline: float | None) -> None:
        queue = self.queue
        if queue.qsize():
            gevent.sleep(0)  # let fetchers and the ZooKeeper client run between chunks
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            chunk = queue.get(timeout=timeout)
        except Empty:
            raise ConsumerTimeoutError(
                f"no message within consumer.timeout.ms={self.consumer_timeout * 1000:.0f}"
            ) from None
        if chunk is SHUTDOWN:
            self._ended = True
            return
        info = chunk.info
        if info.revoked:
            return
        self._chunk, self._info = chunk, info
        self._items, self._it = chunk.items, iter(chunk.items)
        info.reader = self

    def _drop_chunk(self) -> None:
        info = self._info
        if info is not _NO_CHUNK:
            offset = self.last_offset()
            if offset is not None:
                info.consumed_offset = offset
            if info.reader is self:
                info.reader = None
        self._chunk, self._info = None, _NO_CHUNK
        self._items, self._it = [], _EMPTY_ITERATOR

    def _wait_resumed(self, deadline: float | None) -> None:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._resumed.wait(timeout):
            raise ConsumerTimeoutError(
                "no message within consumer.timeout.ms while the ZooKeeper connection was down"
            )
        info = self._info
        if not info.active and not info.revoked:
            gevent.sleep(0.01)  # resumed for the session but this info not yet re-activated

    def clear(self) -> None:
        """Drop the chunk being iterated and everything queued (the connector does this in a rebalance)."""
        self._drop_chunk()
        while True:
            try:
                item = self.queue.get_nowait()
            except Empty:
                return
            if item is SHUTDOWN:
                self._ended = True

    def __repr__(self) -> str:
        return f"KafkaStream({self.name!r}, {self.queue.qsize()} chunks queued)"
