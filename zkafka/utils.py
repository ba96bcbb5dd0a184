"""Small helpers shared by the clients, the tools and the tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gevent


def wait_until(
    condition: Callable[[], Any], timeout: float = 15.0, interval: float = 0.02, message: str = "condition"
) -> Any:
    """Poll ``condition`` until it returns something true (which is returned) or raise TimeoutError.

    It sleeps on the gevent hub, so the greenlets of gevent clients on this thread (producers, consumers,
    kazoo's gevent handler) keep running while it waits; without gevent work it is a plain sleep.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"{message} not reached within {timeout}s")
        gevent.sleep(interval)


def now_ms() -> int:
    """Wall-clock milliseconds, as 0.7 uses for log times and ZooKeeper values."""
    return int(time.time() * 1000)
