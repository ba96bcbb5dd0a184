"""Structured Streaming on the 0.8 line: a query written for Spark's Kafka source runs with only the format
name and the connection option changed, exactly once into a file sink across a restart of the query, a
restart of a broker, and a leader killed (replicated topic)."""

from __future__ import annotations

import datetime
import random
import signal
from pathlib import Path

import pytest

from tests.support.consumers08 import start_cluster08
from tests.support.replication import read_all, zk_state
from tests.support.server08 import Client08, produce_request, wait_for_leaders
from tests.support.spark import COLUMNS08, collect_rows, produce08
from zkafka.admin.topics import create_topic
from zkafka.protocol.errors import ErrorCode
from zkafka.records.format08 import build_message_set
from zkafka.utils import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def kafka_query(spark, fmt: str, connection: dict[str, str], out: str, checkpoint: str):
    """A query as a user of Spark's Kafka source writes it; ``fmt`` and ``connection`` are all that vary."""
    rows = (
        spark.readStream.format(fmt)
        .options(**connection)
        .option("subscribePattern", "s-.*")
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "40")
        .option("failOnDataLoss", "true")
        .load()
        .selectExpr("topic", "partition", "offset", "key", "value", "timestamp", "timestampType")
    )
    return (
        rows.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def sink_rows(spark, out: str) -> list[tuple]:
    """The rows of the batches the file sink has committed (none before its first commit)."""
    meta = Path(out) / "_spark_metadata"
    if not meta.is_dir() or not any(p.name.isdigit() for p in meta.iterdir()):
        return []
    return collect_rows(spark.read.parquet(out), COLUMNS08)


def produce(brokers, topic: str, partitions: int, tag: str) -> list[tuple]:
    rows = []
    for p in range(partitions):
        for codec in (0, 1, 0, 2):
            pairs = [(f"{p}-{i}".encode(), f"{topic}/{p}/{tag}/{codec}/{i}".encode()) for i in range(5)]
            rows += produce08(brokers, topic, p, pairs, codec)
    return rows


@pytest.mark.timeout(420)
def test_a_kafka_source_query_is_exactly_once_across_query_and_broker_restarts(
    spark, start_broker08, zk_client, zk_connect, tmp_path
):
    out, checkpoint = str(tmp_path / "sink"), str(tmp_path / "checkpoint")
    brokers = start_cluster08(start_broker08, zk_client, 2, {"s-a": 4})
    expected = produce(brokers, "s-a", 4, "one")  # 80 rows
    bootstrap = ",".join(f"127.0.0.1:{b.port}" for b in brokers)

    query = kafka_query(spark, "zkafka", {"kafka.bootstrap.servers": bootstrap}, out, checkpoint)
    try:
        wait_until(lambda: len(sink_rows(spark, out)) >= 80, 120, interval=0.3, message="the first rows")
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert max(sizes) <= 40 and len(sizes) >= 2, sizes  # maxOffsetsPerTrigger, shared over partitions

        # broker 1 stops and comes back at another port: its partitions are read from it again there
        brokers[1].stop()
        brokers[1] = start_broker08(1)
        with Client08(brokers[0].port) as client:
            wait_for_leaders(client, ["s-a"])
        expected += produce(brokers, "s-a", 4, "two")
        wait_until(
            lambda: len(sink_rows(spark, out)) >= 160, 120, interval=0.3, message="rows after the restart"
        )
    finally:
        query.stop()

    # while the query is down: more data, and a new topic matching the pattern
    expected += produce(brokers, "s-a", 4, "three")
    create_topic(zk_client, "s-b", 2, 1)
    with Client08(brokers[0].port) as client:
        wait_for_leaders(client, ["s-b"])
    expected += produce(brokers, "s-b", 2, "four")

    # the same query resumes from its checkpoint, this time connected through ZooKeeper
    query = kafka_query(spark, "zkafka", {"zookeeper.connect": zk_connect}, out, checkpoint)
    try:
        wait_until(
            lambda: len(sink_rows(spark, out)) >= len(expected), 120, interval=0.3, message="every row"
        )
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink_rows(spark, out) == sorted(expected)  # each row once
    timestamps = spark.read.parquet(out).select("timestamp", "timestampType").distinct().collect()
    # magic 0 has no timestamps: Kafka's NO_TIMESTAMP (-1 ms), as Spark's Kafka source shows it
    no_timestamp = datetime.datetime.fromtimestamp(-0.001)  # Spark gives local time, naive
    assert [(r.timestamp, r.timestampType) for r in timestamps] == [(no_timestamp, -1)]


REPLICATION = {"replica_fetch_wait_max_ms": "100", "replica_lag_time_max_ms": "2000"}


def produce_acked(ports: dict[int, int], zk_client, topic: str, partition: int, tag: str, n: int) -> None:
    """``n`` messages with acks=-1 to the partition's leader now, again while the elected leader does not know
    it leads yet."""
    values = [(None, f"{topic}/{partition}/{tag}/{i:04d}".encode()) for i in range(n)]
    request = produce_request(topic, partition, build_message_set(values), acks=-1)
    retry = (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_FOR_PARTITION,
    )

    def acked():
        with Client08(ports[zk_state(zk_client, topic, partition).leader]) as client:
            (answer,) = client.call(request).topics[0].partitions
        assert answer.error in (0, *retry), f"produce to {topic}-{partition}: error {answer.error}"
        return answer.error == 0

    wait_until(acked, 30, interval=0.1, message=f"{topic}-{partition} acknowledged")


def log_rows(ports: dict[int, int], zk_client, topic: str, partitions: int) -> list[tuple]:
    """Every message below the high watermark of each partition's leader, read over the raw wire client."""
    rows = []
    for p in range(partitions):
        _, messages = read_all(ports[zk_state(zk_client, topic, p).leader], topic, p)
        rows += [(topic, p, offset, None, value) for offset, value in messages]
    return sorted(rows)


@pytest.mark.timeout(420)
def test_a_leader_killed_during_a_streaming_query_loses_no_row_and_duplicates_none(
    spark, broker08_process, zk_client, tmp_path
):
    out, checkpoint = str(tmp_path / "sink"), str(tmp_path / "checkpoint")
    brokers = {b: broker08_process(b, **REPLICATION) for b in (0, 1, 2)}
    ports = {b: proc.port for b, proc in brokers.items()}
    registered = lambda: zk_client.exists("/brokers/ids") and len(zk_client.get_children("/brokers/ids")) == 3  # noqa: E731
    wait_until(registered, 30, message="brokers registered")
    create_topic(zk_client, "s-f", 2, 3, rng=random.Random(7))
    for p in (0, 1):
        wait_until(lambda p=p: (s := zk_state(zk_client, "s-f", p)) and len(s.isr) == 3, 30, message="ISR")
    for p in (0, 1):
        for batch in range(4):
            produce_acked(ports, zk_client, "s-f", p, f"before{batch}", 100)
    before = log_rows(ports, zk_client, "s-f", 2)

    bootstrap = ",".join(f"127.0.0.1:{port}" for port in ports.values())
    query = kafka_query(spark, "zkafka", {"kafka.bootstrap.servers": bootstrap}, out, checkpoint)
    try:
        wait_until(lambda: len(sink_rows(spark, out)) >= 80, 120, interval=0.2, message="the first batches")
        victim = zk_state(zk_client, "s-f", 0).leader
        brokers[victim].signal(signal.SIGKILL)  # mid-query, with most of the backlog still to read
        assert len(sink_rows(spark, out)) < len(before)
        wait_until(
            lambda: (s := zk_state(zk_client, "s-f", 0)).leader not in (victim, -1) and victim not in s.isr,
            60,
            message="a new leader for s-f-0",
        )
        for p in (0, 1):
            produce_acked(ports, zk_client, "s-f", p, "after", 50)
        expected = log_rows(ports, zk_client, "s-f", 2)
        assert (
            expected[: len(before)] != []
            and set(before) <= set(expected)
            and len(expected) >= len(before) + 100
        )
        wait_until(
            lambda: len(sink_rows(spark, out)) >= len(expected), 180, interval=0.5, message="every row"
        )
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink_rows(spark, out) == expected  # every message of the log, each once
