"""Kafka 2.x+'s five group states and the moves between them, through the pure state machine and the
coordinator (Empty when the last member goes, offsets kept; Dead on delete, expiry and unload)."""

from __future__ import annotations

import pytest

from tests.unit.coordinator.test_group import join as join_group
from tests.unit.coordinator.test_group import new_group, stable_group
from zkafka.coordinator.effects import AwaitJoins
from zkafka.coordinator.group import GroupMetadata
from zkafka.coordinator.group_state import GroupState as S
from zkafka.coordinator.group_state import IllegalGroupTransition, check_transition
from zkafka.coordinator.offsets_schema import GroupValue
from zkafka.protocol.errors import ErrorCode as E

MOVES = {
    (S.EMPTY, S.PREPARING_REBALANCE),
    (S.STABLE, S.PREPARING_REBALANCE),
    (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE),
    (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
    (S.PREPARING_REBALANCE, S.EMPTY),
    (S.COMPLETING_REBALANCE, S.STABLE),
} | {(state, S.DEAD) for state in S}


@pytest.mark.parametrize(("current", "target"), [(a, b) for a in S for b in S])
def test_only_kafkas_moves_are_allowed(current, target) -> None:
    if (current, target) in MOVES:
        check_transition(current, target)
    else:
        with pytest.raises(IllegalGroupTransition, match=f"from {current.value} to {target.value}"):
            check_transition(current, target)


def test_a_new_group_is_empty_and_its_first_join_prepares_a_rebalance() -> None:
    group = new_group()
    assert group.state is S.EMPTY
    outcome = join_group(group)
    assert group.state is S.PREPARING_REBALANCE and AwaitJoins(10000) in outcome.effects
    group.complete_join(0)
    assert group.state is S.COMPLETING_REBALANCE


def test_an_empty_group_takes_the_first_members_protocol_type() -> None:
    group = GroupMetadata("g", "")  # created by a simple consumer's commit
    outcome = group.join("", "c", "/h", 10000, "connect", [("default", b"")], 0)
    assert outcome.result is None and group.protocol_type == "connect"
    refused = group.join("", "c", "/h", 10000, "", [("default", b"")], 0)
    assert refused.result.error == E.INCONSISTENT_GROUP_PROTOCOL


def test_heartbeats_in_completing_rebalance_are_answered_none_and_rearm_the_session() -> None:
    group, (a, b) = stable_group()
    join_group(group, a)
    join_group(group, b)
    group.complete_join(1000)
    assert group.state is S.COMPLETING_REBALANCE
    code, effects = group.heartbeat(a, 2, 2000)
    assert code == E.NONE and group.members[a].heartbeat_deadline_ms == 12000 and effects
    assert group.commit_error(a, 2, 2000)[0] == E.REBALANCE_IN_PROGRESS  # commits still wait for the sync


def test_an_empty_group_takes_generation_minus_one_commits_only() -> None:
    group, (a, b) = stable_group()
    group.leave(a)
    group.leave(b)
    group.complete_join(0)
    assert group.state is S.EMPTY and group.generation == 2
    assert group.commit_error("", -1, 0) == (E.NONE, [])
    assert group.commit_error("", 2, 0)[0] == E.UNKNOWN_MEMBER_ID
    assert group.heartbeat(a, 2, 0)[0] == E.UNKNOWN_MEMBER_ID
    join_group(group)  # a member comes back: Empty → PreparingRebalance → generation 3
    group.complete_join(0)
    assert (group.state, group.generation) == (S.COMPLETING_REBALANCE, 3)


def test_loading_an_empty_record_or_only_offsets_brings_back_an_empty_group() -> None:
    empty, effects = GroupMetadata.from_record("g", GroupValue("consumer", 4, None, None, 1234, []), 0)
    assert (empty.state, empty.generation, empty.protocol_type, effects) == (S.EMPTY, 4, "consumer", [])
    assert (empty.protocol, empty.leader_id, empty.state_timestamp_ms) == ("", None, 1234)
    offsets_only, _ = GroupMetadata.from_record("h", None, 0)
    assert (offsets_only.state, offsets_only.generation) == (S.EMPTY, 0)
