"""The 0.9 group coordinator against a real third-party client: kafka-python told the broker is 0.9 subscribes
with a group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit v2, OffsetFetch v1, LeaveGroup,
Fetch v1, Produce v1). A real ZooKeeper and in-process brokers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402

from tests.support.server08 import Client08, wait_for_leaders  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

TOPIC = "orders"
GROUP = "billing"
COORDINATOR_PROPS = {"num_partitions": "4", "offsets.topic.num.partitions": "3"}


def start_with_topic(start_broker08, **props):
    """A broker with TOPIC created and led (members that subscribe before a topic exists wait for the
    leader's next metadata refresh to get partitions)."""
    broker = start_broker08(0, **COORDINATOR_PROPS, **props)
    client = Client08(broker.port)
    try:
        wait_for_leaders(client, [TOPIC])
    finally:
        client.sock.close()
    return broker


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08).port}"


def produce(bootstrap: str, count: int, start: int = 0) -> set[bytes]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=(0, 9), acks=1, linger_ms=20)
    try:
        values = [b"m-%05d" % i for i in range(start, start + count)]
        futures = [producer.send(TOPIC, key=b"k%d" % i, value=v) for i, v in enumerate(values)]
        producer.flush(30)
        for future in futures:
            future.get(30)
    finally:
        producer.close(10)
    return set(values)


def group_consumer(bootstrap: str, **config) -> KafkaConsumer:
    config = {
        "api_version": (0, 9),
        "group_id": GROUP,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
        "request_timeout_ms": 20000,
    } | config
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, **config)
    consumer.subscribe([TOPIC])
    return consumer


def poll_until(consumers: list[KafkaConsumer], done, timeout: float = 60.0) -> dict[int, list]:
    """Poll every consumer in turn until ``done(received)``; received: consumer index -> [(partition, value)]."""
    received: dict[int, list] = {i: [] for i in range(len(consumers))}
    deadline = time.monotonic() + timeout
    while not done(received):
        assert time.monotonic() < deadline, f"timed out: {[len(v) for v in received.values()]} received"
        for i, consumer in enumerate(consumers):
            for records in consumer.poll(timeout_ms=100).values():
                received[i].extend((r.partition, r.value) for r in records)
    return received


def balanced(*consumers: KafkaConsumer):
    return lambda received: all(len(c.assignment()) == 4 // len(consumers) for c in consumers)


def test_two_consumers_split_the_partitions_and_read_everything_once_then_a_restart_resumes(bootstrap):
    first, second = group_consumer(bootstrap), group_consumer(bootstrap)
    try:
        poll_until([first, second], balanced(first, second))
        assert not first.assignment() & second.assignment()
        assert first.assignment() | second.assignment() == {TopicPartition(TOPIC, p) for p in range(4)}
        sent = produce(bootstrap, 200)
        received = poll_until([first, second], lambda r: sum(map(len, r.values())) >= len(sent))
        assert sorted(v for got in received.values() for _, v in got) == sorted(sent)  # each once
        for consumer, got in zip((first, second), received.values(), strict=True):
            assert {p for p, _ in got} <= {tp.partition for tp in consumer.assignment()}
            assert got  # both took part
        first.commit()
        second.commit()
    finally:
        first.close()
        second.close()
    more = produce(bootstrap, 20, start=200)
    restarted = group_consumer(bootstrap)
    try:
        received = poll_until([restarted], lambda r: len(r[0]) >= len(more))
        assert sorted(v for _, v in received[0]) == sorted(more)  # resumed from the commits
        committed = {p: restarted.committed(TopicPartition(TOPIC, p)) for p in range(4)}
        assert sum(committed.values()) == 200
    finally:
        restarted.close()


class Member:
    """A group member in a child process: kafka-python (tests/support/kafka_python_member.py) or another
    ``module`` printing the same lines (tests/support/zkafka_member.py)."""

    def __init__(
        self,
        bootstrap: str,
        session_timeout_ms: int = 2000,
        module: str = "tests.support.kafka_python_member",
    ) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                bootstrap,
                GROUP,
                TOPIC,
                str(session_timeout_ms),
            ],
            stdout=subprocess.PIPE,
            stderr=open(os.environ.get("MEMBER_STDERR", os.devnull), "a"),
            text=True,
        )
        self.assigned: list[set[int]] = []
        self.records: list[tuple[int, int, bytes]] = []
        self.committed = 0  # records printed before the last "committed" line
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            kind, _, rest = line.strip().partition(" ")
            if kind == "assigned":
                self.assigned.append({int(p) for p in rest.split(",") if p})
            elif kind == "record":
                partition, offset, value = rest.split(" ")
                self.records.append((int(partition), int(offset), value.encode()))
            elif kind == "committed":
                self.committed = len(self.records)

    def partitions(self) -> set[int]:
        return self.assigned[-1] if self.assigned else set()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._reader.join(5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill()


@pytest.fixture
def members(start_broker08):
    broker = start_with_topic(start_broker08, **{"group.min.session.timeout.ms": "1000"})
    started: list[Member] = []

    def start(count: int, module: str = "tests.support.kafka_python_member") -> list[Member]:
        new = [Member(f"127.0.0.1:{broker.port}", module=module) for _ in range(count)]
        started.extend(new)
        return new

    start.bootstrap = f"127.0.0.1:{broker.port}"
    yield start
    for member in started:
        member.stop()


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["tests.support.kafka_python_member", "tests.support.zkafka_member"],
    ids=["kafka-python", "zkafka"],
)
def test_a_member_killed_9_loses_its_partitions_after_the_session_timeout_and_no_message_is_lost(
    members, module
):
    a, b = members(2, module)
    wait_until(lambda: len(a.partitions()) == 2 and len(b.partitions()) == 2, 60, message="a balanced group")
    assert not a.partitions() & b.partitions()
    first = produce(members.bootstrap, 100)
    wait_until(lambda: len(a.records) + len(b.records) >= 100, 30, message="the first 100 read")
    wait_until(lambda: a.committed == len(a.records), 10, message="a's commit")
    uncommitted_tail = len(a.records) - a.committed
    a.kill()
    killed_at = time.monotonic()
    second = produce(members.bootstrap, 100, start=100)
    wait_until(lambda: b.partitions() == {0, 1, 2, 3}, 30, message="b owns every partition")
    moved_after = time.monotonic() - killed_at
    wait_until(lambda: {v for _, _, v in b.records} >= second, 30, message="b read the second 100")
    values = [v for _, _, v in a.records + b.records]
    assert set(values) == first | second  # nothing lost
    assert len(values) - len(set(values)) <= uncommitted_tail  # duplicates only from a's uncommitted tail
    assert moved_after > 1.5  # the session timeout (2 s) passed first


@pytest.mark.slow
def test_a_mixed_group_of_kafka_python_and_zkafka_members_splits_the_topic_and_reads_everything_once(members):
    (a,) = members(1)
    (b,) = members(1, "tests.support.zkafka_member")
    wait_until(lambda: len(a.partitions()) == 2 and len(b.partitions()) == 2, 60, message="a balanced group")
    assert a.partitions() | b.partitions() == {0, 1, 2, 3}
    sent = produce(members.bootstrap, 200)
    wait_until(lambda: len(a.records) + len(b.records) >= 200, 30, message="everything read")
    values = [v for _, _, v in a.records + b.records]
    assert sorted(values) == sorted(sent)  # each once
    assert {p for p, _, _ in a.records} <= a.partitions() and {p for p, _, _ in b.records} <= b.partitions()
    print(f"mixed group: kafka-python read {len(a.records)}, zkafka read {len(b.records)} of {len(sent)}")
