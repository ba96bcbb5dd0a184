"""Static membership in the group state machine (KIP-345, Kafka 2.3's GroupCoordinator; 3.4's rule for a
restart in Stable): a restarted instance takes its old member's place, the old incarnation is fenced on every
call that names the instance, and
LeaveGroup v3 removes a static member by its instance id."""

from __future__ import annotations

from tests.unit.coordinator.test_group import BOTH, join, new_group, of
from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    ArmHeartbeat,
    AwaitJoins,
    CheckJoins,
    DisarmHeartbeat,
    JoinResult,
)
from zkafka.coordinator.group import GroupMetadata, GroupState
from zkafka.protocol.errors import ErrorCode as E


def static_group() -> tuple[GroupMetadata, str, str]:
    """Stable generation 1: a (instance i-a, the leader) assigned b"A", b (instance i-b) assigned b"B"."""
    group = new_group()
    a = join(group, instance_id="i-a").member_id
    b = join(group, instance_id="i-b").member_id
    group.complete_join(0)
    group.sync(a, 1, {a: b"A", b: b"B"}, 0)
    group.stored(1, E.NONE, 0)
    return group, a, b


def test_a_static_member_restarting_gets_its_partitions_back_without_a_rebalance() -> None:
    group, a, b = static_group()
    outcome = join(group, instance_id="i-b", now=500)  # b restarted: unknown member id, known instance
    new_b = outcome.member_id
    assert new_b not in (a, b) and outcome.result == JoinResult(E.NONE, 1, "range", a, new_b, ())
    assert group.state is GroupState.STABLE and group.members[new_b].assignment == b"B"
    assert DisarmHeartbeat(b) in outcome.effects and ArmHeartbeat(new_b, 10500) in outcome.effects
    assert group.sync(new_b, 1, None, 600).assignment == b"B"
    assert group.heartbeat(b, 1, 700)[0] == E.UNKNOWN_MEMBER_ID  # the old incarnation is fenced


def test_a_static_member_whose_protocols_change_the_groups_protocol_rebalances() -> None:
    """Kafka 3.4: a restarted static member rebalances the group only if the protocol the group would select
    changes; changed metadata alone (a subscription carrying its generation) does not."""
    group, a, b = static_group()
    outcome = join(group, instance_id="i-b", protocols=[("range", b"R2")])
    assert outcome.result is not None and group.state is GroupState.STABLE
    group = new_group()
    a = join(group, instance_id="i-a", protocols=BOTH).member_id
    b = join(group, instance_id="i-b", protocols=BOTH).member_id
    group.complete_join(0)
    group.sync(a, 1, {a: b"A", b: b"B"}, 0)
    group.stored(1, E.NONE, 0)
    assert group.protocol == "roundrobin"
    outcome = join(group, instance_id="i-a")  # range only now: the group would select range
    assert outcome.result is None and group.leader_id == outcome.member_id
    assert group.state is GroupState.PREPARING_REBALANCE
    assert DisarmHeartbeat(a) in outcome.effects and list(group.members) == [b, outcome.member_id]


def test_the_leaders_join_answer_lists_the_static_members_instance_ids() -> None:
    group = new_group()
    a = join(group, instance_id="i-a").member_id
    b = join(group).member_id  # dynamic
    answers = {e.member_id: e.result for e in of(group.complete_join(0), AnswerJoin)}
    assert answers[a].instance_ids == ((a, "i-a"),) and answers[a].members == ((a, b"R"), (b, b"R"))
    assert answers[b].instance_ids == () and answers[b].members == ()


def test_the_replaced_incarnation_is_fenced_on_every_call_naming_its_instance() -> None:
    group, a, b = static_group()
    new_b = join(group, instance_id="i-b", now=500).member_id
    assert group.heartbeat(b, 1, 600, instance_id="i-b") == (E.FENCED_INSTANCE_ID, [])
    assert group.sync(b, 1, None, 600, instance_id="i-b").error == E.FENCED_INSTANCE_ID
    assert join(group, b, instance_id="i-b").result.error == E.FENCED_INSTANCE_ID
    assert group.leave(b, "i-b") == (E.FENCED_INSTANCE_ID, [])
    assert group.heartbeat(b, 1, 600) == (E.UNKNOWN_MEMBER_ID, [])  # v0 names no instance: just unknown
    assert group.heartbeat(new_b, 1, 600, instance_id="i-b")[0] == E.NONE
    assert group.state is GroupState.STABLE and group.generation == 1 and list(group.members) == [a, new_b]


def test_a_restarted_leader_is_told_the_old_leader_id_so_it_computes_no_assignment() -> None:
    group, a, b = static_group()
    outcome = join(group, instance_id="i-a", now=500)
    new_a = outcome.member_id
    assert outcome.result == JoinResult(E.NONE, 1, "range", a, new_a, ())  # 2.3: the leader as it was
    assert group.leader_id == new_a and group.members[new_a].assignment == b"A"
    assert group.sync(new_a, 1, None, 600).assignment == b"A" and group.state is GroupState.STABLE


def test_replacing_an_instance_parked_in_a_rebalance_fences_its_parked_join() -> None:
    group, a, b = static_group()
    join(group, a, instance_id="i-a")  # the leader rejoins: a rebalance; a's JoinGroup is parked
    outcome = join(group, instance_id="i-a")  # meanwhile a new incarnation of i-a starts
    assert AnswerJoin(a, JoinResult(E.FENCED_INSTANCE_ID, 0, "", "", a, ())) in outcome.effects
    assert (
        outcome.result is None and group.state is GroupState.PREPARING_REBALANCE
    )  # it waits in the rebalance
    join(group, b, instance_id="i-b")
    answers = {e.member_id: e.result for e in of(group.complete_join(0), AnswerJoin)}
    assert set(answers) == {outcome.member_id, b} and group.generation == 2


def test_replacing_an_instance_awaiting_sync_fences_its_parked_sync_and_rebalances() -> None:
    group = new_group()
    join(group, instance_id="i-a")
    b = join(group, instance_id="i-b").member_id
    group.complete_join(0)
    assert group.sync(b, 1, None, 0).parked  # the follower waits for the leader's assignment
    outcome = join(group, instance_id="i-b")
    assert AnswerSync(b, E.FENCED_INSTANCE_ID, b"") in outcome.effects
    assert outcome.result is None and group.state is GroupState.PREPARING_REBALANCE


def test_a_known_member_naming_an_unknown_instance_must_join_afresh() -> None:
    group, a, b = static_group()
    assert join(group, b, instance_id="i-x").result.error == E.UNKNOWN_MEMBER_ID


def test_leave_group_v3_removes_a_static_member_by_its_instance_id() -> None:
    group, a, b = static_group()
    code, effects = group.leave("", "i-b")  # an admin's removal: no member id
    assert code == E.NONE and DisarmHeartbeat(b) in effects and list(group.members) == [a]
    assert group.state is GroupState.PREPARING_REBALANCE and of(effects, AwaitJoins)
    assert group.leave("", "i-b") == (E.UNKNOWN_MEMBER_ID, [])
    code, effects = group.leave(a, "i-a")
    assert code == E.NONE and of(effects, CheckJoins)


def test_a_rebalance_waits_for_the_longest_rebalance_timeout() -> None:
    group = new_group()
    outcome = join(group, session=10000, rebalance_timeout_ms=45000, instance_id="i-a")
    assert AwaitJoins(45000) in outcome.effects
    join(group, session=10000)
    group.complete_join(0)
    assert group.rebalance_timeout_ms() == 45000


def test_the_group_record_keeps_instance_ids_so_a_loaded_group_lets_a_restarted_member_in_without_a_rebalance():
    group, a, b = static_group()
    record = group.to_record()
    assert [(m.member_id, m.group_instance_id) for m in record.members] == [(a, "i-a"), (b, "i-b")]
    loaded, _ = GroupMetadata.from_record("g", record, 1000)  # another coordinator loads it
    assert loaded.instance_member("i-b").member_id == b
    outcome = join(loaded, instance_id="i-b", now=1000)
    assert outcome.result is not None and outcome.result.generation_id == 1 and loaded.is_(GroupState.STABLE)
    assert loaded.members[outcome.member_id].assignment == b"B"
