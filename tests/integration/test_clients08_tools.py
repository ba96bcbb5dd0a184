"""The 0.8 clients against a third-party client (kafka-python, api_version 0.8.2) and the 0.8 line of the
console producer and perf tools, run as commands, all on a real ZooKeeper and a real zkafka 0.8 broker."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.integration.test_clients08 import PARTITIONS, consume_all, producer, ready_topic, wait_consumed
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.launch.zookeeper_server import free_port
from zkafka.producer.partitioner import DefaultPartitioner08
from zkafka.producer.producer08 import KeyedMessage

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "zkafka.cli"]
kafka = pytest.importorskip("kafka")


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0, num_partitions=str(PARTITIONS))


def test_kafka_python_reads_what_zkafka_wrote(broker):
    ready_topic(broker.port, "to-kp")
    with producer(broker.port, compression_codec="gzip") as p:
        p.send(*[KeyedMessage("to-kp", f"k{i % 5}", b"v%d" % i) for i in range(60)])
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{broker.port}",
        api_version=(0, 8, 2),
        consumer_timeout_ms=3000,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        consumer.assign([kafka.TopicPartition("to-kp", p) for p in range(PARTITIONS)])
        consumer.seek_to_beginning()
        records = list(consumer)
    finally:
        consumer.close()
    assert sorted((r.key, r.value) for r in records) == sorted(
        (b"k%d" % (i % 5), b"v%d" % i) for i in range(60)
    )
    partitioner = DefaultPartitioner08()
    assert all(r.partition == partitioner.partition(r.key.decode(), PARTITIONS) for r in records)


@pytest.mark.parametrize("compression", [None, "gzip", "snappy"])
def test_zkafka_reads_what_kafka_python_wrote(broker, compression):
    topic = f"from-kp-{compression}"
    kp = kafka.KafkaProducer(
        bootstrap_servers=f"127.0.0.1:{broker.port}",
        api_version=(0, 8, 2),
        acks=1,
        compression_type=compression,
    )
    try:
        for i in range(50):
            kp.send(topic, key=b"key-%d" % (i % 3), value=b"value-%d" % i)
        kp.flush(timeout=20)
    finally:
        kp.close(timeout=10)
    found = wait_consumed(broker.port, topic, 50)
    assert sorted((k, v) for m in found.values() for _, k, v in m) == sorted(
        (b"key-%d" % (i % 3), b"value-%d" % i) for i in range(50)
    )
    for messages in found.values():  # each partition in order, offsets from 0
        assert [o for o, _, _ in messages] == list(range(len(messages)))


def test_console_producer_08_sends_keyed_lines_with_acks(broker):
    keys = ["alpha", "beta", "gamma", "delta"]
    lines = [f"{k}:{k} says {i}" for i, k in enumerate(keys * 3)]
    ready_topic(broker.port, "console08")
    result = subprocess.run(
        [
            *CLI,
            "console-producer",
            "--broker-list",
            f"127.0.0.1:{broker.port}",
            "--topic",
            "console08",
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
            "--request-required-acks",
            "1",
            "--sync",
            "--compression-codec",
            "snappy",
        ],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    found = consume_all(broker.port, "console08")
    partitioner = DefaultPartitioner08()
    for key in keys:
        assert [v for _, k, v in found[partitioner.partition(key, PARTITIONS)] if k == key.encode()] == [
            f"{key} says {i}".encode() for i, k in enumerate(keys * 3) if k == key
        ]


@pytest.mark.parametrize("sync", [True, False])
def test_console_producer_08_says_how_many_were_not_delivered(sync):
    command = [
        *CLI,
        "console-producer",
        "--broker-list",
        f"127.0.0.1:{free_port()}",
        "--topic",
        "nowhere",
        "--request-required-acks",
        "1",
        "--message-send-max-retries",
        "1",
        "--retry-backoff-ms",
        "10",
        "--request-timeout-ms",
        "500",
    ]
    result = subprocess.run(
        command + (["--sync"] if sync else []), input="a\nb\nc\n", capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "3 of 3 messages were not delivered" in result.stderr


def zkafka_json(*args: str) -> dict:
    """Run ``zkafka ARGS --json --no-progress`` and return what it printed."""
    done = subprocess.run(
        [*CLI, *args, "--json", "--no-progress"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_perf_produce_and_consume_on_the_08_line(broker):
    brokers = f"127.0.0.1:{broker.port}"
    common = ("--broker-list", brokers, "--topic", "perf08", "--messages", "3000")
    produced = zkafka_json("perf", "produce", *common, "--batch-size", "200")
    assert (produced["total_messages"], produced["line"]) == (3000, "0.8")
    assert zkafka_json("perf", "consume", *common)["total_messages"] == 3000
    with SimpleConsumer08("127.0.0.1", broker.port) as c:
        assert sum(c.latest_offset("perf08", p) for p in range(PARTITIONS)) == 3000


def test_perf_produce_pipelines_with_max_in_flight(broker):
    brokers = f"127.0.0.1:{broker.port}"
    common = ("--broker-list", brokers, "--topic", "perf-pipelined", "--messages", "2000")
    produced = zkafka_json("perf", "produce", *common, "--batch-size", "100", "--max-in-flight", "5")
    assert produced["total_messages"] == 2000
    with SimpleConsumer08("127.0.0.1", broker.port) as c:
        assert sum(c.latest_offset("perf-pipelined", p) for p in range(PARTITIONS)) == 2000
