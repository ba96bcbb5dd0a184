"""The gevent hub of a thread: its end, and the greenlets that must end before it."""

from __future__ import annotations

from collections.abc import Iterable

import gevent


def destroy_thread_hub() -> None:
    """Destroy the calling thread's gevent hub and its loop. A thread's first gevent call makes them (an epoll
    and an eventfd descriptor) and the thread's end does not close them: a thread that used gevent calls this
    as it ends."""
    gevent.get_hub().destroy(destroy_loop=True)


def end_greenlets(greenlets: Iterable[gevent.Greenlet], timeout: float = 5.0) -> None:
    """End ``greenlets`` now (GreenletExit where each waits: a request under way is cut short and its
    connection closed) when they run on the calling thread's hub, the caller's own greenlet excepted. A greenlet
    left waiting when its hub stops keeps its connection open for the life of the process. From another thread
    nothing is done: the greenlets end when their own hub runs them."""
    hub, current = gevent.get_hub(), gevent.getcurrent()
    mine = [g for g in greenlets if g is not current and not g.dead and g.parent is hub]
    if mine:
        gevent.killall(mine, timeout=timeout)
