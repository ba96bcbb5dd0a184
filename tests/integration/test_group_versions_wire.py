"""The group and offset APIs at Kafka 3.4's versions over a real socket, against an in-process 0.8 broker and a
real ZooKeeper, with a raw client: what each version carries, as Kafka does.

KIP-394 (JoinGroup v4+): an empty member id is answered MEMBER_ID_REQUIRED with a member id; rejoining with
it joins; a pending member that does not rejoin within its session timeout is forgotten. KIP-62 (v1+): a
member that keeps heartbeating but does not rejoin is removed after the rebalance timeout, not the session
timeout. librdkafka's default session timeout (45 s) is within ``group.max.session.timeout.ms`` (Kafka 2.x's
1800000). KIP-814 (v9): a static leader restarted in a Stable group is told it leads and to skip the
assignment. SyncGroup v5's protocol type and name; FindCoordinator v4's batch; OffsetCommit v8 / OffsetFetch
v8 (batched groups); ListGroups v4's state filter; DescribeGroups v5's instance ids and authorized operations;
DeleteGroups and OffsetDelete.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.server08 import Client08, wait_for_leaders
from zkafka.consumer.group import GroupConsumer, RebalanceInProgressError, TopicPartition
from zkafka.consumer.group.assignors import RangeAssignor, encode_assignment, subscription_metadata
from zkafka.protocol import group_membership as g
from zkafka.protocol import offset_commit as oc
from zkafka.protocol.errors import ErrorCode as E
from zkafka.protocol.versioned import make
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

PROPS = {
    "num_partitions": "2", "offsets.topic.num.partitions": "1", "group.min.session.timeout.ms": "1000",
    "offsets.retention.check.interval.ms": "100",
}  # fmt: skip
METADATA = subscription_metadata(RangeAssignor(), ["t"])
PROTOCOLS = [{"protocol_name": "range", "protocol_metadata": METADATA}]


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0, **PROPS)


@pytest.fixture
def port(broker):
    with Client08(broker.port, client_id="cli") as client:
        wait_for_leaders(client, ["t"])
        wait_until(lambda: client.call(oc.GroupCoordinatorRequestV0("g")).error == 0, 20, message="a coordinator")
    return broker.port


def request(cls, **values):
    defaults = dict(
        group_instance_id=None, reason=None, protocol_type="consumer", protocol_name=None, group_assignment=[],
        rebalance_timeout=6000, session_timeout=6000, group_protocols=PROTOCOLS, member_id="", group_id="g",
    )  # fmt: skip
    return make(cls, **(defaults | values))


def join(client, version=9, **values):
    return client.call(request(g.JOIN_GROUP_REQUEST[version], **values))


def sync(client, generation, member_id, version=5, assignments=(), **values):
    given = [{"member_id": m, "member_assignment": a} for m, a in assignments]
    return client.call(
        request(g.SYNC_GROUP_REQUEST[version], generation_id=generation, member_id=member_id, group_assignment=given, **values)
    )


def heartbeat(client, generation, member_id, version=4, instance_id=None, group_id="g"):
    body = request(
        g.HEARTBEAT_REQUEST[version], generation_id=generation, member_id=member_id, group_instance_id=instance_id, group_id=group_id
    )
    return client.call(body).error


def two_step_join(client, **values):
    """KIP-394's join: MEMBER_ID_REQUIRED with a member id, then the join with it."""
    first = join(client, **values)
    assert first.error == E.MEMBER_ID_REQUIRED and first.member_id.startswith("cli-")
    return join(client, member_id=first.member_id, **values)


def in_thread(call):
    """Run ``call()`` in a thread; returns a function that waits for its result."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(call()), daemon=True)
    thread.start()

    def result(timeout=20.0):
        thread.join(timeout)
        assert box, "the call did not return"
        return box[0]

    return result


def test_member_id_required_then_join_with_it_and_pending_members_expire(port):
    with Client08(port, client_id="cli") as client:
        joined = two_step_join(client, session_timeout=45000)  # librdkafka's default session timeout joins
        assert (joined.error, joined.generation_id, joined.leader_id) == (0, 1, joined.member_id)
        assert (joined.protocol_type, joined.group_protocol, joined.skip_assignment) == ("consumer", "range", False)
        assert heartbeat(client, 1, joined.member_id) == 0  # CompletingRebalance: answered NONE (Kafka 2.x+)
        synced = sync(client, 1, joined.member_id, assignments=[(joined.member_id, encode_assignment({"t": [0, 1]}))])
        assert (synced.error, synced.protocol_type, synced.protocol_name) == (0, "consumer", "range")
        assert sync(client, 1, joined.member_id, protocol_name="roundrobin").error == E.INCONSISTENT_GROUP_PROTOCOL
        assert heartbeat(client, 1, joined.member_id) == 0
        pending = join(client, group_id="other", session_timeout=1000)
        assert pending.error == E.MEMBER_ID_REQUIRED and pending.generation_id == 0
        assert join(client, 3, group_id="v3").error == 0  # before v4 a new member joins at once
        time.sleep(1.6)  # the pending member's session timeout (1 s) passes without its rejoin
        late = join(client, group_id="other", member_id=pending.member_id, session_timeout=1000)
        assert late.error == E.UNKNOWN_MEMBER_ID


def test_a_member_that_heartbeats_but_does_not_rejoin_is_removed_after_the_rebalance_timeout(port):
    """KIP-62: sessions of 1 s, rebalance timeouts of 3 s; the slow member's heartbeats keep its session."""
    timeouts = {"session_timeout": 1000, "rebalance_timeout": 3000}
    with Client08(port, client_id="cli") as a, Client08(port, client_id="cli") as b, Client08(port, client_id="cli") as c:
        first = two_step_join(a, **timeouts)
        sync(a, 1, first.member_id, assignments=[(first.member_id, b"")])
        slow_id = join(b, **timeouts).member_id
        b_joined = in_thread(lambda: join(b, member_id=slow_id, **timeouts))
        wait_until(lambda: heartbeat(a, 1, first.member_id) == E.REBALANCE_IN_PROGRESS, 5)
        a_joined = join(a, member_id=first.member_id, **timeouts)
        assert a_joined.generation_id == 2 and b_joined().generation_id == 2
        sync(a, 2, first.member_id, assignments=[])
        sync(b, 2, slow_id)
        newcomer_id = join(c, **timeouts).member_id
        c_joined = in_thread(lambda: join(c, member_id=newcomer_id, **timeouts))
        wait_until(lambda: heartbeat(a, 2, first.member_id) == E.REBALANCE_IN_PROGRESS, 5)
        started = time.monotonic()
        a_rejoined = in_thread(lambda: join(a, member_id=first.member_id, **timeouts))
        answers = []
        while time.monotonic() - started < 2.0:  # b heartbeats, past its 1 s session, and never rejoins
            answers.append(heartbeat(b, 2, slow_id))
            time.sleep(0.2)
        assert set(answers) == {E.REBALANCE_IN_PROGRESS}
        rejoined = a_rejoined()
        waited = time.monotonic() - started
        assert 2.5 <= waited < 6, waited  # the rebalance timeout (3 s), not b's session timeout
        assert rejoined.generation_id == 3 and sorted(m.member_id for m in rejoined.members) == sorted(
            [first.member_id, newcomer_id]
        )
        assert c_joined().generation_id == 3
        sync(a, 3, first.member_id, assignments=[])
        assert heartbeat(b, 3, slow_id) == E.UNKNOWN_MEMBER_ID  # removed (CompletingRebalance checks the member)


def test_a_restarted_static_leader_is_told_to_skip_the_assignment_with_join_group_v9(port):
    with Client08(port, client_id="cli") as client:
        leader = join(client, group_instance_id="i-1")
        assert leader.error == 0 and leader.leader_id == leader.member_id  # static: no MEMBER_ID_REQUIRED
        sync(client, 1, leader.member_id, group_instance_id="i-1", assignments=[(leader.member_id, b"a")])
        for version, skip in ((5, False), (9, True)):
            restarted = join(client, version, group_instance_id="i-1")
            assert (restarted.error, restarted.generation_id) == (0, 1)
            assert restarted.member_id != leader.member_id
            if skip:
                assert (restarted.leader_id, restarted.skip_assignment) == (restarted.member_id, True)
                assert [(m.member_id, m.group_instance_id) for m in restarted.members] == [(restarted.member_id, "i-1")]
            else:
                assert restarted.leader_id == leader.member_id and restarted.members == []  # 2.3: the old leader
            assert heartbeat(client, 1, leader.member_id, 3, "i-1") == E.FENCED_INSTANCE_ID
            synced = sync(client, 1, restarted.member_id, group_instance_id="i-1")
            assert (synced.error, synced.member_assignment) == (0, b"a")
            leader = restarted


def test_offsets_find_coordinator_batches_list_describe_and_delete(port, broker):
    with Client08(port, client_id="cli") as client:
        found = client.call(make(oc.FIND_COORDINATOR_REQUEST[4], key_type=0, coordinator_keys=["g", "h"]))
        assert [(c.key, c.node_id, c.port, c.error) for c in found.coordinators] == [("g", 0, port, 0), ("h", 0, port, 0)]
        txn = client.call(make(oc.FIND_COORDINATOR_REQUEST[3], group_id="tx", key_type=1))
        assert txn.error == E.GROUP_COORDINATOR_NOT_AVAILABLE and txn.error_message
        joined = two_step_join(client, group_instance_id=None)
        sync(client, 1, joined.member_id, assignments=[(joined.member_id, b"")])
        commit = make(
            oc.OFFSET_COMMIT_REQUEST[8], group_id="g", generation_id=1, member_id=joined.member_id, group_instance_id=None,
            topics=[{"topic": "t", "partitions": [
                {"partition": 0, "offset": 5, "committed_leader_epoch": -1, "metadata": None},
                {"partition": 1, "offset": 7, "committed_leader_epoch": -1, "metadata": "m"},
            ]}],
        )  # fmt: skip
        assert [p.error for p in client.call(commit).topics[0].partitions] == [0, 0]
        idle = make(
            oc.OFFSET_COMMIT_REQUEST[8], group_id="idle", generation_id=-1, member_id="", group_instance_id=None,
            topics=[{"topic": "t", "partitions": [{"partition": 0, "offset": 3, "committed_leader_epoch": -1, "metadata": ""}]}],
        )  # fmt: skip
        assert client.call(idle).topics[0].partitions[0].error == 0
        fetch = make(
            oc.OFFSET_FETCH_REQUEST[8], require_stable=False,
            groups=[{"group_id": "g", "topics": None}, {"group_id": "idle", "topics": [{"topic": "t", "partitions": [0, 1]}]}],
        )  # fmt: skip
        fetched = {
            (grp.group_id, t.topic, p.partition): (p.offset, p.metadata, p.error)
            for grp in client.call(fetch).groups
            for t in grp.topics
            for p in t.partitions
        }
        assert fetched == {
            ("g", "t", 0): (5, "", 0), ("g", "t", 1): (7, "m", 0), ("idle", "t", 0): (3, "", 0), ("idle", "t", 1): (-1, "", 0),
        }  # fmt: skip

        listed = client.call(make(g.LIST_GROUPS_REQUEST[4], states_filter=["Stable"])).groups
        assert [(x.group_id, x.group_state) for x in listed] == [("g", "Stable")]
        assert client.call(make(g.LIST_GROUPS_REQUEST[4], states_filter=["PreparingRebalance"])).groups == []
        (described,) = client.call(make(g.DESCRIBE_GROUPS_REQUEST[5], group_ids=["g"], include_authorized_operations=False)).groups
        assert (described.state, described.authorized_operations) == ("Stable", -(1 << 31))
        assert [(m.member_id, m.group_instance_id) for m in described.members] == [(joined.member_id, None)]
        (asked,) = client.call(make(g.DESCRIBE_GROUPS_REQUEST[5], group_ids=["g"], include_authorized_operations=True)).groups
        assert asked.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)  # READ, DELETE, DESCRIBE

        delete_offsets = make(
            oc.OFFSET_DELETE_REQUEST[0], group_id="g", topics=[{"topic": "t", "partitions": [{"partition": 0}]}]
        )
        answer = client.call(delete_offsets)
        assert (answer.error, answer.topics[0].partitions[0].error) == (0, E.GROUP_SUBSCRIBED_TO_TOPIC)
        delete = make(g.DELETE_GROUPS_REQUEST[2], group_ids=["g", "idle", "nobody"])
        results = {r.group_id: r.error for r in client.call(delete).results}
        assert results == {"g": E.NON_EMPTY_GROUP, "idle": 0, "nobody": E.GROUP_ID_NOT_FOUND}
        leave = make(g.LEAVE_GROUP_REQUEST[5], group_id="g", members=[{"member_id": joined.member_id, "group_instance_id": None, "reason": "done"}])
        assert [m.error for m in client.call(leave).members] == [0]
        empty = client.call(make(g.LIST_GROUPS_REQUEST[4], states_filter=["Empty"])).groups
        assert [(x.group_id, x.group_state) for x in empty] == [("g", "Empty")]  # "idle" was deleted
        answer = client.call(delete_offsets)
        assert (answer.error, answer.topics[0].partitions[0].error) == (0, 0)
        left = client.call(make(oc.OFFSET_FETCH_REQUEST[7], group_id="g", topics=None, require_stable=False))
        assert {(t.topic, p.partition): p.offset for t in left.topics for p in t.partitions} == {("t", 1): 7}
        assert client.call(delete).results[0].error == 0  # no members now: deleted
        gone = client.call(make(oc.OFFSET_FETCH_REQUEST[7], group_id="g", topics=None, require_stable=False))
        assert gone.topics == [] and gone.error == 0
        # Deleted, the group is gone (only a request racing the deletion sees it Dead: COORDINATOR_NOT_AVAILABLE,
        # unit-tested): its old member is unknown to every request and a new member starts it afresh
        assert heartbeat(client, 1, joined.member_id) == E.UNKNOWN_MEMBER_ID
        assert sync(client, 1, joined.member_id).error == E.UNKNOWN_MEMBER_ID
        assert join(client, member_id=joined.member_id).error == E.UNKNOWN_MEMBER_ID
        assert two_step_join(client).generation_id == 1


def commit_v2(client, group_id, offsets, retention_ms, generation=-1, member_id=""):
    """OffsetCommit v2 with an explicit ``retention_time_ms``: the error of each (topic, partition)."""
    topics = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append({"partition": partition, "offset": offset, "metadata": ""})
    body = make(
        oc.OFFSET_COMMIT_REQUEST[2], group_id=group_id, generation_id=generation, member_id=member_id,
        retention_time_ms=retention_ms, topics=[{"topic": t, "partitions": ps} for t, ps in topics.items()],
    )  # fmt: skip
    return {(t.topic, p.partition): p.error for t in client.call(body).topics for p in t.partitions}


def committed(client, group_id):
    answer = client.call(make(oc.OFFSET_FETCH_REQUEST[7], group_id=group_id, topics=None, require_stable=False))
    return {(t.topic, p.partition): p.offset for t in answer.topics for p in t.partitions}


def test_kip_211_offsets_of_a_group_with_members_outlive_their_retention_until_it_is_empty(port):
    """Kafka 2.1+: an expired commit (v2's explicit 300 ms retention here) of a standalone consumer goes, and of
    a topic no member subscribes to; a Stable group keeps its subscribed topics' offsets until it is Empty."""
    with Client08(port, client_id="cli") as client:
        wait_for_leaders(client, ["u"])
        joined = two_step_join(client)
        sync(client, 1, joined.member_id, assignments=[(joined.member_id, encode_assignment({"t": [0, 1]}))])
        offsets = {("t", 0): 5, ("u", 0): 6}
        assert commit_v2(client, "g", offsets, 300, 1, joined.member_id) == dict.fromkeys(offsets, 0)
        assert commit_v2(client, "simple", {("t", 0): 3}, 300) == {("t", 0): 0}
        wait_until(lambda: committed(client, "simple") == {} and committed(client, "g") == {("t", 0): 5}, 10)
        assert heartbeat(client, 1, joined.member_id) == 0 and committed(client, "g") == {("t", 0): 5}
        leave = make(g.LEAVE_GROUP_REQUEST[3], group_id="g", members=[{"member_id": joined.member_id, "group_instance_id": None}])
        assert [m.error for m in client.call(leave).members] == [0]
        wait_until(lambda: committed(client, "g") == {}, 10, message="the Empty group's offsets expired")
        listed = client.call(make(g.LIST_GROUPS_REQUEST[4], states_filter=[])).groups
        assert [x.group_id for x in listed] == []  # both groups went with their offsets


def test_group_max_size_refuses_a_join_past_it(start_broker08):
    """KIP-389: with group.max.size=2 a third member's JoinGroup gets GROUP_MAX_SIZE_REACHED (81) and no
    member id, whatever its version; the two members still heartbeat and rejoin."""
    broker = start_broker08(0, **PROPS, **{"group.max.size": "2"})
    with Client08(broker.port, client_id="cli") as a, Client08(broker.port, client_id="cli") as b:
        wait_for_leaders(a, ["t"])
        wait_until(lambda: a.call(oc.GroupCoordinatorRequestV0("g")).error == 0, 20, message="a coordinator")
        first = two_step_join(a)
        sync(a, 1, first.member_id, assignments=[])
        second_id = join(b).member_id
        b_joined = in_thread(lambda: join(b, member_id=second_id))
        wait_until(lambda: heartbeat(a, 1, first.member_id) == E.REBALANCE_IN_PROGRESS, 5)
        assert join(a, member_id=first.member_id).generation_id == 2 and b_joined().generation_id == 2
        sync(a, 2, first.member_id, assignments=[])
        for version in (0, 4, 9):
            third = join(a, version, member_id="")
            assert (third.error, third.member_id) == (E.GROUP_MAX_SIZE_REACHED, ""), version
        assert heartbeat(a, 2, first.member_id) == 0 and heartbeat(b, 2, second_id) == 0


class _Listener:
    """Records each callback with the group's members as the coordinator saw them at that moment."""

    def __init__(self, raw: Client08) -> None:
        self.raw, self.calls = raw, []

    def members(self) -> list[str]:
        (group,) = self.raw.call(make(g.DESCRIBE_GROUPS_REQUEST[5], group_ids=["coop"], include_authorized_operations=False)).groups
        return sorted(m.member_id for m in group.members)

    def on_partitions_assigned(self, assigned) -> None:
        self.calls.append(("assigned", set(assigned), None))

    def on_partitions_revoked(self, revoked) -> None:
        self.calls.append(("revoked", set(revoked), self.members()))


def test_a_commit_while_joining_is_retriable_and_close_revokes_before_leave_group(port):
    """Kafka 2.x's consumer: a commit while its join is under way raises RebalanceInProgressError (poll, then
    retry), not CommitFailedError; close() tells the listener every owned partition is revoked while the member
    is still in the group (onLeavePrepare), then sends LeaveGroup. Cooperative-sticky, a raw member leading."""
    coop = [{"protocol_name": "cooperative-sticky", "protocol_metadata": METADATA}]
    with Client08(port, client_id="cli") as raw:
        leader = two_step_join(raw, group_id="coop", group_protocols=coop)
        sync(raw, 1, leader.member_id, group_id="coop", assignments=[])
        listener = _Listener(raw)
        member = GroupConsumer({
            "bootstrap.servers": f"127.0.0.1:{port}", "group.id": "coop", "enable.auto.commit": "false",
            "partition.assignment.strategy": "cooperative-sticky", "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "100", "auto.offset.reset": "earliest",
        })  # fmt: skip
        try:
            member.subscribe(["t"], listener=listener)
            polled = lambda: member.poll(20) is not None  # noqa: E731 (its greenlets run while it polls)
            # its join starts; the group waits for the raw leader to rejoin
            wait_until(lambda: polled() and heartbeat(raw, 1, leader.member_id, group_id="coop") == E.REBALANCE_IN_PROGRESS, 10)
            with pytest.raises(RebalanceInProgressError):
                member.commit({TopicPartition("t", 0): 1})
            rejoined = join(raw, group_id="coop", member_id=leader.member_id, group_protocols=coop)
            new_id = next(m.member_id for m in rejoined.members if m.member_id != leader.member_id)
            both = encode_assignment({"t": [0, 1]})
            sync(raw, 2, leader.member_id, group_id="coop", assignments=[(new_id, both)])
            everything = {TopicPartition("t", 0), TopicPartition("t", 1)}
            wait_until(lambda: polled() and member.assignment() == everything, 10)
            member.commit({TopicPartition("t", 0): 1})  # retried after the join: accepted
            member.close()
            assert listener.calls == [
                ("assigned", everything, None),
                ("revoked", everything, sorted([leader.member_id, new_id])),  # before its LeaveGroup
            ]
            assert listener.members() == [leader.member_id]
        finally:
            member.close()
