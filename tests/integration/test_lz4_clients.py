"""LZ4 (codec 3, 0.8.2's framing) between real third-party clients and zkafka's 0.8 broker and clients.

kafka-python (told the broker is 0.9: magic 0, Kafka's header checksum; or unpinned: magic 1, the spec's, converted
down) and librdkafka through confluent-kafka (told ``broker.version.fallback=0.9.0.1``, or asking ApiVersions)
produce lz4 that zkafka's broker accepts, stores
as lz4 and zkafka's SimpleConsumer08, ZooKeeper connector and 0.9 GroupConsumer read; zkafka's Producer08
writes lz4 that both third-party consumers read. A real ZooKeeper and an in-process broker.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.integration.test_clients08 import producer, ready_topic
from tests.support.consumers import connector_factory
from tests.support.consumers08 import consumer08_config
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.consumer.group import GroupConsumer
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.producer.producer08 import KeyedMessage
from zkafka.records.compression import LZ4
from zkafka.records.format08 import iter_messages
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 2
TOLD_0_9 = {"api.version.request": False, "broker.version.fallback": "0.9.0.1"}


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0, num_partitions=str(PARTITIONS))


@pytest.fixture
def connectors08():
    yield from connector_factory(ZookeeperConsumerConnector08, consumer08_config)


def pairs(prefix: str, count: int = 60) -> list[tuple[bytes, bytes]]:
    return [(b"k%d" % i, b"%s-%05d " % (prefix.encode(), i) * 3) for i in range(count)]


def stored(port: int, topic: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of the topic, after checking each partition's log holds only lz4 wrappers."""
    found = []
    with SimpleConsumer08("127.0.0.1", port) as consumer:
        for partition in range(PARTITIONS):
            end, offset = consumer.latest_offset(topic, partition), 0
            while offset < end:
                fetched = consumer.fetch(topic, partition, offset, 1 << 20)
                assert {w.codec for w in iter_messages(fetched.data, offset, deep=False)} == {LZ4}
                found += [(m.key, m.value) for m in fetched]
                offset = fetched.next_offset
    return found


def kafka_python_produce(
    bootstrap: str, topic: str, sent: list[tuple[bytes, bytes]], api_version: tuple | None = (0, 9)
) -> None:
    """Told 0.9: magic 0 with Kafka's header checksum; unpinned it takes the broker for 0.10 (ApiVersions)
    and writes magic 1 with the LZ4 spec's, which the broker converts down."""
    kafka = pytest.importorskip("kafka")
    pytest.importorskip("lz4")
    pytest.importorskip("xxhash")  # kafka-python's lz4 for 0.8/0.9 brokers needs it for the header checksum
    p = kafka.KafkaProducer(
        bootstrap_servers=bootstrap, api_version=api_version, acks=1, compression_type="lz4", linger_ms=50
    )
    try:
        futures = [p.send(topic, key=k, value=v) for k, v in sent]
        p.flush(30)
        for future in futures:
            future.get(30)
    finally:
        p.close(10)


def librdkafka_produce(
    bootstrap: str, topic: str, sent: list[tuple[bytes, bytes]], told: dict | None = None
) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    p = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": 1,
            "compression.codec": "lz4",
            "linger.ms": 50,
            **(TOLD_0_9 if told is None else told),
        }
    )
    failed = []
    for k, v in sent:
        p.produce(topic, key=k, value=v, on_delivery=lambda e, m: e and failed.append(e))
    assert p.flush(30) == 0 and not failed


PRODUCERS = {
    "kafka-python": kafka_python_produce,
    "kafka-python-unpinned": lambda *args: kafka_python_produce(*args, api_version=None),
    "librdkafka": librdkafka_produce,
    "librdkafka-api-versions": lambda *args: librdkafka_produce(*args, told={}),
}


@pytest.mark.parametrize("client", list(PRODUCERS))
def test_third_party_lz4_is_stored_as_lz4_and_read_by_zkafkas_consumers(
    broker, zk_connect, connectors08, client
):
    topic = f"lz4-{client}"
    bootstrap = f"127.0.0.1:{broker.port}"
    ready_topic(broker.port, topic, PARTITIONS)
    sent = pairs(client)
    PRODUCERS[client](bootstrap, topic, sent)
    assert sorted(stored(broker.port, topic)) == sorted(sent)

    connector = connectors08(zk_connect, f"g-{client}", consumer_timeout_ms=3000)
    (stream,) = connector.create_message_streams({topic: 1})[topic]
    received = []
    for message in stream:
        received.append((message.key, message.message))
        if len(received) == len(sent):
            break
    assert sorted(received) == sorted(sent)

    group = GroupConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g09-{client}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "300",
            "fetch.max.wait.ms": "100",
        }
    )
    try:
        group.subscribe([topic])
        got: list[tuple[bytes, bytes]] = []
        deadline = time.monotonic() + 60
        while len(got) < len(sent):
            assert time.monotonic() < deadline, f"{len(got)} of {len(sent)} read"
            for records in group.poll(100).values():
                got.extend((r.key, r.value) for r in records)
        assert sorted(got) == sorted(sent)
    finally:
        group.close()


def test_zkafkas_lz4_is_read_by_kafka_python_and_librdkafka(broker):
    topic = "lz4-zkafka"
    bootstrap = f"127.0.0.1:{broker.port}"
    ready_topic(broker.port, topic, PARTITIONS)
    sent = pairs("zkafka")
    with producer(broker.port, compression_codec="lz4", batch_num_messages=20) as p:
        p.send(*(KeyedMessage(topic, k, v) for k, v in sent))
    assert sorted(stored(broker.port, topic)) == sorted(sent)

    kafka = pytest.importorskip("kafka")
    pytest.importorskip("xxhash")
    c = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap,
        api_version=(0, 9),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=3000,
    )
    try:
        c.assign([kafka.TopicPartition(topic, p) for p in range(PARTITIONS)])
        assert sorted((m.key, m.value) for m in c) == sorted(sent)
    finally:
        c.close()

    confluent_kafka = pytest.importorskip("confluent_kafka")
    rd = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "rd-lz4",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **TOLD_0_9,
        }
    )
    try:
        rd.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got: list[tuple[bytes, bytes]] = []

        def read_all() -> bool:
            message = rd.poll(0.2)
            if message is not None:
                assert not message.error(), message.error()
                got.append((message.key(), message.value()))
            return len(got) >= len(sent)

        wait_until(read_all, timeout=60, message="librdkafka reads zkafka's lz4")
        assert sorted(got) == sorted(sent)
    finally:
        rd.close()


def test_the_console_producer_and_perf_tool_write_lz4_on_the_08_line_only(broker):
    cli = [sys.executable, "-m", "zkafka.cli"]
    brokers = f"127.0.0.1:{broker.port}"
    ready_topic(broker.port, "console-lz4", PARTITIONS)
    done = subprocess.run(
        [*cli, "console-producer", "--broker-list", brokers, "--topic", "console-lz4", "--sync"]
        + ["--request-required-acks", "1", "--compression-codec", "lz4"],
        input="one\ntwo\nthree\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(v for _, v in stored(broker.port, "console-lz4")) == [b"one", b"three", b"two"]

    perf = subprocess.run(
        [*cli, "perf", "produce", "--broker-list", brokers, "--topic", "perf-lz4", "--messages", "500"]
        + ["--compression", "lz4", "--json", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert perf.returncode == 0, perf.stderr
    assert json.loads(perf.stdout)["compression_name"] == "lz4"
    assert len(stored(broker.port, "perf-lz4")) == 500

    refused = subprocess.run(  # a 0.7 broker list (id:host:port): 0.7 has no codec 3
        [*cli, "console-producer", "--broker-list", "0:127.0.0.1:1", "--topic", "t", "--compression", "lz4"],
        input="x\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert "unknown compression codec 'lz4' (expected 0/1/2 or none/gzip/snappy)" in refused.stderr
