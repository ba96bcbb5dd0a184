"""Static membership (KIP-345) on the wire, against a real 0.8 broker process and a real ZooKeeper: zkafka
GroupConsumers with ``group.instance.id`` speak JoinGroup v5 / SyncGroup v3 / Heartbeat v3. A static member
that restarts within its session timeout gets its partitions back in the same generation without the others
rebalancing (and nothing is lost or read twice); a restarted leader leads the next rebalance; one that
restarts later rebalances as usual; the replaced incarnation is fenced (FENCED_INSTANCE_ID); LeaveGroup v3
removes a static member by its instance id; and the broker's ApiVersions answer lists every group version
Kafka 3.4 serves.

The restart of a static member and of a dynamic one are timed (new consumer to its first record) and printed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest.importorskip("kafka")

from tests.integration.test_coordinator_kafka_python import TOPIC, produce  # noqa: E402
from tests.integration.test_group_consumer import listening, poll_until  # noqa: E402
from tests.support.server08 import Client08, wait_for_leaders  # noqa: E402
from zkafka.admin.topics import create_topic_with_assignment  # noqa: E402
from zkafka.consumer.group import GroupConsumer, TopicPartition  # noqa: E402
from zkafka.errors import FencedInstanceIdError  # noqa: E402
from zkafka.protocol import group_membership
from zkafka.protocol.api_keys import HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP  # noqa: E402
from zkafka.protocol.api_versions import ApiVersionsRequestV0  # noqa: E402
from zkafka.protocol.errors import ErrorCode  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402

pytestmark = pytest.mark.integration

GROUP = "static-group"
PARTITIONS = 6
ALL = {TopicPartition(TOPIC, p) for p in range(PARTITIONS)}


@pytest.fixture
def bootstrap(broker08_process, zk_client):
    broker = broker08_process(
        0,
        offsets_topic_num_partitions="1",
        offsets_topic_replication_factor="1",
        group_min_session_timeout_ms="1000",
    )
    create_topic_with_assignment(zk_client, TOPIC, ",".join("0" * PARTITIONS))
    client = wait_until(lambda: _connect(broker.port), 30, message="the 0.8 broker process listening")
    try:
        wait_for_leaders(client, [TOPIC])
    finally:
        client.close()
    return f"127.0.0.1:{broker.port}"


def _connect(port: int) -> Client08 | None:
    try:
        return Client08(port)
    except OSError:
        return None


def member(bootstrap: str, log: list, name: str, **config) -> GroupConsumer:
    """A subscribed GroupConsumer (client id ``name``) whose listener notes its calls in ``log``."""
    return listening(bootstrap, name, log, group_id=GROUP, client_id=name, **config)


@contextmanager
def static_pair(bootstrap: str, **static_config) -> Iterator[tuple[list, GroupConsumer, GroupConsumer, list]]:
    """A dynamic member "a" and a static one "s" (instance s-1), settled: (log, a, s, members to close)."""
    log: list = []
    members = [
        member(bootstrap, log, "a"),
        member(bootstrap, log, "s", group_instance_id="s-1", **static_config),
    ]
    closing = list(members)
    try:
        settle(members)
        del log[:]
        yield log, members[0], members[1], closing
    finally:
        for c in closing:
            c.close()


def raw_client(bootstrap: str) -> Client08:
    return Client08(int(bootstrap.rsplit(":", 1)[1]))


def settle(consumers: list[GroupConsumer]) -> None:
    """Poll until the members own every partition between them, evenly."""
    share = PARTITIONS // len(consumers)
    poll_until(consumers, lambda r: all(len(c.assignment()) == share for c in consumers))
    assert set().union(*(c.assignment() for c in consumers)) == ALL


def poll_into(consumers: list[GroupConsumer], seen: list, done, timeout: float = 60.0) -> float:
    """Poll each consumer in turn, noting (client id, value) of every record in ``seen``, until ``done()``;
    the seconds it took."""
    started = time.monotonic()
    while not done():
        assert time.monotonic() - started < timeout, f"timed out with {len(seen)} records"
        for c in consumers:
            for records in c.poll(50).values():
                seen.extend((c.config["client.id"], r.value) for r in records)
    return time.monotonic() - started


def test_a_static_member_restarting_within_its_session_timeout_keeps_its_partitions_without_a_rebalance(
    bootstrap,
):
    log: list = []
    a, b = member(bootstrap, log, "a"), member(bootstrap, log, "b")
    s = member(bootstrap, log, "s", group_instance_id="s-1", session_timeout_ms=10000)
    consumers = [a, b, s]
    try:
        settle(consumers)
        sent = produce(bootstrap, 300)
        seen: list = []
        poll_into(consumers, seen, lambda: len(seen) >= len(sent))
        generation, owned = s.coordinator.generation, s.assignment()
        kept = (a.assignment(), b.assignment())
        joins = (a.coordinator.rebalances, b.coordinator.rebalances)
        s.commit()
        del log[:]

        s.close()  # static: no LeaveGroup (its listener is told it gives everything up, as Kafka's onLeavePrepare)
        assert log == [("s", "revoked", owned, owned)]
        del log[:]
        sent |= produce(bootstrap, 300, start=300)  # written while s is away
        consumers[2] = restarted = member(
            bootstrap, log, "s2", group_instance_id="s-1", session_timeout_ms=10000
        )
        static_resume = poll_into(consumers, seen, lambda: any(name == "s2" for name, _ in seen))
        assert restarted.assignment() == owned and restarted.coordinator.generation == generation
        poll_into(consumers, seen, lambda: len(seen) >= len(sent))
        for c in consumers:  # anything read twice would come now
            seen.extend(r.value for records in c.poll(200).values() for r in records)
        assert sorted(v for _, v in seen) == sorted(sent)  # nothing lost, nothing read twice
        assert (a.coordinator.rebalances, b.coordinator.rebalances) == joins
        assert a.coordinator.generation == b.coordinator.generation == generation
        assert [entry[:2] for entry in log] == [("s2", "assigned")]  # a's and b's listeners never called
        moved = len(owned ^ restarted.assignment()) + sum(
            len(c.assignment() ^ o) for c, o in zip((a, b), kept, strict=True)
        )
        assert moved == 0
        print(
            f"\nstatic restart within the session: generation {generation} -> {restarted.coordinator.generation}, "
            f"{moved} partitions moved, {len(seen)} records read, {len(seen) - len({v for _, v in seen})} twice"
        )

        # the same restart of a dynamic member: LeaveGroup, a rebalance without it, another with its successor
        b.commit()
        b.close()
        del log[:]
        produce(bootstrap, 300, start=600)
        consumers[1] = member(bootstrap, log, "b2")
        dynamic_resume = poll_into(consumers, seen, lambda: any(name == "b2" for name, _ in seen))
        assert a.coordinator.generation > generation and {name for name, *_ in log} == {"a", "s2", "b2"}
        print(
            f"\nresume after a restart: static {static_resume * 1000:.0f} ms, dynamic {dynamic_resume * 1000:.0f} ms"
        )
    finally:
        for c in consumers:
            c.close()


def test_a_static_member_restarting_after_its_session_timeout_rebalances(bootstrap):
    with static_pair(bootstrap, session_timeout_ms=2000) as (log, a, s, closing):
        generation = a.coordinator.generation
        s.close()
        assert log.pop()[:2] == ("s", "revoked")
        poll_until([a], lambda r: a.assignment() == ALL, timeout=30)  # the session timeout removed s
        assert a.coordinator.generation == generation + 1
        assert [e[:2] for e in log] == [("a", "revoked"), ("a", "assigned")]
        del log[:]
        s = member(bootstrap, log, "s2", group_instance_id="s-1", session_timeout_ms=2000)
        closing.append(s)
        settle([a, s])
        assert a.coordinator.generation == s.coordinator.generation == generation + 2
        assert ("a", "revoked") in [e[:2] for e in log]


def test_a_restarted_static_leader_keeps_leading_without_a_rebalance(bootstrap):
    log: list = []
    s = member(bootstrap, log, "s", group_instance_id="s-1")
    closing = [s]
    try:
        settle([s])  # alone first: s leads
        a = member(bootstrap, log, "a")
        closing.append(a)
        settle([s, a])
        assert s.coordinator.leader_id == s.coordinator.member_id
        generation, owned = a.coordinator.generation, s.assignment()
        s.close()
        restarted = member(bootstrap, log, "s2", group_instance_id="s-1")
        closing.append(restarted)
        poll_until([a, restarted], lambda r: restarted.assignment() == owned)
        assert restarted.coordinator.generation == a.coordinator.generation == generation
        # it was told the old leader id (no assignment to compute) but leads the next rebalance: a newcomer
        # gets partitions only if the restarted leader's assignment reaches the group
        assert restarted.coordinator.leader_id != restarted.coordinator.member_id
        b = member(bootstrap, log, "b")
        closing.append(b)
        settle([a, restarted, b])
        assert restarted.coordinator.leader_id == restarted.coordinator.member_id
        assert a.coordinator.generation == generation + 1
    finally:
        for c in closing:
            c.close()


def test_the_replaced_incarnation_is_fenced(bootstrap):
    with static_pair(bootstrap) as (log, a, old, closing):
        generation, old_id = a.coordinator.generation, old.coordinator.member_id
        new = member(
            bootstrap, log, "new", group_instance_id="s-1"
        )  # the same instance, the old one still up
        closing.append(new)
        poll_until([a, new], lambda r: new.assignment() == old.assignment())
        assert new.coordinator.member_id != old_id and new.coordinator.generation == generation
        with pytest.raises(FencedInstanceIdError):  # its next heartbeat is answered FENCED_INSTANCE_ID
            poll_until([old], lambda r: False, timeout=20)
        assert old.coordinator.fenced and a.coordinator.generation == generation
        with raw_client(bootstrap) as client:
            heartbeat = group_membership.HeartbeatRequestV3(GROUP, generation, old_id, "s-1")
            assert client.call(heartbeat).error == ErrorCode.FENCED_INSTANCE_ID
            sync = group_membership.SyncGroupRequestV3(GROUP, generation, old_id, "s-1", [])
            assert client.call(sync).error == ErrorCode.FENCED_INSTANCE_ID
            leave = client.call(
                group_membership.LeaveGroupRequestV3(GROUP, [group_membership.LeavingMember(old_id, "s-1")])
            )
            assert (leave.error, [m.error for m in leave.members]) == (0, [ErrorCode.FENCED_INSTANCE_ID])
            assert client.call(group_membership.HeartbeatRequestV0(GROUP, generation, old_id)).error == (
                ErrorCode.UNKNOWN_MEMBER_ID  # v0 names no instance: an unknown member, as 0.9 says
            )


def test_leave_group_v3_removes_a_static_member_by_its_instance_id(bootstrap):
    with static_pair(bootstrap, session_timeout_ms=30000) as (log, a, s, closing):
        generation = a.coordinator.generation
        with raw_client(bootstrap) as client:
            leave = client.call(
                group_membership.LeaveGroupRequestV3(GROUP, [group_membership.LeavingMember("", "s-1")])
            )
        assert leave.error == 0 and [(m.group_instance_id, m.error) for m in leave.members] == [("s-1", 0)]
        poll_until([a], lambda r: a.assignment() == ALL)  # at once, not after s's 30 s session timeout
        assert a.coordinator.generation == generation + 1


def test_api_versions_lists_every_group_version_kafka_3_4_serves(bootstrap):
    """The served-but-unadvertised static membership versions are gone: every version between is served and
    ApiVersions says so (issue 23)."""
    with raw_client(bootstrap) as client:
        answer = client.call(ApiVersionsRequestV0())
    ranges = {r.api_key: (r.min_version, r.max_version) for r in answer.api_versions}
    assert {k: ranges[k] for k in (JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP)} == {
        JOIN_GROUP: (0, 9),
        HEARTBEAT: (0, 4),
        LEAVE_GROUP: (0, 5),
        SYNC_GROUP: (0, 5),
    }
