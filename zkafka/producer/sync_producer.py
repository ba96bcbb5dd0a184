"""SyncProducer: writes PRODUCE and MULTIPRODUCE requests to one broker over one gevent socket.

Produce requests get no response in 0.7, so a send returns once the request is in the socket; a broker
that dropped the connection shows up as a failed write (ProducerSendError) on a later send. The socket is
opened lazily, with exponential backoff for at most ``connect.timeout.ms``, and replaced after
``reconnect.interval`` sends or ``reconnect.time.interval.ms`` (which spreads the load of long-lived
producers over the brokers, as in 0.7).
"""

from __future__ import annotations

import logging
import random
import select
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any

import gevent
import gevent.lock
import gevent.socket

from zkafka.producer.errors import ProducerClosedError, ProducerConnectionError, ProducerSendError
from zkafka.protocol.v07 import MultiProducerRequest, ProducerRequest, encode_request
from zkafka.records.entries import check_sizes
from zkafka.records.format07 import FORMAT07

log = logging.getLogger(__name__)

MAX_CONNECT_BACKOFF_MS = 60000
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
        self._sock: gevent.socket.socket | None = None
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
        self._write(encode_request(ProducerRequest(topic, partition, message_set)))

    def multi_send(self, requests: Sequence[ProducerRequest]) -> None:
        """Send several (topic, partition, message set) parts in one MULTIPRODUCE request."""
        for request in requests:
            self.verify_message_size(request.messages)
        self._write(encode_request(MultiProducerRequest(tuple(requests))))

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

    def _write(self, frame: bytes) -> None:
        with self._lock:
            if self._closed:
                raise ProducerClosedError(f"{self} is closed")
            sock = self._sock
            now = time.monotonic()
            if sock is not None and now - self._last_send > IDLE_CHECK_S and _peer_closed(sock):
                log.info("%s: the broker closed the connection; reconnecting", self)
                self._disconnect()
                sock = None
            if sock is None:
                sock = self._connect()
                now = time.monotonic()
            try:
                # gevent's sendall asks the kernel for SO_SNDBUF on every call; a send loop does not.
                sent = sock.send(frame)
                if sent < len(frame):
                    view = memoryview(frame)
                    while sent < len(frame):
                        sent += sock.send(view[sent:])
            except (OSError, gevent.socket.timeout) as exc:
                self._disconnect()
                raise ProducerSendError(f"{self}: sending {len(frame)} bytes failed: {exc}") from exc
            self._last_send = now
            self._sent_on_connection += 1
            if self._sent_on_connection >= self.reconnect_interval or (
                self.reconnect_time_interval_ms >= 0
                and now - self._connected_at >= self.reconnect_time_interval_ms / 1000.0
            ):
                log.debug("%s: reconnecting after %d sends", self, self._sent_on_connection)
                self._disconnect()

    # -- connection --------------------------------------------------------------------------------------

    def _connect(self) -> gevent.socket.socket:
        """Connect, retrying with backoff (1 ms, x10 per try, at most 60 s) for ``connect.timeout.ms``."""
        begin = time.monotonic()
        backoff_ms = 1
        while True:
            try:
                sock = gevent.socket.create_connection(
                    (self.host, self.port), timeout=max(self.connect_timeout_ms, 1) / 1000.0
                )
                break
            except OSError as exc:
                elapsed_ms = (time.monotonic() - begin) * 1000.0
                if self._closed or elapsed_ms + backoff_ms > self.connect_timeout_ms:
                    raise ProducerConnectionError(
                        f"{self}: no connection within connect.timeout.ms={self.connect_timeout_ms}: {exc}"
                    ) from exc
                log.debug("%s: connect failed (%s), next attempt in %d ms", self, exc, backoff_ms)
                gevent.sleep(backoff_ms / 1000.0)
                backoff_ms = min(backoff_ms * 10, MAX_CONNECT_BACKOFF_MS)
        sock.settimeout(self.socket_timeout_ms / 1000.0 if self.socket_timeout_ms > 0 else None)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.buffer_size)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        # 0.7 left Nagle on; with no response to wait for, a request would then sit behind the ACK of
        # the previous one (up to the peer's delayed-ACK time). Measured: at most 5% throughput at batch 1.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._sent_on_connection = 0
        self._connected_at = time.monotonic() - self._first_reconnect_shift
        self._first_reconnect_shift = 0.0
        log.debug("%s: connected", self)
        return sock

    def _disconnect(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def close(self) -> None:
        """Close the connection; later sends raise ProducerClosedError."""
        self._closed = True
        with self._lock:
            self._disconnect()


def _peer_closed(sock: gevent.socket.socket) -> bool:
    """True if the broker has closed (or reset) the connection: it never writes to a producer's socket."""
    try:
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)
