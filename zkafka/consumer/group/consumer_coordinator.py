"""The member's side of the 0.9 group protocol (0.9's ``ConsumerCoordinator``): find the group's coordinator,
join (JoinGroup, then SyncGroup; the leader assigns with the chosen assignor of ``coordinator.assignors``),
heartbeat from a greenlet, commit and fetch offsets (OffsetCommit v2, OffsetFetch v1), leave.

Heartbeats run every ``heartbeat.interval.ms`` in their own greenlet, whatever ``poll`` does (2.x's heartbeat
thread). An answer of REBALANCE_IN_PROGRESS asks for a rejoin; ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID mean the
membership is lost (``lost``: the partitions are someone else's now); a coordinator error or a lost connection
sends the member looking for the coordinator again. So does a Heartbeat not answered within what is left of the
session (a frozen or unreachable coordinator): the member drops it, with any request waiting on it, and asks for
the coordinator at once (FindCoordinator) instead of waiting out ``request.timeout.ms``. A member that has heard no
heartbeat answer for its session timeout hands nothing out until one comes, but keeps its member id and
generation and goes on heartbeating, as Kafka's client does: a new coordinator loads the group with every
member's session started afresh and takes its heartbeats (a member joining anew would leave its old self in the
group, for the rebalance to wait out its session); UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION says it was removed.
KIP-62: a member whose application has not called ``poll`` for ``max.poll.interval.ms`` leaves the group
(LeaveGroup; a static member sends none) and loses its partitions; the next ``poll`` joins again. JoinGroup
carries ``max.poll.interval.ms`` as the rebalance timeout.

``rebalance_protocol`` is COOPERATIVE when every configured assignor supports it (only ``cooperative-sticky``
does), else EAGER, as Kafka decides it. A cooperative member stays in good standing while it rejoins: it keeps
consuming what it owns (KIP-429).

With a ``group_instance_id`` (``group.instance.id``) the member is static (KIP-345): it speaks JoinGroup v5,
SyncGroup v3 and Heartbeat v3 (``membership_requests``), never sends LeaveGroup
(a restart within the session timeout takes its partitions back without a rebalance), and an answer of
FENCED_INSTANCE_ID (another consumer with the same instance id took its place) is fatal: ``fenced`` is set and
joining raises FencedInstanceIdError.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gevent
from gevent.event import Event

from zkafka.client08.channel import check_error
from zkafka.consumer.group.assignors import (
    COOPERATIVE,
    EAGER,
    Assignor,
    assign_group,
    decode_assignment,
    subscription_metadata,
)
from zkafka.consumer.group.cluster import Cluster
from zkafka.consumer.group.coordinator_channel import (
    COORDINATOR_LOST,
    CoordinatorChannel,
    CoordinatorLostError,
)
from zkafka.consumer.group.membership_requests import heartbeat, join_group, leave_group, sync_group
from zkafka.consumer.group.offsets import committed_offsets, offset_commit_request, offset_fetch_request
from zkafka.consumer.group.subscription import OffsetAndMetadata, SubscriptionState, TopicPartition
from zkafka.errors import FencedInstanceIdError, KafkaError, RebalanceInProgressError
from zkafka.protocol import group_membership
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.utils.hub import end_greenlets

log = logging.getLogger(__name__)

NO_GENERATION = -1

RETRIABLE = COORDINATOR_LOST | {ErrorCode.GROUP_LOAD_IN_PROGRESS}
# answers that mean "this member must join again"
REJOIN = {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID}


class CommitFailedError(KafkaError):
    """The commit was refused because the group rebalanced: the partitions may belong to another member now."""


class ConsumerCoordinator:
    """Group membership and offsets of one consumer."""

    def __init__(
        self,
        group_id: str,
        cluster: Cluster,
        subscriptions: SubscriptionState,
        assignors: Sequence[Assignor],
        *,
        session_timeout_ms: int = 30000,
        heartbeat_interval_ms: int = 3000,
        max_poll_interval_ms: int = 300000,
        retry_backoff_ms: int = 100,
        on_rejoin_needed: Callable[[], None] = lambda: None,
        group_instance_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.group_instance_id = group_instance_id or None
        self.fenced = False  # FENCED_INSTANCE_ID was answered: this member is done
        self.cluster = cluster
        self.subscriptions = subscriptions
        self.assignors = list(assignors)
        cooperative = all(a.rebalance_protocol == COOPERATIVE for a in self.assignors)
        self.rebalance_protocol = COOPERATIVE if cooperative and self.assignors else EAGER
        self.max_poll_interval_ms = max_poll_interval_ms
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_s = retry_backoff_ms / 1000.0
        self.on_rejoin_needed = on_rejoin_needed
        self.channel = CoordinatorChannel(
            group_id, cluster, self.retry_backoff_s, suspect_s=session_timeout_ms / 1000.0
        )
        self.generation = NO_GENERATION
        self.member_id = ""
        self.leader_id = ""
        self.protocol = ""
        self.rejoin_needed = True
        self.joining = False
        self.rebalances = 0  # completed joins
        self.lost = False  # the membership was lost: the partitions owned are someone else's now
        self.owned: dict[str, list[int]] = {}  # what this member owns, sent in its subscription
        self._last_heartbeat = self._last_poll = time.monotonic()
        self._closed = Event()
        self._heartbeat = gevent.spawn(self._heartbeat_loop)

    # -- membership ----------------------------------------------------------------------------------------

    def request_rejoin(self, why: str) -> None:
        if not self.rejoin_needed:
            log.info("group %s: member %s rejoins (%s)", self.group_id, self.member_id, why)
        self.rejoin_needed = True
        self.on_rejoin_needed()

    @property
    def coordinator(self) -> Any:
        """The group's coordinator (None until known)."""
        return self.channel.endpoint

    @property
    def cooperative(self) -> bool:
        return self.rebalance_protocol == COOPERATIVE

    def in_doubt(self) -> bool:
        """True while this member may not own what it was assigned: its membership was lost, no heartbeat was
        answered for its session timeout (the coordinator may have removed it: the next answer says), or,
        eager, a rejoin is pending or running (a cooperative member keeps its partitions through a rebalance)."""
        if self.lost or self.fenced or self.session_expired():
            return True
        return not self.cooperative and (self.rejoin_needed or self.joining)

    def session_expired(self) -> bool:
        """No heartbeat answered for the session timeout (the membership kept until an answer says)."""
        expired = time.monotonic() - self._last_heartbeat > self.session_timeout_ms / 1000.0
        return expired and bool(self.member_id) and not self.joining

    def reset_generation(self, why: str, rejoin: bool = True, error: int | None = None) -> None:
        """The membership is lost: forget the generation (and the member id, unless the ``error`` answered
        was ILLEGAL_GENERATION: the member is known, its generation is not), own nothing, join again."""
        log.info("group %s: member %s lost its membership (%s)", self.group_id, self.member_id, why)
        if error != ErrorCode.ILLEGAL_GENERATION:
            self.member_id = ""
        self.generation = NO_GENERATION
        self.lost, self.owned = True, {}
        if rejoin:
            self.request_rejoin(why)

    def poll_heartbeat(self) -> None:
        """The application called ``poll``: the ``max.poll.interval.ms`` timer starts again."""
        self._last_poll = time.monotonic()

    def join(self, deadline: float) -> set[TopicPartition]:
        """JoinGroup then SyncGroup until an assignment arrives; the partitions assigned. A rejoin asked for
        while this runs (``rejoin_needed`` set again) is done by the next call."""
        self.rejoin_needed, self.joining = False, True
        try:
            while True:
                self.channel.ensure_known(deadline)
                try:
                    assignment = self._join_and_sync()
                except (CoordinatorLostError, _Retry) as exc:
                    assignment, why = None, exc
                if assignment is not None:
                    self.rebalances += 1
                    self.owned = assignment
                    self._last_heartbeat = time.monotonic()
                    return {TopicPartition(t, p) for t, ps in assignment.items() for p in ps}
                if time.monotonic() >= deadline:
                    raise KafkaError(f"group {self.group_id!r}: joining failed: {why}")
                gevent.sleep(self.retry_backoff_s)
        except BaseException:
            self.rejoin_needed = True
            raise
        finally:
            self.joining = False

    def _join_and_sync(self) -> dict[str, list[int]] | None:
        topics = sorted(self.subscriptions.topics)
        protocols = [
            group_membership.GroupProtocol(
                a.name, subscription_metadata(a, topics, self.owned, self.generation, self.cooperative)
            )
            for a in self.assignors
        ]
        join = join_group(
            self.group_id,
            self.session_timeout_ms,
            self.max_poll_interval_ms,
            self.member_id,
            self.group_instance_id,
            protocols,
        )
        joined = self.channel.request(join, timeout_s=self.max_poll_interval_ms / 1000.0 + 5)
        self._check_join_step(joined.error, "JoinGroup")
        self.generation, self.member_id = joined.generation_id, joined.member_id
        self.leader_id, self.protocol = joined.leader_id, joined.group_protocol
        group_assignment = []
        if joined.leader_id == joined.member_id:
            group_assignment = self._assign(joined.group_protocol, joined.members)
        sync = sync_group(
            self.group_id, self.generation, self.member_id, self.group_instance_id, group_assignment
        )
        synced = self.channel.request(sync)
        self._check_join_step(synced.error, "SyncGroup")
        assignment = decode_assignment(synced.member_assignment)
        log.info(
            "group %s generation %d: member %s%s assigned %s",
            self.group_id,
            self.generation,
            self.member_id,
            " (leader)" if joined.leader_id == joined.member_id else "",
            assignment,
        )
        return assignment

    def _fence(self, step: str) -> FencedInstanceIdError:
        self.fenced = True
        log.warning(
            "group %s: %s: instance %s was taken over by another consumer (FENCED_INSTANCE_ID)",
            self.group_id,
            step,
            self.group_instance_id,
        )
        return FencedInstanceIdError(
            f"group {self.group_id!r}: {step}: group.instance.id {self.group_instance_id!r} is used by a newer member"
        )

    def _check_join_step(self, error: int, step: str) -> None:
        """An error answer to a join step: _Retry when joining again helps, else its exception."""
        if not error:
            return
        if error == ErrorCode.FENCED_INSTANCE_ID:
            raise self._fence(step)
        self.channel.on_error(error)
        if error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            self.reset_generation(f"{step}: {error_name(error)}", rejoin=False, error=error)
        if error in RETRIABLE | REJOIN:
            raise _Retry(f"{step}: {error_name(error)}")
        check_error(error, f"group {self.group_id!r}: {step}")

    def _assign(self, protocol: str, members: list) -> list:
        """The leader's step: every member's subscription, the partitions of all their topics, the assignor."""
        assignor = next(a for a in self.assignors if a.name == protocol)
        metadata = {m.member_id: m.member_metadata or b"" for m in members}
        topics = set()
        for data in metadata.values():
            topics.update(group_membership.ConsumerProtocolMetadata.decode(data).subscription)
        counts = self.cluster.ensure_topics(topics)
        assignments = assign_group(assignor, counts, metadata)
        return [group_membership.SyncGroupAssignment(m, data) for m, data in assignments.items()]

    def leave(self, why: str = "the consumer is closing") -> None:
        """LeaveGroup (the partitions move at once instead of after the session timeout); a static member
        sends none: it keeps its place until its session times out, so a restart gets its partitions back."""
        if self.member_id and self.coordinator is not None and self.group_instance_id is None:
            log.info("group %s: member %s leaves the group (%s)", self.group_id, self.member_id, why)
            try:
                self.channel.request(leave_group(self.group_id, self.member_id))
            except KafkaError as exc:
                log.info("group %s: LeaveGroup failed: %s", self.group_id, exc)
        self.member_id, self.generation = "", NO_GENERATION
        self.rejoin_needed = True

    def _heartbeat_loop(self) -> None:
        while not self._closed.wait(self.heartbeat_interval_ms / 1000.0):
            if self.generation == NO_GENERATION or self.joining:
                continue
            if self.coordinator is None:
                self._rediscover()
                continue
            if time.monotonic() - self._last_poll > self.max_poll_interval_ms / 1000.0:
                self.leave("no poll() for max.poll.interval.ms")
                self.reset_generation("poll timeout: max.poll.interval.ms expired")
                continue
            if not (self.lost or self.fenced or (self.rejoin_needed and not self.cooperative)):
                self._send_heartbeat()  # with the session expired too: the answer says if it is still a member

    def _rediscover(self) -> None:
        """Look the coordinator up again now (FindCoordinator), not at the next request of ``poll``."""
        try:
            self.channel.ensure_known(time.monotonic() + self.heartbeat_interval_ms / 1000.0)
        except CoordinatorLostError as exc:
            log.debug("group %s: %s", self.group_id, exc)

    def _send_heartbeat(self) -> None:
        """One Heartbeat, answered within what is left of the session or the coordinator is taken for dead
        (and looked up again at once) instead of waiting out ``request.timeout.ms``."""
        generation = self.generation
        session_left = self._last_heartbeat + self.session_timeout_ms / 1000.0 - time.monotonic()
        try:
            error = self.channel.request(
                heartbeat(self.group_id, generation, self.member_id, self.group_instance_id),
                within_s=max(session_left, self.heartbeat_interval_ms / 1000.0),
            ).error
        except CoordinatorLostError as exc:
            log.info("group %s: heartbeat failed: %s", self.group_id, exc)
            self.cluster.request_refresh()  # its broker may have led partitions too
            self._rediscover()
            return
        except KafkaError as exc:
            log.debug("group %s: heartbeat failed: %s", self.group_id, exc)
            return
        if generation != self.generation:
            return  # a rebalance completed meanwhile
        if error == ErrorCode.NONE:
            self._last_heartbeat = time.monotonic()
        elif error == ErrorCode.FENCED_INSTANCE_ID:
            self._fence("heartbeat")
            self.on_rejoin_needed()  # wakes poll, which raises
        elif error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            self.reset_generation(f"heartbeat: {error_name(error)}", error=error)
        elif error == ErrorCode.REBALANCE_IN_PROGRESS:
            self.request_rejoin("heartbeat: REBALANCE_IN_PROGRESS")
        else:
            self.channel.on_error(error)

    # -- offsets -------------------------------------------------------------------------------------------

    def commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], deadline: float) -> None:
        """OffsetCommit v2 in this member's generation, retried while the coordinator moves or loads;
        CommitFailedError if the group rebalanced (the partitions may be someone else's now),
        RebalanceInProgressError while it rebalances (Kafka 2.x's: retriable once ``poll`` completed the join)."""
        if not offsets:
            return
        managed = self.subscriptions.auto_assigned
        if managed and self.joining:
            raise RebalanceInProgressError(f"group {self.group_id!r}: commit during a rebalance: poll, then retry")
        request = offset_commit_request(
            self.group_id,
            self.generation if managed else NO_GENERATION,
            self.member_id if managed else "",
            offsets,
        )
        while True:
            self.channel.ensure_known(deadline)
            try:
                response = self.channel.request(request)
            except CoordinatorLostError as exc:
                error, why = None, exc
            else:
                errors = {p.error for t in response.topics for p in t.partitions if p.error}
                if not errors:
                    self.subscriptions.committed_changed(offsets)
                    return
                error = min(errors)
                why = error_name(error)
                self.channel.on_error(error)
                if error == ErrorCode.REBALANCE_IN_PROGRESS:
                    if not self.joining:
                        self.request_rejoin(f"commit: {why}")
                    raise RebalanceInProgressError(f"group {self.group_id!r}: commit during a rebalance: poll, then retry")
                if error in REJOIN:
                    self.reset_generation(f"commit: {why}", error=error)
                    raise CommitFailedError(f"group {self.group_id!r}: commit refused ({why}): the group rebalanced")
                if error not in RETRIABLE:
                    check_error(error, f"group {self.group_id!r}: committing offsets")
            if time.monotonic() >= deadline:
                raise KafkaError(f"group {self.group_id!r}: commit failed: {why}")
            gevent.sleep(self.retry_backoff_s)

    def fetch_committed(
        self, partitions: Sequence[TopicPartition], deadline: float
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """OffsetFetch v1: each partition's committed offset (None where nothing was committed)."""
        request = offset_fetch_request(self.group_id, partitions)
        while True:
            self.channel.ensure_known(deadline)
            try:
                response = self.channel.request(request)
            except CoordinatorLostError as exc:
                why: Any = exc
            else:
                out, errors = committed_offsets(response)
                if not errors:
                    return {tp: out.get(tp) for tp in partitions}
                error = min(errors)
                why = error_name(error)
                self.channel.on_error(error)
                if error not in RETRIABLE:
                    check_error(error, f"group {self.group_id!r}: fetching committed offsets")
            if time.monotonic() >= deadline:
                raise KafkaError(f"group {self.group_id!r}: fetching committed offsets failed: {why}")
            gevent.sleep(self.retry_backoff_s)

    def close(self) -> None:
        self._closed.set()
        end_greenlets([self._heartbeat])  # a heartbeat under way: cut short, its socket closed
        self.channel.dead("closed")


class _Retry(Exception):
    """A join step answered with an error after which the member joins again."""
