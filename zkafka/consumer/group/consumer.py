"""GroupConsumer: zkafka's 0.9 consumer (the shape of 0.9's ``KafkaConsumer``) for groups managed by a
broker-side coordinator.

    consumer = GroupConsumer({"bootstrap.servers": "localhost:9092", "group.id": "billing"})
    consumer.subscribe(["orders"])                    # or subscribe(pattern="orders-.*")
    while True:
        for tp, records in consumer.poll(1000).items():
            ...
        consumer.commit()                             # or commit_async(); enable.auto.commit does it itself

``poll`` does the group's work in the calling greenlet, as the 2.x client does (heartbeats run beside it in
their own greenlet): it rejoins when the heartbeat greenlet, a commit, a metadata change (partitions added to a
subscribed topic, a new topic matching the pattern) or a lost session asks for it; then it looks up the
positions (committed offsets, else ``auto.offset.reset``) and hands out at most ``max.poll.records`` of what
the fetch greenlets buffered. A consumer that does not call ``poll`` for ``max.poll.interval.ms`` leaves the
group (its partitions move); its next ``poll`` joins again.

Eager rebalancing (range, roundrobin, sticky): the listener's ``on_partitions_revoked`` gets every partition
before each join (with ``enable.auto.commit`` the positions are committed first), nothing is handed out until
the join is done, and ``on_partitions_assigned`` gets the new assignment. Cooperative (KIP-429, every assignor
of ``partition.assignment.strategy`` ``cooperative-sticky``): the consumer keeps consuming what it owns while
the group rebalances; after the join it revokes only what the new assignment took away (and joins again at
once, so a second rebalance hands those partitions over) and ``on_partitions_assigned`` gets only what was
added. Records are handed out only for partitions assigned at that moment, and never once the membership is
lost (``on_partitions_lost``).

With ``group.instance.id`` set the consumer is a static member (KIP-345; see ``consumer.group.consumer_coordinator``):
``close`` sends no LeaveGroup, and a restart within ``session.timeout.ms`` gets the same partitions without a
rebalance; ``poll`` raises FencedInstanceIdError once another consumer with the same instance id took over.

Like the other zkafka clients it runs on gevent without monkey-patching and belongs to the thread (hub) that
created it; its greenlets run while the caller waits in ``poll`` or another call.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import gevent
from gevent.event import Event

from zkafka.client08.topic_metadata import fetch_topic_metadata
from zkafka.config08 import ConsumerConfig09
from zkafka.consumer.group.assignors import get_assignor
from zkafka.consumer.group.cluster import Cluster
from zkafka.consumer.group.consumer_coordinator import ConsumerCoordinator
from zkafka.consumer.group.fetcher import Fetcher
from zkafka.consumer.group.rebalance import RebalanceCallbacks
from zkafka.consumer.group.subscription import (
    EARLIEST,
    NONE,
    ConsumerRecord,
    NoOffsetForPartitionError,
    OffsetAndMetadata,
    RebalanceListener,
    SubscriptionState,
    TopicPartition,
)
from zkafka.errors import FencedInstanceIdError, InvalidConfigError, KafkaError
from zkafka.network.client_security import CLIENT_SECURITY_KEYS, secure_of
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.utils.hub import end_greenlets

log = logging.getLogger(__name__)

CommitCallback = Callable[[Mapping[TopicPartition, OffsetAndMetadata], BaseException | None], None]


class GroupConsumer:
    """A consumer in a coordinator-managed group (or reading partitions assigned by hand)."""

    def __init__(self, config: ConsumerConfig09 | Mapping[str, Any]) -> None:
        self.config = config if isinstance(config, ConsumerConfig09) else ConsumerConfig09(dict(config))
        c = self.config
        self.group_id = c["group.id"]
        self.request_timeout_s = c["request.timeout.ms"] / 1000.0
        self.cluster = Cluster(
            c["bootstrap.servers"],
            c["client.id"] or f"zkafka-consumer-{self.group_id}",
            request_timeout_ms=c["request.timeout.ms"],
            metadata_max_age_ms=c["metadata.max.age.ms"],
            # a live broker answers Metadata and GroupCoordinator at once: one that does not within a
            # heartbeat interval (at least a second) is passed over for the next
            lookup_timeout_ms=min(c["request.timeout.ms"], max(c["heartbeat.interval.ms"], 1000)),
            secure=secure_of({key.name: c[key.name] for key in CLIENT_SECURITY_KEYS}, "consumer config"),
        )
        self.subscriptions = SubscriptionState(c["auto.offset.reset"])
        try:
            assignors = [get_assignor(name) for name in c["partition.assignment.strategy"]]
        except ValueError as exc:
            raise InvalidConfigError(f"partition.assignment.strategy: {exc}") from None
        self._wakeup = Event()
        self.fetcher = Fetcher(
            self.cluster,
            self.subscriptions,
            max_partition_fetch_bytes=c["max.partition.fetch.bytes"],
            fetch_max_wait_ms=c["fetch.max.wait.ms"],
            fetch_min_bytes=c["fetch.min.bytes"],
            retry_backoff_ms=c["retry.backoff.ms"],
            on_data=self._wakeup.set,
        )
        self.coordinator = ConsumerCoordinator(
            self.group_id,
            self.cluster,
            self.subscriptions,
            assignors,
            session_timeout_ms=c["session.timeout.ms"],
            heartbeat_interval_ms=c["heartbeat.interval.ms"],
            max_poll_interval_ms=c["max.poll.interval.ms"],
            retry_backoff_ms=c["retry.backoff.ms"],
            on_rejoin_needed=self._wakeup.set,
            group_instance_id=c["group.instance.id"] or None,
        )
        self.rebalance = RebalanceCallbacks(
            self.coordinator,
            self.subscriptions,
            self.fetcher,
            c["enable.auto.commit"],
            self.request_timeout_s,
        )
        self._partition_counts: dict[str, int] = {}
        self._join: gevent.Greenlet | None = None
        self._next_auto_commit = time.monotonic() + c["auto.commit.interval.ms"] / 1000.0
        self._closed = False

    def __enter__(self) -> GroupConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- subscribing ---------------------------------------------------------------------------------------

    def subscribe(
        self,
        topics: Iterable[str] | None = None,
        pattern: str | re.Pattern | None = None,
        listener: RebalanceListener | None = None,
    ) -> None:
        """Join the group for ``topics`` or every topic whose whole name matches ``pattern``."""
        if not self.group_id:
            raise InvalidConfigError("group.id: a group consumer needs one to subscribe")
        if (topics is None) == (pattern is None):
            raise ValueError("subscribe() takes topics or a pattern")
        if pattern is not None:
            self.subscriptions.subscribe_pattern(pattern, listener)
            self.cluster.want((), all_topics=True)
        else:
            self.subscriptions.subscribe(topics, listener)
            self.cluster.want(self.subscriptions.topics)
        self.coordinator.request_rejoin("subscribed")

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read ``partitions`` without group management (commits still go to ``group.id``'s coordinator)."""
        self.subscriptions.assign(TopicPartition(*tp) for tp in partitions)
        self.cluster.want({tp.topic for tp in self.subscriptions.assignment})
        self.fetcher.changed()

    def unsubscribe(self) -> None:
        if self._join is not None:
            self._join.kill()
            self._join = None
        if self.subscriptions.auto_assigned:
            self.rebalance.revoke(self.subscriptions.assigned())
            self.coordinator.leave("unsubscribed")
        self.subscriptions.unsubscribe()
        self.fetcher.clear()

    def subscription(self) -> set[str]:
        return set(self.subscriptions.topics)

    def assignment(self) -> set[TopicPartition]:
        return self.subscriptions.assigned()

    # -- polling -------------------------------------------------------------------------------------------

    def poll(self, timeout_ms: int = 0) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Records of the assigned partitions, waiting up to ``timeout_ms`` for some; does the group's work
        (rejoining, position lookups, auto commits) first. A join runs in a greenlet: a poll that times out
        while the group rebalances returns nothing, and a later one takes the assignment."""
        self._check_open()
        deadline = time.monotonic() + max(timeout_ms, 0) / 1000.0
        self.coordinator.poll_heartbeat()
        while True:
            self._wakeup.clear()
            self._update_metadata()
            if self.subscriptions.auto_assigned:
                self._ensure_active_group()
            if not self._membership_in_doubt():
                self._update_positions()
                self._maybe_auto_commit()
                self.fetcher.ensure_workers()
                records = self.fetcher.drain(self.config["max.poll.records"])
                if records:
                    return records
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return {}
            self._wakeup.wait(min(remaining, self.cluster.refresh_due() or remaining, 1.0))

    def _membership_in_doubt(self) -> bool:
        if not self.subscriptions.auto_assigned:
            return False
        return (self._join is not None and not self.coordinator.cooperative) or self.coordinator.in_doubt()

    def _ensure_active_group(self) -> None:
        """Start a join when one is needed (revoking first); take its assignment when it is done."""
        if self.coordinator.fenced and self._join is None:
            raise FencedInstanceIdError(
                f"group {self.group_id!r}: group.instance.id {self.coordinator.group_instance_id!r} "
                "was taken over by another consumer"
            )
        join = self._join
        if join is None:
            if self.coordinator.lost:
                self.rebalance.lose()
            if self.coordinator.rejoin_needed or self.subscriptions.needs_partition_assignment:
                self._start_join()
            return
        if not join.ready():
            return
        self._join = None
        self.rebalance.on_join_complete(join.get())  # a failed join raises here

    def _update_metadata(self) -> None:
        """Refresh the metadata when due; a subscription whose topics or partition counts changed rejoins."""
        self.cluster.maybe_refresh()
        if not self.subscriptions.auto_assigned or self._join is not None:
            return
        if self.subscriptions.pattern is not None:
            topics = self.subscriptions.matching(self.cluster.all_topics)
            if self.subscriptions.change_topics(topics):
                self.cluster.want(topics, all_topics=True)
                self.coordinator.request_rejoin(f"the pattern now matches {sorted(topics)}")
                return
        counts = self.cluster.partition_counts(self.subscriptions.topics)
        if self._partition_counts and counts != self._partition_counts and not self.coordinator.rejoin_needed:
            self.coordinator.request_rejoin(f"partition counts changed to {counts}")

    def _start_join(self) -> None:
        """Give up what must be given up before joining (``RebalanceCallbacks.on_join_prepare``), then join
        in a greenlet."""
        self.rebalance.on_join_prepare()
        if self.subscriptions.pattern is not None and not self.subscriptions.topics:
            self.cluster.maybe_refresh()
            self.subscriptions.change_topics(self.subscriptions.matching(self.cluster.all_topics))
        self._partition_counts = self.cluster.ensure_topics(self.subscriptions.topics)
        self.subscriptions.needs_partition_assignment = False
        self._join = gevent.spawn(self.coordinator.join, time.monotonic() + self.request_timeout_s)
        self._join.link(lambda _: self._wakeup.set())

    def _update_positions(self) -> None:
        self.cluster.maybe_refresh()
        missing = self.subscriptions.missing_positions()
        if missing:
            committed = (
                self.coordinator.fetch_committed(missing, time.monotonic() + self.request_timeout_s)
                if self.group_id
                else {}
            )
            for tp in missing:
                value = committed.get(tp)
                if value is not None:
                    self.subscriptions.seek(tp, value.offset)
                else:
                    self.subscriptions.request_reset(tp)
        for tp, policy in self.subscriptions.resets().items():
            if policy == NONE:
                raise NoOffsetForPartitionError(
                    f"{tp.topic}-{tp.partition}: no committed offset and auto.offset.reset is none"
                )
            try:
                offset = self.cluster.list_offset(tp, EARLIEST_TIME if policy == EARLIEST else LATEST_TIME)
            except (OSError, KafkaError) as exc:
                log.info("%s-%d: offset lookup failed (%s); retrying", tp.topic, tp.partition, exc)
                continue
            self.subscriptions.seek(tp, offset)
            self.fetcher.changed()

    def _maybe_auto_commit(self) -> None:
        if not self.config["enable.auto.commit"] or time.monotonic() < self._next_auto_commit:
            return
        self._next_auto_commit = time.monotonic() + self.config["auto.commit.interval.ms"] / 1000.0
        if self.subscriptions.positions() and not self._membership_in_doubt() and self._join is None:
            self.commit_async()

    # -- offsets -------------------------------------------------------------------------------------------

    def _offsets(
        self, offsets: Mapping[TopicPartition, Any] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        if offsets is None:
            return {tp: OffsetAndMetadata(p) for tp, p in self.subscriptions.positions().items()}
        return {
            TopicPartition(*tp): v if isinstance(v, OffsetAndMetadata) else OffsetAndMetadata(v)
            for tp, v in offsets.items()
        }

    def commit(self, offsets: Mapping[TopicPartition, Any] | None = None) -> None:
        """Commit ``offsets`` (default: the positions of every assigned partition) and wait for the answer;
        CommitFailedError if the group rebalanced meanwhile."""
        self._check_open()
        self.coordinator.commit(self._offsets(offsets), time.monotonic() + self.request_timeout_s)

    commit_sync = commit

    def commit_async(
        self, offsets: Mapping[TopicPartition, Any] | None = None, callback: CommitCallback | None = None
    ) -> gevent.Greenlet:
        """Commit in a greenlet; ``callback(offsets, error or None)`` when answered."""
        self._check_open()
        chosen = self._offsets(offsets)

        def run() -> None:
            error: BaseException | None = None
            try:
                self.coordinator.commit(chosen, time.monotonic() + self.request_timeout_s)
            except KafkaError as exc:
                error = exc
                log.info("group %s: async commit failed: %s", self.group_id, exc)
            if callback is not None:
                callback(chosen, error)

        return gevent.spawn(run)

    def committed(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        """The offset committed for ``tp`` (None if none), asked of the coordinator."""
        tp = TopicPartition(*tp)
        answer = self.coordinator.fetch_committed([tp], time.monotonic() + self.request_timeout_s)
        return answer.get(tp)

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` hands out for ``tp`` (looked up first if unknown)."""
        tp = TopicPartition(*tp)
        deadline = time.monotonic() + self.request_timeout_s
        while self.subscriptions.state(tp).position is None:
            if time.monotonic() >= deadline:
                raise KafkaError(f"{tp.topic}-{tp.partition}: position not found")
            self._update_positions()
            if self.subscriptions.state(tp).position is None:
                gevent.sleep(self.coordinator.retry_backoff_s)
        return self.subscriptions.state(tp).position

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.subscriptions.seek(TopicPartition(*tp), offset)
        self.fetcher.changed()

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        for tp in partitions or self.subscriptions.assigned():
            self.subscriptions.request_reset(TopicPartition(*tp), EARLIEST)
        self.fetcher.changed()

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        for tp in partitions or self.subscriptions.assigned():
            self.subscriptions.request_reset(TopicPartition(*tp), "latest")
        self.fetcher.changed()

    def pause(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self.subscriptions.state(TopicPartition(*tp)).paused = True

    def resume(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self.subscriptions.state(TopicPartition(*tp)).paused = False
        self.fetcher.changed()

    # -- closing -------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Commit (with ``enable.auto.commit``), revoke every partition (the listener told), leave the group,
        stop the greenlets, close the channels."""
        if self._closed:
            return
        try:
            if self.subscriptions.auto_assigned and self.coordinator.generation >= 0:
                if self.config["enable.auto.commit"] and not self._membership_in_doubt():
                    try:
                        self.commit()
                    except KafkaError as exc:
                        log.warning("group %s: commit at close failed: %s", self.group_id, exc)
                self.rebalance.on_leave_prepare()
                self.coordinator.leave()
        finally:
            self._closed = True
            if self._join is not None:  # a JoinGroup under way (it waits for the rebalance): cut short
                end_greenlets([self._join])
            self.fetcher.close()
            self.coordinator.close()
            self.cluster.close()

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaError("the consumer is closed")


def checked_consumer(config: ConsumerConfig09 | Mapping[str, Any], topics: Iterable[str]) -> GroupConsumer:
    """A GroupConsumer whose bootstrap servers answered one Metadata request for ``topics`` through its own
    channels (TLS and SASL built once): none answering ends a tool in one line (BrokerNotAvailableError naming
    them and the cause) instead of a consumer retrying forever."""
    consumer = GroupConsumer(config)
    cluster = consumer.cluster
    try:
        fetch_topic_metadata(topics, cluster.bootstrap, cluster.client_id, secure=cluster.secure)
    except BaseException:
        consumer.close()
        raise
    return consumer
