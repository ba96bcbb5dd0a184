"""SimpleConsumer against a real broker: fetch, multifetch, offsets, error codes, reconnect, socket options."""

from __future__ import annotations

import socket
import time

import pytest

from tests.support.wire import Producer
from zkafka.consumer import SimpleConsumer
from zkafka.errors import InvalidMessageSizeError, InvalidPartitionError, OffsetOutOfRangeError
from zkafka.launch.zookeeper_server import free_port
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.protocol.v07 import FetchRequest
from zkafka.records.compression import GZIP

pytestmark = pytest.mark.integration


@pytest.fixture
def broker(start_broker):
    b = start_broker(0, zk=None)
    with Producer(b.port) as producer:
        yield b, producer


def test_fetch_iterates_with_the_0_7_offsets(broker):
    b, producer = broker
    first = producer.send("t", 0, [b"a", b"bb"])
    end = producer.send("t", 0, [b"c1", b"c2"], codec=GZIP)
    with SimpleConsumer("127.0.0.1", b.port) as consumer:
        messages = consumer.fetch("t", 0, 0, 1 << 20)
        assert [(m.payload, o) for m, o in messages] == [
            (b"a", 11),
            (b"bb", first),
            (b"c1", first),
            (b"c2", end),
        ]
        assert messages.valid_bytes == end
        assert [m.payload for m, _ in consumer.fetch("t", 0, first, 1 << 20)] == [b"c1", b"c2"]
        assert list(consumer.fetch("t", 0, end, 1 << 20)) == []  # at the log end: empty, no error


def test_a_short_fetch_drops_the_partial_trailing_message_and_a_too_short_one_raises(broker):
    b, producer = broker
    producer.send("t", 0, [b"x" * 100, b"y" * 100])
    with SimpleConsumer("127.0.0.1", b.port) as consumer:
        messages = consumer.fetch("t", 0, 0, 150)  # the first entry is 110 bytes
        assert [m.payload for m, _ in messages] == [b"x" * 100]
        assert messages.valid_bytes == 110
        with pytest.raises(InvalidMessageSizeError):
            list(consumer.fetch("t", 0, 0, 50))


def test_error_codes_become_exceptions(broker):
    b, producer = broker
    end = producer.send("t", 1, [b"a"])
    with SimpleConsumer("127.0.0.1", b.port) as consumer:
        with pytest.raises(OffsetOutOfRangeError):
            consumer.fetch("t", 1, end + 100, 1024)
        with pytest.raises(InvalidPartitionError):
            consumer.fetch("t", 99, 0, 1024)
        # the connection is still good after error answers
        assert [m.payload for m, _ in consumer.fetch("t", 1, 0, 1024)] == [b"a"]


def test_multifetch_returns_one_set_per_request_each_with_its_own_error(broker):
    b, producer = broker
    end0 = producer.send("t", 0, [b"zero"])
    producer.send("t", 2, [b"two-a", b"two-b"])
    requests = [
        FetchRequest("t", 0, 0, 1024),
        ("t", 2, 0, 1024),
        FetchRequest("t", 0, end0 + 50, 1024),
        FetchRequest("t", 7, 0, 1024),
        FetchRequest("absent", 0, 0, 1024),
    ]
    with SimpleConsumer("127.0.0.1", b.port) as consumer:
        sets = consumer.multifetch(requests)
    assert len(sets) == 5
    assert [m.payload for m, _ in sets[0]] == [b"zero"]
    assert [m.payload for m, _ in sets[1]] == [b"two-a", b"two-b"]
    assert sets[2].error_code == 1
    with pytest.raises(OffsetOutOfRangeError):
        list(sets[2])
    assert sets[3].error_code == 3
    with pytest.raises(InvalidPartitionError):
        sets[3].check_error()
    assert sets[4].error_code == 0 and list(sets[4]) == []


def test_get_offsets_before(broker):
    b, producer = broker
    end = producer.send("t", 3, [b"a", b"b"])
    with SimpleConsumer("127.0.0.1", b.port) as consumer:
        assert consumer.get_offsets_before("t", 3, EARLIEST_TIME, 1) == [0]
        assert consumer.get_offsets_before("t", 3, LATEST_TIME, 1) == [end]
        assert consumer.get_offsets_before("t", 3, int(time.time() * 1000) + 60000, 10) == [end, 0]


def test_reconnects_once_after_the_broker_restarted(start_broker):
    port = free_port()
    b = start_broker(0, zk=None, port=str(port))
    with Producer(port) as producer:
        producer.send("t", 0, [b"before"])
    consumer = SimpleConsumer("127.0.0.1", port)
    try:
        assert [m.payload for m, _ in consumer.fetch("t", 0, 0, 1024)] == [b"before"]
        b.stop()
        start_broker(0, zk=None, port=str(port))
        # the old connection is dead; the request is sent again on a new one
        assert [m.payload for m, _ in consumer.fetch("t", 0, 0, 1024)] == [b"before"]
    finally:
        consumer.close()


def test_socket_timeout_and_buffer_size():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)  # accepts connections (in the backlog) but never answers
    try:
        consumer = SimpleConsumer(
            "127.0.0.1", silent.getsockname()[1], socket_timeout_ms=300, buffer_size=256 * 1024
        )
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            consumer.fetch("t", 0, 0, 1024)
        elapsed = time.monotonic() - started
        assert elapsed >= 0.55  # one timeout, one reconnect and retry, a second timeout
        consumer.connect()
        assert consumer.channel.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) >= 256 * 1024
        consumer.close()
    finally:
        silent.close()
