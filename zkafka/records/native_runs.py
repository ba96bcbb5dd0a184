"""How the native core joins the entry walker: runs of plain entries taken by ``_native``, the rest walked.

The native loops (``native.lib``) stop at anything but a plain entry; ``NativeWalk`` then reads that entry
with the line's ``EntryFormat.walk`` (so its errors are the pure path's) and starts the next run after it.
``decoding_walk`` is the consumer's hook (decode plain entries into objects), ``scan_run`` the checking
one (CRC, size limit, count) used by log recovery and the produce-path validation; ``decode_in_place`` is
the high-level consumer's first run over a received frame, without copying it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from zkafka.errors import KafkaError
from zkafka.records import native


class EntryFormat(Protocol):
    """What a native run needs of a line's ``entries.EntryFormat`` (declared here so this module does not import
    the walker that imports it)."""

    native_line: int

    def walk(self, data: Any, start: int, base: int) -> Iterator: ...


# run(pos) -> (where it stopped, plain entries counted, highest offset read or -1)
Run = Callable[[int], tuple[int, int, int]]

NO_MIN_OFFSET = -(2**63)


class NativeWalk:
    """``walk`` with the runs of plain entries taken by the native core instead of yielded.

    ``run(pos) -> (stop, count, last_offset)`` handles the plain entries from ``pos`` on (checking,
    counting, decoding them, whatever it is for) and returns where it stopped; the entry there is read by
    ``walk`` with all its rules (so errors are the pure path's) and yielded, then the next run starts after
    it. ``end`` is the position after the last entry read either way, ``count`` the sum of the runs' counts
    and ``last_offset`` the highest offset a run read (-1: none).
    """

    __slots__ = ("data", "fmt", "base", "run", "pos", "end", "count", "last_offset")

    def __init__(self, data: Any, fmt: EntryFormat, start: int, base: int, run: Run) -> None:
        self.data, self.fmt, self.base, self.run = data, fmt, base, run
        self.pos = self.end = start
        self.count = 0
        self.last_offset = -1

    def __iter__(self) -> NativeWalk:
        return self

    def __next__(self) -> tuple[int, int, int, int, int, Any]:
        stop, count, last = self.run(self.pos)
        self.count += count
        if last > self.last_offset:
            self.last_offset = last
        if stop > self.end:
            self.end = stop
        entry = next(self.fmt.walk(self.data, stop, self.base), None)
        if entry is None:
            self.pos = stop
            raise StopIteration
        self.pos = self.end = entry[1]
        return entry


def scan_run(lib: Any, data: Any, fmt: EntryFormat, limit: int) -> Run:
    """A NativeWalk run that checks (CRC, entry size at most ``limit``; -1: no limit) and counts plain
    entries."""
    line = fmt.native_line

    def run(pos: int) -> tuple[int, int, int]:
        stop, count = lib.scan(data, line, pos, limit)
        return stop, count, -1

    return run


def decoding_walk(
    data: Any,
    fmt: EntryFormat,
    start: int,
    base: int,
    layout: Any,
    constants: tuple,
    out: list,
    min_offset: int = NO_MIN_OFFSET,
) -> Iterator[tuple[int, int, int, int, int, Any]]:
    """``walk``; on the native path a NativeWalk that appends an object per plain entry to ``out`` instead
    of yielding the entry (built by ``layout``, a ``native.layout``, with ``constants``; on the 0.8 line
    only the entries at or past ``min_offset``). The caller handles what is yielded as on the pure path."""
    lib = native.lib
    if lib is None:
        return fmt.walk(data, start, base)
    line = fmt.native_line

    def run(pos: int) -> tuple[int, int, int]:
        stop, last = lib.decode(data, line, pos, base, min_offset, layout, constants, out)
        return stop, 0, last

    return NativeWalk(data, fmt, start, base, run)


def walked_to(entries: Iterator, after: int) -> int:
    """Where a finished ``decoding_walk`` stopped, given the end of the last entry it yielded."""
    return max(after, entries.end) if type(entries) is NativeWalk else after


# What follows a native run of ``decode_in_place``: entries for the Python walker, nothing (the end of the set,
# or a partial last entry), or more plain entries (the run stopped at its limit).
WALK, DONE, MORE = "walk", "done", "more"


def decode_in_place(
    buf: memoryview | bytearray,
    fmt: EntryFormat,
    start: int,
    base: int,
    min_offset: int,
    layout: Any,
    constants: tuple,
    out: list,
    limit: int = -1,
) -> tuple[int, int, str]:
    """The native core's run of plain entries from ``start`` (at most ``limit`` objects; -1: no limit), read
    from ``buf`` without copying it (the objects it builds own their bytes): ``(stop, last_offset, rest)``.
    ``rest`` says what follows the run (``WALK``, ``DONE`` or ``MORE``); on ``WALK`` the caller reads on from
    ``stop`` with the Python walker, from a bytes copy (the walker slices). On the pure path the run is empty
    and ``rest`` is ``WALK``."""
    lib = native.lib
    if lib is None:
        return start, -1, WALK
    before = len(out)
    stop, last = lib.decode(buf, fmt.native_line, start, base, min_offset, layout, constants, out, limit)
    if len(out) - before == limit:
        return stop, last, MORE
    return stop, last, what_follows(buf, fmt, stop, base)


def what_follows(buf: Any, fmt: EntryFormat, stop: int, base: int = 0) -> str:
    """What follows a native run that stopped at ``stop`` before its limit: ``DONE`` (the end of the set, or a
    partial last entry) or ``WALK`` (an entry for the Python walker, or a bad one)."""
    try:
        done = next(fmt.walk(buf, stop, base), None) is None  # reads lengths only, unless an entry follows
    except KafkaError:
        done = False  # a bad entry: the caller meets it again with the full rules
    return DONE if done else WALK
