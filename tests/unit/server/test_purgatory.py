"""The purgatory with gevent: completion by a watched key's check (a deferred one after the requests of the
next poll, over a socket pair), by timeout, exactly once under races, cancellation, and 10,000 parked
operations that cost nothing and slow no unrelated check."""

from __future__ import annotations

import threading
import time

import gevent
import pytest
from gevent import socket

from zkafka.server.purgatory import DelayedOperation, OperationCancelled, Purgatory
from zkafka.utils import wait_until


class WaitForBytes(DelayedOperation):
    """Completes when ``log[key]`` holds ``min_bytes`` (a DelayedFetch in miniature); counts its calls."""

    tries = 0  # across all instances

    def __init__(self, timeout_ms: int, log: dict, key, min_bytes: int = 1) -> None:
        super().__init__(timeout_ms)
        self.log, self.key, self.min_bytes = log, key, min_bytes
        self.completions = self.expirations = 0
        self.completed_at: float | None = None

    def try_complete(self) -> bool:
        WaitForBytes.tries += 1
        return self.force_complete() if self.log.get(self.key, 0) >= self.min_bytes else False

    def on_complete(self):
        self.completions += 1
        self.completed_at = time.monotonic()
        return self.log.get(self.key, 0)

    def on_expiration(self) -> None:
        self.expirations += 1


def append(purgatory: Purgatory, log: dict, key, size: int) -> int:
    log[key] = log.get(key, 0) + size
    return purgatory.check_and_complete(key)


def test_completes_when_its_key_is_checked_long_before_the_timeout():
    purgatory, log = Purgatory("fetch"), {}
    op = WaitForBytes(30_000, log, ("t", 0), min_bytes=10)
    assert purgatory.try_complete_else_watch(op, [("t", 0)]) is False
    assert (purgatory.delayed(), purgatory.watched()) == (1, 1) and not op.result.ready()
    waiter = gevent.spawn(op.result.get)
    gevent.idle()  # the waiter is parked in get()
    assert append(purgatory, log, ("t", 0), 4) == 0 and not op.result.ready()  # not enough yet
    assert append(purgatory, log, ("t", 1), 99) == 0  # another key: not even tried
    assert append(purgatory, log, ("t", 0), 6) == 1
    assert waiter.get(timeout=5) == 10
    assert (op.completions, op.expirations) == (1, 0)  # woke by the append, not at the 30 s timeout
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0)


def test_a_deferred_check_runs_after_the_requests_the_next_poll_finds():
    """An append's deferred check waits for the greenlets the next poll wakes (a request already received
    behind the append): the woken operation sees their appends too, as a follower fetch then carries them."""
    purgatory, log, key = Purgatory("fetch"), {}, ("t", 0)
    op = WaitForBytes(30_000, log, key, min_bytes=2)
    assert purgatory.try_complete_else_watch(op, [key]) is False
    incoming, client = socket.socketpair()
    try:
        def serve() -> None:  # a connection's greenlet: its next request appends once received
            incoming.recv(1)
            log[key] += 1

        server = gevent.spawn(serve)
        gevent.idle()  # parked on the socket
        log[key] = 1  # the first append, which wakes its key's operations soon
        purgatory.check_and_complete_soon(key)
        client.sendall(b"x")  # the next request is already received when the hub polls
        assert op.result.get(timeout=5) == 2  # both appends, at once (not at the 30 s timeout)
        assert (op.completions, op.expirations) == (1, 0)
        server.get(timeout=5)
    finally:
        incoming.close()
        client.close()
        purgatory.shutdown()


def test_watch_parks_without_trying_and_the_keys_check_completes_it():
    purgatory, log = Purgatory("fetch"), {}
    op = WaitForBytes(30_000, log, ("t", 0))
    tries = WaitForBytes.tries
    purgatory.watch(op, [("t", 0)])  # the caller just found it unsatisfied
    assert WaitForBytes.tries == tries and (purgatory.delayed(), purgatory.watched()) == (1, 1)
    assert append(purgatory, log, ("t", 0), 3) == 1 and op.result.get(timeout=5) == 3
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0) and op._timer is None


def test_satisfied_operation_completes_without_being_watched():
    purgatory, log = Purgatory("fetch"), {("t", 0): 5}
    op = WaitForBytes(30_000, log, ("t", 0))
    assert purgatory.try_complete_else_watch(op, [("t", 0)]) is True
    assert op.result.get(block=False) == 5 and purgatory.delayed() == 0 and op._timer is None


@pytest.mark.parametrize("timeout_ms", [0, 150, 400])
def test_idle_operation_completes_at_its_timeout(timeout_ms):
    purgatory, log = Purgatory("fetch"), {}
    op = WaitForBytes(timeout_ms, log, ("t", 0))
    parked = time.monotonic()
    purgatory.try_complete_else_watch(op, [("t", 0), ("t", 1)])
    assert op.result.get(timeout=timeout_ms / 1000 + 5) == 0  # completes with what there is
    elapsed = op.completed_at - parked
    assert timeout_ms / 1000 - 0.002 <= elapsed, elapsed  # not before its timeout (how soon after: a benchmark)
    assert (op.completions, op.expirations) == (1, 1)
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0)


def test_timeout_and_appends_racing_complete_each_operation_once():
    purgatory, log = Purgatory("fetch"), {}
    keys = [("t", p) for p in range(20)]

    # timers fire from 10 to 59 ms while the appends satisfy the operations over 30 rounds; a third only
    # appends can complete, a third only timers
    def operation(i: int) -> WaitForBytes:
        timeout_ms, min_bytes = 10 + i % 50, 1 + i % 30
        if i % 3 == 1:
            timeout_ms = 30_000
        elif i % 3 == 2:
            min_bytes = 1 << 30
        return WaitForBytes(timeout_ms, log, keys[i % 20], min_bytes)

    ops = [operation(i) for i in range(1000)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [keys[i % 20], keys[(i + 1) % 20]])

    def appender():  # one byte per key and round, giving the hub (and the timers) a turn in between
        while not all(op.result.ready() for op in ops):
            for key in keys:
                append(purgatory, log, key, 1)
            gevent.sleep(0.002)

    gevent.spawn(appender).get(timeout=10)
    assert [op.completions for op in ops] == [1] * 1000
    assert all(op.expirations <= 1 for op in ops)
    assert 0 < sum(op.expirations for op in ops) < 1000  # both paths completed some
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0) and not purgatory._watchers


def test_force_complete_from_many_threads_completes_once():
    for _ in range(100):
        op = WaitForBytes(30_000, {}, "k")
        barrier = threading.Barrier(4)
        wins: list[bool] = []

        def race(op=op, barrier=barrier, wins=wins):
            barrier.wait()
            wins.append(op.force_complete())

        threads = [threading.Thread(target=race) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(wins) == [False, False, False, True] and op.completions == 1


def test_cancel_drops_the_operation_and_its_watches():
    purgatory, log = Purgatory("fetch"), {}
    op = WaitForBytes(100, log, ("t", 0))
    purgatory.try_complete_else_watch(op, [("t", 0), ("t", 1)])
    assert purgatory.watched() == 2
    assert op.result.cancel() is True and op.cancel() is False  # the network layer cancels through result
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0)
    with pytest.raises(OperationCancelled):
        op.result.get(timeout=1)
    tries = WaitForBytes.tries
    assert append(purgatory, log, ("t", 0), 5) == 0 and WaitForBytes.tries == tries
    assert op.force_complete() is False
    later = WaitForBytes(300, log, ("t", 9))  # its timer fires after the cancelled one's would have
    purgatory.try_complete_else_watch(later, [("t", 9)])
    later.result.get(timeout=5)
    assert (op.completions, op.expirations) == (0, 0)


def test_force_complete_unwatches_and_a_failing_on_complete_reaches_the_waiter():
    class Broken(WaitForBytes):
        def on_complete(self):
            raise RuntimeError("log closed")

    purgatory = Purgatory("produce")
    op = Broken(30_000, {}, "k")
    purgatory.try_complete_else_watch(op, ["k", "k", "j"])  # a key given twice is watched once
    assert purgatory.watched() == 2
    assert op.force_complete() is True
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0)
    with pytest.raises(RuntimeError, match="log closed"):
        op.result.get(timeout=1)


def test_a_failing_try_complete_does_not_fail_the_append_that_checks_it():
    class FailsOnceParked(WaitForBytes):
        def try_complete(self):
            if self._purgatory is not None:
                raise ValueError("bad partition state")
            return False

    purgatory, log = Purgatory("fetch"), {}
    bad = FailsOnceParked(30_000, log, "k")
    good = WaitForBytes(30_000, log, "k")
    purgatory.try_complete_else_watch(bad, ["k"])
    purgatory.try_complete_else_watch(good, ["k"])
    assert append(purgatory, log, "k", 1) == 1 and good.result.get(timeout=1) == 1
    assert not bad.result.ready() and purgatory.delayed() == 1  # it stays parked until its timeout
    bad.cancel()


def test_an_operation_is_watched_in_one_purgatory_only():
    first, second = Purgatory("a"), Purgatory("b")
    op = WaitForBytes(30_000, {}, "k")
    first.try_complete_else_watch(op, ["k"])
    with pytest.raises(ValueError, match="already watched in purgatory a"):
        second.try_complete_else_watch(op, ["k"])
    op.cancel()


def test_shutdown_cancels_every_parked_operation():
    purgatory = Purgatory("fetch")
    ops = [WaitForBytes(30_000, {}, i) for i in range(5)]
    for i, op in enumerate(ops):
        purgatory.try_complete_else_watch(op, [i, "shared"])
    purgatory.shutdown()
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0)
    for op in ops:
        with pytest.raises(OperationCancelled):
            op.result.get(timeout=1)


def test_ten_thousand_parked_operations_wait_and_an_append_tries_only_its_key():
    purgatory, log = Purgatory("fetch"), {}
    parked = [WaitForBytes(2500, log, ("other", i)) for i in range(10_000)]
    for op in parked:
        purgatory.try_complete_else_watch(op, [op.key])
    assert (purgatory.delayed(), purgatory.watched()) == (10_000, 10_000)

    # parked, they wait (their CPU cost and an append's: benchmarks/purgatory_append_cost.py)
    guard = WaitForBytes(500, log, ("guard", 0))
    purgatory.try_complete_else_watch(guard, [("guard", 0)])
    guard.result.get(timeout=5)
    assert not any(op.result.ready() for op in parked)

    # an append to an unrelated key, and to a key with one waiter, tries only that key's operations
    tries = WaitForBytes.tries
    for _ in range(10_000):
        purgatory.check_and_complete(("t", 0))
    assert WaitForBytes.tries == tries
    waiter = WaitForBytes(30_000, log, ("t", 0), min_bytes=3)
    purgatory.try_complete_else_watch(waiter, [("t", 0)])
    tries = WaitForBytes.tries
    assert append(purgatory, log, ("t", 0), 1) == 0 and WaitForBytes.tries == tries + 1
    assert append(purgatory, log, ("t", 0), 2) == 1 and waiter.result.get(timeout=1) == 3

    # and each completes once at its timeout, leaving nothing behind
    wait_until(
        lambda: all(op.result.ready() for op in parked), timeout=10, message="all parked operations expired"
    )
    assert all(op.completions == op.expirations == 1 for op in parked)
    assert (purgatory.delayed(), purgatory.watched()) == (0, 0) and not purgatory._watchers
