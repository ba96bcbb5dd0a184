"""Third-party clients that ask the broker what it speaks (ApiVersions) instead of being told its version:
kafka-python 2.x unpinned (opens with ApiVersions v4, retries v3 on UNSUPPORTED_VERSION, takes the broker
for 2.4 from Produce v8 and writes record batches, which the broker converts to magic 0) and librdkafka through
confluent-kafka (ApiVersions v3; and, told ``api.version.request=false`` with
``broker.version.fallback=0.9.0.1``, no ApiVersions at all). Each produces, consumes in a group, commits,
and a restarted member resumes from the commits. A real ZooKeeper and in-process brokers."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, start_with_topic  # noqa: E402

pytestmark = pytest.mark.integration

GROUP = "unpinned"


@pytest.fixture
def bootstrap(start_broker08):
    return f"127.0.0.1:{start_with_topic(start_broker08).port}"


def values(start: int, count: int) -> list[bytes]:
    return [b"m-%05d" % i for i in range(start, start + count)]


# -- kafka-python, no api_version --------------------------------------------------------------------------


def kp_produce(bootstrap: str, sent: list[bytes], compression: str | None = None) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=10, compression_type=compression)
    try:
        assert producer.config["api_version"] == (2, 5)  # learnt from ApiVersions (DescribeAcls v2): record batches
        futures = [producer.send(TOPIC, key=b"k%d" % i, value=v) for i, v in enumerate(sent)]
        producer.flush(30)
        for future in futures:
            future.get(30)
    finally:
        producer.close(10)


def kp_consumer(bootstrap: str) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    consumer.subscribe([TOPIC])
    return consumer


def kp_poll(consumers: list[KafkaConsumer], count: int, until=lambda: True) -> list[list[bytes]]:
    """Poll each in turn until ``count`` values arrived and ``until()``; what each received."""
    received: list[list[bytes]] = [[] for _ in consumers]
    deadline = time.monotonic() + 60
    while sum(map(len, received)) < count or not until():
        assert time.monotonic() < deadline, f"timed out: {[len(r) for r in received]} of {count} received"
        for got, consumer in zip(received, consumers, strict=True):
            for records in consumer.poll(timeout_ms=100).values():
                got.extend(r.value for r in records)
    return received


def test_kafka_python_unpinned_produces_consumes_in_a_group_commits_and_resumes(bootstrap):
    sent = values(0, 60) + values(60, 60) + values(120, 60)
    first, second = kp_consumer(bootstrap), kp_consumer(bootstrap)
    try:
        kp_poll([first, second], 0, until=lambda: len(first.assignment()) == len(second.assignment()) == 2)
        kp_produce(bootstrap, sent[:60])
        kp_produce(bootstrap, sent[60:120], "gzip")
        kp_produce(bootstrap, sent[120:], "snappy")
        received = kp_poll([first, second], len(sent))
        assert sorted(received[0] + received[1]) == sorted(sent)  # each once
        assert not first.assignment() & second.assignment()
        first.commit()
        second.commit()
    finally:
        first.close()
        second.close()
    more = values(180, 20)
    kp_produce(bootstrap, more)
    restarted = kp_consumer(bootstrap)
    try:
        assert sorted(kp_poll([restarted], len(more))[0]) == sorted(more)
        committed = [restarted.committed(TopicPartition(TOPIC, p)) or 0 for p in range(4)]
        assert sum(committed) == len(sent)
    finally:
        restarted.close()


# -- librdkafka (confluent-kafka) --------------------------------------------------------------------------

TOLD_0_9 = {"api.version.request": False, "broker.version.fallback": "0.9.0.1"}


@pytest.mark.parametrize("told", [{}, TOLD_0_9], ids=["api-versions", "told-0.9.0.1"])
def test_librdkafka_produces_consumes_in_a_group_commits_and_resumes(bootstrap, told):
    confluent_kafka = pytest.importorskip("confluent_kafka")

    def produce(sent: list[bytes]) -> None:
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": 1, **told})
        failed = []
        for i, value in enumerate(sent):
            producer.produce(
                TOPIC, key=b"k%d" % i, value=value, on_delivery=lambda e, m: e and failed.append(e)
            )
        assert producer.flush(30) == 0 and not failed

    def consumer():
        c = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,  # librdkafka's 45 s default is over 0.9's group.max.session.timeout.ms
                "heartbeat.interval.ms": 500,
                **told,
            }
        )
        c.subscribe([TOPIC])
        return c

    def poll(consumers, count: int, until=lambda: True) -> list[list[bytes]]:
        received: list[list[bytes]] = [[] for _ in consumers]
        deadline = time.monotonic() + 60
        while sum(map(len, received)) < count or not until():
            assert time.monotonic() < deadline, f"timed out: {[len(r) for r in received]} of {count} received"
            for got, c in zip(received, consumers, strict=True):
                message = c.poll(0.1)
                if message is not None:
                    assert not message.error(), message.error()
                    got.append(message.value())
        return received

    sent = values(0, 100)
    first, second = consumer(), consumer()
    try:
        poll([first, second], 0, until=lambda: len(first.assignment()) == len(second.assignment()) == 2)
        produce(sent)
        received = poll([first, second], len(sent))
        assert sorted(received[0] + received[1]) == sorted(sent)
        for c, got in zip((first, second), received, strict=True):
            if got:  # librdkafka refuses a commit with nothing consumed (_NO_OFFSET)
                c.commit(asynchronous=False)
    finally:
        first.close()
        second.close()
    more = values(100, 20)
    produce(more)
    restarted = consumer()
    try:
        assert sorted(poll([restarted], len(more))[0]) == sorted(more)
        committed = restarted.committed([confluent_kafka.TopicPartition(TOPIC, p) for p in range(4)], 10)
        assert sum(max(tp.offset, 0) for tp in committed) == len(sent)
    finally:
        restarted.close()
