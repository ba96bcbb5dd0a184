"""The group membership state machine without sockets, ZooKeeper or timers: every transition of sheet §10.2,
its errors in 0.9's order, and the effects the broker must execute."""

from __future__ import annotations

import itertools

import pytest

from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    ArmHeartbeat,
    AwaitJoins,
    CheckJoins,
    DisarmHeartbeat,
    JoinResult,
    StoreGroup,
)
from zkafka.coordinator.group import GroupMetadata, GroupState
from zkafka.coordinator.offsets_schema import GroupValue
from zkafka.protocol.errors import ErrorCode as E

RANGE = [("range", b"R")]
BOTH = [("roundrobin", b"RR"), ("range", b"R")]


def new_group(**options) -> GroupMetadata:
    counter = itertools.count(1)
    return GroupMetadata("g", "consumer", new_member_suffix=lambda: str(next(counter)), **options)


def join(group, member_id="", protocols=RANGE, session=10000, now=0, client="c", **kw):
    return group.join(member_id, client, "/127.0.0.1", session, "consumer", protocols, now, **kw)


def of(effects, kind):
    return [e for e in effects if isinstance(e, kind)]


def stable_group(members=2) -> tuple[GroupMetadata, list[str]]:
    """A group of ``members`` in generation 1, Stable, each with assignment b"a-<id>"."""
    group = new_group()
    ids = [join(group).member_id for _ in range(members)]
    group.complete_join(100)
    group.sync(ids[0], 1, {m: f"a-{m}".encode() for m in ids}, 100)
    group.stored(1, E.NONE, 100)
    assert group.state is GroupState.STABLE
    return group, ids


def group_in(setup: str) -> GroupMetadata:
    """A two-member group (c-1 leads) Stable in generation 1, then: "preparing" (the leader rejoined),
    "awaiting" (both rejoined: generation 2, CompletingRebalance) or "dead" (unloaded)."""
    group, _ = stable_group()
    if setup in ("preparing", "awaiting"):
        join(group, "c-1")
    if setup == "awaiting":
        join(group, "c-2")
        group.complete_join(0)
    elif setup == "dead":
        group.unload()
    return group


def test_first_join_creates_a_member_parks_it_and_starts_a_rebalance() -> None:
    group = new_group()
    outcome = join(group, session=7000)
    assert outcome.member_id == "c-1"  # client_id + "-" + suffix (a UUID by default)
    assert outcome.result is None  # parked
    assert group.state is GroupState.PREPARING_REBALANCE
    assert AwaitJoins(7000) in outcome.effects  # rebalance timeout = the longest session timeout
    assert group.leader_id == "c-1"
    assert group.join_ready()


def test_complete_join_answers_everyone_and_only_the_leader_gets_the_members() -> None:
    group = new_group()
    a, b = join(group, protocols=BOTH).member_id, join(group, protocols=RANGE, session=20000).member_id
    assert group.rebalance_timeout_ms() == 20000
    effects = group.complete_join(50)
    answers = {e.member_id: e.result for e in of(effects, AnswerJoin)}
    assert answers[a] == JoinResult(E.NONE, 1, "range", a, a, ((a, b"R"), (b, b"R")))
    assert answers[b] == JoinResult(E.NONE, 1, "range", a, b, ())
    assert of(effects, ArmHeartbeat) == [ArmHeartbeat(a, 10050), ArmHeartbeat(b, 20050)]
    assert group.state is GroupState.COMPLETING_REBALANCE


def test_protocol_is_chosen_by_votes() -> None:
    group = new_group()
    for _ in range(2):
        join(group, protocols=BOTH)
    join(group, protocols=[("range", b"R"), ("roundrobin", b"RR")])
    group.complete_join(0)
    assert group.protocol == "roundrobin"  # two first choices against one


def test_members_that_did_not_rejoin_are_removed_when_the_rebalance_times_out() -> None:
    group, (a, b) = stable_group()
    effects = join(group, a).effects  # the leader rejoins: a rebalance
    assert AwaitJoins(10000) in effects
    assert not group.join_ready()  # b has not rejoined
    effects = group.complete_join(200)  # the timeout
    assert DisarmHeartbeat(b) in effects
    assert list(group.members) == [a] and group.generation == 2


def test_sync_stores_the_leaders_assignment_then_answers_every_parked_sync() -> None:
    group = new_group()
    a, b = join(group).member_id, join(group).member_id
    group.complete_join(0)
    follower = group.sync(b, 1, None, 10)
    assert follower.parked and follower.effects == [ArmHeartbeat(b, 10010)]
    leader = group.sync(a, 1, {a: b"A"}, 20)  # b missing: an empty assignment
    (store,) = of(leader.effects, StoreGroup)
    assert store.generation == 1 and [(m.member_id, m.assignment) for m in store.value.members] == [
        (a, b"A"),
        (b, b""),
    ]
    assert group.state is GroupState.COMPLETING_REBALANCE
    effects = group.stored(1, E.NONE, 30)
    assert of(effects, AnswerSync) == [AnswerSync(a, E.NONE, b"A"), AnswerSync(b, E.NONE, b"")]
    assert group.state is GroupState.STABLE
    late = group.sync(b, 1, None, 40)  # Stable: the current assignment at once
    assert (late.error, late.assignment, late.parked) == (E.NONE, b"", False)


def test_a_failed_store_answers_the_syncs_with_its_error_and_rebalances() -> None:
    group = new_group()
    a = join(group).member_id
    group.complete_join(0)
    group.sync(a, 1, {a: b"A"}, 0)
    effects = group.stored(1, E.NOT_COORDINATOR_FOR_GROUP, 0)
    assert AnswerSync(a, E.NOT_COORDINATOR_FOR_GROUP, b"") in effects
    assert group.state is GroupState.PREPARING_REBALANCE
    assert group.stored(1, E.NONE, 0) == []  # a late answer for a group that moved on changes nothing


@pytest.mark.parametrize(
    ("setup", "member", "generation", "error"),
    [
        ("stable", "nobody", 1, E.UNKNOWN_MEMBER_ID),
        ("stable", "c-1", 0, E.ILLEGAL_GENERATION),
        ("preparing", "c-1", 1, E.REBALANCE_IN_PROGRESS),
        ("preparing", "nobody", 7, E.UNKNOWN_MEMBER_ID),  # membership is checked first
        ("preparing", "c-1", 7, E.ILLEGAL_GENERATION),  # then the generation
        ("dead", "c-1", 1, E.GROUP_COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_sync_errors_in_order(setup, member, generation, error) -> None:
    outcome = group_in(setup).sync(member, generation, None, 0)
    assert (outcome.error, outcome.parked) == (error, False)


@pytest.mark.parametrize(
    ("setup", "member", "generation", "error"),
    [
        ("stable", "c-1", 1, E.NONE),
        ("stable", "nobody", 1, E.UNKNOWN_MEMBER_ID),
        ("stable", "c-1", 2, E.ILLEGAL_GENERATION),
        ("preparing", "nobody", 9, E.REBALANCE_IN_PROGRESS),  # rebalancing comes before the member check
        ("awaiting", "c-1", 2, E.NONE),  # CompletingRebalance: a heartbeat as in Stable (Kafka 2.x+)
        ("awaiting", "c-1", 1, E.ILLEGAL_GENERATION),
        ("dead", "c-1", 1, E.GROUP_COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_heartbeat_errors_in_order(setup, member, generation, error) -> None:
    code, effects = group_in(setup).heartbeat(member, generation, 500)
    assert code == error
    assert effects == ([ArmHeartbeat(member, 10500)] if error == E.NONE else [])


@pytest.mark.parametrize(
    ("setup", "member", "generation", "error"),
    [
        ("stable", "c-1", 1, E.NONE),
        ("stable", "nobody", 1, E.UNKNOWN_MEMBER_ID),
        ("stable", "c-1", 3, E.ILLEGAL_GENERATION),
        ("preparing", "c-1", 1, E.NONE),  # commits are accepted while the group rebalances
        ("awaiting", "nobody", 1, E.REBALANCE_IN_PROGRESS),
        ("dead", "c-1", 1, E.GROUP_COORDINATOR_NOT_AVAILABLE),
    ],
)
def test_commit_errors_in_order(setup, member, generation, error) -> None:
    assert group_in(setup).commit_error(member, generation, 0)[0] == error


def test_join_errors_in_order() -> None:
    group, (a, _) = stable_group()
    bad_type = group.join(a, "c", "h", 10000, "connect", RANGE, 0)
    assert bad_type.result.error == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(group, "nobody", protocols=[("other", b"")]).result.error == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(group, protocols=[]).result.error == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(group, "nobody").result.error == E.UNKNOWN_MEMBER_ID
    group.unload()
    assert join(group, a).result == JoinResult(E.GROUP_COORDINATOR_NOT_AVAILABLE, 0, "", "", a, ())


def test_a_dead_group_answers_every_member_request_coordinator_not_available_first() -> None:
    """Kafka 3.x: Dead is checked before protocol, membership and generation (the group moved or was just
    removed; the client looks its coordinator up again)."""
    group, (a, _) = stable_group()
    group.unload()
    assert join(group, protocols=[("other", b"")]).result.error == E.GROUP_COORDINATOR_NOT_AVAILABLE
    assert join(group, "nobody").result.error == E.GROUP_COORDINATOR_NOT_AVAILABLE
    assert group.sync("nobody", 9, None, 0).error == E.GROUP_COORDINATOR_NOT_AVAILABLE
    assert group.heartbeat("nobody", 9, 0) == (E.GROUP_COORDINATOR_NOT_AVAILABLE, [])
    assert group.commit_error("nobody", 9, 0) == (E.GROUP_COORDINATOR_NOT_AVAILABLE, [])
    assert group.leave(a) == (E.GROUP_COORDINATOR_NOT_AVAILABLE, [])
    assert group.state is GroupState.DEAD and a in group.members  # nothing changed


def test_a_follower_rejoining_unchanged_in_stable_gets_the_current_generation_without_a_rebalance() -> None:
    group, (a, b) = stable_group()
    outcome = join(group, b)
    assert outcome.result == JoinResult(E.NONE, 1, "range", a, b, ()) and outcome.effects == []
    assert group.state is GroupState.STABLE
    changed = join(group, b, protocols=BOTH)  # changed protocols: a rebalance
    assert changed.result is None and group.state is GroupState.PREPARING_REBALANCE


def test_a_member_rejoining_unchanged_in_awaiting_sync_gets_its_answer_again() -> None:
    group = new_group()
    a, b = join(group).member_id, join(group).member_id
    group.complete_join(0)
    assert join(group, a).result == JoinResult(E.NONE, 1, "range", a, a, ((a, b"R"), (b, b"R")))
    assert group.state is GroupState.COMPLETING_REBALANCE


def test_a_join_in_awaiting_sync_answers_parked_syncs_with_rebalance_in_progress() -> None:
    group = new_group()
    join(group)
    b = join(group).member_id
    group.complete_join(0)
    group.sync(b, 1, None, 0)
    effects = join(group).effects  # a newcomer
    assert AnswerSync(b, E.REBALANCE_IN_PROGRESS, b"") in effects
    assert group.state is GroupState.PREPARING_REBALANCE


def test_session_expiry_removes_the_member_and_rebalances() -> None:
    group, (a, b) = stable_group()
    assert group.expire(b, 5) == []  # a stale timer (the member heartbeat since) does nothing
    deadline = group.members[b].heartbeat_deadline_ms
    effects = group.expire(b, deadline)
    assert DisarmHeartbeat(b) in effects and AwaitJoins(10000) in effects
    assert list(group.members) == [a] and group.state is GroupState.PREPARING_REBALANCE


def test_members_waiting_in_a_join_never_expire() -> None:
    group, (a, b) = stable_group()
    join(group, a)
    assert group.expire(a, group.members[a].heartbeat_deadline_ms) == []
    effects = group.expire(b, group.members[b].heartbeat_deadline_ms)  # b did not rejoin: it goes
    assert CheckJoins() in effects and group.join_ready()


def test_the_leader_leaving_hands_leadership_on_and_the_last_member_leaving_empties_the_group() -> None:
    group, (a, b) = stable_group()
    assert group.leave("nobody") == (E.UNKNOWN_MEMBER_ID, [])
    code, effects = group.leave(a)
    assert code == E.NONE and group.leader_id == b and AwaitJoins(10000) in effects
    code, effects = group.leave(b)
    assert CheckJoins() in effects and group.join_ready()
    assert group.complete_join(0) == [StoreGroup(2, GroupValue("consumer", 2, None, None, 0, []))]
    assert group.state is GroupState.EMPTY and group.protocol == ""


def test_a_removed_member_with_a_parked_join_is_answered() -> None:
    group, (a, b) = stable_group()
    assert join(group, b, protocols=BOTH).result is None
    _, effects = group.leave(b)
    assert AnswerJoin(b, JoinResult(E.UNKNOWN_MEMBER_ID, 0, "", "", b, ())) in effects


def test_unload_answers_parked_requests_with_not_coordinator() -> None:
    group = new_group()
    a = join(group).member_id
    effects = group.unload()
    assert AnswerJoin(a, JoinResult(E.NOT_COORDINATOR_FOR_GROUP, 0, "", "", a, ())) in effects
    assert group.state is GroupState.DEAD and group.join_ready()
    assert group.complete_join(0) == []


def test_record_round_trip_loads_a_stable_group_with_fresh_timers() -> None:
    group, (a, b) = stable_group()
    loaded, effects = GroupMetadata.from_record("g", group.to_record(), 1000)
    assert loaded.state is GroupState.STABLE and loaded.generation == 1 and loaded.leader_id == a
    assert [m.assignment for m in loaded.members.values()] == [f"a-{a}".encode(), f"a-{b}".encode()]
    assert effects == [ArmHeartbeat(a, 11000), ArmHeartbeat(b, 11000)]
    assert loaded.heartbeat(b, 1, 1000)[0] == E.NONE


def test_describe_shows_metadata_and_assignments_only_while_stable() -> None:
    group, (a, b) = stable_group()
    described = group.describe()
    assert (described.state, described.protocol, described.members[0].member_assignment) == (
        "Stable",
        "range",
        f"a-{a}".encode(),
    )
    join(group, a)
    described = group.describe()
    assert (described.state, described.protocol) == ("PreparingRebalance", "")
    assert described.members[1].member_metadata == b"" and described.members[1].client_host == "/127.0.0.1"


# -- zkafka options ------------------------------------------------------------------------------------------


def test_initial_rebalance_delay_waits_for_newcomers_up_to_the_rebalance_timeout() -> None:
    group = new_group(initial_rebalance_delay_ms=3000)
    first = join(group, session=10000)
    assert AwaitJoins(3000) in first.effects
    assert not group.join_ready()  # only the timer completes the first rebalance
    join(group, session=10000)
    assert group.complete_join(3000) == [AwaitJoins(3000)]  # a newcomer came: wait again
    assert group.complete_join(6000) != [] and group.generation == 1  # nobody new: one rebalance for both
    assert len(group.members) == 2
    effects = join(group, "c-1", protocols=BOTH).effects  # later rebalances are not delayed
    assert AwaitJoins(10000) in effects and not group.join_ready()


def test_initial_delay_never_exceeds_the_rebalance_timeout() -> None:
    group = new_group(initial_rebalance_delay_ms=3000)
    join(group, session=7000)
    remaining = [3000, 1000]
    for step, expected in enumerate(remaining):
        join(group, session=7000)
        assert group.complete_join(step) == [AwaitJoins(expected)]
    join(group, session=7000)
    effects = group.complete_join(99)
    assert len(of(effects, AnswerJoin)) == 4
