"""The gevent hub of a thread other than the main one."""

from __future__ import annotations

import gevent


def destroy_thread_hub() -> None:
    """Destroy the calling thread's gevent hub and its loop. A thread's first gevent call makes them (an epoll
    and an eventfd descriptor) and the thread's end does not close them: a thread that used gevent calls this
    as it ends."""
    gevent.get_hub().destroy(destroy_loop=True)
