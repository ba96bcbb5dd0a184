"""GroupMetadataManager: the groups and offsets of the ``__consumer_offsets`` partitions this broker leads
(0.9's GroupMetadataManager).

It holds the groups (``GroupMetadata``) and the offsets cache, knows which offsets partitions are owned and
which are loading, and writes through the offsets log (``append``): a group's record once its leader's
assignment is known (``store_group``), a commit (``store_offsets``), the tombstones of a removed group and of
expired offsets. Loading a partition (``load``) replays its records and brings its groups back, Stable with
their session timers armed (Empty: no members, or only offsets); unloading forgets them; an Empty group whose
offsets all expired (``expiry``: KIP-211's rules) is removed (Dead, tombstoned) as Kafka's ``cleanupGroupMetadata``
does. It decides nothing about membership: the coordinator runs
the group state machines, and the effects a group produces here (loaded, unloaded, its record stored) go to
``execute``, the coordinator's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import gevent

from zkafka.coordinator.effects import Effects, StoreGroup
from zkafka.coordinator.group import GroupMetadata
from zkafka.coordinator.group_protocols import subscribed_topics
from zkafka.coordinator.group_state import GroupState
from zkafka.coordinator.offsets_cache import Expiry, OffsetsCache, Record
from zkafka.coordinator.offsets_schema import DEFAULT_RECORD_VERSIONS, OffsetAndMetadata, RecordVersions
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.group_membership import CONSUMER_PROTOCOL_TYPE

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
Append = Callable[[int, list[Record], Callable[[int], Any] | None], None]
Execute = Callable[[GroupMetadata, Effects], None]
# Commit append errors as 0.9 reports them to the committer.
_COMMIT_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_FOR_PARTITION: ErrorCode.NOT_COORDINATOR_FOR_GROUP,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}
# Group record append errors as the SyncGroups waiting for it get them.
_STORE_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_FOR_PARTITION: ErrorCode.NOT_COORDINATOR_FOR_GROUP,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.REBALANCE_IN_PROGRESS,
}


class GroupMetadataManager:
    """The groups, the offsets cache and the offsets partitions owned or loading; their records' appends."""

    def __init__(
        self,
        num_partitions: int,
        retention_ms: int,
        *,
        append: Append,
        read_partition: Callable[[int], Iterable[Record]],
        execute: Execute,
        time_ms: Callable[[], int],
        initial_rebalance_delay_ms: int = 0,
        versions: RecordVersions = DEFAULT_RECORD_VERSIONS,
    ) -> None:
        self.cache = OffsetsCache(num_partitions, retention_ms, versions)
        self.groups: dict[str, GroupMetadata] = {}
        self.owned: set[int] = set()
        self.loading: set[int] = set()
        self._append = append
        self._read_partition = read_partition
        self._execute = execute
        self.now_ms = time_ms
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms

    def partition_for(self, group_id: str) -> int:
        return self.cache.partition_for(group_id)

    def add_group(self, group_id: str, protocol_type: str) -> GroupMetadata:
        group = self.groups[group_id] = GroupMetadata(
            group_id, protocol_type, initial_rebalance_delay_ms=self.initial_rebalance_delay_ms
        )
        return group

    # -- loading and unloading an offsets partition ---------------------------------------------------------

    def on_leadership(self, led: Iterable[int]) -> None:
        """This broker now leads exactly the offsets partitions ``led``: load the new ones (each on its own
        greenlet), unload the others."""
        led = set(led)
        for partition in sorted((self.owned | self.loading) - led):
            self.unload(partition)
        for partition in sorted(led - self.owned - self.loading):
            self.loading.add(partition)
            gevent.spawn(self.load, partition)

    def load(self, partition: int) -> None:
        """Replay the partition's records (``loading`` meanwhile) and bring its groups back; then it is owned."""
        started = self.now_ms()
        try:
            result = self.cache.load(partition, self._read_partition(partition))
        except Exception:
            log.exception("loading offsets partition %d failed", partition)
            self.loading.discard(partition)
            return
        if partition not in self.loading:
            return  # lost meanwhile
        now = self.now_ms()
        for group_id, value in result.groups.items():
            group, effects = GroupMetadata.from_record(
                group_id, value, now, initial_rebalance_delay_ms=self.initial_rebalance_delay_ms
            )
            self.groups[group_id] = group
            self._execute(group, effects)
        self.loading.discard(partition)
        self.owned.add(partition)
        log.info(
            "loaded offsets partition %d in %d ms: %d group(s), %d offset(s)%s",
            partition,
            now - started,
            len(result.groups),
            result.offsets,
            f", {result.skipped} bad record(s) skipped" if result.skipped else "",
        )

    def unload(self, partition: int) -> None:
        """Forget the partition's groups (their parked callers get NOT_COORDINATOR_FOR_GROUP) and offsets."""
        self.loading.discard(partition)
        self.owned.discard(partition)
        for group_id in [g for g in self.groups if self.partition_for(g) == partition]:
            group = self.groups.pop(group_id)
            self._execute(group, group.unload())
        self.cache.unload(partition)
        log.info("no longer coordinating the groups of offsets partition %d", partition)

    # -- group records ----------------------------------------------------------------------------------------

    def store_group(self, group: GroupMetadata, effect: StoreGroup) -> None:
        """Append the group record; once replicated (or failed) cache it and let the group answer its syncs."""
        partition = self.partition_for(group.group_id)

        def stored(code: int) -> None:
            if code == ErrorCode.NONE and partition in self.owned:
                self.cache.put_group(group.group_id, effect.value)
            if self.groups.get(group.group_id) is group:
                self._execute(
                    group, group.stored(effect.generation, _STORE_ERRORS.get(code, code), self.now_ms())
                )

        self._append(partition, [self.cache.group_record(group.group_id, effect.value)], stored)

    def remove_group(self, group: GroupMetadata) -> None:
        """The group is Dead (deleted or expired): forget it and append its tombstone."""
        if not group.is_(GroupState.DEAD):
            group.transition_to(GroupState.DEAD)
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
        partition = self.partition_for(group.group_id)
        if partition in self.owned and self.cache.group(group.group_id) is not None:
            self._append(partition, [self.cache.group_tombstone(group.group_id)], None)
        self.cache.remove_group(group.group_id)
        log.info("group %s generation %d is dead and removed", group.group_id, group.generation)

    # -- offsets ----------------------------------------------------------------------------------------------

    def store_offsets(
        self, group_id: str, offsets: dict[TopicPartition, OffsetAndMetadata], done: Callable[[int], None]
    ) -> None:
        """Append a commit; once replicated (or failed) cache it and call ``done(error code)`` (0.9's codes)."""
        partition = self.partition_for(group_id)

        def stored(code: int) -> None:
            code = _COMMIT_ERRORS.get(code, code)
            if code == ErrorCode.NONE and partition in self.owned:
                self.cache.put_offsets(group_id, offsets)
            done(code)

        self._append(partition, self.cache.commit_records(group_id, offsets), stored)

    def delete_offsets(self, group_id: str, partitions: list[TopicPartition] | None = None) -> None:
        """Drop the group's offsets of ``partitions`` (all when None; DeleteGroups, OffsetDelete) and append
        their tombstones."""
        tombstones = self.cache.delete(group_id, partitions)
        if tombstones:
            self._append(self.partition_for(group_id), tombstones, None)

    def expire_offsets(self) -> int:
        """Drop expired offsets (``expiry``) and append their tombstones; returns how many."""
        tombstones = self.cache.expire(self.now_ms(), lambda group_id: expiry(self.groups.get(group_id)))
        for partition, records in tombstones.items():
            if partition in self.owned:
                self._append(partition, records, None)
        for group in [g for g in self.groups.values() if g.is_(GroupState.EMPTY)]:
            if self.partition_for(group.group_id) in self.owned and not self.cache.fetch(group.group_id):
                self.remove_group(group)
        return sum(map(len, tombstones.values()))


def expiry(group: GroupMetadata | None) -> Expiry | None:
    """How a group's offsets expire, as Kafka 2.1+'s ``removeExpiredOffsets`` (KIP-211): an Empty group's
    retention runs from when it became Empty (its state timestamp, else each commit); a standalone consumer's
    (no protocol type) and a Stable "consumer" group's offsets of topics no member subscribes to, from each
    commit; any other group's offsets never expire while it has members."""
    if group is None or not group.protocol_type:
        return Expiry()
    if group.is_(GroupState.EMPTY):
        return Expiry(group.state_timestamp_ms if group.state_timestamp_ms >= 0 else None)
    if group.protocol_type == CONSUMER_PROTOCOL_TYPE and group.is_(GroupState.STABLE):
        return Expiry(kept_topics=frozenset(subscribed_topics(group)))
    return None
