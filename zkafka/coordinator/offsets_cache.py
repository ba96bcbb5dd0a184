"""The coordinator's in-memory copy of ``__consumer_offsets``: committed offsets and group records by group.

Loading replays a partition's records in offset order (the last value of a key wins, a null value deletes
it); commits become records to append and enter the cache once the append succeeded; offsets whose expire
time passed (``Expiry``: KIP-211's rules) are dropped and tombstoned. No log I/O happens here: the broker reads the log and appends the
records this class hands it. Pure apart from logging.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from zkafka.coordinator.offsets_schema import (
    DEFAULT_NUM_PARTITIONS,
    DEFAULT_RECORD_VERSIONS,
    GroupKey,
    OffsetAndMetadata,
    OffsetKey,
    RecordVersions,
    group_key,
    group_value,
    offset_key,
    offset_value,
    partition_for,
    read_group_value,
    read_key,
    read_offset_value,
)
from zkafka.errors import InvalidRequestError

log = logging.getLogger(__name__)

DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000  # offsets.retention.minutes 10080 (Kafka 2.0+, KIP-186)

TopicPartition = tuple[str, int]
Record = tuple[bytes, bytes | None]  # key, value (None: a tombstone)


class LoadResult(NamedTuple):
    """What loading one offsets partition found: its groups (each one's record, None for a group with only
    offsets), how many offsets, bad records skipped."""

    groups: dict[str, Any]
    offsets: int
    skipped: int


class Expiry(NamedTuple):
    """How a group's offsets expire (Kafka 2.1+, KIP-211): ``offsets.retention.minutes`` after ``since_ms`` (None:
    after each offset's commit), except those of ``kept_topics``."""

    since_ms: int | None = None
    kept_topics: frozenset[str] = frozenset()


class OffsetsCache:
    """Committed offsets and group records of the offsets partitions this broker coordinates."""

    def __init__(
        self,
        num_partitions: int = DEFAULT_NUM_PARTITIONS,
        retention_ms: int = DEFAULT_RETENTION_MS,
        versions: RecordVersions = DEFAULT_RECORD_VERSIONS,
    ) -> None:
        self.num_partitions = num_partitions
        self.retention_ms = retention_ms
        self.versions = versions  # the offset and group value versions written
        self._offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        self._groups: dict[str, Any] = {}  # group -> its last GroupValue

    def partition_for(self, group: str) -> int:
        return partition_for(group, self.num_partitions)

    # -- loading ------------------------------------------------------------------------------------------

    def load(self, partition: int, records: Iterable[Record]) -> LoadResult:
        """Replay a partition's records (key, value) in offset order; returns the groups it holds now."""
        skipped = 0
        touched: set[str] = set()
        for key_bytes, value in records:
            try:
                group = self._replay(key_bytes, value)
            except InvalidRequestError as exc:
                skipped += 1
                log.warning("offsets partition %d: skipping a record: %s", partition, exc)
                continue
            touched.add(group)
        groups = {g: self._groups.get(g) for g in sorted(touched) if g in self._groups or g in self._offsets}
        offsets = sum(len(self._offsets.get(g, {})) for g in touched)
        return LoadResult(groups, offsets, skipped)

    def _replay(self, key_bytes: bytes | None, value: bytes | None) -> str:
        if key_bytes is None:
            raise InvalidRequestError("record without a key")
        key = read_key(key_bytes)
        if isinstance(key, OffsetKey):
            tp = (key.topic, key.partition)
            if value is None:
                self._drop_offset(key.group, tp)
            else:
                self._offsets.setdefault(key.group, {})[tp] = read_offset_value(value, self.retention_ms)
        elif isinstance(key, GroupKey):
            if value is None:
                self._groups.pop(key.group, None)
            else:
                self._groups[key.group] = read_group_value(value)
        return key.group

    def _drop_offset(self, group: str, tp: TopicPartition) -> None:
        offsets = self._offsets.get(group)
        if offsets is not None:
            offsets.pop(tp, None)
            if not offsets:
                del self._offsets[group]

    def unload(self, partition: int) -> list[str]:
        """Forget every group of ``partition`` (this broker stopped leading it); returns those groups."""
        groups = sorted(
            g for g in self._offsets.keys() | self._groups.keys() if self.partition_for(g) == partition
        )
        for group in groups:
            self._offsets.pop(group, None)
            self._groups.pop(group, None)
        return groups

    # -- offsets --------------------------------------------------------------------------------------------

    def commit_records(self, group: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> list[Record]:
        """The records a commit appends (offset key v1, the configured offset value version, or v1 for an
        expire time the committer chose, as Kafka 3.4), in topic-partition order."""
        return [
            (offset_key(group, topic, partition), offset_value(value, self._offset_version(value)))
            for (topic, partition), value in sorted(offsets.items())
        ]

    def _offset_version(self, value: OffsetAndMetadata) -> int:
        return 1 if self._explicit(value) else self.versions.offset_value

    def _explicit(self, value: OffsetAndMetadata) -> bool:
        """Whether the committer chose the expire time (OffsetCommit v2-v4's ``retention_time_ms``)."""
        return value.expire_timestamp != value.commit_timestamp + self.retention_ms

    def put_offsets(self, group: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """A commit's records were appended: they are the group's offsets now."""
        if offsets:
            self._offsets.setdefault(group, {}).update(offsets)

    def fetch(
        self, group: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's offsets of ``partitions`` (None: missing); every committed one when not given."""
        offsets = self._offsets.get(group, {})
        if partitions is None:
            return dict(sorted(offsets.items()))
        return {tp: offsets.get(tp) for tp in partitions}

    def expire(self, now_ms: int, expiry_of: Callable[[str], Expiry | None]) -> dict[int, list[Record]]:
        """Drop each group's expired offsets (``expiry_of(group)`` says how, None keeps them all); their
        tombstones by offsets partition."""
        tombstones: dict[int, list[Record]] = {}
        for group in sorted(self._offsets):
            expiry = expiry_of(group)
            if expiry is None:
                continue
            expired = sorted(
                tp
                for tp, v in self._offsets[group].items()
                if tp[0] not in expiry.kept_topics and self._expired(v, expiry.since_ms, now_ms)
            )
            for tp in expired:
                self._drop_offset(group, tp)
                tombstones.setdefault(self.partition_for(group), []).append((offset_key(group, *tp), None))
        return tombstones

    def _expired(self, value: OffsetAndMetadata, since_ms: int | None, now_ms: int) -> bool:
        """An explicit expire time (a v1-v4 commit's retention) is kept as 0.9 did; otherwise the retention
        runs from ``since_ms`` (when the group became Empty), else from the commit."""
        if self._explicit(value):
            return now_ms >= value.expire_timestamp
        base = value.commit_timestamp if since_ms is None else since_ms
        return now_ms - base >= self.retention_ms

    def delete(self, group: str, partitions: Iterable[TopicPartition] | None = None) -> list[Record]:
        """Drop the group's offsets of ``partitions`` (all when None): the tombstones of those it had."""
        committed = self._offsets.get(group, {})
        gone = sorted(committed if partitions is None else set(partitions) & committed.keys())
        for tp in gone:
            self._drop_offset(group, tp)
        return [(offset_key(group, *tp), None) for tp in gone]

    def groups_with_offsets(self) -> list[str]:
        return sorted(self._offsets)

    # -- group records --------------------------------------------------------------------------------------

    def group_record(self, group: str, value: Any) -> Record:
        """The record storing a group's metadata (group key v2, the configured group value version)."""
        return group_key(group), group_value(value, self.versions.group_value)

    @staticmethod
    def group_tombstone(group: str) -> Record:
        return group_key(group), None

    def put_group(self, group: str, value: Any) -> None:
        self._groups[group] = value

    def remove_group(self, group: str) -> None:
        self._groups.pop(group, None)

    def group(self, group: str) -> Any | None:
        """The group's last stored record (a ``GroupValue``), or None."""
        return self._groups.get(group)
