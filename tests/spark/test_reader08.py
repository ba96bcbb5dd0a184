"""Planning and reading 0.8 ranges against real 0.8 brokers (no Spark): leaders followed, data loss reported."""

from __future__ import annotations

import socket

import pytest

from tests.support.consumers08 import start_cluster08
from tests.support.spark import leader_port, produce08
from zkafka.spark.cluster08 import Cluster08
from zkafka.spark.errors import DataLossError
from zkafka.spark.offsets import OffsetRange08, TopicPartition08
from zkafka.spark.options import parse_options
from zkafka.spark.planner import latest_offsets, plan_batch
from zkafka.spark.reader import ReadTask
from zkafka.spark.reader08 import read_range08

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def read_all(task: ReadTask, **kwargs) -> list[tuple]:
    rows = []
    for batch in read_range08(task, fetch_size=kwargs.pop("fetch_size", 200), **kwargs):
        rows += zip(*(batch[c].to_pylist() for c in ("offset", "key", "value")), strict=True)
    return rows


def fill(brokers, partition: int) -> list[tuple]:
    rows = []
    for codec in (0, 1, 2, 0):
        pairs = [(b"k%d" % i, b"v%d-%d-" % (codec, i) * (1 + i)) for i in range(6)]
        rows += [(o, k, v) for _, _, o, k, v in produce08(brokers, "r", partition, pairs, codec)]
    return rows


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.timeout(120)
def test_a_read_planned_on_a_broker_that_is_not_the_leader_follows_the_leader(start_broker08, zk_client):
    brokers = start_cluster08(start_broker08, zk_client, 2, {"r": 2})
    rows = fill(brokers, 0)
    leader = leader_port(brokers, "r", 0)
    other = next(b.port for b in brokers if b.port != leader)
    bootstrap = tuple(("127.0.0.1", b.port) for b in brokers)
    rng = OffsetRange08("r", 0, 3, 20)  # starts and ends inside compressed sets

    want = [r for r in rows if 3 <= r[0] < 20]
    assert read_all(ReadTask(rng, "127.0.0.1", leader, bootstrap)) == want
    # NOT_LEADER_FOR_PARTITION, then a broker that is not there at all: both looked up again
    assert read_all(ReadTask(rng, "127.0.0.1", other, bootstrap)) == want
    assert read_all(ReadTask(rng, "127.0.0.1", free_port(), bootstrap)) == want
    # a message bigger than the fetch size is fetched whole
    assert (
        read_all(ReadTask(OffsetRange08("r", 0, 0, 24), "127.0.0.1", leader, bootstrap), fetch_size=20)
        == rows
    )


@pytest.mark.timeout(120)
def test_offsets_past_the_high_watermark_are_data_loss(start_broker08, zk_client):
    brokers = start_cluster08(start_broker08, zk_client, 1, {"r": 1})
    rows = fill(brokers, 0)
    bootstrap = f"127.0.0.1:{brokers[0].port}"
    tp = TopicPartition08("r", 0)

    def options(fail: bool, **more):
        raw = {"kafka.bootstrap.servers": bootstrap, "subscribe": "r", "failOnDataLoss": str(fail).lower()}
        return parse_options({**raw, **more}, streaming=False)

    with Cluster08.for_options(options(True)) as cluster:
        assert (cluster.earliest(tp), cluster.latest(tp)) == (0, 24)
        assert latest_offsets(cluster, options(True), {tp: 0}, max_offsets=5) == {tp: 5}
        with pytest.raises(DataLossError, match=r"r-0: the log ends at offset 24, before the wanted end 30"):
            plan_batch(cluster, options(True, endingOffsets='{"r": {"0": 30}}'))
        (task,) = plan_batch(cluster, options(False, endingOffsets='{"r": {"0": 30}}'))
    assert (task.range, task.port) == (OffsetRange08("r", 0, 0, 24), brokers[0].port)

    # a range planned past what the leader has (its log was replaced): the read fails, or stops at the end
    late = ReadTask(
        OffsetRange08("r", 0, 20, 30), "127.0.0.1", brokers[0].port, (("127.0.0.1", brokers[0].port),)
    )
    with pytest.raises(DataLossError, match="the log ends at offset 24, before the range end 30"):
        read_all(late, api_timeout_ms=1000)
    assert read_all(late, api_timeout_ms=1000, fail_on_data_loss=False) == rows[20:]
