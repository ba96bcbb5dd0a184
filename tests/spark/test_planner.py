"""Planning against real brokers and ZooKeeper (no Spark): splits and caps land on message boundaries."""

from __future__ import annotations

import pytest

from tests.support.spark import RawProducer
from tests.support.zookeeper import wait_topic_registered
from zkafka.spark.cluster07 import Cluster
from zkafka.spark.errors import BrokerGoneError
from zkafka.spark.offsets import TopicPartition
from zkafka.spark.options import parse_options
from zkafka.spark.planner import latest_offsets, plan_batch, plan_micro_batch
from zkafka.spark.reader07 import read_range

pytestmark = [pytest.mark.spark, pytest.mark.integration]

TP = TopicPartition("p", 0, 0)


def fill(port: int) -> list[tuple]:
    """Plain sets, wrappers and one message bigger than the small fetch sizes used here."""
    rows = []
    with RawProducer(port) as producer:
        for i in range(12):
            rows += producer.send("p", 0, [f"m{i}-{j}".encode() * (1 + j) for j in range(6)], codec=i % 3)
        rows += producer.send("p", 0, [b"B" * 700])
        rows += producer.send("p", 0, [b"after"])
    return rows


def read_all(tasks, fetch_size=64) -> list[tuple]:
    got = []
    for task in tasks:
        for batch in read_range(task, fetch_size):
            got += zip(*(batch[c].to_pylist() for c in ("value", "offset", "nextOffset")), strict=True)
    return got


@pytest.mark.timeout(60)
def test_min_partitions_cuts_one_range_at_message_boundaries(start_broker, zk_connect, zk_client):
    broker = start_broker(0, num_partitions="1", log_file_size="300")
    rows = fill(broker.port)
    wait_topic_registered(zk_client, "p", [0])
    entry_starts = {offset for _, offset, _ in rows} | {rows[-1][2]}

    options = parse_options(
        {"zookeeper.connect": zk_connect, "subscribe": "p", "minPartitions": "6", "fetchSize": "64"},
        streaming=False,
    )
    with Cluster.for_options(options) as cluster:
        tasks = plan_batch(cluster, options)
    assert len(tasks) >= 5
    assert tasks[0].range.start == 0 and tasks[-1].range.end == rows[-1][2]
    for before, after in zip(tasks, tasks[1:], strict=False):
        assert before.range.end == after.range.start and after.range.start in entry_starts
    assert read_all(tasks) == rows


@pytest.mark.timeout(60)
def test_a_byte_cap_ends_on_a_boundary_and_always_moves_on(start_broker, zk_connect, zk_client):
    broker = start_broker(0, num_partitions="1")
    rows = fill(broker.port)
    wait_topic_registered(zk_client, "p", [0])
    entry_ends = {nxt for _, _, nxt in rows}
    options = parse_options(
        {"zookeeper.connect": zk_connect, "subscribe": "p", "fetchSize": "64"}, streaming=True
    )
    with Cluster.for_options(options) as cluster:
        pos, batches = 0, 0
        while pos < rows[-1][2]:
            end = latest_offsets(cluster, options, {TP: pos}, max_bytes=150)[TP]
            assert end in entry_ends and (end - pos <= 150 or end == min(e for e in entry_ends if e > pos))
            pos, batches = end, batches + 1
        assert batches >= 10
        assert latest_offsets(cluster, options, {TP: pos}, max_bytes=150) == {TP: pos}


@pytest.mark.timeout(60)
def test_micro_batch_planning_of_new_and_gone_broker_partitions(start_broker, zk_connect, zk_client):
    broker = start_broker(0, num_partitions="1")
    rows = fill(broker.port)
    wait_topic_registered(zk_client, "p", [0])
    gone = TopicPartition("p", 7, 0)
    end = rows[-1][2]
    for fail in ("true", "false"):
        options = parse_options(
            {"zookeeper.connect": zk_connect, "subscribe": "p", "failOnDataLoss": fail}, streaming=True
        )
        with Cluster.for_options(options) as cluster:
            # a broker that left keeps its offset; a partition new since the start is read from its earliest
            assert latest_offsets(cluster, options, {gone: 40}, None) == {gone: 40, TP: end}
            assert [
                (t.range.key, t.range.start)
                for t in plan_micro_batch(cluster, options, {gone: 40}, {gone: 40, TP: end})
            ] == [(TP, 0)]
            if fail == "true":
                with pytest.raises(BrokerGoneError, match="broker 7 is not registered"):
                    plan_micro_batch(cluster, options, {gone: 40}, {gone: 90})
            else:
                assert plan_micro_batch(cluster, options, {gone: 40}, {gone: 90}) == []
