"""Rebalancing drills for zkafka's group consumer against a real 0.8 broker process and a real ZooKeeper: a
group growing by one member, eager (range, sticky) against cooperative (KIP-429 ``cooperative-sticky``), while
a producer keeps writing; a member that stops calling ``poll`` is removed after ``max.poll.interval.ms`` (and
one busy for less keeps its place through its heartbeats, even past its session timeout); a
group whose common protocol is eager (a rolling upgrade's first step) rebalances eagerly. The figures are printed (the 10 -> 11 x 40
figure is benchmarks/rebalance_gap.py's); the assertions are on behaviour, not time."""

from __future__ import annotations

import time

import pytest

from tests.support.rebalance_drill import Drill, grow_by_one
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.consumer.group import TopicPartition
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

TOPIC = "drill"
PARTITIONS = 16
ALL = {TopicPartition(TOPIC, p) for p in range(PARTITIONS)}


@pytest.fixture
def broker(broker08_process):
    broker = broker08_process(
        0,
        num_partitions=str(PARTITIONS),
        offsets_topic_num_partitions="1",
        offsets_topic_replication_factor="1",
        group_min_session_timeout_ms="1000",
    )
    client = wait_until(lambda: _connect(broker.port), 30, message="the 0.8 broker process listening")
    try:
        wait_for_leaders(client, [TOPIC])
    finally:
        client.sock.close()
    return broker


def _connect(port: int) -> Client08 | None:
    try:
        return Client08(port)
    except OSError:
        return None


def test_a_cooperative_group_growing_by_one_keeps_consuming_and_an_eager_one_stops(broker):
    bootstrap = f"127.0.0.1:{broker.port}"
    results = {
        s: grow_by_one(bootstrap, broker.port, TOPIC, PARTITIONS, 4, s)
        for s in ("range", "cooperative-sticky")
    }
    for name, result in results.items():
        unaffected = [f.longest_gap for f in result.members if f.unaffected] or [0.0]
        print(
            f"\n{name}: 4 -> 5 members x {PARTITIONS} partitions: settled in {result.seconds * 1000:.0f} ms, "
            f"{result.joins} joins, {result.moved} partitions moved; longest gap of an unaffected member "
            f"{max(unaffected) * 1000:.0f} ms, of any member {max(f.longest_gap for f in result.members) * 1000:.0f} ms"
        )
    eager = results["range"]
    for f in eager.members:  # every member gave everything up before its join and got nothing meanwhile
        assert f.revoked[0] == f.before and f.received_while_joining == 0
        assert f.assigned == [f.after]
    cooperative = results["cooperative-sticky"]
    assert cooperative.moved == 3  # 16 over 5: only what the newcomer needs moves
    for f in cooperative.members:
        assert not f.lost
        assert f.after <= f.before  # nothing handed between old members
        assert set().union(*f.revoked) == f.before - f.after  # revoked: only what it lost, once
        assert all(f.revoked)  # never called with nothing
        if f.unaffected:
            assert f.revoked == [] and all(a == set() for a in f.assigned)
    assert any(f.unaffected for f in cooperative.members)
    assert sum(f.received_while_joining for f in cooperative.members) > 0  # consumed through the rebalance


def test_a_member_that_stops_polling_leaves_after_max_poll_interval_and_its_partitions_move(broker):
    bootstrap = f"127.0.0.1:{broker.port}"
    drill = Drill(bootstrap, broker.port, TOPIC, PARTITIONS, "range", **{"max.poll.interval.ms": "1500"})
    try:
        for _ in range(3):
            drill.add_member()
        drill.run_until(drill.settled, 60)
        stalled, everyone, figures = drill.consumers[0], drill.consumers, drill.figures
        owned = stalled.assignment()
        drill.consumers, drill.figures = everyone[1:], figures[1:]  # the first member is not polled any more
        drill.run_until(lambda: not stalled.coordinator.member_id and drill.settled(), 60)
        assert set().union(*(c.assignment() for c in everyone[1:])) == ALL
        assert stalled.coordinator.lost and not figures[0].lost  # its listener hears of it at its next poll
        figures[0].calls = []
        drill.consumers, drill.figures = everyone, figures
        drill.run_until(lambda: bool(figures[0].lost) and drill.settled(), 60)  # polled again: it rejoins
        assert figures[0].lost == [owned] and figures[0].calls[:2] == [
            "lost",
            "assigned",
        ]  # lost, not revoked
        print(f"\nstopped polling: left the group after max.poll.interval.ms; {len(owned)} partitions moved")
    finally:
        drill.consumers = everyone
        drill.close()


def test_a_group_whose_common_protocol_is_eager_rebalances_eagerly(broker):
    """A rolling upgrade's first step: members configured ``cooperative-sticky,range`` beside one that knows
    only range. The group selects range, and every member gives everything up before each join, as Kafka's
    consumer does when any of its assignors is eager."""
    bootstrap = f"127.0.0.1:{broker.port}"
    drill = Drill(bootstrap, broker.port, TOPIC, PARTITIONS, "cooperative-sticky,range")
    try:
        drill.add_member("range")
        drill.add_member()
        drill.run_until(drill.settled, 60)
        upgraded, figures = drill.consumers[1], drill.figures[1]
        assert upgraded.coordinator.protocol == "range" and upgraded.coordinator.rebalance_protocol == "eager"
        before, figures.revoked = upgraded.assignment(), []
        drill.add_member()
        drill.run_until(lambda: drill.settled() and all(drill.receipts.values()), 60)
        assert figures.revoked[0] == before  # everything, before the join
        assert {c.coordinator.protocol for c in drill.consumers} == {"range"}
    finally:
        drill.close()


def test_heartbeats_keep_a_member_that_is_not_polling_in_the_group_past_its_session_timeout(broker):
    """KIP-62: the heartbeat greenlet beats whatever the application does, so a member busy for twice its
    session timeout (but within max.poll.interval.ms) keeps its place: no rebalance."""
    bootstrap = f"127.0.0.1:{broker.port}"
    config = {"session.timeout.ms": "1000", "heartbeat.interval.ms": "200", "max.poll.interval.ms": "20000"}
    drill = Drill(bootstrap, broker.port, TOPIC, PARTITIONS, "range", **config)
    try:
        drill.add_member()
        drill.add_member()
        drill.run_until(drill.settled, 60)
        busy, everyone, figures = drill.consumers[0], drill.consumers, drill.figures
        generation, member_id = busy.coordinator.generation, busy.coordinator.member_id
        drill.consumers, drill.figures = everyone[1:], figures[1:]
        until = time.monotonic() + 2.0  # the busy member does not poll for two session timeouts
        drill.run_until(lambda: time.monotonic() >= until, 30)
        drill.consumers, drill.figures = everyone, figures
        drill.receipts[figures[0].name] = []
        drill.run_until(lambda: bool(drill.receipts[figures[0].name]), 30)  # it polls again: records at once
        assert (busy.coordinator.generation, busy.coordinator.member_id) == (generation, member_id)
        assert everyone[1].coordinator.generation == generation and not busy.coordinator.lost
    finally:
        drill.consumers = everyone
        drill.close()
