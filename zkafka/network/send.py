"""Writing to a socket: byte strings with a plain send loop, file regions with ``os.sendfile`` (on a TLS socket, read and
written).

A response (or request) is a list of *parts*: byte strings, and ``FileRegion`` s that go from a segment file
to the socket without passing through Python. Neutral: it knows no protocol.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gevent.socket import wait_write
from gevent.ssl import SSLSocket

COPY_CHUNK = 256 * 1024
_MORE = getattr(socket, "MSG_MORE", 0)


@dataclass(slots=True)
class FileRegion:
    """``length`` bytes of an open file from ``position``, sent with sendfile; owns (and closes) ``fd``, or
    borrows it from ``owner`` and gives it back with ``owner.release_fd()`` (a log segment's)."""

    fd: int
    position: int
    length: int
    owner: Any = None

    def close(self) -> None:
        if self.owner is None:
            os.close(self.fd)
        elif self.fd >= 0:  # given back once
            self.fd = -1
            self.owner.release_fd()


Part = bytes | bytearray | memoryview | FileRegion
Response = Sequence[Part]


class ThrottledResponse(list):
    """A response after which its connection reads no request for ``throttle_s`` (a client over its quota:
    the channel muted, KIP-219); empty when there is nothing to send."""

    __slots__ = ("throttle_s",)

    def __init__(self, parts: Sequence[Part], throttle_s: float) -> None:
        super().__init__(parts)
        self.throttle_s = throttle_s


def send_bytes(sock: socket.socket, data: bytes | bytearray | memoryview, flags: int = 0) -> None:
    """Write all of ``data``. (gevent's ``sendall`` asks the kernel for SO_SNDBUF on every call; this does not.)"""
    sent = sock.send(data, flags)
    if sent < len(data):
        view = memoryview(data)
        while sent < len(view):
            sent += sock.send(view[sent:], flags)


def write_parts(sock: socket.socket, parts: Response) -> None:
    """Write every part in order, adjacent byte strings in one send; closes the file regions, sent or not.
    Bytes before a file region go with MSG_MORE: the peer gets them in the region's first segment, not in a
    wake-up of their own (a follower's fetch answer: header and records in one segment)."""
    pending: list = []
    try:
        for part in parts:
            if isinstance(part, FileRegion):
                if pending:
                    more = _MORE if part.length and not isinstance(sock, SSLSocket) else 0
                    send_bytes(sock, b"".join(pending), more)
                    pending = []
                send_file_region(sock, part)
            else:
                pending.append(part)
        if pending:
            send_bytes(sock, pending[0] if len(pending) == 1 else b"".join(pending))
    finally:
        close_parts(parts)


def close_parts(parts: Response) -> None:
    """Close the file regions of a response that will not be sent (or was)."""
    for part in parts:
        if isinstance(part, FileRegion):
            part.close()


def send_file_region(sock: socket.socket, region: FileRegion) -> None:
    """``region`` from its file to the socket with sendfile, waiting on the gevent hub when the socket is full."""
    if isinstance(sock, SSLSocket):  # TLS encrypts in user space: no sendfile, the region read and written
        _copy_region(sock, region)
        return
    out_fd = sock.fileno()
    position, remaining = region.position, region.length
    while remaining > 0:
        try:
            sent = os.sendfile(out_fd, region.fd, position, remaining)
        except BlockingIOError:
            wait_write(out_fd)
            continue
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                wait_write(out_fd)
                continue
            raise
        if sent == 0:
            raise ConnectionError("file ended before the end of the region being sent")
        position += sent
        remaining -= sent


def _copy_region(sock: socket.socket, region: FileRegion) -> None:
    position, remaining = region.position, region.length
    while remaining > 0:
        chunk = os.pread(region.fd, min(remaining, COPY_CHUNK), position)
        if not chunk:
            raise ConnectionError("file ended before the end of the region being sent")
        send_bytes(sock, chunk)
        position += len(chunk)
        remaining -= len(chunk)
