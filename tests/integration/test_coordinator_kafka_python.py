"""The 0.9 group coordinator against a real third-party client: kafka-python told the broker is 0.9 subscribes
with a group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit v2, OffsetFetch v1, LeaveGroup,
Fetch v1, Produce v1). A real ZooKeeper and in-process brokers."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402

pytestmark = pytest.mark.integration

TOPIC = "orders"
GROUP = "billing"
COORDINATOR_PROPS = {"num_partitions": "4", "offsets.topic.num.partitions": "3"}


@pytest.fixture
def bootstrap(start_broker08):
    broker = start_broker08(0, **COORDINATOR_PROPS)
    return f"127.0.0.1:{broker.port}"


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
