"""The 0.8 controller and metadata cache on a real ZooKeeper: election, epochs, leaders, failover, deletion."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from kazoo.client import KazooClient

from tests.support.brokers08 import Brokers08
from zkafka.admin.topics import create_topic, mark_topic_for_deletion
from zkafka.utils import wait_until
from zkafka.zk.paths08 import PartitionState, parse_controller

pytestmark = pytest.mark.integration


@pytest.fixture
def brokers(zk_connect):
    with Brokers08(zk_connect) as start:
        yield start


def state(zk: KazooClient, topic: str, partition: int) -> PartitionState | None:
    stat = zk.exists(f"/brokers/topics/{topic}/partitions/{partition}/state")
    if stat is None:
        return None
    return PartitionState.parse(
        topic, partition, zk.get(f"/brokers/topics/{topic}/partitions/{partition}/state")[0]
    )


def test_one_broker_is_elected_and_leads_every_new_partition(brokers, zk_client):
    broker = brokers(1)
    wait_until(lambda: broker.controller.active, 10, message="broker 1 elected")
    assert parse_controller(zk_client.get("/controller")[0]) == 1
    assert zk_client.get("/controller_epoch")[0] == b"1"

    create_topic(zk_client, "orders", 3, 1)
    for p in range(3):
        wait_until(lambda p=p: state(zk_client, "orders", p) is not None, 10, message=f"state of orders-{p}")
        assert state(zk_client, "orders", p) == PartitionState(1, 0, (1,), 1)
    wait_until(lambda: len(broker.cache.snapshot().partitions_led_by(1)) == 3, 10)
    snapshot = broker.cache.snapshot()
    assert snapshot.brokers[1].host == "127.0.0.1" and snapshot.brokers[1].port == 9001
    assert snapshot.partition("orders", 2).replicas == (1,)


def test_a_dead_replica_takes_its_partitions_offline_and_back(brokers, zk_client):
    controller = brokers(1)
    wait_until(lambda: controller.controller.active, 10)
    other = brokers(2)
    led_by_2 = []
    controller.cache.add_leadership_listener(
        2, lambda became, stopped: led_by_2.append((set(became), set(stopped)))
    )
    zk_client.create("/brokers/topics/t", b'{"version":1,"partitions":{"0":[2],"1":[1]}}', makepath=True)
    wait_until(lambda: state(zk_client, "t", 0) == PartitionState(2, 0, (2,), 1), 10, message="2 leads t-0")
    wait_until(lambda: led_by_2 == [({("t", 0)}, set())], 10, message="leadership listener told")

    other.stop()
    wait_until(lambda: state(zk_client, "t", 0) == PartitionState(-1, 1, (), 1), 10, message="t-0 offline")
    assert state(zk_client, "t", 1) == PartitionState(1, 0, (1,), 1)
    wait_until(lambda: led_by_2[-1] == (set(), {("t", 0)}), 10)

    brokers(2)
    wait_until(lambda: state(zk_client, "t", 0) == PartitionState(2, 2, (2,), 1), 10, message="t-0 back on 2")


def test_the_controller_fails_over_with_a_new_epoch(brokers, zk_client):
    first = brokers(1)
    wait_until(lambda: first.controller.active, 10)
    second = brokers(2)
    assert not second.controller.active
    create_topic(zk_client, "t", 2, 1, rng=random.Random(3))
    wait_until(lambda: all(state(zk_client, "t", p) for p in range(2)), 10)

    first.stop()
    wait_until(lambda: second.controller.active, 10, message="broker 2 took over")
    assert second.controller.epoch == 2 and zk_client.get("/controller_epoch")[0] == b"2"
    wait_until(lambda: all(state(zk_client, "t", p).leader in (2, -1) for p in range(2)), 10)
    for p in range(2):
        current = state(zk_client, "t", p)
        if current.leader == -1:  # it was broker 1's partition: offline, written by the new controller
            assert current.controller_epoch == 2


CRASHING_CONTROLLER = """
import sys, threading
from kazoo.client import KazooClient
client = KazooClient(hosts=sys.argv[1], timeout=2.0)
client.start(10)
client.create("/controller", b'{"version":1,"brokerid":9,"timestamp":"1"}', ephemeral=True)
print("elected", flush=True)
threading.Event().wait()
"""


def test_a_killed_controller_is_replaced_once_its_session_expires(brokers, zk_connect, zk_client):
    crashed = subprocess.Popen(
        [sys.executable, "-c", CRASHING_CONTROLLER, zk_connect], stdout=subprocess.PIPE
    )
    try:
        assert crashed.stdout.readline() == b"elected\n"
        crashed.kill()  # its /controller stays until the server expires the session
        crashed.wait()
        broker = brokers(3)
        assert not broker.controller.active and parse_controller(zk_client.get("/controller")[0]) == 9
        wait_until(lambda: broker.controller.active, 20, message="elected once the stale /controller expired")
        assert parse_controller(zk_client.get("/controller")[0]) == 3
    finally:
        if crashed.poll() is None:
            crashed.kill()
            crashed.wait()


def test_topic_deletion_when_enabled(brokers, zk_client):
    broker = brokers(1, delete_topic_enable="true")
    wait_until(lambda: broker.controller.active, 10)
    create_topic(zk_client, "doomed", 2, 1, config={"retention.ms": "1000"})
    wait_until(lambda: state(zk_client, "doomed", 1) is not None, 10)
    mark_topic_for_deletion(zk_client, "doomed")
    paths = ("/brokers/topics/doomed", "/config/topics/doomed", "/admin/delete_topics/doomed")
    wait_until(lambda: not any(zk_client.exists(path) for path in paths), 10, message="topic deleted")
    assert broker.deleted == ["doomed"]
    wait_until(lambda: "doomed" not in broker.cache.snapshot().topics, 10)


def test_topic_deletion_when_disabled_leaves_the_mark(brokers, zk_client):
    broker = brokers(1)
    wait_until(lambda: broker.controller.active, 10)
    create_topic(zk_client, "kept", 1, 1)
    wait_until(lambda: state(zk_client, "kept", 0) is not None, 10)
    mark_topic_for_deletion(zk_client, "kept")
    create_topic(zk_client, "later", 1, 1)  # the controller acts after the mark, and still keeps the topic
    wait_until(lambda: state(zk_client, "later", 0) is not None, 10)
    assert zk_client.exists("/brokers/topics/kept") and zk_client.exists("/admin/delete_topics/kept")
    assert broker.deleted == []


def test_after_a_session_expiry_the_broker_registers_and_runs_for_controller_again(
    brokers, zk_client, zookeeper_server
):
    from zkafka.launch.zookeeper_server import expire_session

    broker = brokers(1)
    wait_until(lambda: broker.controller.active, 10)
    create_topic(zk_client, "t", 1, 1)
    wait_until(lambda: state(zk_client, "t", 0) == PartitionState(1, 0, (1,), 1), 10)
    old_session = broker.client.client_id[0]
    expire_session(broker.client, zookeeper_server.connect_string)
    wait_until(
        lambda: (
            zk_client.exists("/brokers/ids/1")
            and zk_client.exists("/brokers/ids/1").ephemeralOwner != old_session
        ),
        20,
        message="registered again",
    )
    wait_until(lambda: broker.controller.active and broker.controller.epoch == 2, 20, message="re-elected")
    assert zk_client.get("/controller_epoch")[0] == b"2"
    # the broker was gone for a moment: whatever the controller wrote in between, 1 leads t-0 in the end
    wait_until(lambda: state(zk_client, "t", 0).leader == 1, 10)
    create_topic(zk_client, "after", 1, 1)
    wait_until(
        lambda: state(zk_client, "after", 0) == PartitionState(1, 0, (1,), 2), 10, message="acts again"
    )


def test_auto_created_topic_gets_the_broker_defaults_and_leaders(brokers, zk_client):
    from zkafka.admin.topics import auto_create_topic

    broker = brokers(1, num_partitions="2")
    wait_until(lambda: broker.controller.active, 10)
    assert auto_create_topic(zk_client, broker.config, "auto") is True
    assert auto_create_topic(zk_client, broker.config, "auto") is False
    assert zk_client.get("/brokers/topics/auto")[0] == b'{"version":1,"partitions":{"0":[1],"1":[1]}}'
    assert zk_client.get("/config/topics/auto")[0] == b'{"version":1,"config":{}}'
    wait_until(
        lambda: state(zk_client, "auto", 1) == PartitionState(1, 0, (1,), 1), 10, message="leaders elected"
    )
