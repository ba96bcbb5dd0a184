"""The producer with brokers in child processes (kill -9 mid-stream) and the producer CLIs run as commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.producers import PARTITIONS, seed_topic, stored, wait_stored, zk_producer
from tests.support.zookeeper import wait_topic_registered
from zkafka.producer import ProducerConnectionError, ProducerSendError
from zkafka.producer.partitioner import DefaultPartitioner
from zkafka.utils import wait_until as gwait

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "zkafka.cli"]


def test_a_broker_killed_mid_stream_stops_getting_traffic_and_the_rest_keep_it(
    start_broker, broker_process, zk_connect, zk_client
):
    survivor = start_broker(0)
    victim = broker_process(1, zk_sessiontimeout_ms="1000")
    gwait(lambda: zk_client.exists("/brokers/ids/1"), message="the child broker registered")
    seed_topic(survivor, "kill")
    seed_topic(victim, "kill")
    wait_topic_registered(zk_client, "kill", [0, 1])
    producer = zk_producer(zk_connect, connect_timeout_ms="200")
    gwait(lambda: len(producer.partitions_for("kill")) == 2 * PARTITIONS)
    for i in range(100):
        producer.send("kill", b"before-%d" % i)
    wait_stored({1: victim}, "kill", 1, b"before-")  # the victim was getting its share

    victim.proc.kill()
    victim.wait()
    failures = 0

    def victim_dropped():
        nonlocal failures
        try:
            producer.send("kill", b"during")
        except (ProducerSendError, ProducerConnectionError):
            failures += 1  # sends that picked the dead broker before its znode expired
        return 1 not in producer.brokers

    gwait(victim_dropped, timeout=20, message="the killed broker dropped from the producer's cache")
    assert producer.partitions_for("kill") == [(0, p) for p in range(PARTITIONS)]
    for i in range(200):
        producer.send("kill", b"after-%d" % i)  # no failure any more: only the survivor is chosen
    producer.close()
    after = wait_stored({0: survivor}, "kill", 200, b"after-")
    assert sorted(m for p in after.values() for m in p) == sorted(b"after-%d" % i for i in range(200))


def test_console_producer_sends_lines_with_keys(start_broker, zk_connect, zk_client):
    broker = start_broker(0)
    seed_topic(broker, "console")
    wait_topic_registered(zk_client, "console", [0])
    keys = ["alpha", "beta", "gamma", "delta", "epsilon"]
    lines = [f"{k}:{k} says {i}" for i, k in enumerate(keys * 3)] + ["no key here"]
    result = subprocess.run(
        [*CLI, "console-producer", "--zookeeper", zk_connect, "--topic", "console", "--key-separator", ":"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    found = wait_stored({0: broker}, "console", len(lines), b"")
    partitioner = DefaultPartitioner()
    for key in keys:
        partition = partitioner.partition(key, PARTITIONS)
        assert sorted(m for m in found[(0, partition)] if m.startswith(key.encode())) == sorted(
            f"{key} says {i}".encode() for i, k in enumerate(keys * 3) if k == key
        )
    assert sum(m == b"no key here" for p in found.values() for m in p) == 1


def test_console_producer_with_broker_list_and_compression(start_broker):
    broker = start_broker(0)
    result = subprocess.run(
        [
            *CLI,
            "console-producer",
            "--broker-list",
            f"0:127.0.0.1:{broker.port}",
            "--topic",
            "lines",
            "--compression",
            "gzip",
            "--sync",
        ],
        input="one\ntwo\nthree\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    found = wait_stored({0: broker}, "lines", 3)
    assert sorted(m for p in found.values() for m in p) == [b"one", b"three", b"two"]
    codecs = {codec for p in range(PARTITIONS) for codec, _ in stored(broker.port, "lines", p, deep=False)}
    assert codecs == {1}


def test_console_producer_needs_exactly_one_source():
    result = subprocess.run(
        [*CLI, "console-producer", "--topic", "t"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--zookeeper" in result.stderr


def test_perf_produce_json_with_broker_list(start_broker):
    broker = start_broker(0)
    command = [
        *CLI,
        "perf",
        "produce",
        "--broker-list",
        f"0:127.0.0.1:{broker.port}",
        "--topic",
        "perf",
        "--messages",
        "3000",
        "--message-size",
        "50",
        "--batch-size",
        "100",
        "--compression",
        "snappy",
        "--json",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_messages"] == 3000 and report["total_bytes"] == 150000
    assert report["compression"] == 2 and report["mode"] == "sync" and report["messages_per_sec"] > 0
    found = wait_stored({0: broker}, "perf", 3000)
    assert all(len(m) == 50 for p in found.values() for m in p)


def test_perf_produce_async_csv_with_message_ids(start_broker, zk_connect):
    broker = start_broker(0)
    command = [
        *CLI,
        "perf",
        "produce",
        "--zookeeper",
        zk_connect,
        "--topic",
        "perf-ids",
        "--messages",
        "2000",
        "--message-size",
        "20",
        "--batch-size",
        "50",
        "--async",
        "--threads",
        "2",
        "--initial-message-id",
        "1000",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    header, line = result.stdout.strip().splitlines()
    assert header.startswith("start.time, end.time, compression, message.size, batch.size")
    fields = line.split(", ")
    assert fields[2:5] == ["0", "20", "50"] and fields[7] == "2000"
    found = wait_stored({0: broker}, "perf-ids", 2000)
    ids = sorted(int(m[:10]) for p in found.values() for m in p)
    assert ids == list(range(1000, 3000))
