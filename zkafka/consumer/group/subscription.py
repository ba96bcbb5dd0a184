"""What a 0.9 group consumer subscribes to, what it was assigned, and where it stands in each partition (0.9's
``SubscriptionState``). Pure: no sockets, no greenlets.

A consumer either subscribes (a topic list or a pattern; the group coordinator assigns) or is assigned
partitions by hand. Each assigned partition has a position (the offset of the next record ``poll`` hands out,
None until known), the offset last committed, and a pending reset policy. ``epoch`` counts assignment changes
and seeks. The fetcher keeps a fetch answer only for a partition still assigned at the position it fetched
from, so a record of a partition given up (or sought away from) is never handed out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple, Protocol

from zkafka.errors import KafkaError

EARLIEST = "earliest"
LATEST = "latest"
NONE = "none"


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class ConsumerRecord(NamedTuple):
    """One record ``poll`` hands out; a record of a batch (message format v2) has its timestamp, the type of
    it (0 CreateTime, 1 LogAppendTime) and its headers, a message of magic 0 none (-1, -1, ())."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int = -1
    timestamp_type: int = -1
    headers: tuple = ()


class OffsetAndMetadata(NamedTuple):
    offset: int
    metadata: str = ""


class RebalanceListener(Protocol):
    """Called in the polling greenlet, with Kafka 2.4's incremental semantics (KIP-429).

    ``on_partitions_revoked(revoked)``: the partitions this member gives up, while it still owns them
    (commit what was processed here). Eager: every partition, before each join. Cooperative: only those the
    new assignment takes away, after the join (never called with none).
    ``on_partitions_assigned(added)``: after each join; eager: the whole assignment; cooperative: only the
    partitions added (possibly none).
    ``on_partitions_lost(lost)`` (optional; ``on_partitions_revoked`` is called instead when absent): the
    membership was lost (session or ``max.poll.interval.ms`` expired, fenced generation); the partitions
    may already be someone else's, so committing them would fail.
    """

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None: ...

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None: ...


class NoOffsetForPartitionError(KafkaError):
    """A partition has no committed offset and ``auto.offset.reset`` is ``none``."""


class IllegalSubscriptionError(KafkaError, ValueError):
    """Subscribing and assigning by hand mixed, or a subscription naming nothing."""


class PartitionState:
    __slots__ = ("position", "committed", "reset", "paused")

    def __init__(self) -> None:
        self.position: int | None = None
        self.committed: OffsetAndMetadata | None = None
        self.reset: str | None = None  # a policy to apply before fetching
        self.paused = False


class SubscriptionState:
    """Subscription, assignment and positions of one consumer."""

    def __init__(self, default_reset: str = LATEST) -> None:
        self.default_reset = default_reset
        self.topics: set[str] = set()  # what the group is told this member subscribes to
        self.pattern: re.Pattern | None = None
        self.manual = False
        self.listener: RebalanceListener | None = None
        self.assignment: dict[TopicPartition, PartitionState] = {}
        self.needs_partition_assignment = False
        self.epoch = 0

    # -- subscribing ---------------------------------------------------------------------------------------

    @property
    def auto_assigned(self) -> bool:
        return bool(self.topics or self.pattern) and not self.manual

    def subscribe(self, topics: Iterable[str], listener: RebalanceListener | None = None) -> None:
        topics = set(topics)
        if self.manual:
            raise IllegalSubscriptionError("subscribe() after assign(): unsubscribe() first")
        if not topics:
            raise IllegalSubscriptionError("subscribe() needs at least one topic (unsubscribe() to stop)")
        self.pattern = None
        self.listener = listener
        self.change_topics(topics)

    def subscribe_pattern(self, pattern: str | re.Pattern, listener: RebalanceListener | None = None) -> None:
        if self.manual:
            raise IllegalSubscriptionError("subscribe() after assign(): unsubscribe() first")
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
        self.listener = listener
        self.topics = set()
        self.needs_partition_assignment = True

    def matching(self, cluster_topics: Iterable[str]) -> set[str]:
        """The cluster's topics a pattern subscription takes (the whole name must match; internal topics
        such as ``__consumer_offsets`` excluded)."""
        assert self.pattern is not None
        return {t for t in cluster_topics if not t.startswith("__") and self.pattern.fullmatch(t)}

    def change_topics(self, topics: set[str]) -> bool:
        """Set the subscribed topics; True (and a rejoin needed) if they changed."""
        if topics == self.topics:
            return False
        self.topics = topics
        self.needs_partition_assignment = True
        return True

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment: no group management; positions of partitions kept are kept."""
        if self.auto_assigned:
            raise IllegalSubscriptionError("assign() after subscribe(): unsubscribe() first")
        self.manual = True
        self._set_assignment(set(partitions))

    def unsubscribe(self) -> None:
        self.topics, self.pattern, self.manual, self.listener = set(), None, False, None
        self._set_assignment(set())
        self.needs_partition_assignment = False

    # -- assignment ----------------------------------------------------------------------------------------

    def assigned(self) -> set[TopicPartition]:
        return set(self.assignment)

    def revoke_all(self) -> set[TopicPartition]:
        """Give every partition up before joining again; what was revoked."""
        revoked = set(self.assignment)
        self._set_assignment(set())
        self.needs_partition_assignment = True
        return revoked

    def revoke(self, partitions: Iterable[TopicPartition]) -> None:
        """Give ``partitions`` up (a cooperative member keeps the rest, positions included)."""
        self._set_assignment(set(self.assignment) - set(partitions))

    def set_group_assignment(self, partitions: Iterable[TopicPartition]) -> None:
        """The coordinator's assignment arrived (positions are looked up again from the commits)."""
        self._set_assignment(set(partitions))

    def _set_assignment(self, partitions: set[TopicPartition]) -> None:
        kept = {tp: self.assignment[tp] for tp in partitions if tp in self.assignment}
        self.assignment = {tp: kept.get(tp) or PartitionState() for tp in sorted(partitions)}
        self.epoch += 1

    def state(self, tp: TopicPartition) -> PartitionState:
        try:
            return self.assignment[tp]
        except KeyError:
            raise IllegalSubscriptionError(
                f"{tp.topic}-{tp.partition} is not assigned to this consumer"
            ) from None

    # -- positions -----------------------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int) -> None:
        state = self.state(tp)
        state.position, state.reset = offset, None
        self.epoch += 1

    def request_reset(self, tp: TopicPartition, policy: str | None = None) -> None:
        """Look the position up again with ``policy`` (the default reset policy when None)."""
        state = self.state(tp)
        state.position, state.reset = None, policy or self.default_reset
        self.epoch += 1

    def missing_positions(self) -> list[TopicPartition]:
        """Partitions with no position and no reset pending: their committed offsets are needed."""
        return [tp for tp, s in self.assignment.items() if s.position is None and s.reset is None]

    def resets(self) -> dict[TopicPartition, str]:
        return {tp: s.reset for tp, s in self.assignment.items() if s.reset is not None}

    def fetchable(self) -> dict[TopicPartition, int]:
        """Partition -> position of every assigned, unpaused partition whose position is known."""
        return {
            tp: s.position for tp, s in self.assignment.items() if s.position is not None and not s.paused
        }

    def positions(self) -> dict[TopicPartition, int]:
        """What a commit of "everything consumed" commits: the positions of the assigned partitions."""
        return {tp: s.position for tp, s in self.assignment.items() if s.position is not None}

    def committed_changed(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        for tp, offset in offsets.items():
            if tp in self.assignment:
                self.assignment[tp].committed = offset
