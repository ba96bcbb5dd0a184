"""``zkafka console-consumer`` and ``zkafka perf consume`` as child processes against a real cluster."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from datetime import datetime

import pytest

from tests.support.wire import Producer
from zkafka.utils import wait_until as gwait
from zkafka.zk.client import get_children

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def zkafka(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "zkafka.cli", *args], cwd=REPO, capture_output=True, timeout=timeout
    )


@pytest.fixture
def cluster(start_broker, zk_client):
    broker = start_broker(0)
    with Producer(broker.port) as producer:
        producer.send("logs", 0, [b"first", b"second"])
        producer.send("logs", 1, [b"third"])
        producer.send("metrics", 0, [b"cpu"])
        gwait(lambda: len(get_children(zk_client, "/brokers/topics")) == 2)
        yield producer


def test_console_consumer_from_beginning_with_max_messages_and_offsets(cluster, zk_connect, zk_client):
    result = zkafka(
        "console-consumer", "--zookeeper", zk_connect, "--topic", "logs", "--from-beginning",
        "--max-messages", "3", "--print-offsets",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.decode().splitlines())
    assert lines == ["logs\t0-0\t15\tfirst", "logs\t0-0\t31\tsecond", "logs\t0-1\t15\tthird"]
    assert b"Consumed 3 messages" in result.stderr
    # no --group: the random console-consumer-<n> group was deleted on exit
    assert not [g for g in get_children(zk_client, "/consumers") if g.startswith("console-consumer-")]


def test_console_consumer_whitelist_blacklist_and_timeout(cluster, zk_connect, zk_client):
    result = zkafka(
        "console-consumer", "--zookeeper", zk_connect, "--blacklist", "logs", "--from-beginning",
        "--consumer-timeout-ms", "1000", "--group", "keep",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"cpu\n"
    assert b"Consumed 1 messages" in result.stderr
    assert zk_client.get("/consumers/keep/offsets/metrics/0-0")[0] == b"13"  # a given group stays
    result = zkafka(
        "console-consumer", "--zookeeper", zk_connect, "--whitelist", "logs,metrics", "--from-beginning",
        "--consumer-timeout-ms", "1000",
    )  # fmt: skip
    assert sorted(result.stdout.split()) == [b"cpu", b"first", b"second", b"third"]


def test_console_consumer_without_from_beginning_prints_only_new_messages_and_stops_on_sigterm(
    cluster, zk_connect, zk_client
):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zkafka.cli",
            "console-consumer",
            "--zookeeper",
            zk_connect,
            "--topic",
            "logs",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        gwait(lambda: get_children(zk_client, "/consumers"), message="console consumer registered")
        group = get_children(zk_client, "/consumers")[0]
        gwait(
            lambda: len(get_children(zk_client, f"/consumers/{group}/owners/logs")) == 4, message="owns logs"
        )
        # "largest" is read once the partitions are claimed: resend until the consumer is past that point
        sent = 0
        while not select.select([proc.stdout], [], [], 0.5)[0]:
            assert sent < 40, "nothing printed"
            cluster.send("logs", 2, [b"new one"])
            sent += 1
        line = proc.stdout.readline()
        assert line == b"new one\n"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        rest = proc.stdout.read()
        assert set(rest.splitlines()) <= {b"new one"}
        assert f"Consumed {1 + len(rest.splitlines())} messages".encode() in proc.stderr.read()
        assert group not in get_children(zk_client, "/consumers")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_console_consumer_needs_exactly_one_topic_option(zk_connect):
    result = zkafka("console-consumer", "--zookeeper", zk_connect, "--topic", "a", "--whitelist", "b")
    assert result.returncode == 2
    assert b"exactly one of --topic, --whitelist and --blacklist" in result.stderr


def test_perf_consume_reports_kafka_style_and_json(start_broker, zk_connect, zk_client):
    broker = start_broker(0)
    with Producer(broker.port) as producer:
        for p in range(4):
            producer.send("perf", p, [bytes(100)] * 500)
    gwait(lambda: get_children(zk_client, "/brokers/topics/perf"))
    result = zkafka("perf", "consume", "--zookeeper", zk_connect, "--topic", "perf", "--messages", "2000",
                    "--threads", "2", "--consumer-timeout-ms", "120000")  # fmt: skip
    assert result.returncode == 0, result.stderr
    header, line = result.stdout.decode().splitlines()
    assert (
        header
        == "start.time, end.time, fetch.size, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"
    )
    fields = line.split(", ")
    assert (
        fields[2] == "1048576"
        and fields[5] == "2000"
        and float(fields[3]) == pytest.approx(2000 * 100 / 2**20, 1e-3)
    )
    start, end = (datetime.strptime(f, "%Y-%m-%d %H:%M:%S:%f") for f in fields[:2])
    assert (end - start).total_seconds() < 60  # stopped at the count, not after the 120 s consumer timeout
    result = zkafka("perf", "consume", "--zookeeper", zk_connect, "--topic", "perf", "--threads", "1", "--json",
                    "--consumer-timeout-ms", "500")  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["total_messages"] == 2000 and data["total_bytes"] == 200000
    assert data["messages_per_sec"] > 0
    assert not [g for g in get_children(zk_client, "/consumers") if g.startswith("perf-consumer-")]
