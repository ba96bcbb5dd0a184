"""The high-level consumer in groups, against a real ZooKeeper and real brokers: shares, owners, membership changes."""

from __future__ import annotations

from collections import Counter

import gevent
import pytest

from tests.support.consumers import (
    Collector,
    committed,
    connector_factory,
    consumer_config,
    group_settled,
    owners,
    produce_numbered,
)
from tests.support.wire import Producer
from zkafka.assignment.range_assignor import assign, broker_partitions
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.utils import wait_until as gwait
from zkafka.zk.client import get_children
from zkafka.zk.watched import WatchedZNodes

pytestmark = pytest.mark.integration


def start_cluster(start_broker, zk_client, brokers=2, topic="t", partitions=4):
    """Brokers 0..n-1 hosting ``topic``, each registered for it in ZooKeeper; producers by broker id.

    Each broker's partition 0 holds one message ``warm-up-<broker id>``.
    """
    started = [start_broker(i) for i in range(brokers)]
    producers = {i: Producer(b.port) for i, b in enumerate(started)}
    for i, producer in producers.items():
        producer.send(topic, 0, [f"warm-up-{i}".encode()])
    gwait(
        lambda: len(get_children(zk_client, f"/brokers/topics/{topic}")) == brokers,
        message="topic registered",
    )
    return started, producers


def warm_ups(brokers):
    return {f"warm-up-{i}".encode() for i in range(brokers)}


def expected_owners(thread_ids_per_topic, partitions_per_topic):
    return assign(thread_ids_per_topic, partitions_per_topic)


def settled(zk_client, group, connectors, expected):
    """ZooKeeper owners equal ``expected`` and every live connector owns exactly its part of it."""
    return group_settled(owners(zk_client, group), connectors, expected)


class OwnershipMonitor:
    """Checks, every few milliseconds, that no partition is handed out by two connectors at the same time."""

    def __init__(self, connectors):
        self.connectors = connectors
        self.violations: list = []
        self.checks = 0
        self.greenlet = gevent.spawn(self._run)

    def _run(self):
        while True:
            seen = {}
            for c in list(self.connectors):
                for key, info in list(c.owned.infos.items()):
                    if info.active and not info.revoked:
                        if key in seen and seen[key] is not c:
                            self.violations.append((key, seen[key].consumer_id, c.consumer_id))
                        seen[key] = c
            self.checks += 1
            gevent.sleep(0.002)

    def stop(self):
        self.greenlet.kill()


@pytest.fixture
def connectors():
    yield from connector_factory(ZookeeperConsumerConnector, consumer_config)


def test_group_of_three_reads_every_message_once_and_owners_match_the_range_assignment(
    start_broker, zk_connect, zk_client, connectors
):
    _, producers = start_cluster(start_broker, zk_client)
    members = [connectors(zk_connect, "g", consumerid=f"c{i}") for i in range(3)]
    streams = members[0].create_message_streams({"t": 2})["t"]
    for c in members[1:]:
        streams += c.create_message_streams({"t": 1})["t"]
    threads = ["g_c0-0", "g_c0-1", "g_c1-0", "g_c2-0"]
    expected = expected_owners({"t": threads}, {"t": broker_partitions({0: 4, 1: 4})})
    gwait(lambda: settled(zk_client, "g", members, expected), message="group settled")
    assert sorted(set(expected.values())) == threads  # every thread got partitions: 8 over 4
    assert zk_client.get("/consumers/g/ids/g_c0")[0] == b'{ "t": 2 }'  # the 0.7 static topic count

    per_stream = [Collector([s]) for s in streams]
    sent = produce_numbered(producers, "t", 4, 3000)
    sent |= warm_ups(2)
    gwait(lambda: sum(len(c.messages) for c in per_stream) >= len(sent), message="all messages")
    gevent.sleep(0.3)  # nothing more may arrive
    counts = Counter(p for c in per_stream for p in c.payloads())
    assert set(counts) == sent
    assert max(counts.values()) == 1
    for collector, thread in zip(per_stream, threads, strict=True):
        got = {m.partition.name for m in collector.messages}
        assert got <= {name for (_, name), owner in expected.items() if owner == thread}
        collector.stop()


def test_each_group_gets_everything(start_broker, zk_connect, zk_client, connectors):
    _, producers = start_cluster(start_broker, zk_client)
    collectors = []
    for group in ("red", "blue"):
        for i in range(2):
            c = connectors(zk_connect, group, consumerid=f"c{i}")
            collectors.append((group, Collector(c.create_message_streams({"t": 1})["t"])))
    sent = produce_numbered(producers, "t", 4, 1000) | warm_ups(2)
    for group in ("red", "blue"):
        mine = [col for g, col in collectors if g == group]
        gwait(lambda mine=mine: sum(len(c.messages) for c in mine) >= len(sent), message=f"{group} read all")
        payloads = [p for col in mine for p in col.payloads()]
        assert sorted(payloads) == sorted(sent)


def test_member_leaving_hands_over_its_partitions_without_loss_or_going_back(
    start_broker, zk_connect, zk_client, connectors
):
    _, producers = start_cluster(start_broker, zk_client)
    members = [connectors(zk_connect, "g", consumerid=f"c{i}") for i in range(3)]
    collectors = [Collector(c.create_message_streams({"t": 1})["t"]) for c in members]
    monitor = OwnershipMonitor(members)
    sent = produce_numbered(producers, "t", 4, 1500, prefix="a") | warm_ups(2)
    gwait(lambda: sum(len(c.messages) for c in collectors) >= len(sent), message="first batch")

    offsets_seen: dict[str, list[int]] = {}

    def watch_commits():
        while True:
            for name, value in committed(zk_client, "g", "t").items():
                offsets_seen.setdefault(name, []).append(value)
            gevent.sleep(0.01)

    watcher = gevent.spawn(watch_commits)
    leaving = members.pop()
    leaving.shutdown()
    monitor.connectors = members
    threads = ["g_c0-0", "g_c1-0"]
    expected = expected_owners({"t": threads}, {"t": broker_partitions({0: 4, 1: 4})})
    gwait(lambda: settled(zk_client, "g", members, expected), message="two members settled")
    sent |= produce_numbered(producers, "t", 4, 1500, prefix="b")
    gwait(lambda: sum(len(c.messages) for c in collectors) >= len(sent), message="second batch")
    gevent.sleep(0.3)
    payloads = [p for c in collectors for p in c.payloads()]
    assert sorted(payloads) == sorted(sent)  # nothing lost, nothing twice (the leaver committed first)
    ends = {f"{b}-{p}": producers[b].log_end("t", p) for b in producers for p in range(4)}
    gwait(lambda: committed(zk_client, "g", "t") == ends, message="everything committed")
    watcher.kill()
    monitor.stop()
    for name, values in offsets_seen.items():
        assert values == sorted(values), f"committed offset of {name} went back: {values}"
    assert not monitor.violations and monitor.checks > 10


def test_new_broker_and_new_partitions_trigger_a_rebalance(start_broker, zk_connect, zk_client, connectors):
    brokers, producers = start_cluster(start_broker, zk_client, brokers=1)
    members = [connectors(zk_connect, "g", consumerid=f"c{i}") for i in range(2)]
    collectors = [Collector(c.create_message_streams({"t": 1})["t"]) for c in members]
    threads = ["g_c0-0", "g_c1-0"]
    gwait(
        lambda: settled(
            zk_client, "g", members, expected_owners({"t": threads}, {"t": broker_partitions({0: 4})})
        )
    )

    new = start_broker(1)
    producers[1] = Producer(new.port)
    producers[1].send("t", 3, [b"from broker 1"])
    parts = broker_partitions({0: 4, 1: 4})
    gwait(
        lambda: settled(zk_client, "g", members, expected_owners({"t": threads}, {"t": parts})),
        message="new broker",
    )
    gwait(lambda: any(b"from broker 1" in c.payloads() for c in collectors), message="its message consumed")

    # broker 0 comes back hosting 6 partitions of t: partitions 0-4 and 0-5 join the assignment
    brokers[0].stop()
    producers[0].close()
    again = start_broker(0, topic_partition_count_map="t:6")
    producers[0] = Producer(again.port)
    producers[0].send("t", 5, [b"from partition 0-5"])
    parts = broker_partitions({0: 6, 1: 4})
    gwait(
        lambda: settled(zk_client, "g", members, expected_owners({"t": threads}, {"t": parts})),
        message="6 parts",
    )
    gwait(lambda: any(b"from partition 0-5" in c.payloads() for c in collectors), message="0-5 consumed")


def test_restart_resumes_from_committed_offsets(start_broker, zk_connect, zk_client, connectors):
    _, producers = start_cluster(start_broker, zk_client)
    first = connectors(zk_connect, "g", consumerid="c0")
    collector = Collector(first.create_message_streams({"t": 1})["t"])
    sent = produce_numbered(producers, "t", 4, 500, prefix="a") | warm_ups(2)
    gwait(lambda: len(collector.messages) >= len(sent))
    first.shutdown()  # commits
    later = produce_numbered(producers, "t", 4, 500, prefix="b")
    second = connectors(zk_connect, "g", consumerid="c0")
    collector2 = Collector(second.create_message_streams({"t": 1})["t"])
    gwait(lambda: len(collector2.messages) >= len(later))
    gevent.sleep(0.3)
    assert sorted(collector2.payloads()) == sorted(later)


def test_manual_commit_without_autocommit(start_broker, zk_connect, zk_client, connectors):
    _, producers = start_cluster(start_broker, zk_client, brokers=1)
    c = connectors(zk_connect, "g", consumerid="c0", autocommit_enable="false", consumer_timeout_ms="200")
    stream = c.create_message_streams({"t": 1})["t"][0]
    producers[0].send("t", 1, [b"one", b"two"])
    got = [next(stream) for _ in range(2)]  # the warm-up message on partition 0, and "one"
    gevent.sleep(0.3)
    assert committed(zk_client, "g", "t") == {}
    c.commit_offsets()
    offsets = committed(zk_client, "g", "t")
    assert {(m.partition.name, m.offset) for m in got} <= set(offsets.items())


def test_twenty_consumers_joining_at_once_settle_with_every_partition_owned_once(
    start_broker, zk_connect, zk_client, connectors
):
    _, producers = start_cluster(start_broker, zk_client, brokers=2)
    for b in producers:
        producers[b].send("u", 0, [b"x"])
    gwait(lambda: len(get_children(zk_client, "/brokers/topics/u")) == 2)
    members = [connectors(zk_connect, "crowd", consumerid=f"c{i:02d}") for i in range(20)]
    monitor = OwnershipMonitor(members)
    joins = [gevent.spawn(c.create_message_streams, {"t": 1, "u": 1}) for c in members]
    gevent.joinall(joins, raise_error=True)
    ids = [f"crowd_c{i:02d}-0" for i in range(20)]
    parts = broker_partitions({0: 4, 1: 4})
    expected = expected_owners({"t": ids, "u": ids}, {"t": parts, "u": parts})
    gwait(lambda: settled(zk_client, "crowd", members, expected), timeout=30, message="crowd settled")
    monitor.stop()
    assert not monitor.violations
    assert monitor.checks > 10
    # every partition is owned exactly once across the connectors' own views too
    held = [key for c in members for key in c.owned_partitions()]
    assert sorted(held) == sorted(expected)


def test_watched_znodes_are_read_once_and_again_after_they_change_or_go(zk_client):
    """What a rebalance reads (zk.watched.WatchedZNodes): a value or a child list is read once, with a watch;
    a changed or deleted one is read afresh, and a change of a notifying one (its creation too) is told."""
    path, other, ids = "/consumers/reg/ids/a", "/consumers/reg/ids/b", "/consumers/reg/ids"
    zk_client.create(path, b"one", makepath=True)
    changes = []
    nodes = WatchedZNodes(zk_client, lambda: changes.append(1))
    reads = nodes.read({ids: True}, {path: False, other: False, "/consumers/reg/topic": True})
    assert reads == ({ids: ["a"]}, {path: "one", other: None, "/consumers/reg/topic": None})
    zk_client.create(other, b"two")
    gwait(lambda: changes == [1], 10, message="the member list's change told")
    assert nodes.read({ids: True}, {path: False, other: False}) == ({ids: ["a", "b"]}, {path: "one", other: "two"})
    zk_client.set(path, b"three")
    gwait(lambda: nodes.read(values={path: False}).values[path] == "three", 10)
    zk_client.delete(path)
    gwait(lambda: nodes.read(values={path: False, other: False}).values == {path: None, other: "two"}, 10)
    gwait(lambda: len(changes) == 2, 10, message="the member list's change told")  # the values are quiet
    zk_client.create("/consumers/reg/topic", b"{}")
    gwait(lambda: len(changes) == 3, 10, message="a watched node's creation told")
