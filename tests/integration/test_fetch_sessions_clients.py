"""Real consumers unpinned, with their defaults, on Fetch v11 and ListOffsets v5: librdkafka (confluent-kafka)
negotiates both and reads everything produced; kafka-python 2.3 (Fetch v10, ListOffsets v5) does too, through an incremental fetch session
(KIP-227) it keeps with the broker: the broker's session cache holds its session, whose epoch moved on with
each incremental fetch. A real ZooKeeper and an in-process broker."""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer  # noqa: E402

from tests.integration.test_coordinator_kafka_python import TOPIC, start_with_topic  # noqa: E402

pytestmark = pytest.mark.integration


def produce(bootstrap: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=10)
    try:
        for future in [producer.send(TOPIC, value=v) for v in values]:
            future.get(30)
    finally:
        producer.close(10)


def test_librdkafka_consumes_with_fetch_v11_and_list_offsets_v5(start_broker08, served):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    bootstrap = f"127.0.0.1:{start_with_topic(start_broker08).port}"
    sent = [b"r-%04d" % i for i in range(200)]
    produce(bootstrap, sent)
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "rdkafka-fetch", "auto.offset.reset": "latest"}
    )
    try:
        consumer.assign(
            [confluent_kafka.TopicPartition(TOPIC, p, confluent_kafka.OFFSET_BEGINNING) for p in range(4)]
        )
        received: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(received) < len(sent):
            assert time.monotonic() < deadline, f"{len(received)} of {len(sent)} received"
            message = consumer.poll(0.2)
            if message is not None:
                assert not message.error(), message.error()
                received.append(message.value())
        assert sorted(received) == sent
        marks = [
            consumer.get_watermark_offsets(confluent_kafka.TopicPartition(TOPIC, p), 10) for p in range(4)
        ]
        assert [low for low, _ in marks] == [0] * 4 and sum(high for _, high in marks) == len(
            sent
        )  # ListOffsets
    finally:
        consumer.close()
    assert {"FetchRequestV11", "ListOffsetsRequestV5"} <= served()


def test_kafka_python_consumes_through_an_incremental_fetch_session(start_broker08, served):
    broker = start_with_topic(start_broker08)
    bootstrap = f"127.0.0.1:{broker.port}"
    sessions = broker.server.apis.fetch_sessions
    consumer = KafkaConsumer(
        TOPIC, bootstrap_servers=bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100
    )
    received: list[bytes] = []

    def poll_until(count: int, until=lambda: True) -> None:
        deadline = time.monotonic() + 60
        while len(received) < count or not until():
            assert time.monotonic() < deadline, f"{len(received)} of {count} received"
            for records in consumer.poll(timeout_ms=200).values():
                received.extend(r.value for r in records)

    def epoch() -> int:
        return max((s.epoch for s in list(sessions.sessions.values())), default=0)

    try:
        first, second = [b"p-%04d" % i for i in range(100)], [b"q-%04d" % i for i in range(100)]
        produce(bootstrap, first)
        poll_until(len(first), until=lambda: epoch() > 2)  # the session opened and fetched incrementally
        before = epoch()
        produce(bootstrap, second)
        poll_until(len(first) + len(second))
        assert sorted(received) == first + second  # each once
        assert len(sessions) == 1 and epoch() > before and sessions.total_partitions == 4
    finally:
        consumer.close()
    assert {"FetchRequestV10", "FetchRequestV11"} & served()  # kafka-python 2.3 asks v10
