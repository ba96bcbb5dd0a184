"""BlockingChannel against a real SocketServer on loopback: the 0.7 codec, the broker's request handlers on a
LogManager in a temporary directory (no ZooKeeper)."""

from __future__ import annotations

import socket as pysocket
import time

import gevent
import pytest

from zkafka.config07 import BrokerConfig
from zkafka.log.log_manager07 import LogManager
from zkafka.network import client
from zkafka.network.client import BlockingChannel, ChannelClosedError
from zkafka.network.server import PendingResponse, SocketServer
from zkafka.protocol import LATEST_TIME
from zkafka.protocol.v07 import (
    CODEC,
    FetchRequest,
    FetchResponse,
    OffsetRequest,
    OffsetResponse,
    ProducerRequest,
)
from zkafka.records.message07 import build_message_set
from zkafka.server.apis07 import KafkaRequestHandlers
from zkafka.utils import wait_until


class Broker:
    """A SocketServer with the 0.7 handlers; ``park`` makes every OFFSETS request wait forever."""

    def __init__(self, log_dir, port: int = 0) -> None:
        config = BrokerConfig(
            {"brokerid": "0", "log.dir": str(log_dir), "enable.zookeeper": "false", "log.flush.interval": "1"}
        )
        self.log_manager = LogManager(config)
        self.handlers = KafkaRequestHandlers(self.log_manager)
        self.park = False
        self.server = SocketServer("127.0.0.1", port, CODEC, self.handle)
        self.server.start()
        self.port = self.server.port

    def handle(self, request):
        if self.park and isinstance(request, OffsetRequest):
            return PendingResponse()
        return self.handlers(request)

    def stop(self) -> None:
        self.server.stop(timeout=0)
        self.log_manager.close()


@pytest.fixture
def broker(tmp_path):
    broker = Broker(tmp_path / "logs")
    yield broker
    broker.stop()


def free_port() -> int:
    with pysocket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_requests_with_and_without_responses(broker):
    data = build_message_set([b"hello"])
    channel = BlockingChannel("127.0.0.1", broker.port, CODEC)
    assert channel.request(ProducerRequest("t", 0, data)) is None
    assert channel.request(OffsetRequest("t", 0, LATEST_TIME, 1)) == (0, [len(data)])
    error, messages = channel.request(FetchRequest("t", 0, 0, 1000))
    assert (error, bytes(messages)) == (0, data)
    channel.close()


def test_pipelined_requests_are_answered_in_order(broker):
    data = build_message_set([b"a", b"b"])
    channel = BlockingChannel("127.0.0.1", broker.port, CODEC)
    channel.send(ProducerRequest("p", 0, data))
    channel.send(FetchRequest("p", 0, 0, 1000))
    channel.send(OffsetRequest("p", 0, LATEST_TIME, 1))
    channel.send(FetchRequest("p", 0, 5, 1000))
    first, second, third = channel.receive(), channel.receive(), channel.receive()
    assert isinstance(first, FetchResponse) and bytes(first.messages) == data
    assert isinstance(second, OffsetResponse) and second.offsets == [len(data)]
    assert isinstance(third, FetchResponse) and third.error == 0 and bytes(third.messages) == data[5:]
    with pytest.raises(RuntimeError, match="no request is waiting"):
        channel.receive()
    channel.close()


def test_a_request_is_sent_again_on_a_new_connection_after_the_broker_restarted(tmp_path):
    first = Broker(tmp_path / "logs")
    port = first.port
    channel = BlockingChannel("127.0.0.1", port, CODEC)
    data = build_message_set([b"m"])
    try:
        channel.request(ProducerRequest("r", 0, data))
        assert channel.request(OffsetRequest("r", 0, LATEST_TIME, 1)).offsets == [len(data)]
        first.stop()
        again = Broker(tmp_path / "logs", port)
        try:
            assert channel.request(OffsetRequest("r", 0, LATEST_TIME, 1)).offsets == [len(data)]
        finally:
            again.stop()
    finally:
        channel.close()


def test_without_retries_a_dropped_connection_raises_and_disconnects(broker):
    channel = BlockingChannel("127.0.0.1", broker.port, CODEC)
    channel.connect()
    wait_until(lambda: broker.server.connection_count == 1)
    broker.server.stop(timeout=0)
    wait_until(channel.peer_closed, message="the close seen")
    with pytest.raises(OSError):
        channel.request(OffsetRequest("t", 0, LATEST_TIME, 1), retries=0)
    assert not channel.connected


def test_socket_timeout_on_a_response_that_never_comes(broker):
    broker.park = True
    channel = BlockingChannel("127.0.0.1", broker.port, CODEC, socket_timeout=0.2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        channel.request(OffsetRequest("t", 0, LATEST_TIME, 1), retries=1)
    assert time.monotonic() - started >= 0.35  # two attempts, each one timeout
    assert not channel.connected


def test_connect_retries_until_the_broker_listens(tmp_path):
    port = free_port()
    late: list[Broker] = []
    gevent.spawn_later(0.05, lambda: late.append(Broker(tmp_path / "logs", port)))
    channel = BlockingChannel("127.0.0.1", port, CODEC, connect_retry_s=10)
    try:
        assert channel.request(OffsetRequest("t", 0, LATEST_TIME, 1)) == (0, [0])
    finally:
        channel.close()
        for broker in late:
            broker.stop()


def test_connect_gives_up_after_its_retry_time_and_close_ends_it_early():
    port = free_port()
    channel = BlockingChannel("127.0.0.1", port, CODEC, connect_retry_s=0.15)
    started = time.monotonic()
    with pytest.raises(ConnectionRefusedError):
        channel.connect()
    assert time.monotonic() - started < 30  # gave up (a hang would reach the 60 s of the patient one below)

    patient = BlockingChannel("127.0.0.1", port, CODEC, connect_retry_s=60)
    trying = gevent.spawn(patient.connect)
    gevent.spawn_later(0.05, patient.close)
    with pytest.raises(ChannelClosedError):
        trying.get(timeout=10)
    with pytest.raises(ChannelClosedError):
        patient.send(OffsetRequest("t", 0, LATEST_TIME, 1))


def test_a_name_not_found_is_not_looked_up_again_at_once(monkeypatch):
    monkeypatch.setattr(client, "UNRESOLVED_TTL_S", 60.0)  # however slow this run, the second try is within it
    host = "no-such-broker.invalid"  # RFC 6761: never resolves
    first = BlockingChannel(host, 9092, CODEC, connect_timeout=5)
    with pytest.raises(pysocket.gaierror, match=f"connecting to {host}:9092") as found:
        first.connect()
    assert found.value.errno == pysocket.EAI_NONAME and "looked up" not in str(found.value)
    again = BlockingChannel(host, 9093, CODEC, connect_timeout=5)  # any port: the name is what failed
    with pytest.raises(pysocket.gaierror, match="looked up less than 60 s ago") as cached:
        again.connect()
    assert cached.value.errno == pysocket.EAI_NONAME
