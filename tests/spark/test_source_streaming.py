"""Structured Streaming from the zkafka source into a Parquet file sink: exactly once across a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.spark import COLUMNS, RawProducer, collect_rows
from tests.support.zookeeper import wait_topic_registered
from zkafka.utils import wait_until

try:
    from pyspark.sql.streaming.datasource import ReadMaxBytes  # noqa: F401

    READ_LIMITS = True
except ImportError:
    READ_LIMITS = False

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def start_query(spark, zk_connect: str, out: str, checkpoint: str, available_now: bool = False, **options):
    reader = (
        spark.readStream.format("zkafka")
        .option("zookeeper.connect", zk_connect)
        .option("subscribePattern", "s-.*")
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    writer = (
        reader.load()
        .select(*COLUMNS)
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
    )
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="200 milliseconds").start()


def sink_rows(spark, out: str) -> list[tuple]:
    """The rows of the batches the file sink has committed (none before its first commit)."""
    meta = Path(out) / "_spark_metadata"
    if not meta.is_dir() or not any(p.name.isdigit() for p in meta.iterdir()):
        return []
    return collect_rows(spark.read.parquet(out), COLUMNS)


@pytest.mark.timeout(300)
def test_stream_to_parquet_is_exactly_once_across_a_restart(
    spark, start_broker, zk_connect, zk_client, tmp_path
):
    out, checkpoint = str(tmp_path / "sink"), str(tmp_path / "checkpoint")
    broker0 = start_broker(0, num_partitions="2")
    expected = []

    def produce(producer, broker_id, topic, partition, n, tag, codec=0):
        payloads = [f"{topic}/{partition}/{tag}/{i:03d}".encode() for i in range(n)]
        for value, offset, nxt in producer.send(topic, partition, payloads, codec):
            expected.append((topic, broker_id, partition, value, offset, nxt))

    with RawProducer(broker0.port) as p0:
        for partition in (0, 1):
            produce(p0, 0, "s-a", partition, 10, "start")
    wait_topic_registered(zk_client, "s-a", [0])

    # a small byte budget per trigger: micro-batches of about 700 bytes, each cut at a message boundary
    query = start_query(spark, zk_connect, out, checkpoint, maxBytesPerTrigger="700")
    try:
        wait_until(lambda: len(sink_rows(spark, out)) >= 20, 90, interval=0.2, message="the first batch")
        with RawProducer(broker0.port) as p0:
            for partition in (0, 1):
                produce(p0, 0, "s-a", partition, 300, "first")
            produce(p0, 0, "s-a", 0, 10, "gz", codec=1)
        wait_until(lambda: len(sink_rows(spark, out)) >= 60, 90, interval=0.2, message="capped batches")
        # a new broker and a new topic matching the pattern show up in later micro-batches
        broker1 = start_broker(1, num_partitions="1")
        with RawProducer(broker1.port) as p1:
            produce(p1, 1, "s-b", 0, 15, "new")
        wait_until(
            lambda: any(r[0] == "s-b" for r in sink_rows(spark, out)),
            90,
            interval=0.2,
            message="s-b in the sink",
        )
    finally:
        query.stop()
    seen = sink_rows(spark, out)
    assert len(set(seen)) == len(seen)
    if READ_LIMITS:  # Spark 4.2+ passes read limits to Python sources; older Spark reads all there is
        # entries here are 35-45 bytes and the gzip wrapper ~110
        batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert len(batches) >= 4
        assert max(batches) <= 700 // 35 + 10
        assert len(seen) < len(expected), "the query was meant to be stopped mid-stream"

    with RawProducer(broker0.port) as p0, RawProducer(broker1.port) as p1:
        produce(p0, 0, "s-a", 1, 25, "second")
        produce(p1, 1, "s-b", 0, 5, "second", codec=2)

    query = start_query(spark, zk_connect, out, checkpoint, maxBytesPerTrigger="4000")
    try:
        wait_until(lambda: len(sink_rows(spark, out)) >= len(expected), 120, interval=0.5, message="all rows")
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink_rows(spark, out) == sorted(expected)

    # Trigger.AvailableNow reads what is there when it starts, then stops by itself
    with RawProducer(broker0.port) as p0, RawProducer(broker1.port) as p1:
        produce(p0, 0, "s-a", 0, 30, "third")
        produce(p1, 1, "s-b", 0, 3, "third")
    query = start_query(spark, zk_connect, out, checkpoint, available_now=True, maxBytesPerTrigger="500")
    assert query.awaitTermination(120)
    assert sink_rows(spark, out) == sorted(expected)
