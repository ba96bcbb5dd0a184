"""SyncProducer: writes PRODUCE and MULTIPRODUCE requests to one broker over one BlockingChannel.

Produce requests get no response in 0.7, so a send returns once the request is in the socket; a broker
that dropped the connection shows up as a failed write (ProducerSendError) on a later send. The socket is
opened lazily, with exponential backoff for at most ``connect.timeout.ms``, and replaced after
``reconnect.interval`` sends or ``reconnect.time.interval.ms`` (which spreads the load of long-lived
producers over the brokers, as in 0.7).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import gevent.lock

from zkafka.network.client import BlockingChannel
from zkafka.producer.errors import ProducerClosedError, ProducerConnectionError, ProducerSendError
from zkafka.protocol.v07 import CODEC, MultiProducerRequest, ProducerRequest
from zkafka.records.entries import check_sizes
from zkafka.records.format07 import FORMAT07

log = logging.getLogger(__name__)

# A connection idle this long is checked for a close by the broker before it is written to again.
IDLE_CHECK_S = 0.05


class SyncProducer:
    """A blocking (greenlet-blocking) producer for one broker; safe to share between greenlets of a thread."""

    def __init__(self, config: Mapping[str, Any], host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.buffer_size: int = config["buffer.size"]
        self.connect_timeout_ms: int = config["connect.timeout.ms"]
        self.socket_timeout_ms: int = config["socket.timeout.ms"]
        self.reconnect_interval: int = config["reconnect.interval"]
        self.reconnect_time_interval_ms: int = config["reconnect.time.interval.ms"]
        self.max_message_size: int = config["max.message.size"]
        self.channel = BlockingChannel(
            host,
            port,
            CODEC,
            socket_timeout=self.socket_timeout_ms / 1000.0 if self.socket_timeout_ms > 0 else None,
            connect_timeout=max(self.connect_timeout_ms, 1) / 1000.0,
            connect_retry_s=self.connect_timeout_ms / 1000.0,
            send_buffer=self.buffer_size,
        )
        self._lock = gevent.lock.Semaphore()
        self._sent_on_connection = 0
        self._connected_at = 0.0
        self._last_send = 0.0
        self._closed = False
        # 0.7 starts each producer's reconnect clock at a random point so that producers started together
        # do not all reconnect at the same moment.
        self._first_reconnect_shift = (
            random.random() * self.reconnect_time_interval_ms / 1000.0
            if self.reconnect_time_interval_ms >= 0
            else 0.0
        )

    def __repr__(self) -> str:
        return f"SyncProducer({self.host}:{self.port})"

    # -- sending ----------------------------------------------------------------------------------------

    def send(self, topic: str, partition: int, message_set: bytes) -> None:
        """Send one message set as a PRODUCE request."""
        self.verify_message_size(message_set)
        self._send(ProducerRequest(topic, partition, message_set))

    def multi_send(self, requests: Sequence[ProducerRequest]) -> None:
        """Send several (topic, partition, message set) parts in one MULTIPRODUCE request."""
        for request in requests:
            self.verify_message_size(request.messages)
        self._send(MultiProducerRequest(tuple(requests)))

    def send_requests(self, requests: Sequence[ProducerRequest]) -> None:
        """One request as PRODUCE, several as one MULTIPRODUCE (what the sync Producer does per broker)."""
        if len(requests) == 1:
            request = requests[0]
            self.send(request.topic, request.partition, request.messages)
        elif requests:
            self.multi_send(requests)

    def verify_message_size(self, message_set: bytes) -> None:
        """MessageSizeTooLargeError if a top-level message payload exceeds ``max.message.size``.

        Only lengths and magic bytes are read, and only of sets long enough to hold such a payload; a
        malformed set is not ours to judge (the broker rejects it).
        """
        check_sizes(message_set, FORMAT07, self.max_message_size)

    def _send(self, request: ProducerRequest | MultiProducerRequest) -> None:
        with self._lock:
            if self._closed:
                raise ProducerClosedError(f"{self} is closed")
            channel = self.channel
            now = time.monotonic()
            if channel.connected and now - self._last_send > IDLE_CHECK_S and channel.peer_closed():
                log.info("%s: the broker closed the connection; reconnecting", self)
                channel.disconnect()
            if not channel.connected:
                self._connect()
                now = time.monotonic()
            try:
                channel.send(request)
            except OSError as exc:
                raise ProducerSendError(f"{self}: sending {type(request).__name__} failed: {exc}") from exc
            self._last_send = now
            self._sent_on_connection += 1
            if self._sent_on_connection >= self.reconnect_interval or (
                self.reconnect_time_interval_ms >= 0
                and now - self._connected_at >= self.reconnect_time_interval_ms / 1000.0
            ):
                log.debug("%s: reconnecting after %d sends", self, self._sent_on_connection)
                channel.disconnect()

    # -- connection --------------------------------------------------------------------------------------

    def _connect(self) -> None:
        """Connect, retrying with backoff for ``connect.timeout.ms``."""
        try:
            self.channel.connect()
        except OSError as exc:
            raise ProducerConnectionError(
                f"{self}: no connection within connect.timeout.ms={self.connect_timeout_ms}: {exc}"
            ) from exc
        self._sent_on_connection = 0
        self._connected_at = time.monotonic() - self._first_reconnect_shift
        self._first_reconnect_shift = 0.0

    @property
    def connected(self) -> bool:
        return self.channel.connected

    def close(self) -> None:
        """Close the connection; later sends raise ProducerClosedError."""
        self._closed = True
        self.channel.close()
