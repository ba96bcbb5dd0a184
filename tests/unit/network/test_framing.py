"""FrameReader on a socket pair: frames larger than its buffer arrive whole, whether their buffer grows with
what arrives (a server's) or is allocated at the announced size (a client's)."""

import socket
import struct
import threading

import pytest

from zkafka.network.framing import FrameReader


def _send(sock: socket.socket, data: bytes) -> threading.Thread:
    sender = threading.Thread(target=sock.sendall, args=(data,))
    sender.start()
    return sender


@pytest.mark.parametrize("allocate_announced", [False, True])
def test_a_frame_larger_than_the_buffer_arrives_whole_after_a_small_one(allocate_announced):
    reader_sock, writer = socket.socketpair()
    big = bytes(range(256)) * 1200  # 300 KB through a 4 KB buffer
    try:
        sender = _send(writer, struct.pack(">i", 3) + b"abc" + struct.pack(">i", len(big)) + big)
        reader = FrameReader(reader_sock, 1 << 20, 4096, allocate_announced)
        assert bytes(reader.next_frame()) == b"abc"
        assert bytes(reader.next_frame()) == big
        sender.join()
        writer.close()
        assert reader.next_frame() is None  # a clean EOF between frames
    finally:
        reader_sock.close()
        writer.close()


@pytest.mark.parametrize("allocate_announced", [False, True])
def test_a_frame_cut_short_names_what_arrived(allocate_announced):
    reader_sock, writer = socket.socketpair()
    try:
        writer.sendall(struct.pack(">i", 100 << 20) + b"x" * 10)  # 100 MB announced, 10 bytes sent
        writer.close()
        reader = FrameReader(reader_sock, 200 << 20, 4096, allocate_announced)
        with pytest.raises(ConnectionError, match="after 10 bytes of a 104857600-byte frame"):
            reader.next_frame()
    finally:
        reader_sock.close()


def test_has_frame_takes_what_the_socket_holds_without_waiting():
    from gevent import socket as gsocket

    reader_sock, writer = gsocket.socketpair()
    try:
        reader = FrameReader(reader_sock, 1 << 20, 4096)
        assert not reader.has_frame()  # nothing sent: no wait either
        writer.sendall(struct.pack(">i", 5) + b"ab")
        assert not reader.has_frame()  # a partial frame
        writer.sendall(b"cde" + struct.pack(">i", 1))
        assert reader.has_frame()
        assert bytes(reader.next_frame()) == b"abcde"
        assert not reader.has_frame()  # the next frame's size only
        writer.sendall(b"z")
        assert reader.has_frame() and bytes(reader.next_frame()) == b"z"
        writer.sendall(struct.pack(">i", 10_000))  # larger than the buffer: never whole in it
        assert not reader.has_frame()
    finally:
        reader_sock.close()
        writer.close()
