"""SyncProducer on the wire: frames, reconnects, size checks and errors, against a real listening socket
(the ``recorder`` fixture: a FrameRecorder from tests/support/frame_recorder.py)."""

from __future__ import annotations

import socket
import time

import gevent
import pytest
from gevent.server import StreamServer

from tests.support.frame_recorder import FrameRecorder
from zkafka.config07 import ProducerConfig
from zkafka.errors import MessageSizeTooLargeError
from zkafka.producer.errors import ProducerClosedError, ProducerConnectionError
from zkafka.producer.sync_producer07 import SyncProducer
from zkafka.protocol.v07 import MULTIPRODUCE, PRODUCE, ProducerRequest
from zkafka.records.compression import GZIP
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until as gwait


def config(**overrides: str) -> ProducerConfig:
    props = {"broker.list": "0:127.0.0.1:1"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return ProducerConfig(props)


def test_send_writes_one_produce_frame(recorder):
    producer = SyncProducer(config(), "127.0.0.1", recorder.port)
    message_set = build_message_set([b"hello", b"world"])
    producer.send("test", 3, message_set)
    gwait(lambda: recorder.frames)
    [(_, request_type, request)] = recorder.frames
    assert request_type == PRODUCE
    assert (request.topic, request.partition, bytes(request.messages)) == ("test", 3, message_set)
    producer.close()


def test_multi_send_writes_one_multiproduce_frame(recorder):
    producer = SyncProducer(config(), "127.0.0.1", recorder.port)
    requests = [
        ProducerRequest("a", 0, build_message_set([b"1"])),
        ProducerRequest("b", 1, build_message_set([b"2", b"3"], GZIP)),
    ]
    producer.send_requests(requests)
    gwait(lambda: recorder.frames)
    [(_, request_type, request)] = recorder.frames
    assert request_type == MULTIPRODUCE
    assert [(p.topic, p.partition) for p in request.produces] == [("a", 0), ("b", 1)]
    assert recorder.messages() == [b"1", b"2", b"3"]
    producer.close()


def test_reconnects_after_reconnect_interval_sends(recorder):
    producer = SyncProducer(config(reconnect_interval="3"), "127.0.0.1", recorder.port)
    for i in range(7):
        producer.send("t", 0, build_message_set([b"%d" % i]))
    gwait(lambda: len(recorder.frames) == 7)
    assert [number for number, _, _ in recorder.frames] == [1, 1, 1, 2, 2, 2, 3]
    assert recorder.messages() == [b"%d" % i for i in range(7)]
    producer.close()


def test_reconnects_after_reconnect_time_interval(recorder):
    producer = SyncProducer(config(reconnect_time_interval_ms="0"), "127.0.0.1", recorder.port)
    for i in range(3):
        producer.send("t", 0, build_message_set([b"%d" % i]))
    gwait(lambda: len(recorder.frames) == 3)
    assert [number for number, _, _ in recorder.frames] == [1, 2, 3]
    producer.close()


def test_negative_reconnect_time_interval_keeps_the_connection(recorder):
    producer = SyncProducer(config(reconnect_time_interval_ms="-1"), "127.0.0.1", recorder.port)
    for i in range(5):
        producer.send("t", 0, build_message_set([b"%d" % i]))
    gwait(lambda: len(recorder.frames) == 5)
    assert {number for number, _, _ in recorder.frames} == {1}
    producer.close()


def test_oversized_message_is_refused_before_sending(recorder):
    producer = SyncProducer(config(max_message_size="50"), "127.0.0.1", recorder.port)
    producer.send("t", 0, build_message_set([b"x" * 50, b"y" * 50]))  # at the limit: fine
    with pytest.raises(MessageSizeTooLargeError, match="51 bytes"):
        producer.send("t", 0, build_message_set([b"x" * 5, b"z" * 51]))
    # A compressed set is checked by its wrapper's (compressed) size, as in 0.7.
    producer.send("t", 0, build_message_set([b"a" * 1000], GZIP))
    with pytest.raises(MessageSizeTooLargeError):
        producer.multi_send([ProducerRequest("t", 0, build_message_set([b"q" * 51]))])
    gwait(lambda: len(recorder.frames) == 2)
    gevent.sleep(0.05)
    assert len(recorder.frames) == 2
    producer.close()


def test_connect_gives_up_after_connect_timeout():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    producer = SyncProducer(config(connect_timeout_ms="150"), "127.0.0.1", port)
    started = time.monotonic()
    with pytest.raises(ProducerConnectionError, match="connect.timeout.ms=150"):
        producer.send("t", 0, build_message_set([b"x"]))
    assert time.monotonic() - started < 30  # only a hang: the message names connect.timeout.ms
    assert not producer.connected


def test_connects_once_the_broker_comes_up_within_the_timeout():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    producer = SyncProducer(config(connect_timeout_ms="5000"), "127.0.0.1", port)
    late: list[FrameRecorder] = []
    gevent.spawn_later(0.05, lambda: late.append(FrameRecorder(port)))
    try:
        producer.send("t", 0, build_message_set([b"late"]))
        gwait(lambda: late and late[0].frames)
        assert late[0].messages() == [b"late"]
    finally:
        producer.close()
        for server in late:
            server.stop()


def test_a_connection_closed_by_the_broker_is_replaced_before_the_next_send():
    closed_first: list[int] = []

    def serve(sock, address):
        closed_first.append(1)
        if len(closed_first) == 1:
            sock.close()  # like a broker that dropped the connection after a bad request
            return
        recorded.append(sock.makefile("rb").read())

    recorded: list[bytes] = []
    server = StreamServer(("127.0.0.1", 0), serve)
    server.start()
    try:
        producer = SyncProducer(config(), "127.0.0.1", server.server_port)
        producer.send("t", 0, build_message_set([b"first"]))  # written before the close is seen
        gwait(lambda: closed_first)
        gevent.sleep(0.1)  # idle: the next send checks the connection first
        producer.send("t", 0, build_message_set([b"second"]))
        producer.close()
        gwait(lambda: recorded)
        assert b"second" in recorded[0]
        assert len(closed_first) == 2
    finally:
        server.stop(timeout=1)


def test_closed_producer_refuses_to_send(recorder):
    producer = SyncProducer(config(), "127.0.0.1", recorder.port)
    producer.close()
    with pytest.raises(ProducerClosedError):
        producer.send("t", 0, build_message_set([b"x"]))
