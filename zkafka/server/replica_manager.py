"""ReplicaManager: the partitions hosted on this broker, led or followed, appending to their logs, and the
purgatories where produces and fetches wait for them.

As 0.8.2's ReplicaManager: LeaderAndIsr requests (``become_leader_or_follower``, from the controller
replica_apis.py admitted) make this broker a partition's leader or follower, once per newer leader epoch; a
new follower truncates its log by leader epoch (to its high watermark when its leader knows none) and fetches
from its leader (replica_fetcher.py); StopReplica (``stop_replicas``) ends both, deleting the log if asked.
As leader it records each follower fetch (the follower's log end offset), grows the ISR with a follower that
caught up and shrinks it by the stuck and the slow (``shrink_isrs``, run every ``replica.lag.time.max.ms``; the znode writes are isr_changes.py's); the high
watermark (partition.py) is checkpointed in ``replication-offset-checkpoint``. A partition the cluster knows
but that is not led here answers NOT_LEADER_FOR_PARTITION (6); one it does not know,
UNKNOWN_TOPIC_OR_PARTITION (3). Fetches read through log_read.py.

As 0.9's, it owns the produce and fetch purgatories: ``append_messages`` appends a Produce (or the offsets
log's records) and parks a DelayedProduce when it waits for replicas; where this class changes what a parked
request waits for, it completes it there (the fetches once the appending greenlet yields,
``try_complete_delayed_produce`` when a high watermark or a follower's log end moves, both when an ISR shrinks
or a partition changes hands). ``update_leaders`` is the one-replica shortcut (tests, tools).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from zkafka.cluster.partition import Partition
from zkafka.errors import (
    KafkaError,
    NotEnoughReplicasError,
    NotLeaderForPartitionError,
    UnknownTopicOrPartitionError,
    code_for_error,
)
from zkafka.log.checkpoint import REPLICATION_OFFSET_CHECKPOINT, OffsetCheckpoint
from zkafka.log.leader_epoch_cache import LeaderEpochCache
from zkafka.protocol.errors import LAST_CODE, ErrorCode
from zkafka.server.delayed_produce import DelayedProduce, ProduceStatus
from zkafka.server.isr_changes import IsrWriter, expand_isr, shrink_isr
from zkafka.server.purgatory import Purgatory
from zkafka.server.replica_fetcher import FetcherSettings, ReplicaFetcherManager
from zkafka.utils import now_ms
from zkafka.zk.paths08 import NO_LEADER, PartitionState

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


def error_code(exc: BaseException) -> int:
    """The 0.8 wire error code for an exception (every code up to 0.9's, unlike the 0.7 default)."""
    return code_for_error(exc, LAST_CODE)


class ReplicaManager:
    """The partitions hosted here, their replication state and their logs."""

    def __init__(
        self,
        broker_id: int,
        log_manager: Any,
        *,
        on_log_failure: Callable[[OSError | str], None] | None = None,
        isr_writer: IsrWriter | None = None,
        fetcher_settings: FetcherSettings | None = None,
        lag_time_ms: int = 10000,
        lag_max_messages: int = 4000,
        min_insync_replicas: Callable[[str], int] = lambda topic: 1,
        time_ms: Callable[[], int] = now_ms,
    ) -> None:
        self.broker_id = broker_id
        self.log_manager = log_manager
        # 0.9's delayedFetchPurgatory and delayedProducePurgatory
        self.fetch_purgatory = Purgatory("fetch")
        self.produce_purgatory = Purgatory("produce")
        self.on_log_failure = on_log_failure
        self.isr_writer = isr_writer
        self.lag_time_ms = lag_time_ms
        self.lag_max_messages = lag_max_messages
        self.min_insync_replicas = min_insync_replicas
        self._time_ms = time_ms
        self.controller_epoch = -1
        self._partitions: dict[TopicPartition, Partition] = {}
        self._known: Mapping[TopicPartition, int] = {}  # every partition of the cluster -> its leader id
        self._leadership_listeners: list[Callable[[list[TopicPartition]], None]] = []
        settings = fetcher_settings or FetcherSettings(broker_id)
        self.fetchers = ReplicaFetcherManager(settings, self)
        self._checkpointed = self._read_high_watermarks()

    # -- lookup -------------------------------------------------------------------------------------------

    def partition(self, topic: str, partition: int) -> Partition | None:
        return self._partitions.get((topic, partition))

    def partitions(self) -> list[Partition]:
        return list(self._partitions.values())

    def led_partitions(self) -> list[TopicPartition]:
        return sorted(tp for tp, p in self._partitions.items() if p.is_leader)

    def set_known(self, leaders: Mapping[TopicPartition, int]) -> None:
        """The cluster's partitions with their leader ids (from the metadata cache), for NOT_LEADER answers."""
        self._known = leaders

    def add_leadership_listener(self, listener: Callable[[list[TopicPartition]], None]) -> None:
        """Call ``listener(led partitions)`` after each LeaderAndIsr or StopReplica."""
        self._leadership_listeners.append(listener)

    def leader_log(self, topic: str, partition: int) -> Any:
        """The log of a partition led here; UnknownTopicOrPartition or NotLeaderForPartition otherwise."""
        hosted = self._partitions.get((topic, partition))
        if hosted is not None and hosted.is_leader:
            return hosted.log
        if hosted is not None or (topic, partition) in self._known:
            leader = hosted.leader if hosted is not None else self._known[(topic, partition)]
            raise NotLeaderForPartitionError(
                f"broker {self.broker_id} is not the leader of {topic}-{partition} (leader {leader})"
            )
        raise UnknownTopicOrPartitionError(f"{topic}-{partition} is not a partition of this cluster")

    def local_log(self, topic: str, partition: int) -> Any | None:
        """The log of a partition hosted here, led or not (None when there is none)."""
        hosted = self._partitions.get((topic, partition))
        return hosted.log if hosted is not None else self.log_manager.get_log(topic, partition)

    def high_watermark(self, partition_log: Any) -> int:
        """What consumers may read up to."""
        hosted = self._partitions.get((partition_log.topic, partition_log.partition))
        return hosted.high_watermark if hosted is not None else partition_log.visible_end

    # -- the controller's requests ----------------------------------------------------------------------

    def update_leaders(self, leaders: Mapping[TopicPartition, int]) -> None:
        """One replica per partition: lead those mapped to this broker (ISR = this broker), stop the others."""
        self._known = dict(leaders)
        changed = []
        for tp, hosted in list(self._partitions.items()):
            if tp not in leaders:
                del self._partitions[tp]
                changed.append(tp)
            elif hosted.is_leader and leaders[tp] != self.broker_id:
                hosted.stop()
                changed.append(tp)
        for tp in sorted(tp for tp, leader in leaders.items() if leader == self.broker_id):
            hosted = self._get_or_create(tp)
            if not hosted.is_leader:
                state = PartitionState(
                    self.broker_id, hosted.leader_epoch + 1, (self.broker_id,), self.controller_epoch
                )
                hosted.make_leader(state, (self.broker_id,), self._time_ms())
                changed.append(tp)
        self._after_leadership_change(changed)

    def become_leader_or_follower(self, request: Any) -> tuple[int, list[tuple[str, int, int]]]:
        """Apply a LeaderAndIsr request (its controller checked by the caller): (error, [(topic, partition,
        error)])."""
        self.controller_epoch = request.controller_epoch
        leaders = {b.node_id: (b.node_id, b.host, b.port) for b in request.leaders}
        results, to_lead, to_follow = [], [], []
        for entry in request.partition_states:
            tp, state = (entry.topic, entry.partition), entry.state
            code = self._host(tp, state)
            if code == ErrorCode.NONE:
                (to_lead if state.leader == self.broker_id else to_follow).append((tp, state))
            else:
                log.info("broker %d ignores LeaderAndIsr for %s-%d: error %d", self.broker_id, *tp, code)
            results.append((tp[0], tp[1], code))
        self.fetchers.remove_partitions(tp for tp, _ in to_lead)
        now = self._time_ms()
        for tp, state in to_lead:
            hosted = self._partitions[tp]
            hosted.make_leader(state, state.replicas, now)
            log.info("broker %d leads %r", self.broker_id, hosted)
        for tp, state in to_follow:
            self._make_follower(self._partitions[tp], state, leaders.get(state.leader))
        self._after_leadership_change([tp for tp, _ in to_lead + to_follow])
        return ErrorCode.NONE, results

    def _host(self, tp: TopicPartition, state: Any) -> int:
        """Host ``tp`` for a LeaderAndIsr entry, its log created if need be; the entry's error code (a log
        that cannot be created answers KAFKA_STORAGE_ERROR, and the request's other partitions go on)."""
        hosted = self._partitions.get(tp)
        if self.broker_id not in state.replicas:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if hosted is not None and state.leader_epoch <= hosted.leader_epoch:
            return ErrorCode.STALE_LEADER_EPOCH
        try:
            self._get_or_create(tp)
        except (OSError, KafkaError) as exc:
            log.error("broker %d cannot create the log of %s-%d: %s", self.broker_id, *tp, exc)
            return error_code(exc) if isinstance(exc, KafkaError) else ErrorCode.KAFKA_STORAGE_ERROR
        return ErrorCode.NONE

    def _make_follower(self, hosted: Partition, state: Any, leader: tuple[int, str, int] | None) -> None:
        tp = hosted.key
        changed = hosted.make_follower(state, state.replicas)
        if changed:  # the fetcher truncates by epoch first (replica_fetcher.py)
            self.fetchers.remove_partitions([tp])
            log.info("broker %d follows %r", self.broker_id, hosted)
        if leader is None or state.leader == NO_LEADER:
            self.fetchers.remove_partitions([tp])
        elif self.fetchers.leader_of(tp) != leader:
            self.fetchers.add_partitions({tp: (leader, hosted.log_end_offset)}, truncate=True)

    def stop_replicas(self, request: Any) -> tuple[int, list[tuple[str, int, int]]]:
        """Apply a StopReplica request (its controller checked by the caller): stop fetching and leading, and
        delete the logs if asked."""
        self.controller_epoch = request.controller_epoch
        tps = [(p.topic, p.partition) for p in request.partitions]
        self.fetchers.remove_partitions(tps)
        results = []
        for tp in tps:
            hosted = self._partitions.get(tp)
            if hosted is not None:
                hosted.stop()
            if request.delete_partitions:
                self._partitions.pop(tp, None)
                self._checkpointed.pop(tp, None)
                self.log_manager.delete_log(*tp)
            results.append((tp[0], tp[1], ErrorCode.NONE))
        log.info(
            "broker %d stopped %d replica(s)%s",
            self.broker_id,
            len(tps),
            " and deleted them" if request.delete_partitions else "",
        )
        self._after_leadership_change(tps)
        return ErrorCode.NONE, results

    def _get_or_create(self, tp: TopicPartition) -> Partition:
        hosted = self._partitions.get(tp)
        if hosted is None:
            partition_log = self.log_manager.create_log(*tp)
            epochs = LeaderEpochCache.load(partition_log.dir_path)
            hosted = Partition(tp[0], tp[1], self.broker_id, partition_log, self._checkpointed.get(tp, 0), epochs)
            self._partitions[tp] = hosted
        return hosted

    def _after_leadership_change(self, changed: Iterable[TopicPartition]) -> None:
        led = self.led_partitions()
        for listener in list(self._leadership_listeners):
            try:
                listener(led)
            except Exception:
                log.exception("leadership listener %r failed", listener)
        for tp in changed:  # parked requests of a partition that changed hands answer now
            self.try_complete_delayed_fetch(tp)
            self.try_complete_delayed_produce(tp)

    # -- completing parked requests -------------------------------------------------------------------------

    def try_complete_delayed_fetch(self, tp: TopicPartition) -> None:
        """Retry the fetches parked on ``tp``: its log grew, or it changed hands."""
        self.fetch_purgatory.check_and_complete(tp)

    def try_complete_delayed_produce(self, tp: TopicPartition) -> None:
        """Retry the produces parked on ``tp``: its high watermark or a follower's log end moved, its ISR
        shrank, or it changed hands."""
        self.produce_purgatory.check_and_complete(tp)

    # -- leader side --------------------------------------------------------------------------------------

    def append_messages(
        self,
        timeout_ms: int,
        required_acks: int,
        entries: Iterable[tuple[str, int, Any]],
        respond: Callable[[list[ProduceStatus]], Any],
    ) -> Any:
        """Append each ``(topic, partition, message set)`` as the leader, then ``respond(statuses)`` (0.9's
        ``appendMessages``): at once with acks 0 or 1 or when nothing waits, else when the DelayedProduce
        parked here completes. Returns ``respond``'s answer, or the parked produce's result to wait on."""
        statuses = [self._append_to_local_log(*entry, required_acks) for entry in entries]
        if required_acks in (0, 1) or not any(s.pending for s in statuses):
            return respond(statuses)
        delayed = DelayedProduce(timeout_ms, required_acks, statuses, self.check_produce, respond)
        self.produce_purgatory.try_complete_else_watch(delayed, delayed.watch_keys())
        return delayed.result

    def _append_to_local_log(self, topic: str, partition: int, message_set: Any, acks: int) -> ProduceStatus:
        """One partition of ``append_messages`` (the log converts the set to its message format): its status,
        errors as codes; an OSError (the broker halted) propagates."""
        try:
            partition_log = self.leader_log(topic, partition)
            info = self._append_as_leader(topic, partition, partition_log, message_set, acks)
            waits = acks not in (0, 1)
            start = partition_log.log_start
            stamp = info.log_append_time
            return ProduceStatus(topic, partition, 0, info.first_offset, info.next_offset, waits, start, stamp)
        except KafkaError as exc:
            log.debug("produce to %s-%d: %s", topic, partition, exc)
            return ProduceStatus(topic, partition, error_code(exc), -1, -1, False)
        except OSError:
            raise
        except Exception:
            log.exception("produce to %s-%d failed", topic, partition)
            return ProduceStatus(topic, partition, ErrorCode.UNKNOWN, -1, -1, False)

    def _append_as_leader(
        self, topic: str, partition: int, partition_log: Any, message_set: bytes | memoryview, acks: int
    ) -> Any:
        """Append to ``partition_log``, the log this broker leads (offsets assigned here); the LogAppendInfo.
        With ``acks`` -1 and an ISR smaller than ``min.insync.replicas`` nothing is appended
        (NotEnoughReplicas). An I/O error halts."""
        hosted = self._partitions[(topic, partition)]
        if acks < 0:
            needed = self.min_insync_replicas(topic)
            if len(hosted.isr) < needed:
                raise NotEnoughReplicasError(
                    f"{topic}-{partition} has {len(hosted.isr)} in-sync replica(s) {list(hosted.isr)},"
                    f" fewer than min.insync.replicas {needed}"
                )
        try:
            info = partition_log.append(message_set, flush_due=False, leader_epoch=hosted.leader_epoch)
            if info.count:
                # Readers and waiting requests see the new high watermark before a due fsync runs.
                moved = hosted.maybe_increment_high_watermark()
                self.fetch_purgatory.check_and_complete_soon(hosted.key)  # after the appends read with it
                if moved:
                    self.try_complete_delayed_produce(hosted.key)
                partition_log.flush_if_due()
        except OSError as exc:
            if self.on_log_failure is not None:
                self.on_log_failure(exc)
            raise
        return info

    def check_produce(self, topic: str, partition: int, required_offset: int, acks: int) -> tuple[bool, int]:
        """Whether a produce waiting for ``acks`` up to ``required_offset`` is done, and its error code."""
        hosted = self._partitions.get((topic, partition))
        if hosted is None:
            return True, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return hosted.replicas_reached(required_offset, acks, self.min_insync_replicas(topic))

    def record_follower_fetch(self, replica_id: int, fetches: Iterable[tuple[str, int, int, int]]) -> None:
        """A follower fetched from these offsets: its LEO, then maybe a bigger ISR and a higher HW."""
        now = self._time_ms()
        for topic, partition, offset, _ in fetches:
            hosted = self._partitions.get((topic, partition))
            if hosted is None or not hosted.is_leader:
                continue
            moved = hosted.update_follower(replica_id, offset, now)
            expanded = hosted.isr_to_expand(replica_id)
            if expanded is not None and not hosted.isr_updating:
                expand_isr(hosted, expanded, self.isr_writer)
            if hosted.maybe_increment_high_watermark():
                self.try_complete_delayed_fetch(hosted.key)
                self.try_complete_delayed_produce(hosted.key)
            elif moved:
                self.try_complete_delayed_produce(hosted.key)

    def shrink_isrs(self) -> int:
        """Take stuck and slow followers out of every led ISR (ZooKeeper first); returns the ISRs shrunk."""
        shrunk = 0
        now = self._time_ms()
        for hosted in self.partitions():
            isr = hosted.isr_to_shrink(now, self.lag_time_ms, self.lag_max_messages)
            if isr is None or hosted.isr_updating or not shrink_isr(hosted, isr, self.isr_writer):
                continue
            shrunk += 1
            hosted.maybe_increment_high_watermark()
            self.try_complete_delayed_fetch(hosted.key)
            self.try_complete_delayed_produce(hosted.key)
        return shrunk

    # -- follower side (the fetchers) ---------------------------------------------------------------------

    def append_as_follower(self, topic: str, partition: int, message_set: Any, leader_hw: int) -> int:
        hosted = self._partitions.get((topic, partition))
        if hosted is None or hosted.is_leader:
            raise NotLeaderForPartitionError(f"{topic}-{partition} is not followed here")
        try:
            hosted.appending_as_follower(message_set)
            hosted.log.append(message_set, assign_offsets=False)
        except OSError as exc:
            if self.on_log_failure is not None:
                self.on_log_failure(exc)
            raise
        hosted.follower_high_watermark(leader_hw)
        return hosted.log_end_offset

    def truncate_follower(self, topic: str, partition: int, offset: int, *, restart: bool = False) -> int:
        hosted = self._partitions[(topic, partition)]
        if restart:
            hosted.log.truncate_fully_and_start_at(offset)
        else:
            hosted.log.truncate_to(offset)
        hosted.truncated(restart)
        return hosted.log_end_offset

    # -- high watermark checkpoints ------------------------------------------------------------------------

    def _read_high_watermarks(self) -> dict[TopicPartition, int]:
        offsets: dict[TopicPartition, int] = {}
        for log_dir in self.log_manager.log_dirs:
            offsets.update(OffsetCheckpoint(os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT)).read())
        return offsets

    def checkpoint_high_watermarks(self) -> None:
        """Write every log directory's ``replication-offset-checkpoint`` (on the log manager's disk pool)."""
        by_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in self.log_manager.log_dirs}
        for tp, hosted in list(self._partitions.items()):
            log_dir = self.log_manager.log_dir_of(*tp)
            if log_dir is not None:
                by_dir[log_dir][tp] = hosted.high_watermark
        for log_dir, offsets in by_dir.items():
            self.log_manager.write_checkpoint(log_dir, REPLICATION_OFFSET_CHECKPOINT, offsets)

    def shutdown(self) -> None:
        """Stop the fetchers and checkpoint the high watermarks."""
        self.fetchers.shutdown()
        self.checkpoint_high_watermarks()
