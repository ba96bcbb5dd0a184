"""The 0.8 broker's long-poll fetch: a fetch parked in the purgatory is answered by the append that gives it
``min_bytes`` (measured: milliseconds after it), an idle one at ``max_wait_ms``, and parked fetches cost no CPU.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from zkafka.records import format08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


def one_message(value: bytes) -> bytes:
    return format08.build_message_set([(None, value)])


def values(partition_data) -> list[bytes]:
    return [m.value for m in format08.iter_messages(partition_data.message_set)]


def test_a_parked_fetch_is_answered_right_after_the_append(start_broker08):
    broker = start_broker08(0)
    with Client08(broker.port) as consumer, Client08(broker.port) as producer:
        wait_for_leaders(producer, ["t"])
        latencies = []
        for i in range(5):
            request = fetch_request("t", 0, i, max_wait_ms=600_000, min_bytes=1)  # the append answers it
            consumer.send(request)
            wait_until(lambda: broker.server.replica_manager.fetch_purgatory.delayed() == 1, message="the fetch parked")
            sent = time.monotonic()
            producer.call(produce_request("t", 0, one_message(b"m%d" % i)))
            answer = consumer.receive(request).body.topics[0].partitions[0]
            latencies.append(time.monotonic() - sent)
            assert values(answer) == [b"m%d" % i]
        print(f"append -> parked fetch answered: {[round(x * 1000, 2) for x in latencies]} ms")


def test_an_idle_fetch_is_answered_at_max_wait(start_broker08):
    broker = start_broker08(0)
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        started = time.monotonic()
        answer = client.call(fetch_request("t", 0, 0, max_wait_ms=400, min_bytes=1))
        elapsed = time.monotonic() - started
        part = answer.topics[0].partitions[0]
        assert (part.error, part.high_watermark, bytes(part.message_set)) == (0, 0, b"")
        assert elapsed >= 0.38, elapsed


def test_min_bytes_holds_the_fetch_until_enough_has_arrived(start_broker08):
    broker = start_broker08(0)
    with Client08(broker.port) as consumer, Client08(broker.port) as producer:
        wait_for_leaders(producer, ["t"])
        request = fetch_request("t", 0, 0, max_wait_ms=10_000, min_bytes=300)
        consumer.send(request)
        answered = threading.Event()
        result = {}

        def read():
            result["answer"] = consumer.receive(request)
            answered.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        producer.call(produce_request("t", 0, one_message(b"a" * 100)))
        assert not answered.wait(0.3)  # about 135 bytes: not enough
        producer.call(produce_request("t", 0, one_message(b"b" * 200)))
        assert answered.wait(5)
        assert values(result["answer"].body.topics[0].partitions[0]) == [b"a" * 100, b"b" * 200]


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_parked_fetches_cost_no_cpu(broker08_process):
    broker = broker08_process(0)
    client = wait_until(lambda: _connect(broker.port), 30, message="0.8 broker process listening")
    wait_for_leaders(client, ["t"])
    parked = [Client08(broker.port) for _ in range(100)]
    try:
        for c in parked:
            c.send(fetch_request("t", 0, 0, max_wait_ms=60_000, min_bytes=1))
        time.sleep(0.5)  # let them all park: only then does the measured window start
        before = cpu_seconds(broker.proc.pid)
        time.sleep(2.0)
        used = cpu_seconds(broker.proc.pid) - before
        print(f"broker CPU over 2 s with 100 parked fetches: {used * 1000:.0f} ms")
        assert used < 0.1
        client.call(produce_request("t", 0, one_message(b"wake")))
        for c in parked:
            answer = c.receive(fetch_request("t", 0, 0)).body.topics[0].partitions[0]
            assert values(answer) == [b"wake"]
    finally:
        for c in parked:
            c.close()
        client.close()


def _connect(port: int) -> Client08 | None:
    try:
        return Client08(port)
    except OSError:
        return None
