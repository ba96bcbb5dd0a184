"""ReplicaManager: the partitions this broker leads, and appending to and reading from their logs.

This is the one-replica form of 0.8.2's ReplicaManager: a partition is led here when the cluster's partition
state names this broker as its leader (the server feeds that in from the metadata cache with
``update_leaders``), and its high watermark is its log end offset. A partition known to the cluster but led
elsewhere answers NOT_LEADER_FOR_PARTITION (6); one the cluster does not know answers
UNKNOWN_TOPIC_OR_PARTITION (3). Followers, ISR changes and a real high watermark are replication's (issue 12).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from zkafka.errors import (
    KafkaError,
    NotLeaderForPartitionError,
    UnknownTopicOrPartitionError,
    code_for_error,
)
from zkafka.protocol.errors import LAST_CODE

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


def error_code(exc: BaseException) -> int:
    """The 0.8 wire error code for an exception (every code up to 0.9's, unlike the 0.7 default)."""
    return code_for_error(exc, LAST_CODE)


AppendListener = Callable[[str, int], None]


class PartitionRead(NamedTuple):
    """What a fetch reads from one partition: an error code, the high watermark and the bytes' region.

    ``region`` is a log region (segment, position, length) or None when nothing is returned; ``behind`` says
    the region lies in an older segment than the log's last one.
    """

    error: int
    high_watermark: int
    region: Any
    behind: bool = False

    @property
    def size(self) -> int:
        return self.region.length if self.region is not None else 0


class ReplicaManager:
    """The partitions led by this broker and their logs (one replica each: HW = log end offset)."""

    def __init__(
        self,
        broker_id: int,
        log_manager: Any,
        *,
        on_append: AppendListener | None = None,
        on_log_failure: Callable[[OSError], None] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.log_manager = log_manager
        self.on_append = on_append
        self.on_log_failure = on_log_failure
        self._leaders: dict[TopicPartition, Any] = {}  # led here -> log
        self._known: dict[TopicPartition, int] = {}  # every partition of the cluster -> its leader id
        self._lock = threading.Lock()

    # -- which partitions are led here ------------------------------------------------------------------

    def update_leaders(self, leaders: Mapping[TopicPartition, int]) -> None:
        """Take the cluster's partitions with their leader ids (-1: none); open a log for each led here."""
        with self._lock:
            self._known = dict(leaders)
            led = {tp for tp, leader in leaders.items() if leader == self.broker_id}
            for tp in [tp for tp in self._leaders if tp not in led]:
                log.info("broker %d no longer leads %s-%d", self.broker_id, *tp)
                del self._leaders[tp]
            for tp in sorted(led - self._leaders.keys()):
                self._leaders[tp] = self._open_log(*tp)
                log.info("broker %d leads %s-%d", self.broker_id, *tp)

    def _open_log(self, topic: str, partition: int) -> Any:
        partition_log = self.log_manager.create_log(topic, partition)
        if self.on_append is not None:
            partition_log.add_listener(self._appended)
        return partition_log

    def _appended(self, partition_log: Any, info: Any) -> None:
        self.on_append(partition_log.topic, partition_log.partition)

    def led_partitions(self) -> list[TopicPartition]:
        return sorted(self._leaders)

    def leader_log(self, topic: str, partition: int) -> Any:
        """The log of a partition led here; UnknownTopicOrPartition or NotLeaderForPartition otherwise."""
        partition_log = self._leaders.get((topic, partition))
        if partition_log is not None:
            return partition_log
        if (topic, partition) in self._known:
            raise NotLeaderForPartitionError(
                f"broker {self.broker_id} is not the leader of {topic}-{partition}"
                f" (leader {self._known[(topic, partition)]})"
            )
        raise UnknownTopicOrPartitionError(f"{topic}-{partition} is not a partition of this cluster")

    def local_log(self, topic: str, partition: int) -> Any | None:
        """The log of a partition hosted here, led or not (None when there is none)."""
        return self._leaders.get((topic, partition)) or self.log_manager.get_log(topic, partition)

    @staticmethod
    def high_watermark(partition_log: Any) -> int:
        """What consumers may read up to: with one replica, the log end offset."""
        return partition_log.visible_end

    # -- produce and fetch ------------------------------------------------------------------------------

    def append(self, topic: str, partition: int, message_set: bytes | memoryview) -> Any:
        """Append as the leader (offsets assigned here); the LogAppendInfo. An I/O error halts the broker."""
        partition_log = self.leader_log(topic, partition)
        try:
            return partition_log.append(message_set)
        except OSError as exc:
            if self.on_log_failure is not None:
                self.on_log_failure(exc)
            raise

    def read(self, topic: str, partition: int, offset: int, max_bytes: int, replica_id: int) -> PartitionRead:
        """One partition of a fetch: consumers (replica_id < 0) read below the high watermark, followers
        up to the log end. Errors come back as codes with high watermark -1."""
        try:
            partition_log = self.leader_log(topic, partition)
            high_watermark = self.high_watermark(partition_log)
            max_offset = high_watermark if replica_id < 0 else None
            region = partition_log.read(offset, max_bytes, max_offset)
            if region is None or not region.length:
                return PartitionRead(0, high_watermark, None)
            return PartitionRead(0, high_watermark, region, region.segment is not partition_log.segments[-1])
        except KafkaError as exc:
            log.debug("fetch of %s-%d at %d: %s", topic, partition, offset, exc)
            return PartitionRead(error_code(exc), -1, None)
        except OSError as exc:
            log.error("fetch of %s-%d at %d failed: %s", topic, partition, offset, exc)
            return PartitionRead(error_code(exc), -1, None)

    def read_all(self, fetches: Iterable[tuple[str, int, int, int]], replica_id: int) -> list[PartitionRead]:
        """``read`` for each ``(topic, partition, offset, max_bytes)``, in order."""
        return [
            self.read(topic, partition, offset, max_bytes, replica_id)
            for topic, partition, offset, max_bytes in fetches
        ]
