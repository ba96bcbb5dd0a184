"""The async producers' queue and send greenlet (both lines; Kafka's ProducerSendThread): ``BatchingSender``.

A bounded ``EventQueue`` of ``QueueItem``s and a send greenlet that collects queued events and hands the
batch on when it holds ``batch.size`` events, or ``queue.time`` ms after the first event of the batch was
taken (0.7 counted from the previous dispatch; the bound on latency is the same); ``CallbackHandler`` hooks
into the queue (0.7's ``callback.handler``). ``close`` queues a
shutdown marker behind the events already queued, so everything queued before it is sent.

Everything runs on the gevent hub of the thread that created the producer. ``send`` gives the send
greenlet a turn whenever a batch is ready or the queue is full, so a producer driven by a plain loop with
no other gevent calls still dispatches and does not fill its queue.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import gevent
import gevent.event

from zkafka.producer.errors import ProducerClosedError, QueueFullError

log = logging.getLogger(__name__)


class QueueItem(NamedTuple):
    """Events for one topic partition, as queued by one ``send`` call (0.7 queued one event per item).

    The async queue and ``batch.size`` count events, not items; an item is split when a batch fills up.
    """

    data: list[Any]
    topic: str
    partition: int


class CallbackHandler:
    """Hooks into the async producer's queue; every method may be overridden, the defaults change nothing."""

    def init(self, props: Mapping[str, str]) -> None:
        """Called once with ``callback.handler.props``."""

    def before_enqueue(self, item: QueueItem) -> QueueItem:
        """Before an item is queued; returns the item to queue (possibly changed)."""
        return item

    def after_enqueue(self, item: QueueItem, added: bool) -> None:
        """After an item was offered to the queue; ``added`` is False if any of its events was dropped."""

    def after_dequeuing_existing_data(self, item: QueueItem) -> list[QueueItem]:
        """When the send greenlet takes an item off the queue; returns the items to add to the batch."""
        return [item]

    def before_sending_data(self, events: Sequence[QueueItem]) -> Sequence[QueueItem]:
        """Before the default handler sends a batch; returns the batch to send."""
        return events

    def last_batch_before_close(self) -> list[QueueItem]:
        """On close, items to add to the final batch."""
        return []

    def close(self) -> None:
        """Called when the async producer closes."""

_SHUTDOWN = QueueItem([], "", -2)


class EventQueue:
    """A FIFO of QueueItems bounded by the number of events they hold (``queue.size``).

    With ``coalesce``, events put for the same topic partition as the last queued item join that item (up to
    ``coalesce_limit`` events), so a stream of one-event sends costs a list append each, not an item each.
    """

    def __init__(self, capacity: int, coalesce: bool = True, coalesce_limit: int = 1000) -> None:
        self.capacity = capacity
        self.coalesce = coalesce
        self.coalesce_limit = coalesce_limit
        self.size = 0
        self._items: deque[QueueItem] = deque()
        self._head_taken = 0  # events of the first item already handed out
        self._tail_owned = False  # the last item's list was made here, so it may be extended
        self._taker_waiting = True  # until the send greenlet first runs, it is as good as waiting
        self._readable = gevent.event.Event()
        self._room = gevent.event.Event()
        self._room.set()

    def __len__(self) -> int:
        return self.size

    @property
    def taker_waiting(self) -> bool:
        """True while the send greenlet waits for the queue to become non-empty."""
        return self._taker_waiting

    def put(self, topic: str, partition: int, events: list[Any], timeout: float | None) -> int:
        """Queue events for a topic partition, as many as there is room for; return how many were queued.

        ``timeout`` 0 takes what fits now, None waits for room as long as it takes, and a positive number
        waits at most that many seconds.
        """
        total = len(events)
        if self.size + total <= self.capacity:  # the common case: room for all
            self._append(topic, partition, events)
            self.size += total
            if self._taker_waiting:
                self._readable.set()
            return total
        done = 0
        deadline = None
        while True:
            take = min(self.capacity - self.size, total - done)
            if take > 0:
                self._append(topic, partition, events[done : done + take])
                self.size += take
                done += take
                self._readable.set()
                if done == total:
                    return done
            if timeout == 0:
                return done
            remaining = None
            if timeout is not None:
                if deadline is None:
                    deadline = time.monotonic() + timeout
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return done
            self._room.clear()
            self._room.wait(remaining)

    def _append(self, topic: str, partition: int, events: list[Any]) -> None:
        items = self._items
        if self.coalesce and items:
            tail = items[-1]
            if (
                tail.partition == partition
                and tail.topic == topic
                and len(tail.data) < self.coalesce_limit
                and (self._head_taken == 0 or len(items) > 1)  # never grow the item being taken from
                and tail is not _SHUTDOWN
            ):
                if self._tail_owned:
                    tail.data.extend(events)
                else:  # the caller's list: extend a copy
                    items[-1] = QueueItem(tail.data + list(events), topic, partition)
                    self._tail_owned = True
                return
        items.append(QueueItem(events, topic, partition))
        self._tail_owned = False

    def put_shutdown(self) -> None:
        """Queue the marker that ends the send greenlet (it takes no room)."""
        self._items.append(_SHUTDOWN)
        self._tail_owned = False
        self._readable.set()

    def take(self, timeout: float | None, max_events: int) -> list[QueueItem]:
        """Items holding at most ``max_events`` events in all (the last one split if needed, its rest staying
        first in line), waiting up to ``timeout`` seconds (None: as long as it takes) for the first one;
        [] on timeout. The shutdown marker comes alone, after everything queued before it."""
        items = self._items
        if not items:
            self._readable.clear()
            self._taker_waiting = True
            try:
                if not self._readable.wait(timeout):
                    return []
            finally:
                self._taker_waiting = False
        out: list[QueueItem] = []
        count = 0
        while items and count < max_events:
            head = items[0]
            if head is _SHUTDOWN:
                if not out:
                    items.popleft()
                    out.append(head)
                break
            data = head.data
            start = self._head_taken
            left = len(data) - start
            want = max_events - count
            if left <= want:
                items.popleft()
                if not items:
                    self._tail_owned = False  # handed out: no longer extendable
                self._head_taken = 0
                out.append(head if start == 0 else QueueItem(data[start:], head.topic, head.partition))
                count += left
            else:
                self._head_taken = start + want
                out.append(QueueItem(data[start : start + want], head.topic, head.partition))
                count += want
        self.size -= count
        self._room.set()
        return out


class BatchingSender:
    """A bounded event queue and the send greenlet that hands its events to ``handle`` in batches.

    The machinery both lines' async producers share (0.7's per-broker AsyncProducer, 0.8's one queue per
    producer): ``send`` under the enqueue-timeout policy, batches of ``batch_size`` events or whatever came
    within ``queue_time`` seconds of the batch's first event, and a ``close`` that sends what is queued.
    """

    queue_target = "{topic}-{partition}"  # how QueueFullError names what the dropped events were for

    def __init__(
        self,
        capacity: int,
        batch_size: int,
        queue_time: float,
        enqueue_timeout: float | None,
        callback_handler: CallbackHandler | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.queue_time = queue_time
        self.enqueue_timeout = enqueue_timeout  # None: wait as long as it takes; 0: drop at once
        self.callback_handler = callback_handler
        # Hooks see one item per send call, so items are only merged when there are none.
        self.queue = EventQueue(capacity, coalesce=callback_handler is None, coalesce_limit=batch_size)
        self.dropped = (
            0  # events given up on: batches whose handling failed, and those queued at a close timeout
        )
        self._closed = False
        self._send_greenlet = gevent.spawn(self._run)

    def handle(self, batch: list[QueueItem]) -> None:
        """Send one batch (subclasses); an exception escaping here is logged and the batch dropped."""
        raise NotImplementedError

    def send(self, topic: str, partition: int, events: list[Any]) -> None:
        """Queue events for one topic partition under the enqueue-timeout policy.

        QueueFullError (with ``dropped`` and ``enqueued`` counts) when not all of them found room.
        """
        if self._closed:
            raise ProducerClosedError(f"{self} is closed")
        callback = self.callback_handler
        if callback is not None:
            item = callback.before_enqueue(QueueItem(events, topic, partition))
            topic, partition, events = item.topic, item.partition, item.data
        total = len(events)
        if not total:
            return
        queue = self.queue
        enqueued = queue.put(topic, partition, events, self.enqueue_timeout)
        if enqueued < total and self.enqueue_timeout == 0:
            # A thread would have been sending all along: let the send greenlet drain, then offer again.
            gevent.sleep(0)
            enqueued += queue.put(topic, partition, events[enqueued:], 0)
        if callback is not None:
            callback.after_enqueue(QueueItem(events, topic, partition), enqueued == total)
        if enqueued < total:
            where = self.queue_target.format(topic=topic, partition=partition)
            raise QueueFullError(
                f"{self}: queue of {queue.capacity} events is full; dropped {total - enqueued} of {total}"
                f" events for {where}",
                dropped=total - enqueued,
                enqueued=enqueued,
            )
        if queue.size >= self.batch_size and queue.taker_waiting:
            gevent.sleep(0)  # a full batch is ready and the send greenlet is idle: let it take it now

    # -- the send greenlet ---------------------------------------------------------------------------------

    def _run(self) -> None:
        queue = self.queue
        callback = self.callback_handler
        batch: list[QueueItem] = []
        count = 0
        deadline = 0.0
        shutdown = False
        while not shutdown:
            if batch:
                taken = queue.take(max(0.0, deadline - time.monotonic()), self.batch_size - count)
            else:
                taken = queue.take(None, self.batch_size)
                deadline = time.monotonic() + self.queue_time
            for item in taken:
                if item is _SHUTDOWN:
                    shutdown = True
                    break
                if callback is None:
                    batch.append(item)
                    count += len(item.data)
                else:
                    for part in (
                        self._call(callback.after_dequeuing_existing_data, item, default=[item]) or []
                    ):
                        batch.append(part)
                        count += len(part.data)
            if not shutdown and (not taken or count >= self.batch_size):
                self._try_to_handle(batch)
                batch = []
                count = 0
        if callback is not None:
            batch.extend(self._call(callback.last_batch_before_close, default=[]) or [])
        self._try_to_handle(batch)

    def _try_to_handle(self, batch: list[QueueItem]) -> None:
        if not batch:
            return
        try:
            self.handle(batch)
        except Exception as exc:
            events = sum(len(item.data) for item in batch)
            self.dropped += events
            log.error(
                "%s: dropping a batch of %d events: %s", self, events, exc, exc_info=log.isEnabledFor(10)
            )

    def _call(self, hook, *args, default):
        try:
            return hook(*args)
        except Exception:
            log.exception("%s: callback %s failed", self, getattr(hook, "__name__", hook))
            return default

    # -- closing -------------------------------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> None:
        """Send everything queued (waiting up to ``timeout`` seconds, None = as long as it takes), then
        ``after_close``. Events still queued after the timeout are dropped (and logged)."""
        if self._closed:
            return
        self._closed = True
        self.queue.put_shutdown()
        self._send_greenlet.join(timeout)
        if not self._send_greenlet.dead:
            self.dropped_at_close(self.queue.size, timeout)
            self._send_greenlet.kill()
        self.after_close()

    def dropped_at_close(self, events: int, timeout: float | None) -> None:
        """``events`` were still queued when ``close`` gave up after ``timeout`` seconds."""
        self.dropped += events
        log.error("%s: %d queued events not sent within %.1fs; dropping them", self, events, timeout)

    def after_close(self) -> None:
        """Release what the sender holds, once the send greenlet has ended."""

    @property
    def closed(self) -> bool:
        return self._closed
