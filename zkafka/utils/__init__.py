"""Small helpers shared by the clients, the tools and the tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def with_filename(exc: OSError, path: str) -> OSError:
    """``exc`` naming ``path`` if it names no file yet (``os.write`` and ``os.fsync`` do not): what a halt
    line shows."""
    if exc.filename is None:
        exc.filename = path
    return exc


def wait_until(
    condition: Callable[[], Any], timeout: float = 15.0, interval: float = 0.02, message: str = "condition"
) -> Any:
    """Poll ``condition`` until it returns something true (which is returned) or raise TimeoutError.

    It sleeps on the gevent hub, so the greenlets of gevent clients on this thread (producers, consumers,
    kazoo's gevent handler) keep running while it waits; without gevent work it is a plain sleep.
    """
    import gevent  # here, so that importing this module does not load gevent

    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"{message} not reached within {timeout}s")
        gevent.sleep(interval)


def now_ms() -> int:
    """Wall-clock milliseconds (Java's ``System.currentTimeMillis``): the brokers' default clock for logs,
    the coordinator and the replica manager, and the time in ZooKeeper values and consumer ids."""
    return time.time_ns() // 1_000_000


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<module>`` on first use of one of its exported names.

    Packages use it so that importing a light module (a partitioner, SimpleConsumer in a Spark executor)
    does not pull in everything the package offers.
    """
    import importlib

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module.startswith("zkafka."):
            return getattr(importlib.import_module(module), name)
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
