"""GroupCoordinator: the 0.9 group coordinator of one broker, executing what the group state machines decide.

This broker coordinates the groups whose ``__consumer_offsets`` partition it leads (``on_leadership``): the
GroupMetadataManager loads such a partition's records (meanwhile its groups answer GROUP_LOAD_IN_PROGRESS),
and forgets its groups when it stops leading it (parked callers get NOT_COORDINATOR_FOR_GROUP). Requests
first pass 0.9's checks in order (coordinator active, group id, coordinator for the group, loading, session
timeout bounds); the rest is ``group.GroupMetadata``'s. Its effects are executed here: parked JoinGroups and
SyncGroups answered, one gevent timer per member for its session, each rebalance parked in the injected
``JoinPurgatory`` (server/delayed_join.py's) keyed by group, group records, commits and tombstones appended to
the offsets partition through the manager. Everything runs on the broker's gevent hub, so no locks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import gevent

from zkafka import utils
from zkafka.coordinator.effects import (
    AnswerJoin,
    AnswerSync,
    ArmHeartbeat,
    AwaitJoins,
    CheckJoins,
    DisarmHeartbeat,
    JoinResult,
    StoreGroup,
    join_error,
)
from zkafka.coordinator.group import GroupMetadata
from zkafka.coordinator.group_admin import GroupAdmin
from zkafka.coordinator.group_metadata_manager import Append, GroupMetadataManager
from zkafka.coordinator.offsets_cache import Record
from zkafka.coordinator.offsets_schema import OffsetAndMetadata, record_versions
from zkafka.network.server import PendingResponse
from zkafka.protocol.errors import ErrorCode

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class CoordinatorConfig:
    """The coordinator's settings (``offsets.*`` and ``group.*`` broker keys)."""

    num_partitions: int = 50
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000  # Kafka 2.x's default (0.9's: 30000)
    retention_ms: int = 7 * 24 * 60 * 60 * 1000  # offsets.retention.minutes: Kafka 2.0+'s 10080 (0.9: 1440)
    metadata_max_bytes: int = 4096
    initial_rebalance_delay_ms: int = 0  # zkafka option (0.9 has none)
    max_size: int = 2**31 - 1  # group.max.size (Kafka 2.2, KIP-389)
    inter_broker_protocol_version: str | None = None  # the record versions written (None: 0.9's)

    @classmethod
    def from_broker_config(cls, config: Any) -> CoordinatorConfig:
        return cls(
            config["offsets.topic.num.partitions"],
            config["group.min.session.timeout.ms"],
            config["group.max.session.timeout.ms"],
            config["offsets.retention.minutes"] * 60 * 1000,
            config["offset.metadata.max.bytes"],
            config["group.initial.rebalance.delay.ms"],
            config["group.max.size"],
            config["inter.broker.protocol.version"],
        )


class _Reply:
    """An answer given at once when ready before the request handler returns, else through a PendingResponse."""

    def __init__(self) -> None:
        self.pending: PendingResponse | None = None
        self.ready = False
        self.value: Any = None

    def set(self, value: Any) -> None:
        if self.pending is not None:
            self.pending.set(value)
        else:
            self.ready, self.value = True, value

    def answer(self) -> Any:
        if self.ready:
            return self.value
        self.pending = PendingResponse()
        return self.pending


class JoinPurgatory(Protocol):
    """Where each rebalance waits for the group's members to rejoin (the broker's: server/delayed_join.py)."""

    def await_join(self, group: GroupMetadata, timeout_ms: int, complete: Callable[[], None]) -> None:
        """Park the group's rebalance; ``complete()`` once ``group.join_ready()`` or after ``timeout_ms``."""

    def check_join(self, group_id: str) -> None:
        """Retry the group's parked rebalance now."""

    def shutdown(self) -> None:
        """Drop every parked rebalance."""


class GroupCoordinator(GroupAdmin):
    """Groups and offsets of the offsets partitions this broker leads (describing, listing and deleting
    them: group_admin.py)."""

    def __init__(
        self,
        config: CoordinatorConfig,
        *,
        append: Append,
        read_partition: Callable[[int], Iterable[Record]],
        join_purgatory: JoinPurgatory,
        time_ms: Callable[[], int] = utils.now_ms,
    ) -> None:
        self.config = config
        self.now_ms = time_ms
        self.manager = GroupMetadataManager(
            config.num_partitions,
            config.retention_ms,
            append=append,
            read_partition=read_partition,
            execute=self._execute,
            time_ms=time_ms,
            initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            versions=record_versions(config.inter_broker_protocol_version),
        )
        self.active = True
        self.join_purgatory = join_purgatory
        self._joins: dict[tuple[str, str], tuple[PendingResponse, Callable[[JoinResult], Any]]] = {}
        self._syncs: dict[tuple[str, str], tuple[PendingResponse, Callable[[int, bytes], Any]]] = {}
        self._timers: dict[tuple[str, str], Any] = {}

    def partition_for(self, group_id: str) -> int:
        return self.manager.partition_for(group_id)

    @property
    def groups(self) -> dict[str, GroupMetadata]:
        return self.manager.groups

    @property
    def owned(self) -> set[int]:
        return self.manager.owned

    @property
    def loading(self) -> set[int]:
        return self.manager.loading

    # -- the checks before the group ------------------------------------------------------------------------

    def _check(self, group_id: str, loading_error: int = ErrorCode.GROUP_LOAD_IN_PROGRESS) -> int:
        """0.9's order: inactive 15, not the coordinator 16, loading ``loading_error`` (0 lets it through)."""
        if not self.active:
            return ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE
        partition = self.partition_for(group_id)
        if partition in self.loading:
            return loading_error
        if partition not in self.owned:
            return ErrorCode.NOT_COORDINATOR_FOR_GROUP
        return ErrorCode.NONE

    # -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup --------------------------------------------------------

    def join_group(
        self,
        group_id: str,
        member_id: str,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        respond: Callable[[JoinResult], Any],
        instance_id: str | None = None,
        rebalance_timeout_ms: int = 0,
        require_member_id: bool = False,
        skip_assignment: bool = False,
    ) -> Any:
        """``respond(result)`` now, or a PendingResponse set to it when the rebalance completes (``group.join``
        says what ``require_member_id`` and ``skip_assignment`` ask)."""
        if self.active and not group_id:
            return respond(join_error(member_id, ErrorCode.INVALID_GROUP_ID))
        error = self._check(group_id)
        if error == ErrorCode.NONE and not (
            self.config.min_session_timeout_ms <= session_timeout_ms <= self.config.max_session_timeout_ms
        ):
            error = ErrorCode.INVALID_SESSION_TIMEOUT
        group = self.groups.get(group_id)
        if error == ErrorCode.NONE and group is None:
            if member_id:
                error = ErrorCode.UNKNOWN_MEMBER_ID
            else:
                group = self.manager.add_group(group_id, protocol_type)
        if error == ErrorCode.NONE and not group.accepts(member_id, self.config.max_size):
            error, member_id = ErrorCode.GROUP_MAX_SIZE_REACHED, ""
        if error != ErrorCode.NONE:
            return respond(join_error(member_id, error))
        outcome = group.join(
            member_id,
            client_id,
            client_host,
            session_timeout_ms,
            protocol_type,
            protocols,
            self.now_ms(),
            instance_id=instance_id,
            rebalance_timeout_ms=rebalance_timeout_ms,
            require_member_id=require_member_id,
            skip_assignment=skip_assignment,
        )
        pending = None
        if outcome.result is None:
            key = (group_id, outcome.member_id)
            pending = PendingResponse(on_cancel=lambda: self._joins.pop(key, None))
            self._joins[key] = (pending, respond)
        self._execute(group, outcome.effects)
        return respond(outcome.result) if pending is None else pending

    def sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        assignments: dict[str, bytes],
        respond: Callable[[int, bytes], Any],
        instance_id: str | None = None,
    ) -> Any:
        """``respond(error, assignment)`` now, or a PendingResponse set to it once the assignment is stored."""
        error = self._check(group_id, loading_error=ErrorCode.NONE)
        group = self.groups.get(group_id)
        if error == ErrorCode.NONE and group is None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
        if error != ErrorCode.NONE:
            return respond(error, b"")
        outcome = group.sync(member_id, generation, assignments, self.now_ms(), instance_id)
        pending = None
        if outcome.parked:
            key = (group_id, member_id)
            pending = PendingResponse(on_cancel=lambda: self._syncs.pop(key, None))
            self._syncs[key] = (pending, respond)
        self._execute(group, outcome.effects)
        return respond(outcome.error, outcome.assignment) if pending is None else pending

    def heartbeat(
        self, group_id: str, generation: int, member_id: str, instance_id: str | None = None
    ) -> int:
        if self.active and self.partition_for(group_id) in self.loading:
            return ErrorCode.NONE  # 0.9 answers blindly while the group loads
        error = self._check(group_id)
        group = self.groups.get(group_id)
        if error != ErrorCode.NONE or group is None:
            return error or ErrorCode.UNKNOWN_MEMBER_ID
        code, effects = group.heartbeat(member_id, generation, self.now_ms(), instance_id)
        self._execute(group, effects)
        return code

    def leave_group(self, group_id: str, member_id: str, instance_id: str | None = None) -> int:
        error = self._check(group_id)
        group = self.groups.get(group_id)
        if error != ErrorCode.NONE or group is None:
            return error or ErrorCode.UNKNOWN_MEMBER_ID
        code, effects = group.leave(member_id, instance_id)
        self._execute(group, effects)
        return code

    # -- offsets --------------------------------------------------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        respond: Callable[[dict[TopicPartition, int]], Any] = lambda errors: errors,
        instance_id: str | None = None,
    ) -> Any:
        """Store a commit: ``respond({partition: error code})`` now, or a PendingResponse set to it once the
        replicas hold the commit (or the wait failed). A group this coordinator does not manage accepts
        commits with generation < 0 only (a consumer assigning its own partitions)."""
        error = self._check(group_id)
        group = self.groups.get(group_id)
        if error == ErrorCode.NONE and group is None and generation >= 0:
            error = ErrorCode.ILLEGAL_GENERATION
        elif error == ErrorCode.NONE and group is None:
            self.manager.add_group(group_id, "")  # Empty, as Kafka 2.x+ keeps a simple consumer's group
        elif error == ErrorCode.NONE:
            error, effects = group.commit_error(member_id, generation, self.now_ms(), instance_id)
            self._execute(group, effects)
        if error != ErrorCode.NONE:
            return respond(dict.fromkeys(offsets, error))
        results = {}
        valid = {}
        for tp, value in offsets.items():
            if value.metadata is not None and len(value.metadata) > self.config.metadata_max_bytes:
                results[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                valid[tp] = value
        if not valid:
            return respond(results)
        reply = _Reply()

        def stored(code: int) -> None:
            results.update(dict.fromkeys(valid, code))
            reply.set(respond({tp: results[tp] for tp in offsets}))

        self.manager.store_offsets(group_id, valid, stored)
        return reply.answer()

    def fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None
    ) -> tuple[int, dict[TopicPartition, OffsetAndMetadata | None]]:
        """The group's offsets (None: nothing committed); all of them when ``partitions`` is None."""
        error = self._check(group_id)
        if error != ErrorCode.NONE:
            return error, dict.fromkeys(partitions or [])
        return ErrorCode.NONE, self.manager.cache.fetch(group_id, partitions)

    def expire_offsets(self) -> int:
        """Drop offsets past their expire time and append their tombstones; returns how many."""
        return self.manager.expire_offsets()

    # -- which offsets partitions are ours ------------------------------------------------------------------

    def on_leadership(self, led: Iterable[int]) -> None:
        """This broker now leads exactly the offsets partitions ``led``: load the new ones, drop the others."""
        self.manager.on_leadership(led)

    def shutdown(self) -> None:
        """Stop answering: parked requests are cancelled with their purgatory, timers stopped."""
        self.active = False
        for timer in self._timers.values():
            timer.close()
        self._timers.clear()
        self.join_purgatory.shutdown()
        for pending, _ in [*self._joins.values(), *self._syncs.values()]:
            pending.set(None)
        self._joins.clear()
        self._syncs.clear()

    # -- effects ------------------------------------------------------------------------------------------

    def _execute(self, group: GroupMetadata, effects: list) -> None:
        for effect in effects:
            try:
                self._apply(group, effect)
            except Exception:
                log.exception("group %s: executing %r failed", group.group_id, effect)

    def _apply(self, group: GroupMetadata, effect: Any) -> None:
        log.debug(
            "group %s (%s, generation %d): %r", group.group_id, group.state.value, group.generation, effect
        )
        key = (group.group_id, getattr(effect, "member_id", ""))
        if isinstance(effect, AnswerJoin):
            parked = self._joins.pop(key, None)
            if parked is not None:
                parked[0].set(parked[1](effect.result))
        elif isinstance(effect, AnswerSync):
            parked = self._syncs.pop(key, None)
            if parked is not None:
                parked[0].set(parked[1](effect.error, effect.assignment))
        elif isinstance(effect, ArmHeartbeat):
            self._disarm(key)
            timer = gevent.get_hub().loop.timer(max(effect.deadline_ms - self.now_ms(), 0) / 1000.0)
            timer.start(self._session_expired, group, effect.member_id, effect.deadline_ms)
            self._timers[key] = timer
        elif isinstance(effect, DisarmHeartbeat):
            self._disarm(key)
        elif isinstance(effect, AwaitJoins):
            self.join_purgatory.await_join(group, effect.timeout_ms, lambda: self._complete_join(group))
        elif isinstance(effect, CheckJoins):
            self.join_purgatory.check_join(group.group_id)
        elif isinstance(effect, StoreGroup):
            self.manager.store_group(group, effect)
        else:
            raise TypeError(f"unknown effect {effect!r}")

    def _complete_join(self, group: GroupMetadata) -> None:
        """The group's delayed join completed (0.9's ``onCompleteJoin``)."""
        self._execute(group, group.complete_join(self.now_ms()))

    def _disarm(self, key: tuple[str, str]) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.close()

    def _session_expired(self, group: GroupMetadata, member_id: str, deadline_ms: int) -> None:
        key = (group.group_id, member_id)
        self._timers.pop(key, None)
        if self.groups.get(group.group_id) is not group:
            return
        effects = group.expire(member_id, deadline_ms)
        if effects:
            log.info("group %s: member %s missed its session timeout", group.group_id, member_id)
        self._execute(group, effects)
