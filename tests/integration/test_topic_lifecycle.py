"""Topic lifecycle on real 0.8 brokers: a topic deleted and created again (same or other replicas, a controller
change between, a replica down during the deletion or the creation) is led,
replicated and served (the controller forgets what it told the brokers about the deleted partitions)."""

from __future__ import annotations

import pytest

from tests.support.replication import produce, read_all, zk_state
from tests.support.server08 import Client08
from zkafka.admin.topics import create_topic_with_assignment, mark_topic_for_deletion
from zkafka.utils import wait_until
from zkafka.zk.paths08 import parse_controller

pytestmark = pytest.mark.integration

BROKERS = (0, 1, 2)


def controller(zk_client) -> int:
    return parse_controller(zk_client.get("/controller")[0])


def served_by_every_replica(brokers: dict, zk_client, topic: str, values: list[bytes]) -> None:
    """Wait until the partition's leader takes an acks=-1 produce with every replica in the ISR; then every
    replica's log holds what the leader's does."""
    offset = {}

    def acknowledged():
        state = zk_state(zk_client, topic, 0)
        if state is None or state.leader < 0 or sorted(state.isr) != list(BROKERS):
            return None
        with Client08(brokers[state.leader].port) as client:
            error, base = produce(client, topic, 0, values)
        if error:
            return None
        offset["leader"], offset["base"] = state.leader, base
        return True

    wait_until(acknowledged, 30, interval=0.1, message=f"an acks=-1 produce to {topic}-0 with ISR {BROKERS}")
    assert offset["base"] == 0
    leader = brokers[offset["leader"]]
    assert read_all(leader.port, topic, 0) == (len(values), list(enumerate(values)))
    assert sorted(zk_state(zk_client, topic, 0).isr) == list(BROKERS)

    def replicated():
        ends = [b.server.replica_manager.local_log(topic, 0) for b in brokers.values()]
        return all(log is not None and log.log_end_offset == len(values) for log in ends)

    wait_until(replicated, 20, message=f"every replica of {topic}-0 at the leader's log end")


@pytest.mark.parametrize("controller_change", [False, True], ids=["same-controller", "controller-change"])
def test_a_topic_deleted_and_created_again_with_the_same_replicas_is_served(
    start_broker08, zk_client, controller_change
):
    brokers = {b: start_broker08(b, delete_topic_enable="true") for b in BROKERS}
    wait_until(
        lambda: sorted(zk_client.get_children("/brokers/ids")) == ["0", "1", "2"], 20, message="brokers"
    )
    create_topic_with_assignment(zk_client, "again", "0:1:2")
    served_by_every_replica(brokers, zk_client, "again", [b"first-1", b"first-2"])

    mark_topic_for_deletion(zk_client, "again")
    wait_until(lambda: zk_client.exists("/brokers/topics/again") is None, 20, message="the topic deleted")
    wait_until(
        lambda: all(b.server.replica_manager.local_log("again", 0) is None for b in brokers.values()),
        20,
        message="every replica's log deleted",
    )
    if controller_change:
        old = controller(zk_client)
        brokers[old].stop()
        wait_until(
            lambda: zk_client.exists("/controller") and controller(zk_client) != old,
            20,
            message="a new controller",
        )
        brokers[old] = start_broker08(old, delete_topic_enable="true")
        wait_until(lambda: str(old) in zk_client.get_children("/brokers/ids"), 20, message="the broker back")

    create_topic_with_assignment(zk_client, "again", "0:1:2")
    served_by_every_replica(brokers, zk_client, "again", [b"second"])


def start_cluster(start_broker08, zk_client) -> dict:
    brokers = {b: start_broker08(b, delete_topic_enable="true") for b in BROKERS}
    wait_until(
        lambda: sorted(zk_client.get_children("/brokers/ids")) == ["0", "1", "2"], 20, message="brokers"
    )
    return brokers


def deleted_everywhere(brokers: dict, zk_client, topic: str) -> None:
    wait_until(lambda: zk_client.exists(f"/brokers/topics/{topic}") is None, 30, message="the topic deleted")
    wait_until(
        lambda: all(b.server.replica_manager.local_log(topic, 0) is None for b in brokers.values()),
        30,
        message="every replica's log deleted",
    )


def test_a_topic_created_again_on_other_replicas_is_served(start_broker08, zk_client):
    brokers = start_cluster(start_broker08, zk_client)
    create_topic_with_assignment(zk_client, "moved", "0:1:2")
    served_by_every_replica(brokers, zk_client, "moved", [b"first-1", b"first-2"])
    mark_topic_for_deletion(zk_client, "moved")
    deleted_everywhere(brokers, zk_client, "moved")
    create_topic_with_assignment(zk_client, "moved", "2:0:1")  # another preferred leader, another order
    served_by_every_replica(brokers, zk_client, "moved", [b"second"])
    assert zk_state(zk_client, "moved", 0).leader == 2


def test_a_topic_deleted_while_a_replica_is_down_is_deleted_there_when_it_returns(start_broker08, zk_client):
    brokers = start_cluster(start_broker08, zk_client)
    create_topic_with_assignment(zk_client, "away", "0:1:2")
    served_by_every_replica(brokers, zk_client, "away", [b"first-1", b"first-2"])
    down = 2 if controller(zk_client) != 2 else 1
    brokers[down].stop()
    wait_until(lambda: str(down) not in zk_client.get_children("/brokers/ids"), 20, message="the broker gone")
    mark_topic_for_deletion(zk_client, "away")
    wait_until(
        lambda: all(
            b.server.replica_manager.local_log("away", 0) is None for i, b in brokers.items() if i != down
        ),
        30,
        message="the live replicas' logs deleted",
    )
    brokers[down] = start_broker08(down, delete_topic_enable="true")
    deleted_everywhere(brokers, zk_client, "away")
    create_topic_with_assignment(zk_client, "away", "0:1:2")
    served_by_every_replica(brokers, zk_client, "away", [b"second"])


def test_a_topic_created_again_while_a_replica_is_down_is_served_once_it_returns(start_broker08, zk_client):
    brokers = start_cluster(start_broker08, zk_client)
    create_topic_with_assignment(zk_client, "late", "0:1:2")
    served_by_every_replica(brokers, zk_client, "late", [b"first-1", b"first-2"])
    mark_topic_for_deletion(zk_client, "late")
    deleted_everywhere(brokers, zk_client, "late")
    down = 2 if controller(zk_client) != 2 else 1
    brokers[down].stop()
    wait_until(lambda: str(down) not in zk_client.get_children("/brokers/ids"), 20, message="the broker gone")
    create_topic_with_assignment(zk_client, "late", "0:1:2")
    brokers[down] = start_broker08(down, delete_topic_enable="true")
    served_by_every_replica(brokers, zk_client, "late", [b"second"])
