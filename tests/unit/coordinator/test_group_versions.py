"""What the later JoinGroup versions change in the group state machine: KIP-394's pending members (v4+),
KIP-62's rebalance timeout with heartbeats keeping a member's session (v1+), KIP-814's ``skip_assignment``
for a restarted static leader (v9) and ``group.max.size`` (KIP-389). Pure: no broker, no clock."""

from __future__ import annotations

from tests.unit.coordinator.test_group import join, new_group, of
from tests.unit.coordinator.test_group_static import static_group
from zkafka.coordinator.effects import AnswerJoin, ArmHeartbeat, AwaitJoins, CheckJoins
from zkafka.coordinator.group import GroupState
from zkafka.protocol.errors import ErrorCode as E


def test_a_new_dynamic_member_gets_member_id_required_then_joins_with_that_id() -> None:
    group = new_group()
    first = join(group, require_member_id=True, now=100)
    assert first.result.error == E.MEMBER_ID_REQUIRED and first.member_id == "c-1"
    assert first.effects == [ArmHeartbeat("c-1", 10100)] and group.members == {}
    assert group.is_pending("c-1") and not group.join_ready()  # a pending member holds a rebalance back
    joined = join(group, "c-1", require_member_id=True, now=200)
    assert joined.result is None and list(group.members) == ["c-1"] and not group.is_pending("c-1")
    assert of(joined.effects, AwaitJoins)


def test_a_rebalance_waits_for_pending_members_and_forgets_one_that_expires() -> None:
    group = new_group()
    a = join(group).member_id
    pending = join(group, require_member_id=True, now=0)
    assert not group.join_ready()  # a rejoined (it is parked), c-2 is pending
    assert group.expire(pending.member_id, 10000 - 1) == []  # a stale timer: not its deadline
    assert group.expire(pending.member_id, 10000) == [CheckJoins()]
    assert group.join_ready() and not group.is_pending(pending.member_id)
    assert join(group, pending.member_id, require_member_id=True).result.error == E.UNKNOWN_MEMBER_ID
    assert [e.member_id for e in of(group.complete_join(0), AnswerJoin)] == [a]


def test_static_members_and_old_versions_skip_the_member_id_round() -> None:
    group = new_group()
    assert join(group, instance_id="i-1", require_member_id=True).result is None  # static: parked at once
    assert join(group).result is None and group.pending_members == {}  # v0-v3


def test_heartbeats_keep_a_member_with_a_rebalance_timeout_while_the_group_prepares_a_rebalance() -> None:
    group = new_group()
    a = join(group, rebalance_timeout_ms=30000).member_id
    b = join(group).member_id  # v0: no rebalance timeout
    group.complete_join(0)
    group.sync(a, 1, {}, 0)
    group.stored(1, E.NONE, 0)
    join(group, client="d")  # a newcomer: the group prepares a rebalance
    assert group.state is GroupState.PREPARING_REBALANCE
    assert group.heartbeat(a, 1, 5000) == (E.REBALANCE_IN_PROGRESS, [ArmHeartbeat(a, 15000)])
    assert group.heartbeat(b, 1, 5000) == (E.REBALANCE_IN_PROGRESS, [])  # 0.9: no re-arm
    assert group.rebalance_timeout_ms() == 30000


def test_join_group_v9_tells_a_restarted_static_leader_to_skip_the_assignment() -> None:
    group, a, b = static_group()
    outcome = join(group, instance_id="i-a", skip_assignment=True, now=500)
    new_a = outcome.member_id
    assert outcome.result.skip_assignment and outcome.result.leader_id == new_a
    assert [m for m, _ in outcome.result.members] == [b, new_a] and outcome.result.generation_id == 1
    follower = join(group, instance_id="i-b", skip_assignment=True, now=600).result
    assert not follower.skip_assignment and follower.leader_id == new_a and follower.members == ()


def test_group_max_size_as_kafka_accept_joining_member() -> None:
    group = new_group()
    a = join(group).member_id
    assert group.accepts(a, 1) and group.accepts("", 2) and not group.accepts("", 1)  # preparing: 1 join
    group.complete_join(0)
    assert group.state is GroupState.COMPLETING_REBALANCE and not group.accepts("", 1) and group.accepts(a, 1)
