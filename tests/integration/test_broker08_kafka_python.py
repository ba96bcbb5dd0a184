"""A real third-party 0.8 client against the 0.8 broker: kafka-python (2.x, told the broker is 0.8.2/0.8.1).

It produces keyed messages with acks=1, plain, gzip and snappy; KafkaConsumer reads them back (Fetch v0),
lists offsets (ListOffsets v0), and, told the broker is 0.8.1, commits and fetches offsets with
OffsetCommit/OffsetFetch v0, which the broker keeps in ZooKeeper. A real ZooKeeper and an in-process broker.
"""

from __future__ import annotations

import time

import pytest

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

pytestmark = pytest.mark.integration

TOPIC = "kp"
CODECS = [None, "gzip", "snappy"]


@pytest.fixture
def bootstrap(start_broker08):
    broker = start_broker08(0, num_partitions="2")
    return f"127.0.0.1:{broker.port}"


def produce_all(bootstrap: str) -> list[tuple[int, int, bytes, bytes]]:
    """Five keyed messages per codec; (partition, offset, key, value) as the broker acknowledged them."""
    sent = []
    for codec in CODECS:
        producer = KafkaProducer(
            bootstrap_servers=bootstrap, api_version=(0, 8, 2), acks=1, compression_type=codec, linger_ms=50
        )
        try:
            pairs = [
                (b"key-%s-%d" % (str(codec).encode(), i), b"value-%s-%d" % (str(codec).encode(), i))
                for i in range(5)
            ]
            futures = [(producer.send(TOPIC, key=k, value=v), k, v) for k, v in pairs]
            producer.flush(30)
            for future, key, value in futures:
                meta = future.get(30)
                sent.append((meta.partition, meta.offset, key, value))
        finally:
            producer.close(10)
    return sent


def consumer(bootstrap: str, **config) -> KafkaConsumer:
    config = {"api_version": (0, 8, 2), "auto_offset_reset": "earliest", "consumer_timeout_ms": 3000} | config
    return KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **config)


def partitions() -> list[TopicPartition]:
    return [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]


def test_kafka_python_produces_keyed_plain_gzip_and_snappy_and_reads_it_all_back(bootstrap):
    sent = produce_all(bootstrap)
    for p in (0, 1):  # the broker numbers each partition's messages 0, 1, 2, ... whatever the codec
        offsets = sorted(offset for partition, offset, _, _ in sent if partition == p)
        assert offsets == list(range(len(offsets)))
    c = consumer(bootstrap)
    try:
        c.assign(partitions())
        received = [(m.partition, m.offset, m.key, m.value) for m in c]
    finally:
        c.close()
    assert sorted(received) == sorted(sent)
    assert {partition for partition, _, _, _ in sent} == {0, 1}  # keys spread over both partitions


def test_kafka_python_lists_the_earliest_and_latest_offsets(bootstrap):
    sent = produce_all(bootstrap)
    c = consumer(bootstrap)
    try:
        assert c.beginning_offsets(partitions()) == {tp: 0 for tp in partitions()}
        assert c.end_offsets(partitions()) == {
            tp: sum(1 for partition, _, _, _ in sent if partition == tp.partition) for tp in partitions()
        }
    finally:
        c.close()


def test_kafka_python_commits_and_fetches_offsets_kept_in_zookeeper(bootstrap, zk_client):
    produce_all(bootstrap)
    first = consumer(bootstrap, api_version=(0, 8, 1), group_id="billing")
    try:
        first.assign(partitions())
        assert first.committed(partitions()[0]) is None  # nothing yet: the broker answers -1 with error 3
        first.commit(
            {partitions()[0]: OffsetAndMetadata(3, "", -1), partitions()[1]: OffsetAndMetadata(1, "", -1)}
        )
        assert first.committed(partitions()[0]) == 3
    finally:
        first.close()
    assert zk_client.get(f"/consumers/billing/offsets/{TOPIC}/0")[0] == b"3"
    assert zk_client.get(f"/consumers/billing/offsets/{TOPIC}/1")[0] == b"1"
    second = consumer(bootstrap, api_version=(0, 8, 1), group_id="billing")
    try:
        second.assign(partitions())
        first_offsets = {}
        for m in second:  # resumes from the committed offsets, not from the earliest
            first_offsets.setdefault(m.partition, m.offset)
    finally:
        second.close()
    assert first_offsets == {0: 3, 1: 1}


def test_kafka_python_long_poll_gets_a_message_as_soon_as_it_is_produced(bootstrap):
    produce_all(bootstrap)
    c = consumer(bootstrap, fetch_max_wait_ms=20_000, fetch_min_bytes=1, request_timeout_ms=40_000)
    producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=(0, 8, 2), acks=1)
    try:
        c.assign([TopicPartition(TOPIC, 0)])
        c.seek_to_end()
        c.position(TopicPartition(TOPIC, 0))
        c.poll(timeout_ms=200)  # the consumer's fetch is now parked at the log end
        sent = time.monotonic()
        producer.send(TOPIC, value=b"late", partition=0).get(10)
        records = c.poll(timeout_ms=15_000)
        elapsed = time.monotonic() - sent
        assert [r.value for r in records.get(TopicPartition(TOPIC, 0), [])] == [b"late"]
        assert elapsed < 15  # before fetch_max_wait_ms (20 s): the append completed the parked fetch
    finally:
        producer.close(10)
        c.close()
