"""A topic with ``message.format.version=2.2`` on a 2-broker cluster: kafka-python unpinned and librdkafka with
its defaults write record batches with headers and timestamps, and every replica's log holds them as written
(producer's codec, headers, timestamps; the follower appended the leader's batches as they are), each segment
with a ``.timeindex``; confluent-kafka and kafka-python read headers and timestamps back unchanged, and a
kafka-python client pinned to 0.8.2 reads the same topic converted down to magic 0; a LogAppendTime topic
stamps its batches and answers the time. A real ZooKeeper, in-process brokers."""

from __future__ import annotations

import os
import random

import pytest

kafka = pytest.importorskip("kafka")
confluent_kafka = pytest.importorskip("confluent_kafka")

from tests.integration.test_replication import FAST, leader_port  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.records.compression import GZIP, NO_COMPRESSION  # noqa: E402
from zkafka.records.record_batch import read_batches  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000
V2 = {"message.format.version": "2.2"}


@pytest.fixture
def cluster(start_broker08):
    return {b: start_broker08(b, **FAST) for b in (1, 2)}


def v2_topic(cluster, zk_client, topic: str) -> str:
    create_topic(zk_client, topic, 1, 2, V2, rng=random.Random(1))
    _, port = leader_port(cluster, zk_client, topic)
    return f"127.0.0.1:{port}"


def replica_batches(cluster, topic: str, count: int) -> dict[int, list]:
    """Each replica's record batches once they hold ``count`` records."""

    def batches(broker) -> list:
        log = broker.server.replica_manager.local_log(topic, 0)
        return [] if log is None else list(read_batches(log.read(0, 1 << 26, None).read()))

    for broker_id, broker in cluster.items():
        wait_until(
            lambda b=broker: sum(len(x.records) for x in batches(b)) >= count,
            20,
            message=f"replica {broker_id}",
        )
    return {broker_id: batches(broker) for broker_id, broker in cluster.items()}


def pinned_values(bootstrap: str, topic: str) -> list:
    consumer = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap,
        api_version=(0, 8, 2),
        consumer_timeout_ms=3000,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        consumer.assign([kafka.TopicPartition(topic, 0)])
        consumer.seek_to_beginning()
        return [(r.offset, r.key, r.value) for r in consumer]
    finally:
        consumer.close()


def test_kafka_python_batches_are_stored_as_written_and_read_down_converted(cluster, zk_client):
    bootstrap = v2_topic(cluster, zk_client, "v2")
    sent = []
    for codec, name in ((NO_COMPRESSION, None), (GZIP, "gzip")):
        producer = kafka.KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", linger_ms=20, compression_type=name
        )
        try:
            for i in range(20):
                record = (
                    b"k%d" % i,
                    b"%s-%02d" % (str(name).encode(), i),
                    T0 + len(sent),
                    [("h", b"%d" % i)],
                )
                producer.send(
                    "v2",
                    key=record[0],
                    value=record[1],
                    partition=0,
                    timestamp_ms=record[2],
                    headers=record[3],
                )
                sent.append((len(sent), codec) + record)
            producer.flush(30)
        finally:
            producer.close(10)
    for broker_id, batches in replica_batches(cluster, "v2", len(sent)).items():
        stored = [
            (
                r.offset,
                b.header.compression,
                r.key,
                r.value,
                r.timestamp,
                [(h.key, h.value) for h in r.headers],
            )
            for b in batches
            for r in b.records
        ]
        assert stored == sent, f"replica {broker_id}"
        assert all(b.header.producer_id == -1 and b.header.timestamp_type == 0 for b in batches)
        log = cluster[broker_id].server.replica_manager.local_log("v2", 0)
        assert os.path.exists(log.segments[-1].path[: -len(".log")] + ".timeindex")
        assert log.fetch_offset_by_timestamp(T0 + 25) == (T0 + 25, 25)
    assert pinned_values(bootstrap, "v2") == [(o, k, v) for o, _, k, v, _, _ in sent]


def test_librdkafka_messages_are_stored_as_batches_and_read_back(cluster, zk_client):
    bootstrap = v2_topic(cluster, zk_client, "rdk-v2")
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    failed = []
    sent = [(b"k%d" % i, b"rdk-%03d" % i) for i in range(30)]
    for key, value in sent:
        producer.produce(
            "rdk-v2", key=key, value=value, partition=0, on_delivery=lambda e, m: e and failed.append(e)
        )
    assert producer.flush(30) == 0 and not failed
    stored = [(r.key, r.value) for b in replica_batches(cluster, "rdk-v2", 30)[1] for r in b.records]
    assert stored == sent
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "rdk-v2", "auto.offset.reset": "earliest"}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition("rdk-v2", 0, 0)])
        got = []
        for _ in range(60):
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                got.append((message.key(), message.value()))
            if len(got) == len(sent):
                break
    finally:
        consumer.close()
    assert got == sent
    assert pinned_values(bootstrap, "rdk-v2") == [(i, k, v) for i, (k, v) in enumerate(sent)]


def test_a_log_append_time_topic_stamps_the_batches_and_answers_the_time(start_broker08, zk_client):
    broker = start_broker08(0)
    config = {**V2, "message.timestamp.type": "LogAppendTime"}
    create_topic(zk_client, "lat", 1, 1, config)
    wait_until(lambda: broker.server.replica_manager.local_log("lat", 0) is not None, 20, message="lat led")
    producer = kafka.KafkaProducer(bootstrap_servers=f"127.0.0.1:{broker.port}", acks=1)
    try:
        metadata = producer.send("lat", value=b"v", timestamp_ms=T0).get(30)
    finally:
        producer.close(10)
    log = broker.server.replica_manager.local_log("lat", 0)
    (batch,) = read_batches(log.read(0, 1 << 20, None).read())
    assert batch.header.timestamp_type == 1 and batch.header.max_timestamp > T0
    assert metadata.timestamp == batch.header.max_timestamp  # Produce v2+'s log_append_time_ms


def test_librdkafka_headers_and_timestamps_come_back_unchanged(cluster, zk_client):
    bootstrap = v2_topic(cluster, zk_client, "hdr")
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
    failed = []
    sent = [(b"k%d" % i, b"v%d" % i, T0 + i, [("trace", b"t%d" % i), ("n", None)]) for i in range(30)]
    for key, value, timestamp, headers in sent:
        producer.produce(
            "hdr", key=key, value=value, partition=0, timestamp=timestamp, headers=headers,
            on_delivery=lambda e, m: e and failed.append(e),
        )  # fmt: skip
    assert producer.flush(30) == 0 and not failed
    stored = [
        (r.key, r.value, r.timestamp, [tuple(h) for h in r.headers])
        for b in replica_batches(cluster, "hdr", 30)[2]
        for r in b.records
    ]
    assert stored == [(k, v, t, h) for k, v, t, h in sent]  # as librdkafka wrote them (broker 2's replica)
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "hdr", "auto.offset.reset": "earliest"}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition("hdr", 0, 0)])
        got = []
        for _ in range(60):
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                got.append((message.key(), message.value(), message.timestamp()[1], message.headers()))
            if len(got) == len(sent):
                break
    finally:
        consumer.close()
    assert got == sent
    reader = kafka.KafkaConsumer(
        bootstrap_servers=bootstrap,
        consumer_timeout_ms=3000,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    try:
        reader.assign([kafka.TopicPartition("hdr", 0)])
        read = [(r.key, r.value, r.timestamp, list(r.headers)) for r in reader]
    finally:
        reader.close()
    assert read == sent
    assert pinned_values(bootstrap, "hdr") == [(i, k, v) for i, (k, v, _, _) in enumerate(sent)]


def test_a_topic_with_compression_type_stores_its_codec_whatever_the_producer_sends(cluster, zk_client):
    """compression.type=gzip on the topic: librdkafka's idempotent producer sends snappy batches and every
    replica stores gzip batches with the producer's id and sequences; kafka-python reads every value back."""
    create_topic(zk_client, "gz", 1, 2, {**V2, "compression.type": "gzip"}, rng=random.Random(1))
    _, port = leader_port(cluster, zk_client, "gz")
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": True, "compression.type": "snappy"}
    )
    values = [b"value-%03d" % i for i in range(50)]
    for value in values:
        producer.produce("gz", value=value, partition=0)
    assert producer.flush(30) == 0
    for broker_id, batches in replica_batches(cluster, "gz", len(values)).items():
        assert {b.header.compression for b in batches} == {GZIP}, f"replica {broker_id}"
        assert all(b.header.producer_id >= 0 for b in batches)
        assert [r.value for b in batches for r in b.records] == values
    consumer = kafka.KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", consumer_timeout_ms=3000)
    try:
        consumer.assign([kafka.TopicPartition("gz", 0)])
        consumer.seek_to_beginning()
        assert [r.value for r in consumer] == values
    finally:
        consumer.close()
