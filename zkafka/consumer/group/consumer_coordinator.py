"""The member's side of the 0.9 group protocol (0.9's ``ConsumerCoordinator``): find the group's coordinator,
join (JoinGroup, then SyncGroup; the leader assigns with the chosen assignor of ``coordinator.assignors``),
heartbeat from a greenlet, commit and fetch offsets (OffsetCommit v2, OffsetFetch v1), leave.

Heartbeats run every ``heartbeat.interval.ms`` in their own greenlet while the member is in a stable
generation. An answer of REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION asks for a rejoin, UNKNOWN_MEMBER_ID
forgets the member id first, a coordinator error or a lost connection sends the member looking for the
coordinator again. A member that has heard no successful heartbeat answer for its session timeout treats its
membership as lost: the coordinator has removed it and handed its partitions to others.

With a ``group_instance_id`` (``group.instance.id``) the member is static (KIP-345): it speaks JoinGroup v5,
SyncGroup v3 and Heartbeat v3 (which zkafka brokers serve without advertising them), never sends LeaveGroup
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
from gevent.lock import RLock

from zkafka.client08.channel import check_error
from zkafka.consumer.group.assignors import Assignor, assign_group, decode_assignment, subscription_metadata
from zkafka.consumer.group.cluster import Cluster
from zkafka.consumer.group.offsets import committed_offsets, offset_commit_request, offset_fetch_request
from zkafka.consumer.group.subscription import OffsetAndMetadata, SubscriptionState, TopicPartition
from zkafka.errors import FencedInstanceIdError, KafkaError
from zkafka.network.client import BlockingChannel
from zkafka.protocol import group_membership
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.protocol.offset_commit import GroupCoordinatorRequestV0

log = logging.getLogger(__name__)

NO_GENERATION = -1

# answers that mean "look for the coordinator again"
COORDINATOR_LOST = {ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR_FOR_GROUP}
RETRIABLE = COORDINATOR_LOST | {ErrorCode.GROUP_LOAD_IN_PROGRESS}
# answers that mean "this member must join again"
REJOIN = {ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID}


class CommitFailedError(KafkaError):
    """The commit was refused because the group rebalanced: the partitions may belong to another member now."""


class CoordinatorLostError(KafkaError):
    """The coordinator could not be reached or said it is not the coordinator; it is looked up again."""


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
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_s = retry_backoff_ms / 1000.0
        self.on_rejoin_needed = on_rejoin_needed
        self.coordinator: Any = None  # a BrokerEndPoint
        self._channel: BlockingChannel | None = None
        self._lock = RLock()
        self.generation = NO_GENERATION
        self.member_id = ""
        self.leader_id = ""
        self.protocol = ""
        self.rejoin_needed = True
        self.joining = False
        self.rebalances = 0  # completed joins
        self._owned: dict[str, list[int]] = {}  # the last assignment, for the sticky assignor
        self._last_heartbeat = time.monotonic()
        self._closed = Event()
        self._heartbeat = gevent.spawn(self._heartbeat_loop)

    # -- the coordinator -----------------------------------------------------------------------------------

    def ensure_coordinator_known(self, deadline: float) -> None:
        """Ask any broker for the group's coordinator until one is named (KafkaError after ``deadline``)."""
        while self.coordinator is None:
            try:
                response = self.cluster.any_broker(GroupCoordinatorRequestV0(self.group_id))
                if response.error == ErrorCode.NONE:
                    self.coordinator = response
                    self._channel = self.cluster.channel(response.host, response.port)
                    log.info("group %s: coordinator is broker %d", self.group_id, response.node_id)
                    return
                last: Any = error_name(response.error)
            except KafkaError as exc:
                last = exc
            if time.monotonic() >= deadline:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator found: {last}")
            gevent.sleep(self.retry_backoff_s)

    def coordinator_dead(self, why: object) -> None:
        if self.coordinator is not None:
            log.info("group %s: coordinator %d lost (%s)", self.group_id, self.coordinator.node_id, why)
        self.coordinator = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def _request(self, request: Any) -> Any:
        """``request`` answered by the coordinator; CoordinatorLostError on a lost connection."""
        with self._lock:
            channel = self._channel
            if channel is None:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator")
            try:
                return channel.request(request, retries=0)
            except OSError as exc:
                if self._channel is channel:
                    self.coordinator_dead(exc)
                raise CoordinatorLostError(f"group {self.group_id!r}: {exc}") from exc

    def _lost(self, code: int) -> None:
        if code in COORDINATOR_LOST:
            self.coordinator_dead(error_name(code))

    # -- membership ----------------------------------------------------------------------------------------

    def request_rejoin(self, why: str) -> None:
        if not self.rejoin_needed:
            log.info("group %s: member %s rejoins (%s)", self.group_id, self.member_id, why)
        self.rejoin_needed = True
        self.on_rejoin_needed()

    def in_doubt(self) -> bool:
        """True while this member may not own what it was assigned: a rejoin is pending or running, or no
        heartbeat was answered for a session timeout (the coordinator removed this member)."""
        if self.rejoin_needed or self.joining or self.fenced:
            return True
        if time.monotonic() - self._last_heartbeat > self.session_timeout_ms / 1000.0:
            self.request_rejoin("no heartbeat answered for the session timeout")
            return True
        return False

    def join(self, deadline: float) -> set[TopicPartition]:
        """JoinGroup then SyncGroup until an assignment arrives; the partitions assigned. A rejoin asked for
        while this runs (``rejoin_needed`` set again) is done by the next call."""
        self.rejoin_needed, self.joining = False, True
        try:
            while True:
                self.ensure_coordinator_known(deadline)
                try:
                    assignment = self._join_and_sync()
                except (CoordinatorLostError, _Retry) as exc:
                    assignment, why = None, exc
                if assignment is not None:
                    self.rebalances += 1
                    self._owned = assignment
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
            group_membership.GroupProtocol(a.name, subscription_metadata(a, topics, self._owned, self.generation))
            for a in self.assignors
        ]
        joined = self._request(self._join_request(protocols))
        self._check_join_step(joined.error, "JoinGroup")
        self.generation, self.member_id = joined.generation_id, joined.member_id
        self.leader_id, self.protocol = joined.leader_id, joined.group_protocol
        group_assignment = []
        if joined.leader_id == joined.member_id:
            group_assignment = self._assign(joined.group_protocol, joined.members)
        if self.group_instance_id is None:
            sync: Any = group_membership.SyncGroupRequestV0(
                self.group_id, self.generation, self.member_id, group_assignment
            )
        else:
            sync = group_membership.SyncGroupRequestV3(
                self.group_id, self.generation, self.member_id, self.group_instance_id, group_assignment
            )
        synced = self._request(sync)
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

    def _join_request(self, protocols: list) -> Any:
        """JoinGroup v0, or v5 with the instance id (the rebalance timeout is the session timeout)."""
        if self.group_instance_id is None:
            return group_membership.JoinGroupRequestV0(
                self.group_id,
                self.session_timeout_ms,
                self.member_id,
                group_membership.CONSUMER_PROTOCOL_TYPE,
                protocols,
            )
        return group_membership.JoinGroupRequestV5(
            self.group_id,
            self.session_timeout_ms,
            self.session_timeout_ms,
            self.member_id,
            self.group_instance_id,
            group_membership.CONSUMER_PROTOCOL_TYPE,
            protocols,
        )

    def _heartbeat_request(self, generation: int) -> Any:
        if self.group_instance_id is None:
            return group_membership.HeartbeatRequestV0(self.group_id, generation, self.member_id)
        return group_membership.HeartbeatRequestV3(self.group_id, generation, self.member_id, self.group_instance_id)

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
        self._lost(error)
        if error == ErrorCode.UNKNOWN_MEMBER_ID:
            self.member_id = ""
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

    def leave(self) -> None:
        """LeaveGroup (the partitions move at once instead of after the session timeout); a static member
        sends none: it keeps its place until its session times out, so a restart gets its partitions back."""
        if self.member_id and self.coordinator is not None and self.group_instance_id is None:
            try:
                self._request(group_membership.LeaveGroupRequestV0(self.group_id, self.member_id))
            except KafkaError as exc:
                log.info("group %s: LeaveGroup failed: %s", self.group_id, exc)
        self.member_id, self.generation = "", NO_GENERATION
        self.rejoin_needed = True

    def _heartbeat_loop(self) -> None:
        while not self._closed.wait(self.heartbeat_interval_ms / 1000.0):
            if self.in_doubt() or self.generation == NO_GENERATION or self.coordinator is None:
                continue
            generation = self.generation
            try:
                error = self._request(self._heartbeat_request(generation)).error
            except KafkaError as exc:
                log.debug("group %s: heartbeat failed: %s", self.group_id, exc)
                continue
            if generation != self.generation:
                continue  # a rebalance completed meanwhile
            if error == ErrorCode.NONE:
                self._last_heartbeat = time.monotonic()
            elif error == ErrorCode.FENCED_INSTANCE_ID:
                self._fence("heartbeat")
                self.on_rejoin_needed()  # wakes poll, which raises
            elif error in REJOIN:
                if error == ErrorCode.UNKNOWN_MEMBER_ID:
                    self.member_id = ""
                self.request_rejoin(f"heartbeat: {error_name(error)}")
            else:
                self._lost(error)

    # -- offsets -------------------------------------------------------------------------------------------

    def commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], deadline: float) -> None:
        """OffsetCommit v2 in this member's generation, retried while the coordinator moves or loads;
        CommitFailedError if the group rebalanced (the partitions may be someone else's now)."""
        if not offsets:
            return
        managed = self.subscriptions.auto_assigned
        request = offset_commit_request(
            self.group_id,
            self.generation if managed else NO_GENERATION,
            self.member_id if managed else "",
            offsets,
        )
        while True:
            self.ensure_coordinator_known(deadline)
            try:
                response = self._request(request)
            except CoordinatorLostError as exc:
                error, why = None, exc
            else:
                errors = {p.error for t in response.topics for p in t.partitions if p.error}
                if not errors:
                    self.subscriptions.committed_changed(offsets)
                    return
                error = min(errors)
                why = error_name(error)
                self._lost(error)
                if error in REJOIN:
                    if error == ErrorCode.UNKNOWN_MEMBER_ID:
                        self.member_id = ""
                    self.request_rejoin(f"commit: {why}")
                    raise CommitFailedError(
                        f"group {self.group_id!r}: commit refused ({why}): the group rebalanced"
                    )
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
            self.ensure_coordinator_known(deadline)
            try:
                response = self._request(request)
            except CoordinatorLostError as exc:
                why: Any = exc
            else:
                out, errors = committed_offsets(response)
                if not errors:
                    return {tp: out.get(tp) for tp in partitions}
                error = min(errors)
                why = error_name(error)
                self._lost(error)
                if error not in RETRIABLE:
                    check_error(error, f"group {self.group_id!r}: fetching committed offsets")
            if time.monotonic() >= deadline:
                raise KafkaError(f"group {self.group_id!r}: fetching committed offsets failed: {why}")
            gevent.sleep(self.retry_backoff_s)

    def close(self) -> None:
        self._closed.set()
        self._heartbeat.kill(block=False)
        self.coordinator_dead("closed")


class _Retry(Exception):
    """A join step answered with an error after which the member joins again."""
