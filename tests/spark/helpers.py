"""Test data for the Spark tests: raw PRODUCE requests, and the expected rows computed independently."""

from __future__ import annotations

import socket
import struct

from zkafka.message import build_message_set
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME, OffsetRequest, ProducerRequest, encode_request
from zkafka.utils import wait_until


class RawProducer:
    """PRODUCE requests over one plain socket; each send waits until the broker shows the new log end."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawProducer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def offset(self, topic: str, partition: int, time: int = LATEST_TIME) -> int:
        self.sock.sendall(encode_request(OffsetRequest(topic, partition, time, 1)))
        size, error = struct.unpack(">ih", _recv(self.sock, 6))
        body = _recv(self.sock, size - 2)
        assert error == 0, error
        (count,) = struct.unpack_from(">i", body)
        return struct.unpack_from(">q", body, 4)[0] if count else 0

    def earliest(self, topic: str, partition: int) -> int:
        return self.offset(topic, partition, EARLIEST_TIME)

    def send(self, topic: str, partition: int, payloads: list[bytes], codec: int = 0) -> list[tuple]:
        """Append one message set; returns the expected rows ``(value, offset, nextOffset)``."""
        start = self.offset(topic, partition)
        data = build_message_set(payloads, codec)
        self.sock.sendall(encode_request(ProducerRequest(topic, partition, data)))
        end = start + len(data)
        wait_until(lambda: self.offset(topic, partition) == end, 10, message=f"{topic}-{partition} end {end}")
        return expected_rows(payloads, codec, start)


def expected_rows(payloads: list[bytes], codec: int, start: int) -> list[tuple]:
    """(value, offset, nextOffset) of the messages of one produced set, from the 0.7 layout rules."""
    if codec:
        end = start + len(build_message_set(payloads, codec))
        return [(p, start, start) for p in payloads[:-1]] + [(payloads[-1], start, end)]
    rows, pos = [], start
    for p in payloads:
        nxt = pos + 4 + 6 + len(p)
        rows.append((p, pos, nxt))
        pos = nxt
    return rows


def _recv(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return bytes(data)


def collect_rows(df, columns: list[str]) -> list[tuple]:
    """The rows of a DataFrame as sorted tuples (binary as bytes: Spark 4.0 returns bytearray)."""
    return sorted(
        tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)
        for row in df.select(*columns).collect()
    )
