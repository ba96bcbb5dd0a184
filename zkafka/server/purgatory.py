"""Kafka's request purgatory: delayed operations parked under watch keys until they can complete or time out.

A ``DelayedOperation`` is a request that cannot be answered yet (a Fetch waiting for ``min_bytes``, a Produce
waiting for its replicas). ``Purgatory.try_complete_else_watch`` tries it once and otherwise parks it under
its keys (e.g. ``(topic, partition)``); ``check_and_complete(key)``, called after every append (or follower
LEO / high-watermark change), retries only that key's operations (``check_and_complete_soon``: after the
requests the hub's next poll finds); the rest complete when their gevent timer fires. Completion happens exactly once whichever comes first (a condition, the timer, ``force_complete``),
and ``cancel`` (a closed connection) drops an operation without answering it.

Parked operations cost nothing while waiting: one libev timer each, no greenlet, no polling. A completed or
cancelled operation leaves every watch list at once (O(its keys)), so nothing needs purging and an append
only touches the operations watching its own key. One purgatory belongs to one gevent hub (the broker's).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable, Iterable
from typing import Any

import gevent
from gevent.event import AsyncResult

log = logging.getLogger(__name__)

LOWEST_PRIORITY = -2  # libev's EV_MINPRI: such a watcher's callback runs after every other one pending


class OperationCancelled(Exception):
    """What waiting on a cancelled delayed operation raises (its connection closed, or the broker stops)."""


class DelayedResult(AsyncResult):
    """What a network connection waits on for a delayed operation's answer; ``cancel()`` (the client went
    away) drops the operation."""

    def __init__(self, operation: DelayedOperation) -> None:
        super().__init__()
        self.operation = operation

    def cancel(self) -> bool:
        return self.operation.cancel()


class DelayedOperation:
    """A request answered later: subclasses define ``try_complete``, ``on_complete`` and ``on_expiration``.

    ``try_complete()`` checks the condition and, when it holds, returns ``self.force_complete()``; it may be
    called many times. ``on_complete()`` runs exactly once and returns the answer, which becomes ``result``'s
    value (an exception it raises becomes ``result``'s exception). ``on_expiration()`` runs after
    ``on_complete`` when the timeout completed it. Neither may block: on expiry they run in the gevent hub.

    ``result`` (a gevent ``AsyncResult``) is what the network layer waits on; its ``cancel()`` is the
    operation's, for when the connection closes.
    """

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self.result = DelayedResult(self)
        self._once = threading.Lock()  # acquired by whoever completes or cancels: a compare-and-set
        self._timer: Any = None
        self._purgatory: Purgatory | None = None
        self._keys: tuple = ()

    # -- what subclasses define ---------------------------------------------------------------------------

    def try_complete(self) -> bool:
        """Complete (``return self.force_complete()``) if the condition holds, else return False."""
        raise NotImplementedError

    def on_complete(self) -> Any:
        """The answer: runs exactly once, when the condition held, on timeout or on ``force_complete``."""
        raise NotImplementedError

    def on_expiration(self) -> None:
        """Runs after ``on_complete`` when the timeout completed the operation (for metrics)."""

    # -- completion ---------------------------------------------------------------------------------------

    @property
    def completed(self) -> bool:
        """Completed or cancelled."""
        return self._once.locked()

    def force_complete(self) -> bool:
        """Complete now unless already completed or cancelled; True only for the one call that completes."""
        if not self._once.acquire(blocking=False):
            return False
        self._leave_purgatory()
        try:
            value = self.on_complete()
        except Exception as exc:
            log.warning("delayed operation %r failed to complete: %s", self, exc)
            self.result.set_exception(exc)
        else:
            self.result.set(value)
        return True

    def cancel(self) -> bool:
        """Drop the operation without answering (its connection closed); True if this call dropped it."""
        if not self._once.acquire(blocking=False):
            return False
        self._leave_purgatory()
        self.result.set_exception(OperationCancelled(f"{type(self).__name__} cancelled"))
        return True

    def _expire(self) -> None:
        if self.force_complete():
            try:
                self.on_expiration()
            except Exception:
                log.exception("on_expiration of %r failed", self)

    def _leave_purgatory(self) -> None:
        if self._timer is not None:
            self._timer.close()
            self._timer = None
        if self._purgatory is not None:
            self._purgatory._unwatch(self)
            self._purgatory = None


class Purgatory:
    """Delayed operations watched by key (Kafka's ``RequestPurgatory`` / ``DelayedOperationPurgatory``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._watchers: dict[Hashable, dict[DelayedOperation, None]] = {}  # key -> ordered set of operations
        self._watched = 0
        self._delayed = 0
        self._soon: dict[Hashable, None] = {}  # keys to check after the next poll's requests
        self._after_poll: Any = None  # the lowest-priority zero timer that checks them (made on first use)

    def try_complete_else_watch(self, op: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete ``op`` now if it can (True), else park it under ``keys`` with its timer (False)."""
        if op.try_complete() or op.completed:
            return True
        self.watch(op, keys)
        return False

    def watch(self, op: DelayedOperation, keys: Iterable[Hashable]) -> None:
        """Park ``op`` under ``keys`` with its timer, its condition just found false by the caller (with
        nothing yielding since)."""
        if op._purgatory is not None:
            raise ValueError(f"{op!r} is already watched in purgatory {op._purgatory.name}")
        op._keys = keys = tuple(dict.fromkeys(keys))
        op._purgatory = self
        for key in keys:
            watchers = self._watchers.get(key)
            if watchers is None:
                watchers = self._watchers[key] = {}
            watchers[op] = None
        self._watched += len(keys)
        self._delayed += 1
        op._timer = gevent.get_hub().loop.timer(max(op.timeout_ms, 0) / 1000.0)
        op._timer.start(op._expire, update=True)

    def check_and_complete(self, key: Hashable) -> int:
        """Retry the operations watching ``key``; returns how many this call completed."""
        watchers = self._watchers.get(key)
        if not watchers:
            return 0
        completed = 0
        for op in list(watchers):  # completing removes an operation from the live watch list
            if op.completed:
                continue
            try:
                if op.try_complete():
                    completed += 1
            except Exception:  # one broken operation must not fail the append that woke it
                log.exception("%s: try_complete of %r failed", self.name, op)
        return completed

    def check_and_complete_soon(self, key: Hashable) -> None:
        """``check_and_complete(key)`` once the requests found by the hub's next poll are handled (a zero timer
        of the lowest priority runs after their callbacks): an append's wake-up, so that the requests already
        received behind it, pipelined on its connection or sent on others, are appended first and a woken
        follower fetch answers with all of them (fewer, fuller fetches: less work per message on every
        broker). When nothing else is pending the poll returns at once."""
        if not self._soon:
            timer = self._after_poll
            if timer is None:
                timer = self._after_poll = gevent.get_hub().loop.timer(0.0)
                timer.priority = LOWEST_PRIORITY
            timer.start(self._check_soon)
        self._soon[key] = None

    def _check_soon(self) -> None:
        keys, self._soon = self._soon, {}
        for key in keys:
            self.check_and_complete(key)

    def watched(self) -> int:
        """Watch entries (an operation counts once per key): Kafka's ``PurgatorySize``."""
        return self._watched

    def delayed(self) -> int:
        """Parked operations: Kafka's ``NumDelayedOperations``."""
        return self._delayed

    def shutdown(self) -> None:
        """Cancel every parked operation (their waiters get OperationCancelled) and stop their timers."""
        parked = {op: None for watchers in self._watchers.values() for op in watchers}
        for op in parked:
            op.cancel()
        self._soon = {}
        if self._after_poll is not None:
            self._after_poll.close()
            self._after_poll = None

    def _unwatch(self, op: DelayedOperation) -> None:
        for key in op._keys:
            watchers = self._watchers[key]
            del watchers[op]
            if not watchers:
                del self._watchers[key]
        self._watched -= len(op._keys)
        self._delayed -= 1

    def __repr__(self) -> str:
        return f"Purgatory({self.name!r}, delayed={self._delayed}, watched={self._watched})"
