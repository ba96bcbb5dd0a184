"""SimpleConsumer: fetch and offsets requests to one broker over one blocking (gevent) socket."""

from __future__ import annotations

import logging
import socket as pysocket
import struct
from collections.abc import Iterable

from gevent import socket

from zkafka.errors import error_for_code
from zkafka.protocol.v07 import (
    FetchRequest,
    MultiFetchRequest,
    OffsetRequest,
    Request,
    decode_multifetch_response,
    decode_offsets_response,
    encode_request,
)
from zkafka.records.format07 import ByteBufferMessageSet

log = logging.getLogger(__name__)

_RESPONSE_HEADER = struct.Struct(">ih")


class SimpleConsumer:
    """A connection to one broker for FETCH, MULTIFETCH and OFFSETS, reconnecting and retrying once."""

    def __init__(
        self, host: str, port: int, socket_timeout_ms: int = 30000, buffer_size: int = 64 * 1024
    ) -> None:
        self.host = host
        self.port = port
        self.socket_timeout = socket_timeout_ms / 1000.0 if socket_timeout_ms > 0 else None
        self.buffer_size = buffer_size
        self._sock: socket.socket | None = None

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), timeout=self.socket_timeout)
        sock.setsockopt(pysocket.IPPROTO_TCP, pysocket.TCP_NODELAY, 1)
        sock.setsockopt(pysocket.SOL_SOCKET, pysocket.SO_KEEPALIVE, 1)
        sock.setsockopt(pysocket.SOL_SOCKET, pysocket.SO_RCVBUF, self.buffer_size)
        self._sock = sock

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self) -> SimpleConsumer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fetch(self, topic: str, partition: int, offset: int, max_size: int) -> ByteBufferMessageSet:
        """Fetch from one partition; a broker error code raises its exception."""
        error, body = self._send_request(FetchRequest(topic, partition, offset, max_size))
        messages = ByteBufferMessageSet(body, offset, error)
        messages.check_error()
        return messages

    def multifetch(
        self, fetches: Iterable[FetchRequest | tuple[str, int, int, int]]
    ) -> list[ByteBufferMessageSet]:
        """One MULTIFETCH; per request a message set carrying its own error code (raised when iterated)."""
        requests = tuple(f if isinstance(f, FetchRequest) else FetchRequest(*f) for f in fetches)
        error, body = self._send_request(MultiFetchRequest(requests))
        if error:
            raise error_for_code(error)(f"MULTIFETCH failed with error code {error}")
        parts = decode_multifetch_response(body)
        return [
            ByteBufferMessageSet(data, request.offset, part_error)
            for request, (part_error, data) in zip(requests, parts, strict=True)
        ]

    def get_offsets_before(self, topic: str, partition: int, time: int, max_offsets: int) -> list[int]:
        """Offsets of segment starts before ``time`` (-1 latest, -2 earliest), newest first."""
        error, body = self._send_request(OffsetRequest(topic, partition, time, max_offsets))
        if error:
            raise error_for_code(error)(f"OFFSETS {topic}-{partition} failed with error code {error}")
        return decode_offsets_response(body)

    def _send_request(self, request: Request) -> tuple[int, memoryview]:
        frame = encode_request(request)
        try:
            return self._round_trip(frame)
        except OSError as exc:
            log.info("reconnecting to %s:%d after %s", self.host, self.port, exc)
            self.close()
            return self._round_trip(frame)

    def _round_trip(self, frame: bytes) -> tuple[int, memoryview]:
        if self._sock is None:
            self.connect()
        sock = self._sock
        try:
            sock.sendall(frame)
            header = _recv_exact(sock, 6)
            size, error = _RESPONSE_HEADER.unpack(header)
            body = _recv_exact(sock, size - 2)
        except BaseException:
            self.close()
            raise
        return error, memoryview(body)


def _recv_exact(sock: socket.socket, size: int) -> bytearray:
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ConnectionError(f"broker closed the connection after {got} of {size} bytes")
        got += n
    return buf
