"""DelayedJoin: a group's rebalance waiting in the rebalance purgatory for every member to rejoin (0.9's
DelayedJoin and joinPurgatory).

The group coordinator parks one per rebalance (``JoinPurgatory.await_join``), keyed by group id, and retries
it (``check_join``) whenever a member joins, leaves or expires. It completes when ``group.join_ready()``
holds, or at its timeout (the longest rebalance timeout of the members, or the initial rebalance delay); its
completion calls back the coordinator, which completes the join (a new generation, the JoinGroups answered).
"""

from __future__ import annotations

from collections.abc import Callable

from zkafka.coordinator.group import GroupMetadata
from zkafka.server.purgatory import DelayedOperation, Purgatory


class DelayedJoin(DelayedOperation):
    """A group's rebalance waiting for every member to rejoin, or for its timeout; then ``complete()``."""

    def __init__(self, group: GroupMetadata, timeout_ms: int, complete: Callable[[], None]) -> None:
        super().__init__(timeout_ms)
        self.group = group
        self.complete = complete

    def try_complete(self) -> bool:
        return self.force_complete() if self.group.join_ready() else False

    def on_complete(self) -> None:
        self.complete()


class JoinPurgatory(Purgatory):
    """The rebalance purgatory: each group's DelayedJoin, watched under its group id (the coordinator's
    ``coordinator.JoinPurgatory``)."""

    def __init__(self) -> None:
        super().__init__("rebalance")

    def await_join(self, group: GroupMetadata, timeout_ms: int, complete: Callable[[], None]) -> None:
        """Park the group's rebalance; ``complete()`` runs once every member rejoined or ``timeout_ms`` passed."""
        self.try_complete_else_watch(DelayedJoin(group, timeout_ms, complete), [group.group_id])

    def check_join(self, group_id: str) -> None:
        """Retry the group's parked rebalance now (a member joined, left or expired)."""
        self.check_and_complete(group_id)
