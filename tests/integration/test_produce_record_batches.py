"""Record batches (magic 2) from real clients through Produce v3+, stored as message format v0 on a 3-broker
cluster: kafka-python unpinned (it takes the broker for 2.4 from Produce v8) produces plain, gzip, lz4 and
snappy batches with acks=all, and every replica's log holds exactly what was acknowledged, at the acknowledged
offsets, compressed with the batch's codec; librdkafka (confluent-kafka) with its defaults produces through
the Produce version it picks from ApiVersions and reads its records back. A real ZooKeeper, in-process
brokers."""

from __future__ import annotations

import random

import pytest

kafka = pytest.importorskip("kafka")
confluent_kafka = pytest.importorskip("confluent_kafka")
from kafka import KafkaProducer  # noqa: E402

from tests.integration.test_replication import FAST, leader_port  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.protocol.api_keys import PRODUCE  # noqa: E402
from zkafka.records import format08  # noqa: E402
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

CODECS = {None: NO_COMPRESSION, "gzip": GZIP, "lz4": LZ4, "snappy": SNAPPY}


@pytest.fixture
def cluster(start_broker08):
    return {b: start_broker08(b, **FAST) for b in (1, 2, 3)}


def rf3_topic(cluster, zk_client, topic: str) -> str:
    """An rf-3 one-partition topic whose leader every broker knows; the leader's bootstrap address."""
    create_topic(zk_client, topic, 1, 3, rng=random.Random(1))
    _, port = leader_port(cluster, zk_client, topic)
    return f"127.0.0.1:{port}"


def produce_versions(cluster) -> list[int]:
    """Record the Produce version of every request any broker serves from now on."""
    seen: list[int] = []
    for broker in cluster.values():
        handlers = broker.server.apis._handlers
        for key, version in [k for k in handlers if k[0] == PRODUCE]:

            def recording(request, handler=handlers[(key, version)]):
                seen.append(request.api_version)
                return handler(request)

            handlers[(key, version)] = recording
    return seen


def replica_logs(cluster, topic: str, end: int) -> dict[int, list]:
    """Each replica's ``[(offset, key, value, wrapper codec)]`` once it holds ``end`` messages."""

    def entries(broker) -> list:
        log = broker.server.replica_manager.local_log(topic, 0)
        if log is None:
            return []
        data = log.read(0, 1 << 26, None).read()
        # a wrapper's offset is its last inner message's: each message's codec is the first one at or after it
        tops = [(w.offset, w.codec) for w in format08.iter_messages(data, deep=False)]
        return [
            (m.offset, m.key, m.value, next(c for o, c in tops if o >= m.offset))
            for m in format08.iter_messages(data)
        ]

    for broker_id, broker in cluster.items():
        wait_until(lambda b=broker: len(entries(b)) >= end, 20, message=f"replica {broker_id} holds {end}")
    return {broker_id: entries(broker) for broker_id, broker in cluster.items()}


def test_kafka_python_batches_reach_every_replica_exactly_as_acknowledged(cluster, zk_client):
    bootstrap = rf3_topic(cluster, zk_client, "batches")
    seen = produce_versions(cluster)
    acknowledged = []
    for round_, compression in enumerate(CODECS):
        producer = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", linger_ms=20, compression_type=compression
        )
        try:
            assert producer.config["api_version"] == (2, 5)  # from ApiVersions (DescribeAcls v2): record batches
            sent = [(b"k%d" % i, b"%d-%s-%05d" % (round_, str(compression).encode(), i)) for i in range(40)]
            futures = [producer.send("batches", key=k, value=v, partition=0) for k, v in sent]
            producer.flush(30)
            offsets = [f.get(30).offset for f in futures]
        finally:
            producer.close(10)
        acknowledged += [(o, k, v, CODECS[compression]) for o, (k, v) in zip(offsets, sent, strict=True)]
    assert seen and min(seen) >= 3  # Produce v3+: one record batch per partition
    assert [o for o, *_ in acknowledged] == list(range(len(acknowledged)))
    for broker_id, entries in replica_logs(cluster, "batches", len(acknowledged)).items():
        assert entries == acknowledged, f"replica {broker_id}"


def test_librdkafka_with_its_defaults_produces_through_produce_v3_and_reads_back(cluster, zk_client):
    bootstrap = rf3_topic(cluster, zk_client, "rdk")
    seen = produce_versions(cluster)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    failed, offsets = [], []
    sent = [(b"k%d" % i, b"rdk-%05d" % i) for i in range(50)]
    for key, value in sent:
        producer.produce(
            "rdk", key=key, value=value, partition=0,
            on_delivery=lambda e, m: failed.append(e) if e else offsets.append(m.offset()),
        )  # fmt: skip
    assert producer.flush(30) == 0 and not failed
    assert sorted(offsets) == list(range(50))
    assert seen and min(seen) >= 3
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "rdk", "auto.offset.reset": "earliest"}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition("rdk", 0, 0)])
        got = []
        deadline = 60
        while len(got) < 50 and deadline > 0:
            message = consumer.poll(1)
            deadline -= 1
            if message is not None and message.error() is None:
                got.append((message.offset(), message.key(), message.value()))
    finally:
        consumer.close()
    assert got == [(i, k, v) for i, (k, v) in enumerate(sent)]
    for broker_id, entries in replica_logs(cluster, "rdk", 50).items():
        assert [(o, k, v) for o, k, v, _ in entries] == got, f"replica {broker_id}"
