"""The gevent handler's select: a socket ready now is answered without waiting, as select would answer."""

import socket

from zkafka.zk.client import _ready_now, gevent_handler


def test_select_answers_what_is_ready_now_and_waits_for_the_rest():
    a, b = socket.socketpair()
    try:
        assert _ready_now([a], []) is None  # nothing to read yet: gevent's select waits
        assert _ready_now([a], [b]) == ([], [b], [])
        b.sendall(b"x")
        assert _ready_now([a, a.fileno()], []) == ([a, a.fileno()], [], [])
        handler = gevent_handler()
        assert handler.select([a], [], [], 1.0) == ([a], [], [])
        a.recv(1)
        assert handler.select([a], [], [], 0.01)[0] == []  # timed out in gevent's select
        b.close()
        assert _ready_now([a], []) == ([a], [], [])  # the peer's close reads as ready, as with select
    finally:
        a.close()
        b.close()
