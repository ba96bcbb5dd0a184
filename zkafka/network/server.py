"""The broker's listener: a gevent StreamServer that reads frames, decodes them with the protocol's codec and writes
what the request handler answers.

The contract, for any protocol line::

    codec.decode_request(frame: memoryview) -> request      # frame = the bytes after the int32 size
    handler(request) -> parts | None | AsyncResult

``parts`` is a list of byte strings and ``FileRegion`` s (``network.send``), the whole response frame; None
means no response (0.7 PRODUCE, 0.8 acks=0). A handler that must wait (a fetch parked until data arrives)
returns a gevent ``AsyncResult`` and sets parts (or None) on it later; if the client goes away first the
request is dropped: ``cancel()`` is called on the result when it has one (``PendingResponse``). A malformed
frame (the codec raises) or a handler that fails closes that connection only. Views into a frame (a produce
request's message set) stay valid until its response is written.

Each connection's requests are handled one at a time in request order, each after waiting for its turn with
the other connections' (``network.request_channel``): a connection pipelining a burst of requests does not
hold the loop while the others wait. Responses go out strictly in request order. While a response waits (an
acks=-1 produce parked until its followers have it), the connection reads and handles the requests the client
pipelined behind it (at most ``MAX_WAITING_RESPONSES`` waiting), and one writer greenlet writes the answers in
order as they complete, those ready together in one write. A TLS connection waits for each answer instead,
watching its socket. An answer ready at once is held while the client's next request is already received and
may go at once, and the two answers leave in one write (one wake-up of the client, not two); holding more
would leave a client with few requests in flight waiting for a whole burst's answers.
"""

from __future__ import annotations

import logging
import socket
import ssl
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from time import monotonic
from typing import Any, NamedTuple, Protocol

import gevent
from gevent.event import AsyncResult, Event
from gevent.server import StreamServer
from gevent.ssl import SSLSocket

from zkafka.network.await_response import ConnectionClosed, await_response
from zkafka.network.connection_quotas import ConnectionQuotas
from zkafka.network.framing import FrameReader
from zkafka.network.request_channel import RequestChannel
from zkafka.network.send import Response, ThrottledResponse, close_parts, write_parts
from zkafka.network.ssl_factory import ssl_principal

log = logging.getLogger(__name__)

MAX_WAITING_RESPONSES = 16
MAX_HELD_RESPONSES = 2  # answers in one write at most: more drains a pipelining client (compare.py)
HANDSHAKE_TIMEOUT_S = 10.0


class RequestCodec(Protocol):
    """A protocol line's request framing: one decoded request from a frame, or InvalidRequestError. A codec
    may have ``holds_frame(request) -> bool``: False for a request that keeps no view into its frame (its
    frame's buffer is then reused while it waits); without it every request is taken to keep one."""

    def decode_request(self, frame: memoryview) -> Any: ...


RequestHandler = Callable[[Any], "Response | AsyncResult | None"]
# Told each request served and the seconds from its frame to its response written (the broker's metrics).
RequestObserver = Callable[[Any, float], None]

# The (host, port) of the client whose request the current greenlet is handling (None outside one).
client_address: ContextVar[tuple | None] = ContextVar("client_address", default=None)


class Session(NamedTuple):
    """Who is on a connection: the listener it came in on, that listener's security protocol, the principal."""

    listener: str
    security_protocol: str
    principal: str = "User:ANONYMOUS"


# The session of the connection whose request the current greenlet is handling (None outside one).
client_session: ContextVar[Session | None] = ContextVar("client_session", default=None)


def session_listener() -> str:
    """The name of the listener the current request came in on (PLAINTEXT outside one)."""
    session = client_session.get()
    return session.listener if session is not None else "PLAINTEXT"


class PendingResponse(AsyncResult):
    """A response a handler completes later with ``set(parts)`` (or ``set(None)``); ``on_cancel`` runs if the
    connection closes (or the server stops) before that."""

    def __init__(self, on_cancel: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.on_cancel = on_cancel

    def cancel(self) -> None:
        if not self.ready() and self.on_cancel is not None:
            self.on_cancel()


class SessionExpired(Exception):
    """A request other than a re-authentication arrived after the SASL session's lifetime (KIP-368): the
    connection closes, logged at INFO."""


class _Connection:
    __slots__ = (
        "sock", "address", "reading", "greenlet", "waiting", "writer", "writing", "more", "room", "muted_until",
        "held",
    )

    def __init__(self, sock: socket.socket, address: tuple) -> None:
        self.sock = sock
        self.address = address
        self.reading = False  # a request read and not yet handled
        self.greenlet = gevent.getcurrent()
        self.waiting: deque = deque()  # (request, started, response) the writer answers, in request order
        self.writer: gevent.Greenlet | None = None  # started by the first answer queued, lives as long
        self.writing = False  # the writer holds answers not yet written (or waits on the first queued)
        self.more = Event()  # set when an answer is queued for the writer
        self.room = Event()  # set by the writer when it takes answers and when it has none left
        self.muted_until = 0.0  # a client over its quota: no request handled before then (monotonic)
        self.held: list = []  # (request, started, response) answered and not yet written

    @property
    def busy(self) -> bool:
        return self.reading or self.writing or bool(self.waiting) or bool(self.held)

    def drain(self) -> None:
        """Wait until the writer has written every answer queued."""
        while self.waiting or self.writing:
            self.room.clear()
            self.room.wait()

    def mark_busy(self, size: int) -> None:
        self.reading = True

    def throttle(self, response: Any) -> None:
        """An answer carrying a throttle time mutes the channel for that long from its sending (KIP-219)."""
        if isinstance(response, ThrottledResponse):
            self.muted_until = max(self.muted_until, monotonic() + response.throttle_s)


class SocketServer:
    """Accepts connections and serves each one's requests in order (see the module docstring)."""

    def __init__(
        self,
        host: str,
        port: int,
        codec: RequestCodec,
        handler: RequestHandler,
        *,
        max_request_size: int = 104857600,
        send_buffer: int = 102400,
        receive_buffer: int = 102400,
        observer: RequestObserver | None = None,
        listener: str = "PLAINTEXT",
        security_protocol: str = "PLAINTEXT",
        ssl_context: Any = None,
        authenticator: Any = None,
        quotas: ConnectionQuotas | None = None,
        request_channel: RequestChannel | None = None,
    ) -> None:
        self.codec = codec
        self._holds_frame = getattr(codec, "holds_frame", None)
        self.listener = listener
        self.security_protocol = security_protocol
        self.ssl_context = ssl_context
        self.authenticator = authenticator  # a SASL listener's SaslServerAuthenticator
        self.quotas = quotas  # max.connections.per.ip (the 0.7 line has none)
        self.handler = handler
        self.observer = observer
        self.max_request_size = max_request_size
        self.send_buffer = send_buffer
        self.receive_buffer = receive_buffer
        self._server = StreamServer((host, port), self._serve_connection)
        self._connections: set[_Connection] = set()
        self._stopping = False
        self.request_channel = request_channel or RequestChannel()  # a broker's listeners share one

    @property
    def port(self) -> int:
        return self._server.server_port

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def start(self) -> None:
        self._server.start()
        log.info("%s listener on %s:%d", self.listener, *self._server.address[:2])

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
        self.request_channel.close()

    def _serve_connection(self, sock: socket.socket, address: tuple) -> None:
        if self.quotas is not None and not self.quotas.inc(address[0]):
            sock.close()
            return
        try:
            self._serve(sock, address)
        finally:
            if self.quotas is not None:
                self.quotas.dec(address[0])

    def _serve(self, sock: socket.socket, address: tuple) -> None:
        conn = _Connection(sock, address)
        self._connections.add(conn)
        client_address.set(address)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer)
            sock = conn.sock = self._secure(sock)
            reader = FrameReader(sock, self.max_request_size)
            auth, session_end = self.authenticator, None
            if auth is not None:
                principal = auth.authenticate(sock, reader)
                client_session.set(client_session.get()._replace(principal=principal))
                session_end = auth.session_end()  # KIP-368: None unless connections.max.reauth.ms is set
            decode, handle = self.codec.decode_request, self.handler
            take_turn = self.request_channel.take_turn
            pipelined = not isinstance(sock, SSLSocket)
            while not self._stopping:
                frame = reader.next_frame(on_header=conn.mark_busy)
                if frame is None:
                    return  # the client closed between requests
                if conn.muted_until > monotonic():
                    gevent.sleep(conn.muted_until - monotonic())
                started = monotonic()
                take_turn(len(frame))
                request = decode(frame)
                if session_end is not None:
                    drain = conn.drain if conn.writer is not None else None  # answers queued go first
                    renewed = auth.check_session(sock, reader, request, principal, session_end, drain)
                    if renewed is not None:  # re-authenticated on this connection
                        session_end, conn.reading = renewed, False
                        continue
                response = handle(request)
                waits = isinstance(response, AsyncResult) and not response.ready()
                if pipelined and (waits or conn.writing):
                    self._write_held(conn)
                    self._answer_later(conn, reader, request, started, response)
                else:
                    if isinstance(response, AsyncResult):
                        response = await_response(sock, response)
                    conn.held.append((request, started, response))
                    if not (session_end is None and self._may_hold(conn, reader, response)):
                        self._write_held(conn)
                conn.reading = False
        except gevent.GreenletExit:
            pass
        except (ConnectionError, TimeoutError, ConnectionClosed, ssl.SSLError) as exc:
            log.debug("connection from %s ended: %s", address, exc)
        except SessionExpired as exc:
            log.info("closing connection from %s:%s: %s", address[0], address[1], exc)
        except Exception as exc:
            self._write_held(conn, quietly=True)  # the answers to the requests before the bad one
            log.warning("closing connection from %s:%s: %s", address[0], address[1], exc)
        finally:
            conn.reading = False
            _drop_waiting(conn)
            self._connections.discard(conn)
            sock.close()

    def _may_hold(self, conn: _Connection, reader: FrameReader, response: Any) -> bool:
        """Whether the answers may wait for the next request's: this one has an answer (none, as with acks=0,
        costs no look at the socket), mutes no channel (KIP-219), fewer than ``MAX_HELD_RESPONSES`` wait, and
        the next request goes at once and is received (looked at last: it may read the socket)."""
        return (
            bool(response)
            and len(conn.held) < MAX_HELD_RESPONSES
            and not isinstance(response, ThrottledResponse)
            and self.request_channel.free()
            and reader.has_frame()
        )

    def _write_held(self, conn: _Connection, quietly: bool = False) -> None:
        """Write the answers held, in one write, and account for them."""
        held, conn.held = conn.held, []
        try:
            self._write(conn, held)
        except (OSError, ssl.SSLError):
            if not quietly:
                raise

    def _write(self, conn: _Connection, answered: list) -> None:
        """Write the ``(request, started, response)`` answers in one write, then account for them: the
        channel muted for a throttled one (KIP-219), each request's time observed."""
        parts = [part for _, _, response in answered for part in response or ()]
        if parts:
            write_parts(conn.sock, parts)
        observe = self.observer
        for request, started, response in answered:
            conn.throttle(response)
            if observe is not None:
                observe(request, monotonic() - started)

    def _answer_later(
        self, conn: _Connection, reader: FrameReader, request: Any, started: float, response: Any
    ) -> None:
        """Queue ``response`` for the connection's writer (started if need be) and read on: the frames read so
        far stay with their requests. Waits while ``MAX_WAITING_RESPONSES`` answers are queued."""
        if self._holds_frame is None or self._holds_frame(request):
            reader.detach()
        conn.waiting.append((request, started, response))
        conn.writing = True
        if conn.writer is None:
            conn.writer = gevent.spawn(self._write_answers, conn)
        else:
            conn.more.set()
        while len(conn.waiting) > MAX_WAITING_RESPONSES:
            conn.room.clear()
            conn.room.wait()

    def _write_answers(self, conn: _Connection) -> None:
        """The connection's writer: writes the queued answers in request order as they complete, every one
        ready at once in one write, then waits for more (one greenlet per connection, not one per answer); a
        failure ends the connection."""
        waiting, more = conn.waiting, conn.more
        try:
            while True:
                if not waiting:
                    conn.writing = False
                    conn.room.set()
                    more.clear()
                    more.wait()
                    continue
                done = []
                while waiting and (not done or _ready(waiting[0][2])):
                    request, started, response = waiting[0]
                    if isinstance(response, AsyncResult):
                        response = response.get()
                    waiting.popleft()
                    done.append((request, started, response))
                conn.room.set()
                self._write(conn, done)
        except Exception as exc:
            log.warning("closing connection from %s:%s: %s", conn.address[0], conn.address[1], exc)
            conn.greenlet.kill(block=False)
        finally:
            conn.writer = None
            conn.writing = False
            conn.room.set()

    def _secure(self, sock: socket.socket) -> socket.socket:
        """The TLS handshake on an SSL listener (bounded by a timeout); the connection's session set."""
        session = Session(self.listener, self.security_protocol)
        if self.ssl_context is not None:
            with gevent.Timeout(HANDSHAKE_TIMEOUT_S, TimeoutError("TLS handshake timed out")):
                sock = self.ssl_context.wrap_socket(sock, server_side=True)
            session = session._replace(principal=ssl_principal(sock))
        client_session.set(session)
        return sock


def _ready(response: Any) -> bool:
    return not isinstance(response, AsyncResult) or response.ready()


def _drop_waiting(conn: _Connection) -> None:
    """The connection ended: stop its writer, drop (cancel) the requests whose answers were still queued or
    held."""
    if conn.writer is not None:
        conn.writer.kill(block=False)
    held, conn.held = conn.held, []
    for _, _, response in held:
        close_parts(response or ())
    while conn.waiting:
        _, _, response = conn.waiting.popleft()
        if isinstance(response, AsyncResult):
            cancel = getattr(response, "cancel", None)
            if cancel is not None and not response.ready():
                cancel()
            response = response.value if response.ready() and response.successful() else None
        close_parts(response or ())
