"""A group member whose coordinator freezes (SIGSTOP: its connections stay open, nothing answers): three 0.8
broker processes, ``__consumer_offsets`` and a three-partition topic replicated three times, acks=-1 load, and a
zkafka GroupConsumer configured with ``request.timeout.ms`` of ten minutes.

The member must take the missed heartbeat answers of its session as a dead coordinator, look it up again
(FindCoordinator, passing over the frozen broker) and go on with the new coordinator: it consumes every
acknowledged message long before its request timeout could have ended a single wait. Its session (4 s) may end
before another broker coordinates (the frozen one's ZooKeeper session, 4 s, then an election): it keeps its
member id and generation meanwhile, and the new coordinator, which loaded the group, takes its heartbeats: no
join again (a member joining anew would leave its old self in the group, for the rebalance to wait out).
"""

from __future__ import annotations

import signal

import pytest

from tests.support.drills import Producer08Load
from tests.support.group_drills import coordinator_of
from zkafka.consumer.group import GroupConsumer
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

TOPIC = "frozen"
GROUP = "frozen-group"
REQUEST_TIMEOUT_S = 600
DEADLINE_S = 90  # far below the request timeout: only a member that rediscovers meets it


def membership(member: GroupConsumer) -> tuple[str, int, int]:
    """The member id, the generation and the number of joins completed."""
    return member.coordinator.member_id, member.coordinator.generation, member.coordinator.rebalances


def test_a_member_rediscovers_a_frozen_coordinator_without_waiting_out_its_request_timeout(start_cluster):
    cluster = start_cluster(offsets_topic_num_partitions="1", group_min_session_timeout_ms="1000")
    cluster.topic(TOPIC, 3)
    member = GroupConsumer(
        {
            "bootstrap.servers": ",".join(f"127.0.0.1:{p}" for p in cluster.ports()),
            "group.id": GROUP,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": "4000",
            "heartbeat.interval.ms": "300",
            "request.timeout.ms": str(REQUEST_TIMEOUT_S * 1000),
            "metadata.max.age.ms": "1000",
            "fetch.max.wait.ms": "100",
        }
    )
    load = Producer08Load(cluster.ports, TOPIC, keyed=True, pause_s=0.05)
    consumed: set[bytes] = set()
    frozen = None

    def poll() -> None:
        for records in member.poll(100).values():
            consumed.update(r.value for r in records)

    try:
        member.subscribe([TOPIC])
        load.start()
        wait_until(lambda: poll() or len(consumed) >= 50, 60, interval=0, message="the member consumes")
        frozen = member.coordinator.coordinator.node_id
        before = membership(member)
        assert coordinator_of(cluster.ports(), GROUP) == frozen
        cluster[frozen].signal(signal.SIGSTOP)
        at = len(load.acked)
        wait_until(lambda: poll() or len(load.acked) >= at + 100, 60, interval=0, message="load goes on")
        load.stop()
        sent = set(load.acked)
        wait_until(lambda: poll() or sent <= consumed, DEADLINE_S, interval=0, message="every ack consumed")
        coordinator = member.coordinator.coordinator
        assert coordinator is not None and coordinator.node_id != frozen
        assert membership(member) == before, f"(member id, generation, joins): {before} before the freeze"
    finally:
        if load.is_alive():
            load.stop()
        if frozen is not None:
            cluster[frozen].signal(signal.SIGCONT)  # before close: its commit and LeaveGroup are answered
        member.close()
