"""The 0.8 high-level consumer in groups, against a real ZooKeeper and real 0.8 brokers."""

from __future__ import annotations

import json
from collections import Counter

import gevent
import pytest

from tests.support.consumers import Collector, connector_factory, group_settled
from tests.support.consumers08 import committed08, consumer08_config, owners08, produce08, start_cluster08
from zkafka.admin.topics import create_topic
from zkafka.assignment.assignor import ASSIGNORS
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def connectors08():
    yield from connector_factory(ZookeeperConsumerConnector08, consumer08_config)


def settled(zk_client, group, connectors, expected):
    """ZooKeeper owners equal ``expected`` and every live connector owns exactly its part of it."""
    return group_settled(owners08(zk_client, group), connectors, expected)


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


def test_partitions_of_a_restarted_broker_are_fetched_again(
    start_broker08, zk_connect, zk_client, connectors08
):
    brokers = start_cluster08(start_broker08, zk_client, topics={"t": 4})
    member = connectors08(zk_connect, "g", consumer_id="c0")
    collector = Collector(member.create_message_streams({"t": 2})["t"])
    first = produce08(brokers, "t", 200, prefix="a")
    wait_until(lambda: len(collector.messages) >= len(first), message="first batch")
    on_broker_1 = {p for p, leader in member.leaders.items() if leader == 1}
    assert on_broker_1

    brokers[1].stop()  # its partitions lose their leader: the fetcher hands them to the leader finder
    wait_until(lambda: not set(member.leaders) & on_broker_1, message="broker 1's partitions unfetched")
    restarted = start_broker08(1)  # same log dir, a new port: found again through the metadata
    assert restarted.port != brokers[1].port
    wait_until(lambda: set(member.leaders.items()) >= {(p, 1) for p in on_broker_1}, message="fetched again")
    second = produce08([brokers[0], restarted], "t", 200, prefix="b")
    wait_until(lambda: len(collector.messages) >= len(first) + len(second), message="second batch")
    gevent.sleep(0.2)
    counts = Counter(m.message for m in collector.messages)
    assert set(counts) == first | second and max(counts.values()) == 1


def test_a_wildcard_member_picks_up_topics_created_later(start_broker08, zk_connect, zk_client, connectors08):
    brokers = start_cluster08(start_broker08, zk_client, topics={"w1": 2, "other": 1})
    member = connectors08(zk_connect, "g", consumer_id="c0")
    collector = Collector(member.create_message_streams_by_filter("w.*", 1))
    registration = json.loads(zk_client.get("/consumers/g/ids/g_c0")[0])
    assert (registration["subscription"], registration["pattern"]) == ({"w.*": 1}, "white_list")
    sent = produce08(brokers, "w1", 50)
    produce08(brokers, "other", 20)  # not matched: never consumed
    create_topic(zk_client, "w2", 3, 1)
    wait_until(lambda: {t for t, _ in member.owned_partitions()} == {"w1", "w2"}, message="w2 owned")
    sent |= produce08(brokers, "w2", 50)
    wait_until(lambda: len(collector.messages) >= len(sent), message="both topics")
    gevent.sleep(0.2)
    assert Counter(m.message for m in collector.messages) == Counter(sent)
