"""``zkafka migrate`` from a real 0.7 broker into a real 0.8 broker (one ZooKeeper, two chroots), as a child process."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter

import pytest

from tests.support.server08 import Client08, wait_for_leaders
from tests.support.wire import connect
from tests.support.zookeeper import started_client
from zkafka.admin.topics import create_topic
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.protocol.v07 import ProducerRequest, encode_request
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPIC = "migrated"
TARGET_PARTITIONS = 2


def produce07(port: int, first: int, sets: int) -> list[bytes]:
    """Sets of 10 messages over the 4 partitions of the 0.7 broker: gzip wrappers and plain sets in turn."""
    sent = []
    with connect(port) as sock:
        for i in range(first, first + sets):
            payloads = [f"m{i}-{k}".encode() for k in range(10)]
            data = build_message_set(payloads, codec=1 if i % 2 else 0)
            sock.sendall(encode_request(ProducerRequest(TOPIC, i % 4, data)))
            sent += payloads
    return sent


def read_target(port: int) -> list[tuple[bytes | None, bytes | None]]:
    """Every (key, value) on the 0.8 broker, both partitions."""
    found = []
    with SimpleConsumer08("127.0.0.1", port) as consumer:
        for partition in range(TARGET_PARTITIONS):
            end = consumer.latest_offset(TOPIC, partition)
            offset = 0
            while offset < end:
                fetched = consumer.fetch(TOPIC, partition, offset)
                messages = fetched.messages()
                found += [(m.key, m.value) for m in messages]
                offset = fetched.next_offset
    return found


def start_migration(tmp_path, source_zk: str, target_port: int, name: str) -> subprocess.Popen:
    consumer = tmp_path / f"{name}-consumer.properties"
    consumer.write_text(
        f"zk.connect={source_zk}\ngroupid=migration\nautooffset.reset=smallest\nzk.sessiontimeout.ms=3000\n"
        "rebalance.backoff.ms=1500\nfetcher.backoff.ms=50\n"
    )
    producer = tmp_path / f"{name}-producer.properties"
    producer.write_text(f"metadata.broker.list=127.0.0.1:{target_port}\nrequest.required.acks=1\n")
    log = open(tmp_path / f"{name}.log", "wb")
    args = ["migrate", "--consumer.config", str(consumer), "--producer.config", str(producer)]
    args += ["--whitelist", TOPIC, "--batch-size", "50", "--report-interval", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "zkafka.cli", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def test_migration_copies_everything_acknowledged_and_survives_kill_9(
    start_broker, start_broker08, zk_connect, target_zk, tmp_path
):
    source = start_broker(0)
    target = start_broker08(0, zookeeper_connect=target_zk)
    for client in started_client(target_zk):
        create_topic(client, TOPIC, TARGET_PARTITIONS, 1)
        break
    with Client08(target.port) as client:
        wait_for_leaders(client, [TOPIC])
    expected = produce07(source.port, 0, 40)

    migration = start_migration(tmp_path, zk_connect, target.port, "first")
    try:
        wait_until(lambda: len(read_target(target.port)) >= len(expected), timeout=60, message="migrated")
        copied = read_target(target.port)
        assert Counter(value for _, value in copied) == Counter(expected)  # each once, wrappers unpacked
        assert {key for key, _ in copied} == {None}  # re-sent with no key, as 0.8.2 does

        more = produce07(source.port, 40, 400)  # kill -9 while these are on their way
        wait_until(
            lambda: len(read_target(target.port)) > len(expected), timeout=60, message="migrating again"
        )
        migration.kill()
        migration.wait(10)
    finally:
        stop(migration)
    expected += more
    expected += produce07(source.port, 440, 20)

    migration = start_migration(tmp_path, zk_connect, target.port, "second")
    try:
        wait_until(
            lambda: set(expected) <= {v for _, v in read_target(target.port)},
            timeout=90,
            message="all migrated",
        )
        copies = Counter(value for _, value in read_target(target.port))
        assert set(copies) == set(expected)  # nothing lost, nothing else
        duplicated = [value for value, n in copies.items() if n > 1]
        # at most the batch in hand when it died (50 messages) plus the wrapper it was in the middle of
        assert len(duplicated) <= 50 + 10
        migration.send_signal(signal.SIGTERM)
        assert migration.wait(30) == 0
        assert "migrated" in (tmp_path / "second.log").read_text()
    finally:
        stop(migration)
