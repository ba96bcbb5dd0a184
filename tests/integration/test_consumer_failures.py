"""Members that die (kill -9, expired ZooKeeper session) and nodes left by our own earlier sessions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import defaultdict

import gevent
import pytest
from kazoo.client import KazooClient

from tests.support.consumers import Collector, committed, consumer_config, owners, produce_numbered
from tests.support.wire import Producer
from zkafka.assignment.range_assignor import assign, broker_partitions
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.launch.zookeeper_server import expire_session
from zkafka.utils import wait_until as gwait
from zkafka.zk.client import get_children, session_id

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cluster(start_broker, zk_client, brokers=2):
    producers = {}
    for i in range(brokers):
        producers[i] = Producer(start_broker(i).port)
        producers[i].send("t", 0, [f"warm-up-{i}".encode()])
    gwait(lambda: len(get_children(zk_client, "/brokers/topics/t")) == brokers)
    return producers, {f"warm-up-{i}".encode() for i in range(brokers)}


def entry_start(item) -> int:
    """Position of a consumed (uncompressed, magic 1) message's entry: its offset minus the entry's size."""
    return item.offset - (4 + 6 + len(item.message.payload))


class ChildConsumer:
    """``python -m tests.support.consumers consume ...``: a consumer process printing what it gets."""

    def __init__(self, zk_connect: str, group: str, consumerid: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.consumers", "consume", "--zookeeper", zk_connect]
            + ["--group", group, "--topic", "t", "--consumerid", consumerid],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def payloads(self) -> list[bytes]:
        return [line.split(" ", 3)[3].encode() for line in list(self.lines) if line != "READY"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._reader.join(5)


def test_killed_member_is_replaced_and_its_successor_resumes_from_its_last_commit(
    start_broker, zk_connect, zk_client
):
    producers, sent = cluster(start_broker, zk_client)
    survivor = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="a"))
    child = ChildConsumer(zk_connect, "g", "b")
    try:
        collector = Collector(survivor.create_message_streams({"t": 1})["t"])
        threads = ["g_a-0", "g_b-0"]
        parts = broker_partitions({0: 4, 1: 4})
        both = assign({"t": threads}, {"t": parts})
        gwait(lambda: owners(zk_client, "g") == both, message="two members")
        sent |= produce_numbered(producers, "t", 4, 2000, prefix="a")
        gwait(lambda: len(collector.messages) + len(child.payloads()) >= len(sent), message="first batch")
        child_parts = {name for (_, name), owner in both.items() if owner == "g_b-0"}
        ends = {f"{b}-{p}": producers[b].log_end("t", p) for b in producers for p in range(4)}
        gwait(
            lambda: all(committed(zk_client, "g", "t").get(p) == ends[p] for p in child_parts),
            message="child committed everything",
        )
        child.kill()
        at_death = committed(zk_client, "g", "t")
        already = len(collector.messages)

        alone = assign({"t": ["g_a-0"]}, {"t": parts})
        gwait(lambda: owners(zk_client, "g") == alone, timeout=20, message="survivor owns everything")
        more = produce_numbered(producers, "t", 4, 2000, prefix="b")
        sent |= more
        gwait(lambda: set(collector.payloads()) | set(child.payloads()) >= sent, message="second batch")
        gevent.sleep(0.3)
        # nothing lost, and for the dead member's partitions the survivor began exactly at its last commit
        taken_over = collector.messages[already:]
        firsts = defaultdict(list)
        for item in taken_over:
            firsts[item.partition.name].append(entry_start(item))
        for name in child_parts:
            assert min(firsts[name]) == at_death[name], name
        assert sorted(collector.payloads() + child.payloads()) == sorted(sent)
    finally:
        child.kill()
        survivor.shutdown()


def test_expired_session_re_registers_and_rebalances(
    start_broker, zk_connect, zookeeper_server, zk_client, caplog
):
    caplog.set_level("WARNING", logger="zkafka.consumer.connector")
    producers, sent = cluster(start_broker, zk_client)
    a = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="a"))
    b = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="b"))
    try:
        collectors = [Collector(c.create_message_streams({"t": 1})["t"]) for c in (a, b)]
        parts = broker_partitions({0: 4, 1: 4})
        both = assign({"t": ["g_a-0", "g_b-0"]}, {"t": parts})
        gwait(lambda: owners(zk_client, "g") == both)
        sent |= produce_numbered(producers, "t", 4, 1000, prefix="a")
        gwait(lambda: sum(len(c.messages) for c in collectors) >= len(sent))
        old_session = session_id(a.zk)

        expire_session(a.zk, zk_connect)
        gwait(lambda: session_id(a.zk) not in (0, old_session), message="new session")
        node = "/consumers/g/ids/g_a"
        gwait(lambda: zk_client.exists(node) and zk_client.exists(node).ephemeralOwner == session_id(a.zk))
        gwait(lambda: owners(zk_client, "g") == both and a.owned_partitions(), message="a back in its share")
        said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("g_a")]
        assert "g_a: ZooKeeper session expired; its partitions are no longer ours" in said
        assert said[-1] == "g_a: ZooKeeper connection back in a new session; rebalancing"
        for name, owner in both.items():
            stat = zk_client.exists(f"/consumers/g/owners/t/{name[1]}")
            assert stat.ephemeralOwner == session_id(a.zk if owner == "g_a-0" else b.zk)
        sent |= produce_numbered(producers, "t", 4, 1000, prefix="b")
        gwait(lambda: set(p for c in collectors for p in c.payloads()) >= sent, message="all after expiry")
    finally:
        a.shutdown()
        b.shutdown()


def test_nodes_left_by_our_previous_session_are_replaced_not_treated_as_conflicts(
    start_broker, zk_connect, zk_client
):
    producers, _ = cluster(start_broker, zk_client, brokers=1)
    # A previous incarnation of consumer "a" (same consumer id) whose session has not expired yet.
    old = KazooClient(hosts=zk_connect, timeout=30)
    old.start(10)
    try:
        old.create("/consumers/g/ids/g_a", b'{ "t": 1 }', ephemeral=True, makepath=True)
        for p in range(4):
            old.create(f"/consumers/g/owners/t/0-{p}", b"g_a-0", ephemeral=True, makepath=True)
        a = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="a"))
        try:
            collector = Collector(a.create_message_streams({"t": 1})["t"])
            sid = session_id(a.zk)
            assert zk_client.exists("/consumers/g/ids/g_a").ephemeralOwner == sid
            for p in range(4):
                assert zk_client.exists(f"/consumers/g/owners/t/0-{p}").ephemeralOwner == sid
            old.stop()  # the old session ends: the nodes it held are ours now and must stay
            gevent.sleep(0.3)
            assert len(owners(zk_client, "g")) == 4
            producers[0].send("t", 2, [b"still consuming"])
            gwait(lambda: b"still consuming" in collector.payloads())
        finally:
            a.shutdown()
    finally:
        old.stop()
        old.close()


def test_a_conflicting_live_consumer_id_is_refused(start_broker, zk_connect, zk_client):
    cluster(start_broker, zk_client, brokers=1)
    a = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="same"))
    b = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="same"))
    try:
        a.create_message_streams({"t": 1})
        from zkafka.consumer import ConsumerIdConflictError

        with pytest.raises(ConsumerIdConflictError):
            b.create_message_streams({"t": 2})
    finally:
        a.shutdown()
        b.shutdown()


def test_an_owner_node_deleted_under_a_member_is_claimed_again_on_the_next_event(
    start_broker, zk_connect, zk_client
):
    cluster(start_broker, zk_client, brokers=1)
    a = ZookeeperConsumerConnector(consumer_config(zk_connect, "g", consumerid="a"))
    try:
        a.create_message_streams({"t": 1})
        gwait(lambda: len(owners(zk_client, "g")) == 4)
        changes = a.rebalancer.changes
        zk_client.delete("/consumers/g/owners/t/0-2")
        # an event that changes nothing in the assignment: the broker's partition count written again
        zk_client.set("/brokers/topics/t/0", zk_client.get("/brokers/topics/t/0")[0])
        gwait(lambda: a.rebalancer.changes == changes + 1, message="a full rebalance")
        assert zk_client.exists("/consumers/g/owners/t/0-2").ephemeralOwner == session_id(a.zk)
        assert len(owners(zk_client, "g")) == 4
    finally:
        a.shutdown()
