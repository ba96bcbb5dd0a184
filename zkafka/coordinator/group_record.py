"""A group as stored in ``__consumer_offsets``, loaded, unloaded and described: what ``GroupMetadata`` mixes in
(0.9's ``GroupMetadataManager.groupMetadataValue`` / ``readGroupMessageValue`` and ``GroupMetadata.summary``).

``to_record`` builds the ``GroupValue`` the coordinator stores once the leader's assignment is known (or the
group turned Empty), with each member's instance id and rebalance timeout (written at the configured version);
``from_record`` brings a group back from it when a broker loads the offsets partition (Stable, every member's
session timer armed afresh; Empty without members or record); ``unload`` is the other way, when the broker stops coordinating it (Dead, parked
callers answered NOT_COORDINATOR_FOR_GROUP); ``describe`` is what DescribeGroups answers. Pure.
"""

from __future__ import annotations

from typing import Any, Self

from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    CheckJoins,
    DisarmHeartbeat,
    Effects,
    join_error,
)
from zkafka.coordinator.group_state import GroupState
from zkafka.coordinator.member import MemberMetadata
from zkafka.coordinator.offsets_schema import GroupMemberRecord, GroupValue
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.group_membership import DescribedGroup, DescribedMember


class GroupRecord:
    """The group as stored, loaded, unloaded and described (mixed into ``GroupMetadata``: it reads the
    group's fields and arms its members' timers with ``_arm``)."""

    def unload(self) -> Effects:
        """This broker no longer coordinates the group: Dead; parked callers get NOT_COORDINATOR_FOR_GROUP."""
        previous = self.transition_to(GroupState.DEAD)
        effects: Effects = []
        for member in self.members.values():
            effects.append(DisarmHeartbeat(member.member_id))
            if member.awaiting_join:
                member.awaiting_join = False
                result = join_error(member.member_id, ErrorCode.NOT_COORDINATOR_FOR_GROUP)
                effects.append(AnswerJoin(member.member_id, result))
            if member.awaiting_sync:
                member.awaiting_sync = False
                effects.append(AnswerSync(member.member_id, ErrorCode.NOT_COORDINATOR_FOR_GROUP, b""))
        if previous is GroupState.PREPARING_REBALANCE:
            effects.append(CheckJoins())
        return effects

    def to_record(self, assignments: dict[str, bytes] | None = None) -> Any:
        """The group record (``GroupValue``) with ``assignments`` (default: the members' current ones)."""
        members = [
            GroupMemberRecord(
                m.member_id,
                m.instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms or m.session_timeout_ms,
                m.session_timeout_ms,
                m.metadata(self.protocol),
                m.assignment if assignments is None else assignments.get(m.member_id, b""),
            )
            for m in self.members.values()
        ]
        leader = self.leader_id if members else None
        return GroupValue(
            self.protocol_type, self.generation, self.protocol or None, leader, self.state_timestamp_ms, members
        )

    @classmethod
    def from_record(
        cls, group_id: str, value: Any | None, now_ms: int, **options: Any
    ) -> tuple[Self, Effects]:
        """A group loaded from its record: Stable, every member's session timer armed afresh; Empty when the
        record has no members or the group only has offsets (``value`` None)."""
        if value is None:
            return cls(group_id, "", **options), []
        state = GroupState.STABLE if value.members else GroupState.EMPTY
        group = cls(group_id, value.protocol_type or "", state, value.generation, **options)
        group.protocol = value.protocol or ""
        group.state_timestamp_ms = value.current_state_timestamp
        for m in value.members:
            group.members[m.member_id] = MemberMetadata(
                m.member_id,
                m.client_id or "",
                m.client_host or "",
                m.session_timeout,
                [(group.protocol, m.subscription or b"")],
                assignment=m.assignment or b"",
                instance_id=m.group_instance_id,
                rebalance_timeout_ms=m.rebalance_timeout,
            )
        group.leader_id = value.leader if value.leader in group.members else next(iter(group.members), None)
        return group, [group._arm(m, now_ms) for m in group.members.values()]

    def describe(self) -> Any:
        """0.9's group summary: metadata and assignments only while Stable."""
        stable = self.is_(GroupState.STABLE)
        members = [
            DescribedMember(
                m.member_id,
                m.client_id,
                m.client_host,
                m.metadata(self.protocol) if stable else b"",
                m.assignment if stable else b"",
            )
            for m in self.members.values()
        ]
        protocol = self.protocol if stable else ""
        return DescribedGroup(
            ErrorCode.NONE, self.group_id, self.state.value, self.protocol_type, protocol, members
        )
