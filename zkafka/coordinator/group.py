"""One consumer group's membership state machine (GroupMetadata with GroupCoordinator's transitions, Kafka 2.x+).

States (group_state.py): Empty (new, or every member gone; offsets kept) or Stable → PreparingRebalance (a
new or changed member joins, the leader rejoins, a member leaves or misses its session timeout) →
CompletingRebalance (every member rejoined, or the rebalance timeout fired: a new generation, a protocol, the
joins answered; with nobody left: Empty, its record stored) → Stable (the leader's assignment stored) ... and
Dead (deleted, expired empty, or no longer coordinated here): a member request it still sees gets
COORDINATOR_NOT_AVAILABLE first (Kafka 3.x; 0.9-2.2: UNKNOWN_MEMBER_ID), so the client finds its coordinator anew.

The machine is pure: each call takes the time and returns what the broker must do as *effects* — answer a
parked JoinGroup or SyncGroup, arm or disarm a member's heartbeat timer, park the group's delayed join (or
retry it), store the group record, remove the group. The broker executes them with the purgatory, timers and
the offsets log, and calls back ``complete_join`` when the delayed join completes and ``stored`` when the
group record's append finished. The checks before the group is found (coordinator active, owned, loading,
session timeout bounds) are the coordinator's; every error after them is decided here, in 0.9's order.

zkafka options beyond 0.9: ``initial_rebalance_delay_ms`` (the first rebalance of a new group waits that
long, and again for each newcomer up to the rebalance timeout, so a group starting together rebalances once),
static members (KIP-345: static_membership.py) and pending members (KIP-394: pending_members.py). The group's
record and description: group_record.py; its protocols: group_protocols.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    ArmHeartbeat,
    AwaitJoins,
    CheckJoins,
    DisarmHeartbeat,
    Effects,
    JoinOutcome,
    JoinResult,
    StoreGroup,
    SyncOutcome,
    join_error,
)
from zkafka.coordinator.group_protocols import GroupProtocols
from zkafka.coordinator.group_record import GroupRecord
from zkafka.coordinator.group_state import GroupState, check_transition
from zkafka.coordinator.member import MemberMetadata, Protocols
from zkafka.coordinator.pending_members import PendingMembers
from zkafka.coordinator.static_membership import StaticMembership
from zkafka.protocol.errors import ErrorCode


def random_member_suffix() -> str:
    return str(uuid.uuid4())


@dataclass
class GroupMetadata(GroupProtocols, StaticMembership, PendingMembers, GroupRecord):
    """A group: its state, generation, protocol, leader and members (in the order they were added)."""

    group_id: str
    protocol_type: str
    state: GroupState = GroupState.EMPTY
    generation: int = 0
    protocol: str = ""
    leader_id: str | None = None
    members: dict[str, MemberMetadata] = field(default_factory=dict)
    initial_rebalance_delay_ms: int = 0
    new_member_suffix: Callable[[], str] = random_member_suffix
    pending_members: dict[str, int] = field(default_factory=dict)  # KIP-394: member id -> expiry
    state_timestamp_ms: int = -1  # when the last rebalance ended (the record's current_state_timestamp)
    _delay_remaining_ms: int = 0
    _newcomer_during_delay: bool = False
    _in_initial_delay: bool = False
    _pending_assignments: dict[str, bytes] | None = None  # the leader's, while its record is being stored

    # -- views ----------------------------------------------------------------------------------------------

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, state: GroupState) -> GroupState:
        """Move to ``state`` (one of Kafka's moves, else IllegalGroupTransition); returns the previous state."""
        check_transition(self.state, state)
        previous, self.state = self.state, state
        return previous

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def rebalance_timeout_ms(self) -> int:
        """The longest rebalance (else session) timeout of the members: how long a rebalance waits for rejoins."""
        return max((m.rebalance_timeout_ms or m.session_timeout_ms for m in self.members.values()), default=0)

    def not_yet_rejoined(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.awaiting_join]

    # -- membership changes ---------------------------------------------------------------------------------

    def _add(self, member: MemberMetadata) -> None:
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member

    def _remove(self, member_id: str, error: int = ErrorCode.UNKNOWN_MEMBER_ID) -> Effects:
        """Drop a member; answer its parked requests with ``error`` (it is gone) and stop its timer."""
        member = self.members.pop(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        effects: Effects = [DisarmHeartbeat(member_id)]
        if member.awaiting_join:
            effects.append(AnswerJoin(member_id, join_error(member_id, error)))
        if member.awaiting_sync:
            effects.append(AnswerSync(member_id, error, b""))
        return effects

    def _arm(self, member: MemberMetadata, now_ms: int) -> ArmHeartbeat:
        member.heartbeat_deadline_ms = now_ms + member.session_timeout_ms
        return ArmHeartbeat(member.member_id, member.heartbeat_deadline_ms)

    def _result_for(self, member_id: str) -> JoinResult:
        members: tuple = ()
        instance_ids: tuple = ()
        if member_id == self.leader_id:
            members = tuple((m.member_id, m.metadata(self.protocol)) for m in self.members.values())
            instance_ids = tuple((m.member_id, m.instance_id) for m in self.members.values() if m.instance_id)
        return JoinResult(
            ErrorCode.NONE,
            self.generation,
            self.protocol,
            self.leader_id or "",
            member_id,
            members,
            instance_ids,
        )

    def _follower_result(self, member_id: str, leader_id: str) -> JoinResult:
        """The current generation without the members (no assignment to compute)."""
        return JoinResult(ErrorCode.NONE, self.generation, self.protocol, leader_id, member_id)

    # -- JoinGroup ----------------------------------------------------------------------------------------

    def join(
        self,
        member_id: str,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        now_ms: int,
        instance_id: str | None = None,
        rebalance_timeout_ms: int = 0,
        require_member_id: bool = False,
        skip_assignment: bool = False,
    ) -> JoinOutcome:
        """A JoinGroup for this group (the coordinator's checks passed): answered now or parked.
        ``require_member_id`` (JoinGroup v4+, KIP-394): a new dynamic member first gets MEMBER_ID_REQUIRED;
        ``skip_assignment`` (v9, KIP-814): a restarted static leader may be told to skip the assignment."""
        protocols = [(name, bytes(data or b"")) for name, data in protocols]
        if self.is_(GroupState.DEAD):
            return JoinOutcome(member_id, join_error(member_id, ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE), [])
        if not self._consistent(protocol_type, protocols):
            return JoinOutcome(member_id, join_error(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL), [])
        if member_id and self.fenced(member_id, instance_id):
            return JoinOutcome(member_id, join_error(member_id, ErrorCode.FENCED_INSTANCE_ID), [])
        unknown_instance = instance_id is not None and self.instance_member(instance_id) is None
        pending = bool(member_id) and instance_id is None and self.pending_members.pop(member_id, None) is not None
        if member_id and not pending and (not self.has(member_id) or unknown_instance):
            return JoinOutcome(member_id, join_error(member_id, ErrorCode.UNKNOWN_MEMBER_ID), [])
        if not member_id and require_member_id and instance_id is None:
            return self.require_member_id(client_id, session_timeout_ms, now_ms)
        if not member_id or pending:
            member_id = member_id or f"{client_id}-{self.new_member_suffix()}"
            member = MemberMetadata(
                member_id,
                client_id,
                client_host,
                session_timeout_ms,
                protocols,
                instance_id=instance_id,
                rebalance_timeout_ms=rebalance_timeout_ms,
            )
            return self._join_new(member, protocol_type, now_ms, skip_assignment)
        member = self.members[member_id]
        if self.is_(GroupState.COMPLETING_REBALANCE) and member.matches(protocols):
            # The member missed its JoinGroup answer: hand back the current generation again.
            return JoinOutcome(member_id, self._result_for(member_id), [])
        if self.is_(GroupState.STABLE) and member_id != self.leader_id and member.matches(protocols):
            return JoinOutcome(member_id, self._follower_result(member_id, self.leader_id or ""), [])
        member.protocols = protocols
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        return JoinOutcome(member_id, None, self._park_join(member))

    def _join_new(self, member: MemberMetadata, protocol_type: str, now_ms: int, skip_assignment: bool) -> JoinOutcome:
        old = self.instance_member(member.instance_id) if member.instance_id is not None else None
        if old is not None:
            return self._replace_static_member(old, member, now_ms, skip_assignment)
        if self.is_(GroupState.EMPTY):
            self.protocol_type = protocol_type
        self._add(member)
        if self._in_initial_delay:
            self._newcomer_during_delay = True
        return JoinOutcome(member.member_id, None, self._park_join(member))

    def _park_join(self, member: MemberMetadata) -> Effects:
        member.awaiting_join = True
        effects = self._maybe_prepare_rebalance()
        if self.is_(GroupState.PREPARING_REBALANCE):
            effects.append(CheckJoins())
        return effects

    def _maybe_prepare_rebalance(self) -> Effects:
        if self.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY):
            return self._prepare_rebalance()
        return []

    def _prepare_rebalance(self) -> Effects:
        effects: Effects = []
        if self.is_(GroupState.COMPLETING_REBALANCE):
            effects += self._propagate_assignment_error(ErrorCode.REBALANCE_IN_PROGRESS)
        previous = self.transition_to(GroupState.PREPARING_REBALANCE)
        self._pending_assignments = None
        timeout = self.rebalance_timeout_ms()
        if previous is GroupState.EMPTY and self.initial_rebalance_delay_ms > 0:
            delay = min(self.initial_rebalance_delay_ms, timeout)
            self._in_initial_delay, self._newcomer_during_delay = True, False
            self._delay_remaining_ms = timeout - delay
            timeout = delay
        effects.append(AwaitJoins(timeout))
        return effects

    def _propagate_assignment_error(self, error: int) -> Effects:
        effects: Effects = []
        for member in self.members.values():
            member.assignment = b""
            if member.awaiting_sync:
                member.awaiting_sync = False
                effects.append(AnswerSync(member.member_id, error, b""))
        return effects

    def join_ready(self) -> bool:
        """Whether the delayed join may complete now: every member rejoined (or the group is Dead)."""
        if self.is_(GroupState.DEAD):
            return True
        return not self._in_initial_delay and not self.not_yet_rejoined() and not self.pending_members

    def complete_join(self, now_ms: int) -> Effects:
        """The delayed join completed: drop members that did not rejoin, start the next generation, answer
        every parked JoinGroup (the leader gets the members' metadata) and arm every session timer; with no
        member left the next generation is Empty and its (memberless) record is stored."""
        if not self.is_(GroupState.PREPARING_REBALANCE):
            return []
        if self._in_initial_delay and self._newcomer_during_delay and self._delay_remaining_ms > 0:
            delay = min(self.initial_rebalance_delay_ms, self._delay_remaining_ms)
            self._delay_remaining_ms -= delay
            self._newcomer_during_delay = False
            return [AwaitJoins(delay)]
        self._in_initial_delay = False
        self.state_timestamp_ms = now_ms
        effects: Effects = []
        for member in self.not_yet_rejoined():
            effects += self._remove(member.member_id)
        self.generation += 1
        if not self.members:
            self.protocol = ""
            self.transition_to(GroupState.EMPTY)
            return [*effects, StoreGroup(self.generation, self.to_record())]
        self.protocol = self.select_protocol()
        self.transition_to(GroupState.COMPLETING_REBALANCE)
        for member in self.members.values():
            member.awaiting_join = False
            effects.append(AnswerJoin(member.member_id, self._result_for(member.member_id)))
            effects.append(self._arm(member, now_ms))
        return effects

    # -- SyncGroup ----------------------------------------------------------------------------------------

    def sync(
        self,
        member_id: str,
        generation: int,
        assignments: dict[str, bytes] | None,
        now_ms: int,
        instance_id: str | None = None,
    ) -> SyncOutcome:
        """A SyncGroup: the leader's carries every member's assignment; everyone's waits until it is stored."""
        if self.is_(GroupState.DEAD):
            return SyncOutcome(ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, b"", False, [])
        if self.fenced(member_id, instance_id):
            return SyncOutcome(ErrorCode.FENCED_INSTANCE_ID, b"", False, [])
        if not self.has(member_id):
            return SyncOutcome(ErrorCode.UNKNOWN_MEMBER_ID, b"", False, [])
        if generation != self.generation:
            return SyncOutcome(ErrorCode.ILLEGAL_GENERATION, b"", False, [])
        member = self.members[member_id]
        if self.is_(GroupState.PREPARING_REBALANCE):
            return SyncOutcome(ErrorCode.REBALANCE_IN_PROGRESS, b"", False, [])
        if self.is_(GroupState.STABLE):
            return SyncOutcome(ErrorCode.NONE, member.assignment, False, [self._arm(member, now_ms)])
        member.awaiting_sync = True
        effects: Effects = [self._arm(member, now_ms)]
        if member_id == self.leader_id:
            full = {m: bytes((assignments or {}).get(m) or b"") for m in self.members}
            self._pending_assignments = full
            effects.append(StoreGroup(self.generation, self.to_record(full)))
        return SyncOutcome(ErrorCode.NONE, b"", True, effects)

    def stored(self, generation: int, error: int, now_ms: int) -> Effects:
        """The group record of ``generation`` was appended (error 0) or not: answer the parked SyncGroups.

        Nothing happens when the group moved on meanwhile (another state or generation).
        """
        if not self.is_(GroupState.COMPLETING_REBALANCE) or generation != self.generation:
            return []
        pending, self._pending_assignments = self._pending_assignments or {}, None
        if error != ErrorCode.NONE:
            return self._propagate_assignment_error(error) + self._prepare_rebalance()
        self.transition_to(GroupState.STABLE)
        effects: Effects = []
        for member in self.members.values():
            member.assignment = pending.get(member.member_id, b"")
            if member.awaiting_sync:
                member.awaiting_sync = False
                effects.append(AnswerSync(member.member_id, ErrorCode.NONE, member.assignment))
                effects.append(self._arm(member, now_ms))
        return effects

    # -- Heartbeat, LeaveGroup, session expiry, OffsetCommit ------------------------------------------------

    def heartbeat(
        self, member_id: str, generation: int, now_ms: int, instance_id: str | None = None
    ) -> tuple[int, Effects]:
        """A Heartbeat: 0 (the session timer re-armed; in CompletingRebalance too, as Kafka 2.x+), else the
        error telling the member to rejoin. KIP-62: a member with a rebalance timeout (JoinGroup v1+) keeps
        its session by heartbeats while the group prepares a rebalance (the rebalance timeout, not the
        session, bounds its rejoin)."""
        rebalancing = self.is_(GroupState.PREPARING_REBALANCE)
        code, effects = self._member_call(member_id, generation, now_ms, rebalancing, instance_id)
        member = self.members.get(member_id)
        if code == ErrorCode.REBALANCE_IN_PROGRESS and self.is_(GroupState.PREPARING_REBALANCE) and member:
            effects = [self._arm(member, now_ms)] if member.rebalance_timeout_ms else effects
        return code, effects

    def _member_call(
        self, member_id: str, generation: int, now_ms: int, rebalancing: bool, instance_id: str | None = None
    ) -> tuple[int, Effects]:
        """0.9's checks of a Heartbeat or OffsetCommit, in order: Dead, (2.3) fenced, rebalancing, member,
        generation."""
        if self.is_(GroupState.DEAD):
            return ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, []
        if self.fenced(member_id, instance_id):
            return ErrorCode.FENCED_INSTANCE_ID, []
        if rebalancing:
            return ErrorCode.REBALANCE_IN_PROGRESS, []
        if not self.has(member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID, []
        if generation != self.generation:
            return ErrorCode.ILLEGAL_GENERATION, []
        return ErrorCode.NONE, [self._arm(self.members[member_id], now_ms)]

    def leave(self, member_id: str, instance_id: str | None = None) -> tuple[int, Effects]:
        """A LeaveGroup; with an instance id (v3) it removes that static member, whatever its member id (""
        names none), unless ``member_id`` is an old incarnation's (FENCED_INSTANCE_ID)."""
        if self.is_(GroupState.DEAD):
            return ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, []
        if member_id and self.fenced(member_id, instance_id):
            return ErrorCode.FENCED_INSTANCE_ID, []
        static = self.instance_member(instance_id) if instance_id is not None else None
        if static is not None:
            member_id = static.member_id
        if not self.has(member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID, []
        return ErrorCode.NONE, self._member_failed(member_id)

    def expire(self, member_id: str, deadline_ms: int) -> Effects:
        """A session timer armed for ``deadline_ms`` fired: the member goes unless it heartbeat since (a
        later deadline) or waits in a JoinGroup or SyncGroup."""
        member = self.members.get(member_id)
        if member is None:
            return self.expire_pending(member_id, deadline_ms)
        if member.heartbeat_deadline_ms != deadline_ms:
            return []
        if member.awaiting_join or member.awaiting_sync:
            return []
        return self._member_failed(member_id)

    def _member_failed(self, member_id: str) -> Effects:
        effects = self._remove(member_id)
        if self.is_(GroupState.PREPARING_REBALANCE):
            return [*effects, CheckJoins()]
        return effects + self._maybe_prepare_rebalance()

    def commit_error(
        self, member_id: str, generation: int, now_ms: int, instance_id: str | None = None
    ) -> tuple[int, Effects]:
        """Whether a member's OffsetCommit may be stored (0), else its error; a good one is also a heartbeat.
        Commits are accepted while the group prepares a rebalance, not while it awaits the leader's sync; an
        Empty group takes commits with generation -1 (a consumer assigning its own partitions, a reset)."""
        if generation < 0 and self.is_(GroupState.EMPTY):
            return ErrorCode.NONE, []
        return self._member_call(member_id, generation, now_ms, self.is_(GroupState.COMPLETING_REBALANCE), instance_id)
