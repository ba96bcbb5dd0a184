"""Turns at the event loop for the connections' requests: what Kafka's Processor and RequestChannel do for
fairness (one request per connection per poll, the channel muted until its answer is sent), on one gevent hub.

Every connection greenlet takes a turn before it handles a request. A request goes at once while no other
waits and the current slice of the loop (``SLICE_S``) lasts; otherwise it queues, and after the hub's next
poll the loop runs one slice: first every small request (frame of at most ``SMALL_REQUEST_BYTES``) that was
waiting when the slice began, then big ones in arrival order until the slice is spent (one at least). A
connection handles one request per turn and reads its next only after its answer is written (or parked in a
purgatory: network.server), so a burst of pipelined requests on one connection waits behind the others'
requests instead of ahead of them, answers stay in each connection's order, and accepts, framing and small
requests (Metadata, a heartbeat) are never more than a slice and a poll away while big produces stream in.
"""

from __future__ import annotations

from collections import deque
from time import monotonic

from gevent.hub import Waiter, get_hub

SLICE_S = 0.001
SMALL_REQUEST_BYTES = 4096


class RequestChannel:
    """The turns of one listener's connections (``take_turn`` before a request, from its greenlet)."""

    def __init__(self, slice_s: float = SLICE_S, small_request_bytes: int = SMALL_REQUEST_BYTES) -> None:
        self.slice_s = slice_s
        self.small_request_bytes = small_request_bytes
        self._small: deque[Waiter] = deque()
        self._large: deque[Waiter] = deque()
        self._deadline = 0.0  # the end of the current slice
        self._timer = None  # the next slice, after the hub's next poll (created on the hub that serves)
        self.queued = 0  # requests that waited for a turn (a gauge of contention, for tests and metrics)

    @property
    def waiting(self) -> int:
        return len(self._small) + len(self._large)

    def free(self) -> bool:
        """A request would go at once: none waits and the slice lasts."""
        return not self._small and not self._large and monotonic() < self._deadline

    def take_turn(self, size: int) -> None:
        """Return when the request of a ``size``-byte frame may be handled."""
        if self.free():
            return
        queue = self._small if size <= self.small_request_bytes else self._large
        waiter = Waiter()
        queue.append(waiter)
        self.queued += 1
        self._arm()
        try:
            waiter.get()
        except BaseException:  # killed while waiting (the server stopping): leave the queue
            if waiter in queue:
                queue.remove(waiter)
            raise

    def close(self) -> None:
        """Release the loop's timer, unless requests still wait for it (another listener's, when shared)."""
        if self._timer is not None and not self.waiting:
            self._timer.close()
            self._timer = None

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = get_hub().loop.timer(0.0)
        if not self._timer.active:
            self._timer.start(self._run_slice)

    def _run_slice(self) -> None:
        """One slice, run by the hub: the small requests waiting at its start, then big ones while it lasts."""
        self._deadline = monotonic() + self.slice_s
        for _ in range(len(self._small)):
            self._small.popleft().switch(None)
        while self._large:
            self._large.popleft().switch(None)
            if monotonic() >= self._deadline:
                break
        if self._small or self._large:
            self._arm()
