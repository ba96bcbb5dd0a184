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
