"""Test data for the Spark tests: raw PRODUCE requests, and the expected rows computed independently."""

from __future__ import annotations

from tests.integration.helpers import Producer
from zkafka.message import build_message_set
from zkafka.protocol.v07 import EARLIEST_TIME, ProducerRequest, encode_request
from zkafka.utils import wait_until


class RawProducer(Producer):
    """PRODUCE requests over one plain socket; each send waits until the broker shows the new log end."""

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


def collect_rows(df, columns: list[str]) -> list[tuple]:
    """The rows of a DataFrame as sorted tuples (binary as bytes: Spark 4.0 returns bytearray)."""
    return sorted(
        tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)
        for row in df.select(*columns).collect()
    )
