"""Batch reads through the zkafka source with a real ZooKeeper, real brokers and a local Spark."""

from __future__ import annotations

import pytest

from tests.support.spark import COLUMNS, RawProducer, collect_rows
from tests.support.zookeeper import wait_topic_registered

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def read_rows(spark, zk_connect: str, **options) -> list[tuple]:
    reader = spark.read.format("zkafka").option("zookeeper.connect", zk_connect)
    for key, value in options.items():
        reader = reader.option(key, value)
    return collect_rows(reader.load(), COLUMNS)


@pytest.mark.timeout(180)
def test_batch_reads_exactly_the_produced_messages(spark, start_broker, zk_connect, zk_client):
    brokers = [start_broker(b, num_partitions="2") for b in (0, 1)]
    expected = []
    for b, broker in enumerate(brokers):
        with RawProducer(broker.port) as producer:
            for t in ("alpha", "beta", "gamma"):
                for p in (0, 1):
                    for batch in range(2):
                        payloads = [f"{t}/{b}-{p}/{batch}/{i}".encode() * (1 + i % 3) for i in range(5 + p)]
                        for value, offset, nxt in producer.send(t, p, payloads):
                            expected.append((t, b, p, value, offset, nxt))
    for t in ("alpha", "beta", "gamma"):
        wait_topic_registered(zk_client, t, [0, 1])

    rows = read_rows(spark, zk_connect, subscribe="alpha,beta,gamma")
    assert rows == sorted(expected)
    assert len(rows) == 3 * 2 * 2 * (5 + 6)

    # one input partition per broker-partition, unless minPartitions asks for more
    df = (
        spark.read.format("zkafka")
        .option("zookeeper.connect", zk_connect)
        .option("subscribe", "alpha,beta,gamma")
    )
    assert df.load().rdd.getNumPartitions() == 12
    split = df.option("minPartitions", "30").load()
    assert split.rdd.getNumPartitions() >= 30
    assert collect_rows(split, COLUMNS) == rows

    # a pattern, and explicit offsets: from the second message set of alpha 0-0 up to the end of beta 1-1
    alpha = sorted(r for r in expected if r[0] == "alpha" and r[1:3] == (0, 0))
    second_start = alpha[5][4]
    beta_end = max(r[5] for r in expected if r[0] == "beta" and r[1:3] == (1, 1))
    rows = read_rows(
        spark,
        zk_connect,
        subscribePattern="alpha|beta",
        startingOffsets=f'{{"alpha": {{"0-0": {second_start}}}}}',
        endingOffsets=f'{{"alpha": {{"0-0": -1}}, "beta": {{"1-1": {beta_end}}}}}',
    )
    want = [r for r in expected if (r[0], r[1], r[2]) == ("alpha", 0, 0) and r[4] >= second_start]
    want += [r for r in expected if (r[0], r[1], r[2]) == ("beta", 1, 1)]
    assert rows == sorted(want)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("codec", [1, 2], ids=["gzip", "snappy"])
def test_compressed_sets_decode_with_wrapper_offsets(spark, start_broker, zk_connect, zk_client, codec):
    broker = start_broker(0, num_partitions="1")
    topic = f"compressed{codec}"
    expected = []
    with RawProducer(broker.port) as producer:
        plain = producer.send(topic, 0, [b"plain-0", b"plain-1"])
        first = producer.send(topic, 0, [f"c-{i}".encode() for i in range(50)], codec)
        single_start = producer.log_end(topic, 0)
        single = producer.send(topic, 0, [b"alone"], codec)
        single_end = producer.log_end(topic, 0)
        tail = producer.send(topic, 0, [b"plain-2"])
        for value, offset, nxt in plain + first + single + tail:
            expected.append((topic, 0, 0, value, offset, nxt))
    wait_topic_registered(zk_client, topic, [0])

    rows = read_rows(spark, zk_connect, subscribe=topic)
    assert rows == sorted(expected)
    # every message of a wrapper carries the wrapper's offset; only the last one moves nextOffset on
    wrapper = [r for r in rows if r[3].startswith(b"c-")]
    assert {r[4] for r in wrapper} == {first[0][1]}
    assert sorted(r[5] for r in wrapper)[-1] == single[0][1]

    # a range that ends at the wrapper's offset leaves the whole wrapper out; one that starts there has it all
    wrapper_start = first[0][1]
    before = read_rows(
        spark, zk_connect, subscribe=topic, endingOffsets=f'{{"{topic}": {{"0-0": {wrapper_start}}}}}'
    )
    assert [r[3] for r in before] == [b"plain-0", b"plain-1"]
    after = read_rows(
        spark, zk_connect, subscribe=topic, startingOffsets=f'{{"{topic}": {{"0-0": {wrapper_start}}}}}'
    )
    assert len(after) == 50 + 1 + 1
    # a wrapper of one message: the row has the wrapper's start and end, as the broker's log end showed them
    # before and after that produce
    assert single_end > single_start
    assert [r[4:] for r in rows if r[3] == b"alone"] == [(single_start, single_end)]
    assert [r[4:] for r in after if r[3] == b"alone"] == [(single_start, single_end)]
