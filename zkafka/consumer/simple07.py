"""SimpleConsumer: FETCH, MULTIFETCH and OFFSETS requests to one broker over one blocking channel."""

from __future__ import annotations

from collections.abc import Iterable

from zkafka.errors import error_for_code
from zkafka.network.client import BlockingChannel
from zkafka.protocol.v07 import CODEC, FetchRequest, MultiFetchRequest, OffsetRequest
from zkafka.records.format07 import ByteBufferMessageSet


class SimpleConsumer:
    """A connection to one broker for FETCH, MULTIFETCH and OFFSETS, reconnecting and retrying once."""

    def __init__(
        self, host: str, port: int, socket_timeout_ms: int = 30000, buffer_size: int = 64 * 1024
    ) -> None:
        self.host = host
        self.port = port
        self.channel = BlockingChannel(
            host,
            port,
            CODEC,
            socket_timeout=socket_timeout_ms / 1000.0 if socket_timeout_ms > 0 else None,
            receive_buffer=buffer_size,
        )

    def connect(self) -> None:
        self.channel.connect()

    def close(self) -> None:
        self.channel.disconnect()

    def __enter__(self) -> SimpleConsumer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fetch(self, topic: str, partition: int, offset: int, max_size: int) -> ByteBufferMessageSet:
        """Fetch from one partition; a broker error code raises its exception."""
        error, data = self.channel.request(FetchRequest(topic, partition, offset, max_size))
        messages = ByteBufferMessageSet(data, offset, error)
        messages.check_error()
        return messages

    def multifetch(
        self, fetches: Iterable[FetchRequest | tuple[str, int, int, int]]
    ) -> list[ByteBufferMessageSet]:
        """One MULTIFETCH; per request a message set carrying its own error code (raised when iterated)."""
        requests = [f if isinstance(f, FetchRequest) else FetchRequest(*f) for f in fetches]
        error, parts = self.channel.request(MultiFetchRequest(requests))
        if error:
            raise error_for_code(error)(f"MULTIFETCH failed with error code {error}")
        return [
            ByteBufferMessageSet(data, request.offset, part_error)
            for request, (part_error, data) in zip(requests, parts, strict=True)
        ]

    def get_offsets_before(self, topic: str, partition: int, time: int, max_offsets: int) -> list[int]:
        """Offsets of segment starts before ``time`` (-1 latest, -2 earliest), newest first."""
        error, offsets = self.channel.request(OffsetRequest(topic, partition, time, max_offsets))
        if error:
            raise error_for_code(error)(f"OFFSETS {topic}-{partition} failed with error code {error}")
        return offsets
