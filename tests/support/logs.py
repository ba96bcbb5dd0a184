"""Building blocks for the log tests: a settable clock, hand-built entries, file times, a slow disk, and the
closing of every log a test opened (a plugin: tests/conftest.py registers it).
"""

from __future__ import annotations

import os
import struct
import threading
import time
import zlib
from typing import Protocol, TypeVar

import pytest


class _Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=_Closable)

_opened: list[_Closable] = []


def opened(resource: T) -> T:
    """``resource`` (a log, a log manager, a segment, an index), closed when the running test ends.

    Their descriptors are raw (``os.open``, and the duplicate each index's mmap holds), which nothing but
    ``close`` releases: a test that forgets one leaks them for the rest of the run.
    """
    _opened.append(resource)
    return resource


@pytest.fixture(autouse=True)
def _close_what_the_test_opened():
    yield
    failures = []
    while _opened:
        try:
            _opened.pop().close()
        except Exception as exc:  # close the rest, then fail the test on the first failure
            failures.append(exc)
    if failures:
        raise failures[0]


class Clock:
    """A settable millisecond clock."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def entry(payload: bytes) -> bytes:
    """One magic-1 uncompressed entry, built by hand from the 0.7 layout."""
    return struct.pack(">iBBI", 6 + len(payload), 1, 0, zlib.crc32(payload)) + payload


def set_mtime(path: str | os.PathLike, ms: int) -> None:
    os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


class HeldDisk:
    """A slow disk stand-in for a log's ``fsync`` seam (not a mock: each call still fsyncs the real file).

    While held, every fsync waits until ``release()``; ``started`` is set when one is waiting and ``calls``
    counts them. ``delay_s`` instead makes every fsync take that long (a uniformly slow disk).
    """

    def __init__(self, held: bool = True, delay_s: float = 0.0) -> None:
        self._open = threading.Event()
        if not held:
            self._open.set()
        self.delay_s = delay_s
        self.started = threading.Event()
        self.calls = 0

    def __call__(self, fd: int) -> None:
        self.calls += 1
        self.started.set()
        if not self._open.wait(30):
            raise TimeoutError("the held disk was never released")
        if self.delay_s:
            time.sleep(self.delay_s)  # the disk is slow; nothing waits on this
        os.fsync(fd)

    def release(self) -> None:
        self._open.set()
