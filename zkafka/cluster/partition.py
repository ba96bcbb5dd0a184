"""Partition: one replicated partition hosted on this broker, as 0.8.2's ``cluster.Partition`` keeps it.

Pure bookkeeping, no sockets and no ZooKeeper (the replica manager writes ISR changes and feeds the clock):

- the controller's word: leader, leader epoch, ISR, assigned replicas, controller epoch and the state
  znode's version, taken from LeaderAndIsr (``make_leader`` / ``make_follower``);
- as leader, each follower's log end offset (LEO) and when it last fetched; the ISR grows with a follower
  whose LEO reached the high watermark (``isr_to_expand``) and shrinks by followers stuck for
  ``replica.lag.time.max.ms`` or more than ``replica.lag.max.messages`` behind (``isr_to_shrink``);
- the high watermark (HW): as leader the smallest LEO of the ISR (leader included), never decreasing, and
  unknown follower offsets hold it where it is; as follower min(own LEO, the leader's HW). Consumers read
  below it (``visible_end`` of the log);
- ``replicas_reached``: whether a produce waiting for ``acks`` has what it needs (§9.3);
- the leader epoch cache (log/leader_epoch_cache.py): a new leader's epoch starts at its LEO, a follower takes
  each epoch from the record batches it appends (the leader's epoch at the first offset it appends, for
  magic 0/1), and after a leader change the follower truncates where the leader says its own latest epoch ends (``epoch_truncation_offset``, KIP-101/KIP-279).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zkafka.log.leader_epoch_cache import UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from zkafka.protocol.errors import ErrorCode
from zkafka.records.record_batch import stamped_epochs
from zkafka.zk.paths08 import NO_LEADER, PartitionState

logger = logging.getLogger(__name__)

UNKNOWN_OFFSET = -1


@dataclass
class FollowerState:
    """What the leader knows of one follower: its log end offset (-1 unknown) and when it last fetched."""

    log_end_offset: int
    updated_ms: int


class Partition:
    """One partition's replication state on this broker (leader, follower, or neither after StopReplica)."""

    def __init__(
        self,
        topic: str,
        partition: int,
        broker_id: int,
        log: Any,
        high_watermark: int = 0,
        epochs: LeaderEpochCache | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.broker_id = broker_id
        self.log = log
        self.leader = NO_LEADER
        self.leader_epoch = -1
        self.controller_epoch = -1
        self.zk_version = -1
        self.replicas: tuple[int, ...] = ()
        self.isr: tuple[int, ...] = ()
        self.isr_updating = False  # an ISR write to ZooKeeper is under way
        self._followers: dict[int, FollowerState] = {}
        self.epochs = epochs if epochs is not None else LeaderEpochCache(None)
        self.epochs.truncate_from_end(log.log_end_offset)  # recovery may have cut the log
        if high_watermark > log.log_end_offset:  # Kafka 0.8.2 takes the log end offset then
            logger.warning(
                "partition [%s,%d]: the high watermark %d in replication-offset-checkpoint is past the log end"
                " offset %d; using %d",
                topic,
                partition,
                high_watermark,
                log.log_end_offset,
                log.log_end_offset,
            )
        self._high_watermark = max(0, min(high_watermark, log.log_end_offset))
        log.set_visible_end(lambda _log: self._high_watermark)

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    @property
    def is_leader(self) -> bool:
        return self.leader == self.broker_id

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic}-{self.partition}, leader {self.leader}, epoch {self.leader_epoch},"
            f" ISR {list(self.isr)}, HW {self._high_watermark}, LEO {self.log_end_offset})"
        )

    # -- the controller's word ------------------------------------------------------------------------------

    def _take(self, leader: int, state: Any, replicas: Sequence[int]) -> None:
        self.leader = leader
        self.leader_epoch = state.leader_epoch
        self.controller_epoch = state.controller_epoch
        self.zk_version = state.zk_version
        self.replicas = tuple(replicas)
        self.isr = tuple(state.isr)

    def make_leader(self, state: Any, replicas: Sequence[int], now_ms: int) -> None:
        """Lead with the given ISR; followers' offsets are unknown until they fetch (``state`` carries
        ``leader_epoch``, ``controller_epoch``, ``isr`` and ``zk_version``)."""
        self._take(self.broker_id, state, replicas)
        self.epochs.assign(self.leader_epoch, self.log_end_offset)
        self._followers = {
            r: FollowerState(UNKNOWN_OFFSET, now_ms) for r in self.replicas if r != self.broker_id
        }
        self.maybe_increment_high_watermark()

    def make_follower(self, state: Any, replicas: Sequence[int]) -> bool:
        """Follow ``state.leader``; True when the leader changed (the log must then be truncated: by epoch, or
        to the HW)."""
        changed = state.leader != self.leader
        self._take(state.leader, state, replicas)
        self._followers = {}
        return changed

    def stop(self) -> None:
        """StopReplica: neither lead nor follow (epochs kept, so only a newer LeaderAndIsr applies)."""
        self.leader = NO_LEADER
        self._followers = {}

    def isr_written(self, isr: Sequence[int], zk_version: int) -> None:
        """The state znode now holds ``isr`` at version ``zk_version``."""
        self.isr = tuple(isr)
        self.zk_version = zk_version

    def state_with_isr(self, isr: Sequence[int]) -> PartitionState:
        """The state znode content this leader writes for a new ISR."""
        return PartitionState(self.broker_id, self.leader_epoch, tuple(isr), self.controller_epoch)

    # -- leader side --------------------------------------------------------------------------------------------

    def update_follower(self, replica_id: int, log_end_offset: int, now_ms: int) -> bool:
        """A follower fetched from ``log_end_offset``; True if that moved its known LEO."""
        follower = self._followers.get(replica_id)
        if follower is None or not self.is_leader:
            return False
        moved = follower.log_end_offset != log_end_offset
        follower.log_end_offset = log_end_offset
        follower.updated_ms = now_ms
        return moved

    def follower_log_end_offset(self, replica_id: int) -> int:
        follower = self._followers.get(replica_id)
        return follower.log_end_offset if follower else UNKNOWN_OFFSET

    def isr_to_expand(self, replica_id: int) -> tuple[int, ...] | None:
        """The ISR with ``replica_id`` added, if it is an assigned follower out of the ISR that reached the HW."""
        if not self.is_leader or replica_id in self.isr or replica_id not in self._followers:
            return None
        if self._followers[replica_id].log_end_offset < self._high_watermark:
            return None
        return (*self.isr, replica_id)

    def isr_to_shrink(self, now_ms: int, lag_time_ms: int, lag_max_messages: int) -> tuple[int, ...] | None:
        """The ISR without the followers stuck (no fetch for ``lag_time_ms``) or slow (more than
        ``lag_max_messages`` behind the leader's LEO); None when nobody leaves."""
        if not self.is_leader:
            return None
        leo = self.log_end_offset
        out = set()
        for replica_id in self.isr:
            follower = self._followers.get(replica_id)
            if replica_id == self.broker_id or follower is None:
                continue
            stuck = now_ms - follower.updated_ms > lag_time_ms
            slow = follower.log_end_offset >= 0 and leo - follower.log_end_offset > lag_max_messages
            if stuck or slow:
                out.add(replica_id)
        if not out:
            return None
        return tuple(r for r in self.isr if r not in out)

    def maybe_increment_high_watermark(self) -> bool:
        """As leader: HW := the smallest LEO of the ISR if that is higher; True if it moved."""
        if not self.is_leader:
            return False
        ends = [self.log_end_offset]
        for replica_id in self.isr:
            if replica_id != self.broker_id:
                ends.append(self.follower_log_end_offset(replica_id))
        new = min(ends)
        if new > self._high_watermark:
            self._high_watermark = new
            return True
        return False

    def replicas_reached(self, required_offset: int, acks: int, min_insync_replicas: int) -> tuple[bool, int]:
        """Whether a produce that needs offsets below ``required_offset`` on ``acks`` replicas (-1: the ISR,
        through the HW) is done, and with which error code."""
        if not self.is_leader:
            return True, ErrorCode.NOT_LEADER_FOR_PARTITION
        if acks < 0:
            if self._high_watermark < required_offset:
                return False, ErrorCode.NONE
            if len(self.isr) < min_insync_replicas:
                return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, ErrorCode.NONE
        reached = sum(
            1
            for r in self.isr
            if (self.log_end_offset if r == self.broker_id else self.follower_log_end_offset(r))
            >= required_offset
        )
        return reached >= acks, ErrorCode.NONE

    # -- follower side ------------------------------------------------------------------------------------------

    def follower_high_watermark(self, leader_high_watermark: int) -> None:
        """As follower: HW := min(own LEO, the leader's HW)."""
        self._high_watermark = max(0, min(self.log_end_offset, leader_high_watermark))

    def appending_as_follower(self, message_set: Any) -> None:
        """``message_set`` from the leader is about to be appended: each record batch newer than our latest
        epoch starts its epoch (Kafka's ``appendAsFollower``); a set without stamped batches (magic 0/1 logs)
        is counted in the leader's epoch (an approximation for a follower catching up across epochs)."""
        stamped = list(stamped_epochs(message_set))
        for epoch, start_offset in stamped:
            if epoch > self.epochs.latest_epoch:
                self.epochs.assign(epoch, start_offset)
        if not stamped and len(message_set):
            self.epochs.assign(self.leader_epoch, self.log_end_offset)

    def epoch_truncation_offset(self, leader_epoch: int, leader_end_offset: int) -> int:
        """Where to truncate after the leader answered OffsetForLeaderEpoch for our latest epoch with
        ``(leader_epoch, leader_end_offset)``: min(its end, where that epoch ends here, our LEO) (KIP-279); the
        HW when the leader knows no end."""
        if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
            return self._high_watermark
        _, own_end = self.epochs.end_offset_for(leader_epoch, self.log_end_offset)
        if own_end == UNDEFINED_EPOCH_OFFSET:
            own_end = self.log_end_offset
        return max(0, min(leader_end_offset, own_end, self.log_end_offset))

    def truncated(self, restart: bool = False) -> None:
        """The log was truncated (``restart``: emptied): the HW cannot lie past its end, nor epochs start there."""
        self._high_watermark = min(self._high_watermark, self.log_end_offset)
        if restart:
            self.epochs.clear()
        self.epochs.truncate_from_end(self.log_end_offset)
