"""Producer08 with ``max.in.flight.requests.per.connection`` above 1 against a real ZooKeeper and a real 0.8
broker: answers are paired with the requests they answer, a refused request is retried and then reported
with its count (never acknowledged), and the requests in flight on a connection that drops are sent again.
"""

from __future__ import annotations

import socket
import threading

import pytest

from tests.integration.test_clients08 import consume_all, producer, ready_topic, wait_consumed
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.launch.zookeeper_server import free_port
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.producer.producer08 import Producer08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def pipelined(port: int, failures: list | None = None, **props: str) -> Producer08:
    p = producer(port, max_in_flight_requests_per_connection=5, **props)
    if failures is not None:
        p.on_send_failure = failures.append
    return p


def test_answers_pair_with_their_requests_and_refused_ones_are_reported(start_broker08):
    broker = start_broker08(0, message_max_bytes="1000")
    ready_topic(broker.port, "pipe", 1)
    failures: list[FailedToSendMessageError] = []
    p = pipelined(broker.port, failures, message_send_max_retries=2, retry_backoff_ms=10)
    refused = {3, 7}  # a message over message.max.bytes: the broker refuses the whole request
    for i in range(12):
        p.send_batch("pipe", [b"x" * 2000] if i in refused else [b"%d-%d" % (i, j) for j in range(5)])
    assert p._pipeline.in_flight == 5  # sent without waiting for the answers
    with pytest.raises(FailedToSendMessageError, match="2 messages were not delivered") as err:
        p.flush()
    assert err.value.undelivered == 2
    assert [e.undelivered for e in failures] == [1, 1]
    assert all("not delivered after 2 retries" in str(e) for e in failures)
    assert p._pipeline.in_flight == 0
    p.close()  # what flush raised is not raised again
    found = consume_all(broker.port, "pipe", 1)[0]
    expected = [b"%d-%d" % (i, j) for i in range(12) if i not in refused for j in range(5)]
    assert [v for _, _, v in found] == expected  # in order: nothing refused was retried between them
    assert [o for o, _, _ in found] == list(range(len(expected)))


class Relay:
    """A TCP relay in front of a broker (real sockets both ways, a thread per direction) that can stop passing
    the broker's answers on (``drop_answers``) and cut every connection it relays (``cut``)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.drop_answers = threading.Event()
        self.sockets: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, server]
            threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        try:
            while data := source.recv(65536):
                if not (answers and self.drop_answers.is_set()):
                    sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.listener.close()
        self.cut()


def test_requests_in_flight_on_a_dropped_connection_are_sent_again(start_broker08):
    port = free_port()
    relay = Relay(port)
    try:
        start_broker08(0, port=str(port), advertised_port=str(relay.port))  # clients go through the relay
        ready_topic(port, "lost-answers", 1)
        p = pipelined(relay.port, retry_backoff_ms=20)
        p.send_batch("lost-answers", [b"m-0"])
        p.flush()
        relay.drop_answers.set()
        for i in range(1, 5):
            p.send_batch("lost-answers", [b"m-%d" % i])
        with SimpleConsumer08("127.0.0.1", port) as direct:
            wait_until(lambda: direct.latest_offset("lost-answers", 0) == 5, message="4 appends")
        assert p._pipeline.in_flight == 4  # appended, their answers never came
        relay.drop_answers.clear()
        relay.cut()
        p.flush()  # the connection failed: the 4 requests in flight are sent again
        p.close()
    finally:
        relay.close()
    assert p.undelivered == 0
    values = [v for _, _, v in consume_all(port, "lost-answers", 1)[0]]
    # At least once: what the broker appended but could not confirm is appended again, in send order.
    assert values == [b"m-0"] + [b"m-%d" % i for i in range(1, 5)] * 2


def test_in_flight_requests_of_a_restarting_broker_are_sent_again(start_broker08):
    port = free_port()
    first = start_broker08(0, port=str(port))
    ready_topic(port, "again", 1)
    p = pipelined(port, message_send_max_retries=40, retry_backoff_ms=100, request_timeout_ms=2000)
    for i in range(10):
        p.send_batch("again", [b"before-%d-%d" % (i, j) for j in range(3)])
    p.flush()
    first.stop()
    restarted = threading.Timer(0.5, lambda: start_broker08(0, port=str(port)))
    restarted.start()
    try:
        for i in range(10):  # into a closed connection, then none: every one fails and waits for the broker
            p.send_batch("again", [b"after-%d-%d" % (i, j) for j in range(3)])
        p.flush()
    finally:
        restarted.join()
        p.close()
    assert p.undelivered == 0
    found = wait_consumed(port, "again", 60, 1)
    values = sorted(v for _, _, v in found[0])
    expected = [
        b"%s-%d-%d" % (when, i, j) for when in (b"before", b"after") for i in range(10) for j in range(3)
    ]
    assert values == sorted(expected)


def test_undeliverable_messages_are_raised_by_close_with_their_count():
    p = pipelined(free_port(), message_send_max_retries=1, retry_backoff_ms=10, request_timeout_ms=500)
    p.send_batch("lost", [b"z"] * 9, key="k")  # nothing listens: no metadata, so not even sent
    p.send_batch("lost", [b"z"] * 4, key="k")
    with pytest.raises(FailedToSendMessageError, match="13 messages were not delivered") as err:
        p.close()
    assert err.value.undelivered == p.undelivered == 13


@pytest.mark.parametrize("acks", [1, -1])
def test_keyed_messages_are_acknowledged_in_order_per_partition(start_broker08, acks):
    broker = start_broker08(0, num_partitions="4")
    topic = f"ordered{acks + 1}"
    ready_topic(broker.port, topic)
    with pipelined(broker.port, request_required_acks=acks) as p:
        for n in range(30):
            p.send_batch(topic, [b"%d-%d" % (n, j) for j in range(4)], key=f"user-{n % 6}")
    assert p.undelivered == 0
    found = wait_consumed(broker.port, topic, 120)
    for n in range(6):
        values = [v for m in found.values() for _, k, v in m if k == b"user-%d" % n]
        assert values == [b"%d-%d" % (i, j) for i in range(n, 30, 6) for j in range(4)]


def test_acks_0_has_no_answers_to_wait_for(start_broker08):
    broker = start_broker08(0)
    p = pipelined(broker.port, request_required_acks=0)
    assert p._pipeline is None  # requests already stream
    p.close()
