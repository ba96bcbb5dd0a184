"""failOnDataLoss both ways, after the broker's retention deleted the offsets a read needs."""

from __future__ import annotations

import pytest

from tests.support.spark import RawProducer, loaded_rows
from tests.support.zookeeper import wait_topic_registered
from zkafka.spark.errors import DataLossError
from zkafka.spark.loader import load
from zkafka.spark.offsets import OffsetRange, TopicPartition
from zkafka.spark.reader import ReadTask
from zkafka.spark.reader07 import read_range
from zkafka.spark.store import OffsetStore

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def produce_singly(port: int, topic: str, n: int, tag: str) -> list[tuple]:
    """One request per message, so that 200-byte segments roll every few messages."""
    rows = []
    with RawProducer(port) as producer:
        for i in range(n):
            for value, offset, nxt in producer.send(topic, 0, [f"{tag}-{i:03d}".encode() * 3]):
                rows.append((topic, 0, 0, value, offset, nxt))
    return rows


def delete_segments_up_to(broker, topic: str, offset: int) -> int:
    """Run the broker's retention on every segment that starts at or before ``offset``; the new log start."""
    log = broker.server.log_manager.get_log(topic, 0)
    deleted = log.delete_old_segments(lambda segment: segment.start <= offset)
    assert deleted and log.log_start > offset
    return log.log_start


@pytest.mark.timeout(60)
def test_reader_fails_or_skips_when_retention_deleted_the_range_start(start_broker):
    broker = start_broker(0, num_partitions="1", log_file_size="200")
    rows = produce_singly(broker.port, "r-task", 30, "m")
    end = rows[-1][5]
    earliest = delete_segments_up_to(broker, "r-task", rows[10][4])
    task = ReadTask(OffsetRange("r-task", 0, 0, 0, end), "127.0.0.1", broker.port)

    with pytest.raises(
        DataLossError, match=r"offsets 0 to \d+ were deleted by retention.*failOnDataLoss=false"
    ):
        list(read_range(task, fetch_size=64))
    batches = list(read_range(task, fetch_size=64, fail_on_data_loss=False))
    got = [(v.as_py(), o.as_py()) for b in batches for v, o in zip(b["value"], b["offset"], strict=True)]
    assert got == [(r[3], r[4]) for r in rows if r[4] >= earliest]


@pytest.mark.timeout(180)
def test_loader_after_retention_deleted_its_next_offset(spark, start_broker, zk_connect, zk_client, tmp_path):
    out = tmp_path / "table"
    broker = start_broker(0, num_partitions="1", log_file_size="200")
    first = produce_singly(broker.port, "r-a", 12, "one")
    wait_topic_registered(zk_client, "r-a", [0])
    assert load(spark, zk_connect, ["r-a"], out).rows == 12
    stored = OffsetStore(out).current().offsets[TopicPartition("r-a", 0, 0)]

    second = produce_singly(broker.port, "r-a", 30, "two")
    earliest = delete_segments_up_to(broker, "r-a", stored)

    with pytest.raises(Exception, match="deleted by retention") as failure:
        load(spark, zk_connect, ["r-a"], out)
    assert f"offsets {stored} to {earliest}" in str(failure.value)
    assert "failOnDataLoss" in str(failure.value)
    assert OffsetStore(out).runs() == [1]
    assert loaded_rows(spark, out) == sorted(first)

    result = load(spark, zk_connect, ["r-a"], out, fail_on_data_loss=False)
    kept = [r for r in second if r[4] >= earliest]
    assert 0 < result.rows == len(kept) < len(second)
    assert loaded_rows(spark, out) == sorted(first + kept)
    assert OffsetStore(out).current().offsets[TopicPartition("r-a", 0, 0)] == second[-1][5]
