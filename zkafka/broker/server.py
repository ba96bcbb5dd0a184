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

import gevent
from gevent.server import StreamServer
from gevent.socket import wait_write

from zkafka.errors import InvalidRequestError

log = logging.getLogger(__name__)

_INT32 = struct.Struct(">i")
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
            header = bytearray(6)
            while not self._stopping:
                if not _recv_exact(sock, memoryview(header)[:4]):
                    return  # the client closed between requests
                (size,) = _INT32.unpack_from(header)
                if size < 2 or size > self.max_request_size:
                    raise InvalidRequestError(f"request size {size} is not in [2, {self.max_request_size}]")
                conn.busy = True
                body = bytearray(size)
                if not _recv_exact(sock, memoryview(body)):
                    raise InvalidRequestError(f"connection closed inside a request of {size} bytes")
                (request_type,) = _INT16.unpack_from(body)
                response = self.handler(request_type, memoryview(body)[2:])
                if response:
                    _write_response(sock, response)
                conn.busy = False
                # A client with requests always waiting would never block in recv: let the others run.
                gevent.sleep(0)
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
