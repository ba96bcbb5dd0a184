"""The zkafka source on the 0.8 line (batch), with a real ZooKeeper, real 0.8 brokers and a local Spark: the
rows and options of Spark's Kafka source, logical offsets, reads that stop at the high watermark."""

from __future__ import annotations

import datetime
import json

import pytest

from tests.support.consumers08 import start_cluster08
from tests.support.server08 import Client08, wait_for_leaders
from tests.support.spark import COLUMNS08, collect_rows, produce08
from zkafka.admin.topics import create_topic

pytestmark = [pytest.mark.spark, pytest.mark.integration]

T0 = 1_700_000_000_000  # record timestamps (ms)


def kafka_read(spark, brokers, **options):
    """A batch read written as for Spark's Kafka source, but for the format name."""
    reader = spark.read.format("zkafka").option(
        "kafka.bootstrap.servers", ",".join(f"127.0.0.1:{b.port}" for b in brokers)
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def fill(brokers, topics: dict[str, int]) -> list[tuple]:
    """Keyed and keyless messages in plain and compressed sets (gzip, snappy, lz4 last) of 7, in every partition."""
    rows = []
    for topic, count in topics.items():
        for p in range(count):
            for codec in (0, 1, 2, 0, 3):
                pairs = [
                    (f"k{i}".encode() if i % 2 else None, f"{topic}/{p}/{codec}/{i}".encode())
                    for i in range(7)
                ]
                rows += produce08(brokers, topic, p, pairs, codec)
    return rows


@pytest.mark.timeout(240)
def test_batch_reads_0_8_topics_as_spark_kafka_source_rows(spark, start_broker08, zk_client, zk_connect):
    brokers = start_cluster08(start_broker08, zk_client, 2, {"alpha": 3, "beta": 2})
    expected = fill(brokers, {"alpha": 3, "beta": 2})

    df = kafka_read(spark, brokers, subscribe="alpha,beta")
    assert [f.name for f in df.schema.fields] == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    assert collect_rows(df, COLUMNS08) == sorted(expected)
    assert df.rdd.getNumPartitions() == 5
    # magic 0: Kafka's NO_TIMESTAMP (-1 ms) and NO_TIMESTAMP_TYPE, as Spark's Kafka source shows them
    no_timestamp = datetime.datetime.fromtimestamp(-0.001)  # Spark gives local time, naive
    assert {(r.timestamp, r.timestampType) for r in df.select("timestamp", "timestampType").collect()} == {
        (no_timestamp, -1)
    }

    # zookeeper.connect finds the line in ZooKeeper and reads the same rows
    by_zk = (
        spark.read.format("zkafka").option("zookeeper.connect", zk_connect).option("subscribePattern", "al.*")
    )
    assert collect_rows(by_zk.load(), COLUMNS08) == sorted(r for r in expected if r[0] == "alpha")

    # assign, and JSON offsets as Spark's: inside a compressed set, -2 for earliest, -1 for latest
    start, end = 9, 23  # set 2 (gzip) holds offsets 7..13, set 3 (snappy) 14..20
    rows = collect_rows(
        kafka_read(
            spark,
            brokers,
            assign=json.dumps({"alpha": [1], "beta": [0, 1]}),
            startingOffsets=json.dumps({"alpha": {"1": start}, "beta": {"0": -2, "1": 20}}),
            endingOffsets=json.dumps({"alpha": {"1": end}, "beta": {"0": 3, "1": -1}}),
        ),
        COLUMNS08,
    )
    want = [r for r in expected if r[:2] == ("alpha", 1) and start <= r[2] < end]
    want += [r for r in expected if r[:2] == ("beta", 0) and r[2] < 3]
    want += [r for r in expected if r[:2] == ("beta", 1) and r[2] >= 20]
    assert rows == sorted(want)

    # minPartitions cuts ranges at any offset: more tasks, the same rows
    split = kafka_read(spark, brokers, subscribe="alpha", minPartitions="12")
    assert split.rdd.getNumPartitions() >= 12
    assert collect_rows(split, COLUMNS08) == sorted(r for r in expected if r[0] == "alpha")


@pytest.mark.timeout(240)
def test_record_batches_give_timestamps_types_and_headers(spark, start_broker08, zk_client):
    """A message.format.version=2.2 topic written by librdkafka: with includeHeaders=true the rows carry the
    records' timestamps (CreateTime), timestamp type 0 and headers (a null header value stays null)."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    broker = start_broker08(0)
    create_topic(zk_client, "v2", 1, 1, {"message.format.version": "2.2"})
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["v2"])
    sent = [(b"k%d" % i, b"v%d" % i, T0 + i, [("trace", b"t%d" % i), ("n", None)]) for i in range(20)]
    producer = confluent_kafka.Producer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "linger.ms": 20})
    for key, value, timestamp, headers in sent:
        producer.produce("v2", key=key, value=value, partition=0, timestamp=timestamp, headers=headers)
    assert producer.flush(30) == 0

    df = kafka_read(spark, [broker], subscribe="v2", includeHeaders="true")
    assert [f.name for f in df.schema.fields][-3:] == ["timestamp", "timestampType", "headers"]
    rows = df.orderBy("offset").collect()
    assert [(r.key, r.value, r.offset, r.timestampType) for r in rows] == [
        (bytes(k), bytes(v), i, 0) for i, (k, v, _, _) in enumerate(sent)
    ]
    assert [int(r.timestamp.timestamp() * 1000) for r in rows] == [t for _, _, t, _ in sent]
    assert [[(h.key, h.value and bytes(h.value)) for h in r.headers] for r in rows] == [h for *_, h in sent]
    assert "headers" not in kafka_read(spark, [broker], subscribe="v2").columns
