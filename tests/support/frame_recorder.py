"""A TCP server on the test's own gevent hub that decodes every request frame it gets with the broker's own
parser (``zkafka.protocol``) and records it with the number of its connection: the far end of producer tests.

Registered as a plugin by tests/conftest.py: the ``recorder`` fixture is in every test's scope.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from gevent.server import StreamServer

from zkafka.protocol.v07 import MultiProducerRequest, decode_request
from zkafka.records.format07 import ByteBufferMessageSet


class FrameRecorder:
    """Accepts connections and records ``(connection number, request type, decoded request)``."""

    def __init__(self, port: int = 0) -> None:
        self.frames: list[tuple[int, int, Any]] = []
        self.connections = 0
        self._server = StreamServer(("127.0.0.1", port), self._serve)
        self._server.start()
        self.port = self._server.server_port

    def _serve(self, sock: socket.socket, address: Any) -> None:
        self.connections += 1
        number = self.connections
        reader = sock.makefile("rb")
        while True:
            header = reader.read(4)
            if len(header) < 4:
                return
            (size,) = struct.unpack(">i", header)
            body = reader.read(size)
            (request_type,) = struct.unpack_from(">h", body)
            self.frames.append((number, request_type, decode_request(request_type, body[2:])))

    def messages(self) -> list[bytes]:
        """Every payload received, in order (produce parts of multiproduce requests included)."""
        out = []
        for _, _, request in self.frames:
            parts = request.produces if isinstance(request, MultiProducerRequest) else (request,)
            for part in parts:
                out.extend(m.payload for m, _ in ByteBufferMessageSet(bytes(part.messages)))
        return out

    def stop(self) -> None:
        self._server.stop(timeout=1)


@pytest.fixture
def recorder() -> Iterator[FrameRecorder]:
    """A started FrameRecorder, stopped after the test."""
    server = FrameRecorder()
    try:
        yield server
    finally:
        server.stop()
