"""A Hypothesis stateful model of the group state machine: JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit, session expiry, the rebalance timeout and the group record's append, with valid and stale
member ids, generations and static instance ids, in any order. After every step the group must be sane:
a Stable group's members hold the leader's assignment, the generation never goes back, a commit is
accepted only from a member of the current generation (stale: ILLEGAL_GENERATION, unknown:
UNKNOWN_MEMBER_ID), no member waits in a JoinGroup and a SyncGroup at once, Empty iff no members."""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    ArmHeartbeat,
    AwaitJoins,
    CheckJoins,
    DisarmHeartbeat,
    StoreGroup,
)
from zkafka.coordinator.group import GroupMetadata, GroupState
from zkafka.protocol.errors import ErrorCode as E

SESSION_MS = 10_000
INSTANCES = st.sampled_from([None, None, "i-1", "i-2"])
GENERATION_SHIFT = st.sampled_from([0, 0, 0, -1, 1, -2])
PROTOCOLS = st.sampled_from([[("range", b"R")], [("range", b"R2")], [("roundrobin", b"RR"), ("range", b"R")]])


class GroupModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        counter = itertools.count(1)
        self.group = GroupMetadata("g", "consumer", new_member_suffix=lambda: str(next(counter)))
        self.now = 0
        self.ids: list[str] = ["never-joined"]  # every member id ever handed out, plus one never issued
        self.timers: dict[str, int] = {}
        self.join_parked = False  # the group's delayed join (AwaitJoins) waits
        self.stores: list[int] = []  # generations whose record append is in flight
        self.leader_assignments: dict[int, dict[str, bytes]] = {}  # generation -> the leader's SyncGroup
        self.answered_syncs: dict[str, tuple[int, bytes]] = {}
        self.generations = [0]
        self.committed: dict[int, int] = {}  # partition -> offset, as the offsets cache would hold them

    # -- executing effects, as coordinator.py does --------------------------------------------------------

    def execute(self, effects: list) -> None:
        for effect in effects:
            if isinstance(effect, ArmHeartbeat):
                self.timers[effect.member_id] = effect.deadline_ms
            elif isinstance(effect, DisarmHeartbeat):
                self.timers.pop(effect.member_id, None)
            elif isinstance(effect, (AwaitJoins, CheckJoins)):  # the purgatory tries at once, then waits
                self.join_parked |= isinstance(effect, AwaitJoins)
                if self.join_parked and self.group.join_ready():
                    self.complete_join()
            elif isinstance(effect, StoreGroup):
                self.stores.append(effect.generation)
            elif isinstance(effect, AnswerSync):
                self.answered_syncs[effect.member_id] = (effect.error, effect.assignment)
            else:
                assert isinstance(effect, AnswerJoin), effect
                if effect.result.error == E.NONE:
                    self.ids.append(effect.member_id)

    def complete_join(self) -> None:
        self.join_parked = False
        self.execute(self.group.complete_join(self.now))

    def member(self, index: int) -> str:
        """Mostly a current member (the leader first), else any id ever handed out or one never issued."""
        current = sorted(self.group.members, key=lambda m: m != self.group.leader_id)
        pool = current if current and index % 4 else self.ids
        return pool[index % len(pool)]

    # -- rules ----------------------------------------------------------------------------------------------

    @rule(instance=INSTANCES, protocols=PROTOCOLS)
    def join_new(self, instance: str | None, protocols: list) -> None:
        self.join(False, 0, instance, protocols)

    @rule(known=st.booleans(), index=st.integers(0, 50), instance=INSTANCES, protocols=PROTOCOLS)
    def join(self, known: bool, index: int, instance: str | None, protocols: list) -> None:
        member_id = self.member(index) if known else ""
        known = self.group.has(member_id)
        old = self.group.instance_member(instance) if instance is not None else None
        outcome = self.group.join(
            member_id,
            "c",
            "/127.0.0.1",
            SESSION_MS,
            "consumer",
            protocols,
            self.now,
            instance_id=instance,
            rebalance_timeout_ms=SESSION_MS,
        )
        self.ids.append(outcome.member_id)
        if member_id and not known and instance is None:
            assert outcome.result is not None and outcome.result.error == E.UNKNOWN_MEMBER_ID
        given = self.leader_assignments.get(self.group.generation, {})
        if old is not None and not self.group.has(old.member_id) and old.member_id in given:
            given[outcome.member_id] = given[old.member_id]  # a restarted static member keeps its partitions
        self.execute(outcome.effects)

    @precondition(lambda self: self.group.leader_id is not None)
    @rule(stored=st.booleans())
    def leader_syncs(self, stored: bool) -> None:
        """The leader's SyncGroup of the current generation (and, if ``stored``, its record appended at once)."""
        leader = self.group.members[self.group.leader_id]
        self.sync(0, 0, leader.instance_id, leader.member_id)
        while stored and self.stores:
            self.record_stored(False)

    @rule(index=st.integers(0, 50), shift=GENERATION_SHIFT, instance=INSTANCES)
    def sync(self, index: int, shift: int, instance: str | None, member_id: str = "") -> None:
        member_id = member_id or self.member(index)
        generation = self.group.generation + shift
        assignments = {m: f"{generation}:{m}".encode() for m in self.group.members}
        leads = member_id == self.group.leader_id
        was_completing = self.group.is_(GroupState.COMPLETING_REBALANCE)
        outcome = self.group.sync(member_id, generation, assignments, self.now, instance)
        if not self.group.has(member_id) and not self.group.fenced(member_id, instance):
            assert outcome.error == E.UNKNOWN_MEMBER_ID
        elif self.group.has(member_id) and shift and outcome.error != E.FENCED_INSTANCE_ID:
            assert outcome.error == E.ILLEGAL_GENERATION
        if outcome.parked and leads and was_completing:
            self.leader_assignments[generation] = assignments
        self.execute(outcome.effects)

    @rule(index=st.integers(0, 50), shift=GENERATION_SHIFT, instance=INSTANCES)
    def heartbeat(self, index: int, shift: int, instance: str | None) -> None:
        member_id = self.member(index)
        code, effects = self.group.heartbeat(member_id, self.group.generation + shift, self.now, instance)
        self.check_member_call(member_id, shift, instance, code, GroupState.PREPARING_REBALANCE)
        self.execute(effects)

    @rule(index=st.integers(0, 50), instance=INSTANCES)
    def leave(self, index: int, instance: str | None) -> None:
        member_id = self.member(index)
        known = self.group.has(member_id) or (
            instance is not None and self.group.instance_member(instance) is not None
        )
        code, effects = self.group.leave(member_id, instance)
        if not known:
            assert code == E.UNKNOWN_MEMBER_ID
        self.execute(effects)

    @rule(
        index=st.integers(0, 50),
        shift=GENERATION_SHIFT,
        instance=INSTANCES,
        partition=st.integers(0, 2),
        offset=st.integers(0, 1000),
    )
    def commit(self, index: int, shift: int, instance: str | None, partition: int, offset: int) -> None:
        member_id = self.member(index)
        generation = self.group.generation + shift
        code, effects = self.group.commit_error(member_id, generation, self.now, instance)
        if not (generation < 0 and self.group.is_(GroupState.EMPTY)):
            self.check_member_call(member_id, shift, instance, code, GroupState.COMPLETING_REBALANCE)
        if code == E.NONE:
            self.committed[partition] = offset
        self.execute(effects)

    @rule(index=st.integers(0, 50), ms=st.integers(1, 3 * SESSION_MS))
    def time_passes(self, index: int, ms: int) -> None:
        """The clock moves; a member whose session deadline passed meanwhile expires."""
        member_id = self.member(index)
        self.now += ms
        deadline = self.timers.get(member_id)
        if deadline is None or deadline > self.now:
            return
        self.execute(self.group.expire(member_id, deadline))

    @precondition(lambda self: self.join_parked)
    @rule()
    def rebalance_timeout(self) -> None:
        self.now += SESSION_MS
        self.complete_join()

    @precondition(lambda self: bool(self.stores))
    @rule(failed=st.booleans())
    def record_stored(self, failed: bool) -> None:
        generation = self.stores.pop(0)
        self.execute(
            self.group.stored(generation, E.NOT_COORDINATOR_FOR_GROUP if failed else E.NONE, self.now)
        )

    # -- what every answer and every state must satisfy ----------------------------------------------------

    def check_member_call(
        self, member_id: str, shift: int, instance: str | None, code: int, busy: GroupState
    ):
        """A Heartbeat's or OffsetCommit's answer: only a current member of the current generation gets 0."""
        if code == E.NONE:
            assert self.group.has(member_id) and shift == 0
        elif self.group.fenced(member_id, instance) or self.group.is_(busy):
            return
        elif not self.group.has(member_id):
            assert code == E.UNKNOWN_MEMBER_ID
        elif shift:
            assert code == E.ILLEGAL_GENERATION

    @invariant()
    def generation_never_decreases(self) -> None:
        assert self.group.generation >= self.generations[-1]
        self.generations.append(self.group.generation)

    @invariant()
    def stable_members_hold_the_leaders_assignment(self) -> None:
        if not self.group.is_(GroupState.STABLE):
            return
        given = self.leader_assignments[self.group.generation]
        for member in self.group.members.values():
            assert member.assignment == given[member.member_id]

    @invariant()
    def members_wait_in_one_place(self) -> None:
        for member in self.group.members.values():
            assert not (member.awaiting_join and member.awaiting_sync)
            if member.awaiting_join:
                assert self.group.is_(GroupState.PREPARING_REBALANCE)
            if member.awaiting_sync:
                assert self.group.is_(GroupState.COMPLETING_REBALANCE)

    @invariant()
    def empty_iff_no_members(self) -> None:
        assert self.group.is_(GroupState.EMPTY) == (not self.group.members)
        assert (self.group.leader_id is None) == (not self.group.members)
        assert self.group.leader_id is None or self.group.has(self.group.leader_id)

    @invariant()
    def static_members_are_unique(self) -> None:
        instances = [m.instance_id for m in self.group.members.values() if m.instance_id is not None]
        assert len(instances) == len(set(instances))


GroupModel.TestCase.settings = settings(max_examples=200, stateful_step_count=50, deadline=None)
test_group_model = GroupModel.TestCase
