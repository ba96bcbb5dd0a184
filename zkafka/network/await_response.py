"""A TLS connection's wait for a parked answer: the socket is watched meanwhile, so that a client that goes
away cancels its waiting request (a plaintext connection reads on instead: ``server``'s writer)."""

from __future__ import annotations

import os
import socket

import gevent
from gevent.event import AsyncResult
from gevent.socket import wait_read
from gevent.ssl import SSLSocket

from zkafka.network.send import Response, close_parts


class ConnectionClosed(Exception):
    """The client closed its connection while its request was waiting."""


def await_response(sock: socket.socket, pending: AsyncResult) -> Response | None:
    """What ``pending`` is set to; ConnectionClosed (after cancelling it) if the client goes away first."""
    if pending.ready():
        return pending.get()
    watcher = gevent.spawn(closed_by_peer, sock)
    done = False
    try:
        gevent.wait([pending, watcher], count=1)
        if not pending.ready() and watcher.value:
            raise ConnectionClosed("closed while its request was waiting")
        # Ready, or the client sent more (a pipelined request): the close cannot be seen behind it, so wait.
        response = pending.get()
        done = True
        return response
    finally:
        watcher.kill()
        if not done:
            cancel = getattr(pending, "cancel", None)
            if cancel is not None:
                cancel()
            if pending.ready() and pending.successful():
                close_parts(pending.value or ())


def closed_by_peer(sock: socket.socket) -> bool:
    """Wait until the socket is readable: True for EOF or a reset, False for data (a TLS socket's TCP stream is
    peeked under it: TLS records are data)."""
    try:
        if not isinstance(sock, SSLSocket):
            return sock.recv(1, socket.MSG_PEEK) == b""
        wait_read(sock.fileno())
        with socket.socket(fileno=os.dup(sock.fileno())) as raw:
            return raw.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
