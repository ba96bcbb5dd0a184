"""Reading size-prefixed frames (``int32 size | size bytes``), the framing of both protocol lines.

The size is checked before any of the frame is read, and a large frame's buffer grows with the bytes that
arrive (a header announcing 100 MB holds no memory until they do). ``FrameReader`` takes as many bytes per recv as
the socket has, so pipelined small frames cost one system call between them.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from zkafka.errors import InvalidRequestError
from zkafka.protocol.types import Int32

_SIZE = Int32.fmt


class FrameReader:
    """Reads frames from one socket, each checked against ``max_size`` before its body is read.

    Small frames are cut from one reusable buffer (the view returned is valid until the next call, unless
    ``keep``); a frame larger than the buffer gets a buffer of its own: grown with the bytes that arrive, or,
    with ``allocate_announced`` (a client reading the answers of a broker it chose, as Kafka's
    ``NetworkReceive`` does), allocated at the announced size and received into in place.
    """

    def __init__(
        self,
        sock: socket.socket,
        max_size: int,
        buffer_size: int = 64 * 1024,
        allocate_announced: bool = False,
    ) -> None:
        self.sock = sock
        self.max_size = max_size
        self.allocate_announced = allocate_announced
        self.buf = bytearray(buffer_size)
        self.view = memoryview(self.buf)
        self.start = 0
        self.end = 0

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned in a frame."""
        return self.end - self.start

    def has_frame(self) -> bool:
        """Whether a whole frame is here (``next_frame`` would not wait), after taking what the socket holds
        already without waiting for more (a plain gevent socket; another is only looked at)."""
        if self._whole_frame():
            return True
        wanted = self._announced() + 4 if self.buffered >= 4 else 4
        raw = getattr(self.sock, "_sock", None)
        if raw is None or not 4 <= wanted <= len(self.buf):
            return False
        self._make_room(wanted)
        try:
            n = raw.recv_into(self.view[self.end :], 0, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return False
        self.end += n
        return n > 0 and self._whole_frame()

    def _announced(self) -> int:
        return _SIZE.unpack_from(self.buf, self.start)[0]

    def _whole_frame(self) -> bool:
        return self.buffered >= 4 and 0 <= self._announced() <= self.buffered - 4

    def next_frame(
        self, on_header: Callable[[int], None] | None = None, keep: bool = False
    ) -> memoryview | None:
        """The next frame (the bytes after its size); None on a clean EOF between frames.

        A size outside ``[0, max_size]`` is InvalidRequestError; EOF inside a frame is ConnectionError.
        ``on_header(size)`` runs once the size is known, before the body is read.
        """
        if not self._fill(4):
            if self.buffered:
                raise ConnectionError(f"connection closed inside a frame header ({self.buffered} bytes)")
            return None
        (size,) = _SIZE.unpack_from(self.buf, self.start)
        if size < 0 or size > self.max_size:
            raise InvalidRequestError(f"frame size {size} is not in [0, {self.max_size}]")
        if on_header is not None:
            on_header(size)
        self.start += 4
        if size <= len(self.buf):
            if not self._fill(size):
                raise ConnectionError(f"connection closed after {self.buffered} bytes of a {size}-byte frame")
            frame = self.view[self.start : self.start + size]
            self.start += size
            return memoryview(bytes(frame)) if keep else frame
        if self.allocate_announced:
            return self._received_in_place(size)
        # Grown by the bytes that arrive, never allocated from the size a header announces.
        body = bytearray(self.view[self.start : self.end])
        self.start = self.end = 0
        while len(body) < size:
            n = self.sock.recv_into(self.view[: min(len(self.buf), size - len(body))])
            if n == 0:
                raise ConnectionError(f"connection closed after {len(body)} bytes of a {size}-byte frame")
            body += self.view[:n]
        return memoryview(body)

    def _received_in_place(self, size: int) -> memoryview:
        body = bytearray(size)
        have = self.buffered
        body[:have] = self.view[self.start : self.end]
        self.start = self.end = 0
        view = memoryview(body)
        while have < size:
            n = self.sock.recv_into(view[have:])
            if n == 0:
                raise ConnectionError(f"connection closed after {have} bytes of a {size}-byte frame")
            have += n
        return view

    def detach(self) -> None:
        """Leave the frames returned so far to their holders: later frames are cut from a new buffer (a
        request waiting on its frame while the next ones are read)."""
        rest = self.view[self.start : self.end]
        self.buf = bytearray(len(self.buf))
        self.view = memoryview(self.buf)
        self.start, self.end = 0, len(rest)
        self.view[: self.end] = rest

    def _make_room(self, wanted: int) -> None:
        if self.start + wanted > len(self.buf):  # move the partial frame to the front
            have = self.buffered
            self.buf[:have] = self.buf[self.start : self.end]
            self.start, self.end = 0, have

    def _fill(self, wanted: int) -> bool:
        """Make ``wanted`` bytes available from ``start``; False on EOF first."""
        if self.buffered >= wanted:
            return True
        self._make_room(wanted)
        while self.buffered < wanted:
            n = self.sock.recv_into(self.view[self.end :])
            if n == 0:
                return False
            self.end += n
        return True
