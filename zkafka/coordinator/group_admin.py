"""GroupAdmin: the group coordinator's answers about groups rather than to members (what ``GroupCoordinator``
mixes in): DescribeGroups and ListGroups (0.9), DeleteGroups (Kafka 1.1, KIP-229) and OffsetDelete (2.4,
KIP-496).

DeleteGroups deletes an Empty group (its offsets and record tombstoned, the group Dead); any other state is
NON_EMPTY_GROUP; an unknown group is GROUP_ID_NOT_FOUND. OffsetDelete refuses, per partition, a topic
that the group's members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC), as 2.4 does for a "consumer" group.
"""

from __future__ import annotations

from typing import Any

from zkafka.coordinator.group_protocols import subscribed_topics
from zkafka.coordinator.group_state import GroupState
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.group_membership import DescribedGroup

TopicPartition = tuple[str, int]
_EMPTY_DESCRIPTION = ("", "", "", [])


class GroupAdmin:
    """Describe, list and delete groups and offsets (mixed into ``GroupCoordinator``: it uses the
    coordinator's checks, groups and manager)."""

    def describe_group(self, group_id: str) -> Any:
        error = self._check(group_id)
        if error != ErrorCode.NONE:
            return DescribedGroup(error, group_id, *_EMPTY_DESCRIPTION)
        group = self.groups.get(group_id)
        if group is None:
            return DescribedGroup(ErrorCode.NONE, group_id, GroupState.DEAD.value, "", "", [])
        return group.describe()

    def list_groups(self) -> tuple[int, list[tuple[str, str]]]:
        if not self.active:
            return ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, []
        if self.loading:
            return ErrorCode.GROUP_LOAD_IN_PROGRESS, []
        return ErrorCode.NONE, [(g.group_id, g.protocol_type) for _, g in sorted(self.groups.items())]

    def group_states(self) -> dict[str, str]:
        """Each group's state as DescribeGroups names it (ListGroups v4's ``group_state``)."""
        return {group_id: group.state.value for group_id, group in self.groups.items()}

    def delete_group(self, group_id: str) -> int:
        """DeleteGroups of one group: its offsets and record tombstoned, or why not."""
        error = self._check(group_id)
        if error != ErrorCode.NONE:
            return error
        group = self.groups.get(group_id)
        if group is None or group.is_(GroupState.DEAD):
            return ErrorCode.GROUP_ID_NOT_FOUND
        if not group.is_(GroupState.EMPTY):
            return ErrorCode.NON_EMPTY_GROUP
        self.manager.delete_offsets(group_id)
        self.manager.remove_group(group)
        return ErrorCode.NONE

    def delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the group's error (0: see each partition's), and each partition's."""
        error = self._check(group_id)
        group = self.groups.get(group_id)
        if error == ErrorCode.NONE and group is None:
            error = ErrorCode.GROUP_ID_NOT_FOUND
        if error != ErrorCode.NONE:
            return error, {}
        subscribed = subscribed_topics(group) if group is not None else set()
        errors = {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if tp[0] in subscribed else ErrorCode.NONE for tp in partitions}
        self.manager.delete_offsets(group_id, [tp for tp, code in errors.items() if code == ErrorCode.NONE])
        return ErrorCode.NONE, errors

