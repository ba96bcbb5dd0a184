"""What a group consumer does around each join (the ``onJoinPrepare``/``onJoinComplete`` of Kafka's
``ConsumerCoordinator``), eager or cooperative (KIP-429), and the rebalance listener calls that go with it.

Eager: every partition is revoked before the join; the assignment then replaces it whole. Cooperative: before
the join only the partitions of topics no longer subscribed are revoked; after it, the partitions the new
assignment no longer holds are revoked (their positions committed with ``enable.auto.commit``) and the member
joins again at once, so that a second rebalance hands them to their new owner; the listener's
``on_partitions_assigned`` gets only what was added. A lost membership drops every partition uncommitted
(``on_partitions_lost``, or ``on_partitions_revoked`` for a listener without it). Leaving the group (closing)
revokes everything first, while the member still owns it.
"""

from __future__ import annotations

import logging
import time

from zkafka.consumer.group.consumer_coordinator import ConsumerCoordinator
from zkafka.consumer.group.fetcher import Fetcher
from zkafka.consumer.group.subscription import OffsetAndMetadata, SubscriptionState, TopicPartition
from zkafka.errors import KafkaError

log = logging.getLogger(__name__)


class RebalanceCallbacks:
    """A consumer's partitions given up and taken over around the joins of its ``coordinator``."""

    def __init__(
        self,
        coordinator: ConsumerCoordinator,
        subscriptions: SubscriptionState,
        fetcher: Fetcher,
        auto_commit: bool,
        request_timeout_s: float,
    ) -> None:
        self.coordinator = coordinator
        self.subscriptions = subscriptions
        self.fetcher = fetcher
        self.auto_commit = auto_commit
        self.request_timeout_s = request_timeout_s

    def on_join_prepare(self) -> None:
        """Before a join: a lost membership drops everything; eager revokes everything; cooperative
        revokes the partitions of topics no longer subscribed."""
        if self.coordinator.lost:
            self.lose()
        owned = self.subscriptions.assigned()
        if self.coordinator.cooperative:
            self.revoke({tp for tp in owned if tp.topic not in self.subscriptions.topics})
        else:
            self.revoke(owned)

    def on_join_complete(self, assigned: set[TopicPartition]) -> None:
        """Take the new assignment; cooperative: revoke what it took away and join again at once."""
        if self.coordinator.lost:
            self.lose()
        added = assigned
        if self.coordinator.cooperative:
            owned = self.subscriptions.assigned()
            revoked, added = owned - assigned, assigned - owned
            if revoked:
                self.revoke(revoked)
                self.coordinator.request_rejoin(f"{len(revoked)} partitions revoked")
        self.subscriptions.set_group_assignment(assigned)
        self.fetcher.changed()
        listener = self.subscriptions.listener
        if listener is not None:
            listener.on_partitions_assigned(set(added))

    def revoke(self, partitions: set[TopicPartition]) -> None:
        """Give ``partitions`` up: their positions committed (``enable.auto.commit``), the listener told."""
        if not partitions:
            return
        positions = self.subscriptions.positions()
        chosen = {tp: OffsetAndMetadata(positions[tp]) for tp in partitions if tp in positions}
        if self.auto_commit and chosen and self.coordinator.generation >= 0:
            try:
                self.coordinator.commit(chosen, time.monotonic() + self.request_timeout_s)
            except KafkaError as exc:
                log.warning(
                    "group %s: commit of revoked partitions failed: %s", self.coordinator.group_id, exc
                )
        listener = self.subscriptions.listener
        if listener is not None:
            listener.on_partitions_revoked(set(partitions))
        self.subscriptions.revoke(partitions)
        if self.subscriptions.assignment:
            self.fetcher.changed()
        else:
            self.fetcher.clear()

    def on_leave_prepare(self) -> None:
        """Before leaving the group (Kafka's ``onLeavePrepare``, eager or cooperative): every owned partition
        revoked, the listener told while the member still owns them; lost instead when the membership is gone
        or a rebalance is under way."""
        owned = self.subscriptions.assigned()
        if not owned:
            return
        coordinator = self.coordinator
        if coordinator.lost or coordinator.joining or coordinator.generation < 0 or not coordinator.member_id:
            self.lose()
            return
        listener = self.subscriptions.listener
        if listener is not None:
            listener.on_partitions_revoked(set(owned))
        self.subscriptions.revoke_all()
        self.fetcher.clear()

    def lose(self) -> None:
        """The membership was lost: every partition is dropped, uncommitted (``on_partitions_lost``)."""
        self.coordinator.lost = False
        owned = self.subscriptions.assigned()
        listener = self.subscriptions.listener
        if listener is not None and owned:
            lost = getattr(listener, "on_partitions_lost", listener.on_partitions_revoked)
            lost(owned)
        self.subscriptions.revoke_all()
        self.fetcher.clear()
