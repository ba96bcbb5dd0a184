"""SocketServer framing, errors, file regions and waiting responses, over real loopback sockets (no ZooKeeper).

The codec under test is a toy: a frame decodes to its bytes, and the handler answers ``int32 size | bytes``
(an echo), nothing for ``none``, fails for ``fail``, and parks ``wait`` until the test sets its result.
"""

from __future__ import annotations

import os
import select
import socket as pysocket
import struct

import gevent
import pytest
from gevent import socket

from tests.support.wire import recv_exact
from zkafka.errors import InvalidRequestError
from zkafka.network.request_channel import SMALL_REQUEST_BYTES, RequestChannel
from zkafka.network.send import FileRegion
from zkafka.network.server import PendingResponse, SocketServer
from zkafka.utils import wait_until


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


class EchoCodec:
    def decode_request(self, frame: memoryview) -> bytes:
        if bytes(frame) == b"bad":
            raise InvalidRequestError("bad frame")
        return bytes(frame)


class Handler:
    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.pending: list[PendingResponse] = []
        self.cancelled: list[PendingResponse] = []
        self.region: FileRegion | None = None

    def __call__(self, request: bytes):
        self.requests.append(request)
        if request == b"none":
            return None
        if request == b"fail":
            raise RuntimeError("handler failed")
        if request == b"wait":
            pending = PendingResponse(on_cancel=lambda: self.cancelled.append(pending))
            self.pending.append(pending)
            return pending
        if request == b"file" and self.region is not None:
            return [struct.pack(">i", self.region.length), self.region]
        return [frame(request)]


@pytest.fixture
def handler() -> Handler:
    return Handler()


@pytest.fixture
def server(handler: Handler):
    server = SocketServer("127.0.0.1", 0, EchoCodec(), handler, max_request_size=300_000)
    server.start()
    try:
        yield server
    finally:
        server.stop(timeout=1)


def connect(server: SocketServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def read_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", recv_exact(sock, 4))
    return recv_exact(sock, size)


def nothing_to_read(sock: socket.socket) -> bool:
    """No answer waiting (poll, not select: in a long run the socket's descriptor can be past select's 1024)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return poller.poll(0) == []


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_pipelined_frames_small_and_large_are_answered_in_order(server, handler):
    big = os.urandom(200_000)  # larger than the reader's 64 KiB buffer
    with connect(server) as sock:
        sock.sendall(frame(b"one") + frame(big) + frame(b"") + frame(b"three"))
        assert [read_frame(sock) for _ in range(4)] == [b"one", big, b"", b"three"]
    assert handler.requests == [b"one", big, b"", b"three"]


def test_a_frame_arriving_byte_by_byte(server, handler):
    with connect(server) as sock:
        for byte in frame(b"slow"):
            sock.sendall(bytes([byte]))
            gevent.sleep(0)
        assert read_frame(sock) == b"slow"


def test_no_response_for_none(server, handler):
    with connect(server) as sock:
        sock.sendall(frame(b"none") + frame(b"next"))
        assert read_frame(sock) == b"next"
    assert handler.requests == [b"none", b"next"]


@pytest.mark.parametrize(
    "name, data",
    [
        ("oversized: checked before the body is sent", struct.pack(">i", 300_001)),
        ("2 GB size", struct.pack(">i", 0x7FFFFFFF)),
        ("negative size", struct.pack(">i", -1)),
        ("codec error", frame(b"bad")),
        ("handler error", frame(b"fail")),
    ],
)
def test_a_bad_frame_closes_only_its_connection(server, handler, name, data):
    with connect(server) as good, connect(server) as bad:
        good.sendall(frame(b"before"))
        assert read_frame(good) == b"before"
        bad.sendall(data)
        assert closed_by_server(bad), name
        good.sendall(frame(b"after"))
        assert read_frame(good) == b"after"
        wait_until(lambda: server.connection_count == 1, message="the bad connection gone")
    handled = [b"fail"] if data == frame(b"fail") else []
    assert handler.requests == [b"before", *handled, b"after"]


def test_answers_held_for_a_pipelined_burst_are_written_before_a_bad_frame_closes(server, handler):
    with connect(server) as sock:
        sock.sendall(frame(b"a") + frame(b"b") + frame(b"c") + frame(b"bad"))
        assert [read_frame(sock) for _ in range(3)] == [b"a", b"b", b"c"]
        assert closed_by_server(sock)
    assert handler.requests == [b"a", b"b", b"c"]


@pytest.mark.parametrize(
    "data", [b"\x00\x00", frame(b"truncated")[:-3]], ids=["inside the size", "inside the body"]
)
def test_eof_inside_a_frame_drops_it(server, handler, data):
    with connect(server) as good:
        good.sendall(frame(b"x"))
        assert read_frame(good) == b"x"
        with connect(server) as cut:
            cut.sendall(data)
            cut.shutdown(pysocket.SHUT_WR)
            assert closed_by_server(cut)
        wait_until(lambda: server.connection_count == 1, message="the cut connection gone")
        good.sendall(frame(b"y"))
        assert read_frame(good) == b"y"
    assert handler.requests == [b"x", b"y"]


def test_file_regions_go_out_with_sendfile_and_are_closed(server, handler, tmp_path):
    path = tmp_path / "segment"
    path.write_bytes(b"0123456789" * 100_000)
    fd = os.open(path, os.O_RDONLY)
    handler.region = FileRegion(fd, 5, 999_990)
    with connect(server) as sock:
        sock.sendall(frame(b"file"))
        assert read_frame(sock) == path.read_bytes()[5:999_995]
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_waiting_request_is_answered_when_set_and_keeps_the_order(server, handler):
    with connect(server) as sock, connect(server) as other:
        sock.sendall(frame(b"wait") + frame(b"after") + frame(b"wait"))
        wait_until(lambda: len(handler.pending) == 2, message="both waiting requests parked")
        assert handler.requests == [b"wait", b"after", b"wait"]  # those behind a waiting request are handled
        other.sendall(frame(b"meanwhile"))  # other connections are served while they wait
        assert read_frame(other) == b"meanwhile"
        handler.pending[1].set([frame(b"second")])
        other.sendall(frame(b"again"))
        assert read_frame(other) == b"again"
        assert nothing_to_read(sock)  # answers go in request order: none before the first one's
        handler.pending[0].set([frame(b"first")])
        assert [read_frame(sock) for _ in range(3)] == [b"first", b"after", b"second"]
    assert handler.cancelled == []


def test_a_waiting_request_keeps_its_frame_while_the_next_ones_are_read():
    views: list[memoryview] = []

    def keep(view: memoryview):
        views.append(view)
        return PendingResponse() if len(views) == 1 else [frame(b"ok")]

    class ViewCodec:
        def decode_request(self, frame: memoryview) -> memoryview:
            return frame  # a view into the reader's buffer, as a produce request's message set is

    server = SocketServer("127.0.0.1", 0, ViewCodec(), keep)
    server.start()
    try:
        with connect(server) as sock:
            first = os.urandom(40_000)
            sock.sendall(frame(first) + frame(os.urandom(40_000)) + frame(os.urandom(40_000)))
            wait_until(lambda: len(views) == 3, message="the requests behind the waiting one read")
            assert bytes(views[0]) == first
    finally:
        server.stop(timeout=1)


def test_a_waiting_request_whose_client_goes_away_is_cancelled(server, handler):
    sock = connect(server)
    sock.sendall(frame(b"wait"))
    wait_until(lambda: handler.pending, message="the request parked")
    sock.close()
    wait_until(lambda: handler.cancelled == handler.pending, message="the request cancelled")
    wait_until(lambda: server.connection_count == 0, message="the connection gone")


def test_a_waiting_request_set_to_none_sends_nothing(server, handler):
    with connect(server) as sock:
        sock.sendall(frame(b"wait") + frame(b"next"))
        wait_until(lambda: handler.pending, message="the request parked")
        handler.pending[0].set(None)
        assert read_frame(sock) == b"next"


def test_stop_finishes_the_request_in_flight(server, handler):
    with connect(server) as sock:
        sock.sendall(frame(b"wait"))
        wait_until(lambda: handler.pending, message="the request parked")
        gevent.spawn_later(0.05, handler.pending[0].set, [frame(b"last")])
        server.stop(timeout=5)
        assert read_frame(sock) == b"last"
        assert closed_by_server(sock)


def test_pipelined_bursts_take_turns_one_request_each_answers_in_order(handler):
    """Kafka's processor reads one request a connection a poll: two connections pipelining bursts (small
    frames and frames above SMALL_REQUEST_BYTES) are handled alternately, a third's single request after
    at most one of each, and every connection's answers come back in its own order."""
    # Every burst fits the socket buffers: each connection's next request is always there to be read.
    no_slice = RequestChannel(slice_s=0)  # every request waits for its turn
    server = SocketServer(
        "127.0.0.1", 0, EchoCodec(), handler, receive_buffer=1 << 20, request_channel=no_slice
    )
    server.start()
    try:
        small = [b"s%03d" % i for i in range(100)]
        big = [b"b%03d" % i + bytes(SMALL_REQUEST_BYTES) for i in range(100)]
        with connect(server) as a, connect(server) as b, connect(server) as single:
            a.sendall(b"".join(frame(r) for r in small))
            b.sendall(b"".join(frame(r) for r in big))
            single.sendall(frame(b"single"))
            answers = [
                gevent.spawn(lambda s, n: [read_frame(s) for _ in range(n)], *c) for c in ((a, 100), (b, 100))
            ]
            assert read_frame(single) == b"single"
            assert [answer.get(timeout=10) for answer in answers] == [small, big]
    finally:
        server.stop(timeout=1)
    assert handler.requests.index(b"single") <= 2
    order = [r[:1] for r in handler.requests if r != b"single"]
    assert order[:200] == [order[0], order[1]] * 100 and {order[0], order[1]} == {b"s", b"b"}
    assert server.request_channel.waiting == 0
