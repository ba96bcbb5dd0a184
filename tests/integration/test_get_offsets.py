"""``zkafka get-offsets`` (GetOffsetShell) against a 0.8-line broker: ListOffsets v1 finds the first record
stamped at or after a time in a message-format-v2 topic written by kafka-python; a v0 topic answers 0.8's
segment start with a note; latest, earliest, a regular expression of topics, and an unknown topic in one line."""

from __future__ import annotations

import random
import time

import pytest
from click.testing import CliRunner

from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.topics import create_topic
from zkafka.cli import main

kafka = pytest.importorskip("kafka")

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


def run(*args: str):
    return CliRunner().invoke(main, ["get-offsets", *args])


def test_offsets_by_time_latest_and_earliest(start_broker08, zk_client):
    broker = start_broker08(0)
    bootstrap = f"127.0.0.1:{broker.port}"
    create_topic(zk_client, "stamped", 2, 1, {"message.format.version": "2.2"}, rng=random.Random(1))
    create_topic(zk_client, "plain", 1, 1, rng=random.Random(1))
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["stamped", "plain"])
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
    for i in range(10):  # one record a second, each its own batch
        producer.send("stamped", b"v%d" % i, partition=0, timestamp_ms=T0 + 1000 * i).get(10)
    for i in range(3):
        producer.send("plain", b"p%d" % i, partition=0).get(10)
    producer.close()

    result = run("--bootstrap-server", bootstrap, "--topic", "stamped", "--time", str(T0 + 3500))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["stamped:0:4", "stamped:1:"]  # nothing that late in partition 1
    assert (
        run("--broker-list", bootstrap, "--topic", "stamped", "--time", str(T0)).stdout
        == "stamped:0:0\nstamped:1:\n"
    )
    result = run("--broker-list", bootstrap, "--topic", "st.*|pl.*", "--partitions", "0")
    assert result.stdout.splitlines() == ["plain:0:3", "stamped:0:10"]
    assert run("--broker-list", bootstrap, "--time", "-2").stdout.splitlines() == [
        "plain:0:0",
        "stamped:0:0",
        "stamped:1:0",
    ]
    # a v0 log has no timestamps: 0.8's answer, the newest of the segment starts and the log end not newer than
    # the time (the segment's file time): none for a time in the past, the log end for one to come
    later = str(int(time.time() * 1000) + 3_600_000)
    result = run("--broker-list", bootstrap, "--topic", "plain", "--time", later)
    assert result.exit_code == 0 and result.stdout == "plain:0:3\n"
    assert "plain-0: no record timestamps here (ListOffsets v0)" in result.stderr
    assert run("--broker-list", bootstrap, "--topic", "plain", "--time", str(T0)).stdout == "plain:0:\n"

    result = run("--broker-list", bootstrap, "--topic", "absent")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"zkafka: error: NoMatchingTopicError: no topic matching 'absent' on {bootstrap}"
    ]
    assert "absent" not in zk_client.get_children("/brokers/topics")  # asking did not create it
