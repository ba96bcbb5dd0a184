"""The broker's network layer: a gevent StreamServer that frames requests and writes responses.

Request frame ``int32 size | int16 type | body``. The size is checked before any of the body is read or
allocated; a bad frame or a request that fails closes that one connection and nothing else. Responses are
a list of byte strings and file regions; file regions go from the segment file to the socket with
``os.sendfile``, waiting on the gevent hub whenever the socket would block.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from time import monotonic

import gevent
from gevent.server import StreamServer
from gevent.socket import wait_write

from zkafka.errors import InvalidRequestError

log = logging.getLogger(__name__)

_INT32 = struct.Struct(">i")
YIELD_INTERVAL_S = 0.002
_INT16 = struct.Struct(">h")


@dataclass(slots=True)
class FileRegion:
    """``length`` bytes of an open file from ``position``, sent with sendfile; owns (and closes) ``fd``."""

    fd: int
    position: int
    length: int

    def close(self) -> None:
        os.close(self.fd)


Response = Sequence[bytes | FileRegion]
RequestHandler = Callable[[int, memoryview], "Response | None"]


class _Connection:
    __slots__ = ("sock", "address", "busy", "greenlet")

    def __init__(self, sock: socket.socket, address: tuple) -> None:
        self.sock = sock
        self.address = address
        self.busy = False
        self.greenlet = gevent.getcurrent()

    def mark_busy(self) -> None:
        self.busy = True


class SocketServer:
    """Accepts connections and serves each one request at a time, in request order."""

    def __init__(
        self,
        host: str,
        port: int,
        handler: RequestHandler,
        *,
        max_request_size: int = 104857600,
        send_buffer: int = 102400,
        receive_buffer: int = 102400,
    ) -> None:
        self.handler = handler
        self.max_request_size = max_request_size
        self.send_buffer = send_buffer
        self.receive_buffer = receive_buffer
        self._server = StreamServer((host, port), self._serve_connection)
        self._connections: set[_Connection] = set()
        self._stopping = False

    @property
    def port(self) -> int:
        return self._server.server_port

    def start(self) -> None:
        self._server.start()
        log.info("socket server listening on %s:%d", *self._server.address[:2])

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let in-flight requests finish (up to ``timeout``), then close every connection."""
        self._stopping = True
        self._server.close()
        for conn in list(self._connections):
            if not conn.busy:
                conn.greenlet.kill(block=False)
        deadline = gevent.Timeout(timeout)
        deadline.start()
        try:
            while any(c.busy for c in self._connections):
                gevent.sleep(0.01)
        except gevent.Timeout:
            log.warning("requests still in flight after %.1fs; closing their connections", timeout)
        finally:
            deadline.close()
        for conn in list(self._connections):
            conn.greenlet.kill(block=False)

    def _serve_connection(self, sock: socket.socket, address: tuple) -> None:
        conn = _Connection(sock, address)
        self._connections.add(conn)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer)
            reader = FrameReader(sock, self.max_request_size)
            last_yield = monotonic()
            while not self._stopping:
                body = reader.next_frame(on_header=conn.mark_busy)
                if body is None:
                    return  # the client closed between requests
                (request_type,) = _INT16.unpack_from(body)
                response = self.handler(request_type, body[2:])
                if response:
                    _write_response(sock, response)
                conn.busy = False
                # A client whose requests are always waiting never blocks in recv: let the others run.
                if monotonic() - last_yield > YIELD_INTERVAL_S:
                    gevent.sleep(0)
                    last_yield = monotonic()
        except gevent.GreenletExit:
            pass
        except (ConnectionError, TimeoutError) as exc:
            log.debug("connection from %s ended: %s", address, exc)
        except Exception as exc:
            log.warning("closing connection from %s:%s: %s", address[0], address[1], exc)
        finally:
            conn.busy = False
            self._connections.discard(conn)
            sock.close()


class FrameReader:
    """Reads size-prefixed request frames, taking as many bytes per recv as the socket has.

    Small frames are cut from one reusable buffer (the view returned is valid until the next call); a
    frame larger than the buffer gets a buffer of its own. The size is checked before the body is read.
    """

    def __init__(self, sock: socket.socket, max_request_size: int, buffer_size: int = 64 * 1024) -> None:
        self.sock = sock
        self.max_request_size = max_request_size
        self.buf = bytearray(buffer_size)
        self.view = memoryview(self.buf)
        self.start = 0
        self.end = 0

    @property
    def buffered(self) -> int:
        return self.end - self.start

    def next_frame(self, on_header: Callable[[], None] | None = None) -> memoryview | None:
        """The body (type and request) of the next frame; None on a clean EOF between frames."""
        if not self._fill(4):
            if self.buffered:
                raise ConnectionError(f"connection closed inside a request header ({self.buffered} bytes)")
            return None
        (size,) = _INT32.unpack_from(self.buf, self.start)
        if size < 2 or size > self.max_request_size:
            raise InvalidRequestError(f"request size {size} is not in [2, {self.max_request_size}]")
        if on_header is not None:
            on_header()
        self.start += 4
        if size <= len(self.buf):
            if not self._fill(size):
                raise InvalidRequestError(f"connection closed inside a request of {size} bytes")
            body = self.view[self.start : self.start + size]
            self.start += size
            return body
        body = bytearray(size)
        have = self.buffered
        body[:have] = self.view[self.start : self.end]
        self.start = self.end = 0
        if not _recv_exact(self.sock, memoryview(body)[have:]):
            raise InvalidRequestError(f"connection closed inside a request of {size} bytes")
        return memoryview(body)

    def _fill(self, wanted: int) -> bool:
        """Make ``wanted`` bytes available from ``start``; False on EOF first."""
        if self.buffered >= wanted:
            return True
        if self.start + wanted > len(self.buf):  # move the partial frame to the front
            have = self.buffered
            self.buf[:have] = self.buf[self.start : self.end]
            self.start, self.end = 0, have
        while self.buffered < wanted:
            n = self.sock.recv_into(self.view[self.end :])
            if n == 0:
                return False
            self.end += n
        return True


def _recv_exact(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from the socket; False on a clean EOF before the first byte, error on EOF inside."""
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            if got == 0:
                return False
            raise ConnectionError(f"connection closed after {got} of {len(view)} bytes")
        got += n
    return True


def _write_response(sock: socket.socket, parts: Response) -> None:
    pending: list[bytes] = []
    try:
        for part in parts:
            if isinstance(part, FileRegion):
                if pending:
                    sock.sendall(b"".join(pending))
                    pending = []
                _send_file_region(sock, part)
            else:
                pending.append(part)
        if pending:
            sock.sendall(b"".join(pending))
    finally:
        for part in parts:
            if isinstance(part, FileRegion):
                part.close()


def _send_file_region(sock: socket.socket, region: FileRegion) -> None:
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
            raise ConnectionError("segment file ended before the fetched region")
        position += sent
        remaining -= sent
