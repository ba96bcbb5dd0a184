"""Pending members (KIP-394, Kafka 2.2; a zkafka option beyond 0.9) and the group's size limit
(``group.max.size``, KIP-389): what ``GroupMetadata`` mixes in.

A dynamic member joining with JoinGroup v4+ and no member id is not added at once: the coordinator picks its
member id, keeps it as *pending* and answers MEMBER_ID_REQUIRED with it; the member rejoins with that id and
is added then. A pending member that does not rejoin within its session timeout is forgotten. While any
member is pending, a rebalance waits for it (as 2.2's ``hasAllMembersJoined``). Pure, as the rest of the
group state machine.
"""

from __future__ import annotations

from zkafka.coordinator.effects import ArmHeartbeat, CheckJoins, Effects, JoinOutcome, join_error
from zkafka.coordinator.group_state import GroupState
from zkafka.protocol.errors import ErrorCode


class PendingMembers:
    """The member ids handed out with MEMBER_ID_REQUIRED, each with its expiry (mixed into ``GroupMetadata``:
    it keeps them in ``pending_members``, member id → deadline)."""

    def require_member_id(self, client_id: str, session_timeout_ms: int, now_ms: int) -> JoinOutcome:
        """A new dynamic member's first JoinGroup: a member id to rejoin with, kept pending for a session."""
        member_id = f"{client_id}-{self.new_member_suffix()}"
        deadline = now_ms + session_timeout_ms
        self.pending_members[member_id] = deadline
        answer = join_error(member_id, ErrorCode.MEMBER_ID_REQUIRED)
        return JoinOutcome(member_id, answer, [ArmHeartbeat(member_id, deadline)])

    def is_pending(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def accepts(self, member_id: str, max_size: int) -> bool:
        """Whether a JoinGroup from ``member_id`` fits ``group.max.size`` (KIP-389, as Kafka 2.2): a member
        already in the group always does; while a rebalance is prepared, joins are counted (pending members
        not), else members."""
        member = self.members.get(member_id)
        if self.is_(GroupState.PREPARING_REBALANCE):
            return (member is not None and member.awaiting_join) or self.awaiting_join_count() < max_size
        return member is not None or len(self.members) < max_size

    def awaiting_join_count(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join)

    def expire_pending(self, member_id: str, deadline_ms: int) -> Effects:
        """A pending member's timer fired: it is forgotten unless it joined meanwhile."""
        if self.pending_members.get(member_id) != deadline_ms:
            return []
        del self.pending_members[member_id]
        return [CheckJoins()] if self.is_(GroupState.PREPARING_REBALANCE) else []
