"""BlockingChannel: one connection to one broker, blocking the calling greenlet, for any protocol line.

The codec frames requests and reads responses::

    codec.encode_request(request, correlation_id) -> bytes      # the whole frame, int32 size included
    codec.expects_response(request) -> bool                     # False: 0.7 PRODUCE, 0.8 acks=0
    codec.decode_response(request, correlation_id, frame)       # frame = the bytes after the int32 size
    codec.throttled_until                                       # optional: no send before (monotonic s)

Responses come back in request order, so ``receive`` pairs each with the oldest request still waiting for one
(0.7 has no correlation ids; a 0.8 codec checks the id it is given). ``request`` sends and receives and, after a
socket error, reconnects and sends again (``retries`` times); ``connect`` retries with back-off for
``connect_retry_s``. ``secure(sock, host) -> (sock, session lifetime s | None)``, when given, runs on each new
connection before it is used (TLS, SASL: ``network.channel_builders``); a connection is replaced by a new one
(authenticated again) at the first send after 85% of its SASL session's lifetime (KIP-368). gevent sockets
without monkey-patching: a plain thread just blocks on them.
"""

from __future__ import annotations

import logging
import select
import socket as pysocket
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import gevent
from gevent import socket

from zkafka.network.framing import FrameReader
from zkafka.network.send import send_bytes

log = logging.getLogger(__name__)

MAX_CONNECT_BACKOFF_S = 60.0
MAX_RESPONSE_SIZE = 0x7FFFFFFF
REAUTHENTICATE_AT = 0.85  # of a SASL session's lifetime, as Kafka's clients (85-95%)
UNRESOLVED_TTL_S = 1.0  # how long a name that was not found is not looked up again
_unresolved: dict[str, float] = {}  # host -> until when connecting to it fails at once (not found)


class ClientCodec(Protocol):
    """A protocol line's client framing (see the module docstring)."""

    def encode_request(self, request: Any, correlation_id: int) -> bytes: ...

    def expects_response(self, request: Any) -> bool: ...

    def decode_response(self, request: Any, correlation_id: int, frame: memoryview) -> Any: ...


class ChannelClosedError(ConnectionError):
    """The channel was closed for good; it does not connect again."""


class BlockingChannel:
    """A blocking (greenlet-blocking) connection to ``host:port``, opened lazily and re-opened after errors."""

    def __init__(
        self,
        host: str,
        port: int,
        codec: ClientCodec,
        *,
        socket_timeout: float | None = 30.0,
        connect_timeout: float | None = None,
        connect_retry_s: float = 0.0,
        send_buffer: int | None = None,
        receive_buffer: int | None = None,
        read_buffer: int = 64 * 1024,
        secure: Callable[[socket.socket, str], tuple[socket.socket, float | None]] | None = None,
    ) -> None:
        self.host = host
        self.secure = secure
        self.port = port
        self.codec = codec
        self.socket_timeout = socket_timeout
        self.connect_timeout = socket_timeout if connect_timeout is None else connect_timeout
        self.connect_retry_s = connect_retry_s
        self.send_buffer = send_buffer
        self.receive_buffer = receive_buffer
        self.read_buffer = read_buffer
        self.sock: socket.socket | None = None
        self._reader: FrameReader | None = None
        self._in_flight: deque = deque()
        self._correlation_id = 0
        self._session_end: float | None = None  # when to connect again, authenticated anew
        self._closed = False
        self._busy = 0  # operations in progress: a close waits for them to end before closing the socket
        self._operation_scope = _Operation(self)

    def __repr__(self) -> str:
        return f"BlockingChannel({self.host}:{self.port})"

    @property
    def connected(self) -> bool:
        return self.sock is not None

    def connect(self) -> None:
        """Open the connection if it is not open, retrying with back-off (1 ms, x10 per try, at most 60 s) for
        ``connect_retry_s``; the last error is raised when that time is up."""
        if self.sock is not None:
            return
        with self._operation():
            sock = self._open()
            if self._closed:
                sock.close()
                raise ChannelClosedError(f"{self} is closed")
            sock.settimeout(self.socket_timeout)
            # 0.7 left Nagle on; a produce request (no response to wait for) would then sit behind the ACK of the
            # previous one, up to the peer's delayed-ACK time. Measured: at most 5% throughput at batch 1.
            sock.setsockopt(pysocket.IPPROTO_TCP, pysocket.TCP_NODELAY, 1)
            sock.setsockopt(pysocket.SOL_SOCKET, pysocket.SO_KEEPALIVE, 1)
            if self.send_buffer:
                sock.setsockopt(pysocket.SOL_SOCKET, pysocket.SO_SNDBUF, self.send_buffer)
            if self.receive_buffer:
                sock.setsockopt(pysocket.SOL_SOCKET, pysocket.SO_RCVBUF, self.receive_buffer)
            if self.secure is not None:
                try:
                    sock, lifetime_s = self.secure(sock, self.host)
                except BaseException:
                    sock.close()
                    raise
                if lifetime_s:
                    self._session_end = time.monotonic() + lifetime_s * REAUTHENTICATE_AT
            self.sock = sock
            # a broker's answer gets the buffer its header announces, received into in place (as Kafka's clients)
            self._reader = FrameReader(sock, MAX_RESPONSE_SIZE, self.read_buffer, allocate_announced=True)
        log.debug("%s: connected", self)

    def _open(self) -> socket.socket:
        begin = time.monotonic()
        backoff = 0.001
        while True:
            if self._closed:
                raise ChannelClosedError(f"{self} is closed")
            try:
                return self._connect_once()
            except OSError as exc:
                if time.monotonic() - begin + backoff > self.connect_retry_s:
                    raise _naming(exc, f"{self.host}:{self.port}") from None
                log.debug("%s: connect failed (%s), next attempt in %.3f s", self, exc, backoff)
                gevent.sleep(backoff)
                backoff = min(backoff * 10, MAX_CONNECT_BACKOFF_S)

    def _connect_once(self) -> socket.socket:
        """One attempt, within ``connect_timeout`` from the name's lookup on: a resolver waiting on a DNS server
        that does not answer is bounded like a connect to a host that does not. A name that was not found is
        not looked up again for ``UNRESOLVED_TTL_S`` (the attempt fails at once, as librdkafka keeps a lookup's
        result for broker.address.ttl): clients retrying a killed broker every 100 ms would otherwise send a
        lookup storm for its name, and Docker's DNS leaves some of those queries unanswered for 5 s."""
        failed_until = _unresolved.get(self.host)
        if failed_until is not None and time.monotonic() < failed_until:
            why = f"Name or service not known (looked up less than {UNRESOLVED_TTL_S:g} s ago)"
            raise pysocket.gaierror(pysocket.EAI_NONAME, why)
        deadline = gevent.Timeout(self.connect_timeout)
        deadline.start()
        try:
            return socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except gevent.Timeout as exc:
            if exc is not deadline:
                raise
            raise TimeoutError(f"timed out after {self.connect_timeout:g} s") from None
        except pysocket.gaierror as exc:
            if exc.errno in (pysocket.EAI_NONAME, getattr(pysocket, "EAI_NODATA", pysocket.EAI_NONAME)):
                _unresolved[self.host] = time.monotonic() + UNRESOLVED_TTL_S
            raise
        finally:
            deadline.close()

    def _operation(self) -> _Operation:
        return self._operation_scope

    def disconnect(self) -> None:
        """Close the connection (the next send opens a new one); requests waiting for a response are dropped."""
        sock, self.sock, self._reader = self.sock, None, None
        self._in_flight.clear()
        self._session_end = None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def close(self) -> None:
        """Close for good: later sends raise ChannelClosedError, a connect in progress gives up at its next try,
        and a send or receive in progress finishes first."""
        self._closed = True
        if not self._busy:
            self.disconnect()

    def send(self, request: Any) -> None:
        """Write one request (connecting first if needed); any socket error closes the connection and is raised."""
        if self._closed:
            raise ChannelClosedError(f"{self} is closed")
        hold = getattr(self.codec, "throttled_until", 0.0) - time.monotonic()
        if hold > 0:  # the broker muted the connection for a throttled answer
            gevent.sleep(hold)
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        frame = self.codec.encode_request(request, self._correlation_id)
        if self._session_end is not None and time.monotonic() >= self._session_end and not self._in_flight:
            self.disconnect()  # the broker would close it at its session's end
        with self._operation():
            self.connect()
            try:
                send_bytes(self.sock, frame)
            except BaseException:
                self.disconnect()
                raise
        if self.codec.expects_response(request):
            self._in_flight.append((request, self._correlation_id))

    def receive(self) -> Any:
        """The response to the oldest request sent and not yet answered."""
        if not self._in_flight or self._reader is None:
            raise RuntimeError(f"{self}: no request is waiting for a response")
        with self._operation():
            try:
                frame = self._reader.next_frame(keep=True)
                if frame is None:
                    raise ConnectionError(f"{self}: the broker closed the connection")
                request, correlation_id = self._in_flight.popleft()
                return self.codec.decode_response(request, correlation_id, frame)
            except BaseException:
                self.disconnect()
                raise

    def request(self, request: Any, retries: int = 1) -> Any:
        """Send ``request`` and return its response (None if it has none). After a socket error (timeouts
        included) the request is sent again on a new connection, at most ``retries`` times."""
        if self._in_flight:
            raise RuntimeError(f"{self}: {len(self._in_flight)} earlier requests still wait for responses")
        for attempt in range(retries + 1):
            try:
                self.send(request)
                return self.receive() if self.codec.expects_response(request) else None
            except OSError as exc:
                if attempt == retries or self._closed:
                    raise
                log.info("%s: reconnecting after %s", self, exc)
                self.disconnect()
        raise AssertionError("unreachable")

    def peer_closed(self) -> bool:
        """True if the open connection was closed (or reset) by the broker or has bytes nobody asked for."""
        if self.sock is None or self._in_flight:
            return False
        try:
            readable, _, _ = select.select([self.sock.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)


class _Operation:
    """``with channel._operation():`` counts an operation in progress; the last one to end after a ``close``
    closes the connection. (A class, not a generator: entered twice per request.)"""

    __slots__ = ("channel",)

    def __init__(self, channel: BlockingChannel) -> None:
        self.channel = channel

    def __enter__(self) -> None:
        self.channel._busy += 1

    def __exit__(self, *exc: object) -> None:
        channel = self.channel
        channel._busy -= 1
        if channel._closed and not channel._busy:
            channel.disconnect()


def _naming(exc: OSError, address: str) -> OSError:
    """``exc`` again, of the same type, with the address it was connecting to in its message."""
    text = exc.strerror or str(exc) or type(exc).__name__
    try:
        named = (
            type(exc)(exc.errno, f"{text} (connecting to {address})")
            if exc.errno
            else type(exc)(f"{text} (connecting to {address})")
        )
    except Exception:  # an OSError subclass with another constructor
        return exc
    return named
