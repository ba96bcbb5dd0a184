"""Raw 0.7 wire clients for tests: one socket, hand-encoded requests, response frames read back by hand.

They depend only on the protocol codec, so a test of the broker does not go through the client code it
might be testing.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterable

from zkafka.network.send import FileRegion
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.v07 import (
    FetchRequest,
    OffsetRequest,
    ProducerRequest,
    decode_offsets_response,
    encode_request,
)
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set


def connect(port: int, host: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection((host, port), timeout=10)


def recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """(error code, body) of one response frame."""
    size, error = struct.unpack(">ih", recv_exact(sock, 6))
    return error, recv_exact(sock, size - 2)


def round_trip(sock: socket.socket, request) -> tuple[int, bytes]:
    sock.sendall(request if isinstance(request, bytes) else encode_request(request))
    return read_response(sock)


def is_closed_by_peer(sock: socket.socket, timeout: float = 5.0) -> bool:
    """True once the broker has closed this connection (recv sees EOF or a reset)."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def fetch(
    port: int, topic: str, partition: int, offset: int = 0, max_size: int = 1 << 20
) -> tuple[int, list]:
    """(error code, payloads) of one FETCH on a new connection."""
    with connect(port) as sock:
        error, body = round_trip(sock, FetchRequest(topic, partition, offset, max_size))
    return error, [m.payload for m, _ in iter_messages(body, offset)] if error == 0 else []


class Producer:
    """Raw PRODUCE requests over one socket; each batch is confirmed by an OFFSETS round trip after it."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.sock = connect(port, host)

    def send(self, topic: str, partition: int, payloads: Iterable[bytes], codec: int = 0) -> int:
        """Append the payloads (one message set) and return the partition's log end afterwards."""
        messages = build_message_set(list(payloads), codec)
        self.sock.sendall(encode_request(ProducerRequest(topic, partition, messages)))
        return self.log_end(topic, partition)

    def offset(self, topic: str, partition: int, time: int = LATEST_TIME) -> int:
        """The newest offset OFFSETS answers for ``time`` (-1 latest, -2 earliest); 0 when there is none."""
        error, body = round_trip(self.sock, OffsetRequest(topic, partition, time, 1))
        assert error == 0, f"OFFSETS error {error}"
        offsets = decode_offsets_response(body)
        return offsets[0] if offsets else 0

    def log_end(self, topic: str, partition: int) -> int:
        return self.offset(topic, partition)

    def earliest(self, topic: str, partition: int) -> int:
        return self.offset(topic, partition, EARLIEST_TIME)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def wire_bytes(parts) -> bytes:
    """The frame a response puts on the wire, file regions read the way sendfile would; closes them."""
    out = []
    for part in parts:
        if isinstance(part, FileRegion):
            out.append(os.pread(part.fd, part.length, part.position))
            part.close()
        else:
            out.append(bytes(part))
    return b"".join(out)
