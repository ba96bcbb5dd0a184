"""The group coordinator over the wire with a raw 0.9 client: finding the coordinator (creating
``__consumer_offsets``), errors in 0.9's order, a whole join/sync/heartbeat round, a member that stops
heartbeating, DescribeGroups/ListGroups, commits from members and from consumers without a group, and offsets
and groups loaded again after the broker restarts. A real ZooKeeper and in-process 0.8 brokers."""

from __future__ import annotations

import pytest

from tests.support.server08 import Client08, wait_for_leaders
from zkafka.consumer.group.assignors import (
    RangeAssignor,
    decode_assignment,
    encode_assignment,
    subscription_metadata,
)
from zkafka.coordinator.offsets_schema import partition_for
from zkafka.protocol import group_membership as g
from zkafka.protocol.errors import ErrorCode as E
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.offset_commit import (
    GroupCoordinatorRequestV0,
    GroupCoordinatorResponseV0,
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV2,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV1,
)
from zkafka.topic import OFFSETS_TOPIC
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

PROPS = {"num_partitions": "2", "offsets.topic.num.partitions": "3", "group.min.session.timeout.ms": "1000"}
METADATA = subscription_metadata(RangeAssignor(), ["t"])


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0, **PROPS)


@pytest.fixture
def client(broker):
    client = Client08(broker.port, client_id="cli")
    wait_for_leaders(client, ["t"])
    find_coordinator(client, "g")
    yield client
    client.sock.close()


def find_coordinator(client: Client08, group: str):
    return wait_until(
        lambda: (a := client.call(GroupCoordinatorRequestV0(group))).error == 0 and a,
        20,
        message=f"a coordinator for {group}",
    )


def join(client, group="g", member="", session=6000, protocols=None):
    protocols = protocols if protocols is not None else [g.GroupProtocol("range", METADATA)]
    return client.call(g.JoinGroupRequestV0(group, session, member, "consumer", protocols))


def commit_v2(client, group, generation, member, offsets):
    topics = [
        OffsetCommitRequestTopicV0(t, [OffsetCommitRequestPartitionV0(p, o, "md")])
        for (t, p), o in offsets.items()
    ]
    answer = client.call(OffsetCommitRequestV2(group, generation, member, -1, topics))
    return {(t.topic, p.partition): p.error for t in answer.topics for p in t.partitions}


def fetch_offsets(client, group, partitions=None):
    topics = [OffsetFetchRequestTopic("t", partitions)] if partitions is not None else []
    answer = client.call(OffsetFetchRequestV1(group, topics))
    return {
        (t.topic, p.partition): (p.offset, p.metadata, p.error) for t in answer.topics for p in t.partitions
    }


def test_the_coordinator_is_this_broker_and_the_offsets_topic_is_created_compacted(broker, client):
    answer = client.call(GroupCoordinatorRequestV0("g"))
    assert answer == GroupCoordinatorResponseV0(0, 0, "127.0.0.1", broker.port)
    (meta,) = client.call(MetadataRequestV0([OFFSETS_TOPIC])).topics
    assert len(meta.partitions) == 3
    log = broker.server.log_manager.get_log(OFFSETS_TOPIC, partition_for("g", 3))
    assert log.config.compact


def test_join_errors_over_the_wire(client):
    assert join(client, group="").error == E.INVALID_GROUP_ID
    assert join(client, session=999).error == E.INVALID_SESSION_TIMEOUT
    assert join(client, member="ghost").error == E.UNKNOWN_MEMBER_ID  # unknown group, member id given
    assert join(client, protocols=[]).error == E.INCONSISTENT_GROUP_PROTOCOL
    assert client.call(g.HeartbeatRequestV0("nobody", 1, "m")).error == E.UNKNOWN_MEMBER_ID
    assert client.call(g.SyncGroupRequestV0("nobody", 1, "m", [])).error == E.UNKNOWN_MEMBER_ID
    assert client.call(g.LeaveGroupRequestV0("nobody", "m")).error == E.UNKNOWN_MEMBER_ID
    (dead,) = client.call(g.DescribeGroupsRequestV0(["nobody"])).groups
    assert (dead.error, dead.state, dead.members) == (0, "Dead", [])


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout(broker, client):
    solo = join(client, session=1000)
    assert (solo.error, solo.generation_id, solo.leader_id) == (0, 1, solo.member_id)
    assert solo.member_id.startswith("cli-")
    assignment = encode_assignment({"t": [0, 1]})
    synced = client.call(
        g.SyncGroupRequestV0("g", 1, solo.member_id, [g.SyncGroupAssignment(solo.member_id, assignment)])
    )
    assert (synced.error, decode_assignment(synced.member_assignment)) == (0, {"t": [0, 1]})
    assert client.call(g.HeartbeatRequestV0("g", 1, solo.member_id)).error == 0
    assert client.call(g.HeartbeatRequestV0("g", 0, solo.member_id)).error == E.ILLEGAL_GENERATION
    (described,) = client.call(g.DescribeGroupsRequestV0(["g"])).groups
    assert (described.state, described.protocol, described.members[0].client_host) == (
        "Stable",
        "range",
        "/127.0.0.1",
    )
    assert client.call(g.ListGroupsRequestV0()) == g.ListGroupsResponseV0(0, [g.ListedGroup("g", "consumer")])
    wait_until(  # DescribeGroups is no heartbeat: the member stays silent; the group is Empty, still listed
        lambda: client.call(g.DescribeGroupsRequestV0(["g"])).groups[0].state == "Empty", 10, message="the member removed"
    )
    assert client.call(g.ListGroupsRequestV0()).groups == [g.ListedGroup("g", "consumer")]
    assert client.call(g.HeartbeatRequestV0("g", 1, solo.member_id)).error == E.UNKNOWN_MEMBER_ID


def test_commits_are_fenced_by_generation_and_accepted_without_a_group(client):
    solo = join(client)
    client.call(g.SyncGroupRequestV0("g", 1, solo.member_id, []))
    assert commit_v2(client, "g", 1, solo.member_id, {("t", 0): 5}) == {("t", 0): 0}
    assert commit_v2(client, "g", 0, solo.member_id, {("t", 0): 9}) == {("t", 0): E.ILLEGAL_GENERATION}
    assert commit_v2(client, "g", 1, "ghost", {("t", 0): 9}) == {("t", 0): E.UNKNOWN_MEMBER_ID}
    assert commit_v2(client, "g", 1, solo.member_id, {("nope", 0): 9}) == {
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION
    }
    assert fetch_offsets(client, "g", [0, 1]) == {("t", 0): (5, "md", 0), ("t", 1): (-1, "", 0)}
    assert commit_v2(client, "solo", -1, "", {("t", 1): 3}) == {("t", 1): 0}  # no group management
    assert commit_v2(client, "solo", 4, "m", {("t", 1): 3}) == {("t", 1): E.UNKNOWN_MEMBER_ID}  # an Empty group
    assert fetch_offsets(client, "solo") == {("t", 1): (3, "md", 0)}  # an empty list: all of the group's


def test_offsets_and_groups_are_loaded_again_after_a_restart(start_broker08, broker, client):
    solo = join(client)
    client.call(g.SyncGroupRequestV0("g", 1, solo.member_id, [g.SyncGroupAssignment(solo.member_id, b"A")]))
    assert commit_v2(client, "g", 1, solo.member_id, {("t", 0): 11, ("t", 1): 12}) == {
        ("t", 0): 0,
        ("t", 1): 0,
    }
    assert commit_v2(client, "other", -1, "", {("t", 0): 3}) == {("t", 0): 0}
    client.sock.close()
    broker.stop()
    again = start_broker08(0, **PROPS)
    client = Client08(again.port)
    find_coordinator(client, "g")
    offsets = wait_until(lambda: (o := fetch_offsets(client, "g", [0, 1]))[("t", 0)][2] == 0 and o, 10)
    assert offsets == {("t", 0): (11, "md", 0), ("t", 1): (12, "md", 0)}
    assert fetch_offsets(client, "other", [0]) == {("t", 0): (3, "md", 0)}
    (described,) = client.call(g.DescribeGroupsRequestV0(["g"])).groups
    assert (described.state, [m.member_id for m in described.members]) == ("Stable", [solo.member_id])
    assert described.members[0].member_assignment == b"A"
    assert client.call(g.HeartbeatRequestV0("g", 1, solo.member_id)).error == 0  # the loaded member lives on
    client.sock.close()


@pytest.mark.parametrize(("delay_ms", "one_rebalance"), [("1000", True), ("0", False)])
def test_ten_members_joining_at_once_with_an_initial_delay_rebalance_once(
    start_broker08, delay_ms, one_rebalance
):
    broker = start_broker08(0, **PROPS, **{"group.initial.rebalance.delay.ms": delay_ms})
    setup = Client08(broker.port)
    wait_for_leaders(setup, ["t"])
    find_coordinator(setup, "crowd")
    clients = [Client08(broker.port, client_id=f"m{i}") for i in range(10)]
    request = g.JoinGroupRequestV0("crowd", 6000, "", "consumer", [g.GroupProtocol("range", METADATA)])
    for client in clients:  # ten JoinGroups in flight together
        client.send(request)
    answers = [client.receive(request).body for client in clients]
    generations = {a.generation_id for a in answers if a.error == 0}
    if one_rebalance:
        assert [a.error for a in answers] == [0] * 10 and generations == {1}
        (leader,) = [a for a in answers if a.members]
        assert len(leader.members) == 10 and {a.leader_id for a in answers} == {leader.member_id}
    else:  # 0.9: the first join completes alone; the others wait out its session for a second generation
        assert generations == {1, 2} and len([a for a in answers if a.generation_id == 1]) == 1
    for client in [setup, *clients]:
        client.sock.close()
