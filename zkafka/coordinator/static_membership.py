"""Static membership (KIP-345, as Kafka 2.3; a zkafka option beyond 0.9): what ``GroupMetadata`` mixes in.

A member that joins with a ``group.instance.id`` is static. When it restarts it rejoins with its instance id
and no member id: it takes over its old member's place, partitions and (if it had it) leadership, without a
rebalance while the group is Stable and its protocols are unchanged (``_replace_static_member``). A call that
names the instance with an old member id comes from a replaced incarnation: FENCED_INSTANCE_ID (``fenced``).
Pure, as the rest of the group state machine.
"""

from __future__ import annotations

from zkafka.coordinator.effects import JoinOutcome
from zkafka.coordinator.group_state import GroupState
from zkafka.coordinator.member import MemberMetadata
from zkafka.protocol.errors import ErrorCode


class StaticMembership:
    """The lookups by instance id and a restarted static member's takeover (mixed into ``GroupMetadata``: it
    reads the group's members, state and leader and uses its membership steps)."""

    def instance_member(self, instance_id: str) -> MemberMetadata | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def fenced(self, member_id: str, instance_id: str | None) -> bool:
        """Whether ``instance_id`` is a static member of this group under another member id (2.3's
        ``isStaticMemberFenced``): the caller is an old incarnation replaced by a newer one."""
        member = self.instance_member(instance_id) if instance_id is not None else None
        return member is not None and member.member_id != member_id

    def _replace_static_member(
        self, old: MemberMetadata, member: MemberMetadata, now_ms: int, skip_assignment: bool = False
    ) -> JoinOutcome:
        """A static member restarted: its new member id takes the old one's place, partitions and leadership;
        the old incarnation's parked JoinGroup or SyncGroup is answered FENCED_INSTANCE_ID. Without a
        rebalance (3.4: unless the protocol the group would select changes) the answer names the leader as it
        was (2.3), so a restarted leader computes no assignment;
        with ``skip_assignment`` (JoinGroup v9, KIP-814, as Kafka 3.4) a restarted leader is told it leads,
        with the members, and to skip the assignment."""
        leader = self.leader_id
        effects = self._remove(old.member_id, ErrorCode.FENCED_INSTANCE_ID)
        self.leader_id = leader
        member.assignment = old.assignment
        self.members[member.member_id] = member
        if self.leader_id in (None, old.member_id):
            self.leader_id = member.member_id
        # as Kafka 3.4: no rebalance unless the group's protocol would change (the restarted member's
        # subscription bytes may differ: ConsumerProtocolSubscription v2 carries the generation it owned in)
        if self.is_(GroupState.STABLE) and self.select_protocol() == self.protocol:
            effects.append(self._arm(member, now_ms))
            result = self._follower_result(member.member_id, leader or "")
            if skip_assignment and self.leader_id == member.member_id:
                result = self._result_for(member.member_id)._replace(skip_assignment=True)
            return JoinOutcome(member.member_id, result, effects)
        return JoinOutcome(member.member_id, None, effects + self._park_join(member))
