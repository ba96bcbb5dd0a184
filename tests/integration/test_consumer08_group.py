"""The 0.8 high-level consumer in groups, against a real ZooKeeper and real 0.8 brokers."""

from __future__ import annotations

import json
from collections import Counter

import gevent
import pytest

from tests.support.consumers import Collector
from tests.support.consumers08 import committed08, consumer08_config, owners08, produce08, start_cluster08
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.rebalance import ASSIGNORS
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def connectors08():
    made: list[ZookeeperConsumerConnector08] = []

    def make(zk_connect, group, **overrides):
        c = ZookeeperConsumerConnector08(consumer08_config(zk_connect, group, **overrides))
        made.append(c)
        return c

    yield make
    for c in made:
        c.shutdown()


def settled(zk_client, group, connectors, expected):
    """ZooKeeper owners equal ``expected`` and every live connector owns exactly its part of it."""
    if owners08(zk_client, group) != expected:
        return False
    for c in connectors:
        mine = {k: v for k, v in expected.items() if v.startswith(c.consumer_id + "-")}
        if c.owned_partitions() != mine:
            return False
    return True


@pytest.mark.parametrize("strategy", ["range", "roundrobin"])
def test_three_members_over_two_brokers_read_every_message_once(
    strategy, start_broker08, zk_connect, zk_client, connectors08
):
    brokers = start_cluster08(start_broker08, zk_client, topics={"t": 8})
    members = [
        connectors08(zk_connect, "g", consumer_id=f"c{i}", partition_assignment_strategy=strategy)
        for i in range(3)
    ]
    streams = []
    for c in members:
        streams += c.create_message_streams({"t": 1})["t"]
    threads = ["g_c0-0", "g_c1-0", "g_c2-0"]
    expected = ASSIGNORS[strategy]({"t": threads}, {"t": list(range(8))})
    wait_until(lambda: settled(zk_client, "g", members, expected), message="group settled")
    registration = json.loads(zk_client.get("/consumers/g/ids/g_c0")[0])
    assert registration["subscription"] == {"t": 1} and registration["pattern"] == "static"

    per_stream = [Collector([s]) for s in streams]
    sent = produce08(brokers, "t", 3000)
    wait_until(lambda: sum(len(c.messages) for c in per_stream) >= len(sent), message="all messages")
    gevent.sleep(0.3)  # nothing more may arrive
    counts = Counter(m.message for c in per_stream for m in c.messages)
    assert set(counts) == sent
    assert max(counts.values()) == 1
    for collector, thread in zip(per_stream, threads, strict=True):
        assert {m.partition for m in collector.messages} <= {
            p for (_, p), o in expected.items() if o == thread
        }
        collector.stop()
    # every partition's leader was found: both brokers serve the group
    assert set().union(*(c.leaders.values() for c in members)) == {0, 1}
    for c in members:
        c.commit_offsets()
    ends = committed08(zk_client, "g", "t")
    got = Counter(m.partition for c in per_stream for m in c.messages)
    assert ends == {p: got[p] for p in range(8)}  # next offsets to consume: all partitions start at 0


def test_a_member_that_leaves_hands_its_partitions_over(start_broker08, zk_connect, zk_client, connectors08):
    brokers = start_cluster08(start_broker08, zk_client, topics={"t": 8})
    members = [connectors08(zk_connect, "g", consumer_id=f"c{i}") for i in range(3)]
    collectors = [Collector(c.create_message_streams({"t": 1})["t"]) for c in members]
    expected = ASSIGNORS["range"]({"t": ["g_c0-0", "g_c1-0", "g_c2-0"]}, {"t": list(range(8))})
    wait_until(lambda: settled(zk_client, "g", members, expected), message="group of three")
    first = produce08(brokers, "t", 600, prefix="a")
    wait_until(lambda: sum(len(c.messages) for c in collectors) >= len(first), message="first batch")

    members[1].shutdown()
    collectors[1].stop()
    left = {p for (_, p), owner in expected.items() if owner == "g_c1-0"}
    expected = ASSIGNORS["range"]({"t": ["g_c0-0", "g_c2-0"]}, {"t": list(range(8))})
    wait_until(lambda: settled(zk_client, "g", [members[0], members[2]], expected), message="group of two")
    second = produce08(brokers, "t", 600, prefix="b")
    stayers = [collectors[0], collectors[2]]
    wait_until(
        lambda: sum(m.message.startswith(b"b-") for c in stayers for m in c.messages) >= len(second),
        message="second batch",
    )
    gevent.sleep(0.3)
    counts = Counter(m.message for c in collectors for m in c.messages)
    assert set(counts) == first | second
    assert max(counts.values()) == 1  # the leaver committed on shutdown: nothing is read twice
    moved = {m.partition for c in stayers for m in c.messages if m.message.startswith(b"b-")} & left
    assert moved == left  # the leaver's partitions are read by the others now
