"""What a fetch reads from the partitions led here (0.8-line only): Kafka's ``ReplicaManager.readFromLocalLog``
and its ``LogReadResult``.

Consumers (replica id < 0) read below the high watermark, followers up to the log end; a partition not led
here answers its error code (NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION) with high watermark -1,
and so does a request naming another leader epoch than the partition's (Fetch v9+, KIP-320:
FENCED_LEADER_EPOCH for an older one, UNKNOWN_LEADER_EPOCH for a newer one; -1 names none).
From Fetch v3 (KIP-74) a fetch has a ``max_bytes`` for the whole answer, taken from the partitions in order,
and the first entry of the first partition with any is returned whole even if larger than the limits; before
v3 every partition is cut at its own ``max_bytes`` (a trailing partial message, as 0.8 does). A consumer's fetch
quota caps the whole answer at what the quota's windows take at once (Kafka 2.6+, KAFKA-9677): an answer
larger would be throttled whatever came before, and answered empty every time.
The Fetch handler reads with it, and so does a DelayedFetch to check whether it can complete and to answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, NamedTuple

from zkafka.errors import FencedLeaderEpochError, KafkaError, UnknownLeaderEpochError
from zkafka.network.send import FileRegion
from zkafka.records.convert import down_convert
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)

Fetch = tuple[str, int, int, int]  # topic, partition, fetch offset, max bytes
NO_EPOCH = -1
NO_LIMIT = 2**31 - 1


class PartitionRead(NamedTuple):
    """What a fetch reads from one partition: an error code, the high watermark and the bytes' region.

    ``region`` is a log region (segment, position, length) or None when nothing is returned; ``behind`` says
    the region lies in an older segment than the log's last one; ``log_magic`` is the message format of a
    consumer's log (followers take the entries as they are: 0); ``fetch_offset`` the offset read from.
    """

    error: int
    high_watermark: int
    region: Any
    behind: bool = False
    log_magic: int = 0
    log_start_offset: int = -1
    fetch_offset: int = -1

    @property
    def size(self) -> int:
        return self.region.length if self.region is not None else 0


def check_leader_epoch(
    replicas: ReplicaManager, topic: str, partition: int, current_leader_epoch: int
) -> None:
    """Raise FencedLeaderEpoch / UnknownLeaderEpoch when the request names another epoch than the hosted
    partition's (``NO_EPOCH``: no check)."""
    if current_leader_epoch == NO_EPOCH:
        return
    hosted = replicas.partition(topic, partition)
    if hosted is None:
        return  # leader_log says what is wrong
    if current_leader_epoch < hosted.leader_epoch:
        raise FencedLeaderEpochError(
            f"{topic}-{partition}: epoch {current_leader_epoch} < {hosted.leader_epoch}"
        )
    if current_leader_epoch > hosted.leader_epoch:
        raise UnknownLeaderEpochError(
            f"{topic}-{partition}: epoch {current_leader_epoch} > {hosted.leader_epoch}"
        )


def read_partition(
    replicas: ReplicaManager,
    topic: str,
    partition: int,
    offset: int,
    max_bytes: int,
    replica_id: int,
    *,
    current_leader_epoch: int = NO_EPOCH,
    min_one_message: bool = False,
) -> PartitionRead:
    """One partition of a fetch. Errors come back as codes with high watermark -1. With ``min_one_message``
    the first entry is returned whole even if larger than ``max_bytes``."""
    try:
        check_leader_epoch(replicas, topic, partition, current_leader_epoch)
        partition_log = replicas.leader_log(topic, partition)
        high_watermark = replicas.high_watermark(partition_log)
        log_start = partition_log.log_start
        max_offset = high_watermark if replica_id < 0 else partition_log.log_end_offset
        region = partition_log.read(offset, max_bytes, max_offset)
        if min_one_message and region is not None and region.length == max_bytes:
            first = _first_entry_size(region.segment, region.position)
            if first > max_bytes:
                region = partition_log.read(offset, first, max_offset)
        if region is None or not region.length:
            return PartitionRead(0, high_watermark, None, log_start_offset=log_start)
        behind = region.segment is not partition_log.segments[-1]
        magic = partition_log.config.message_format_magic if replica_id < 0 else 0
        return PartitionRead(0, high_watermark, region, behind, magic, log_start, offset)
    except KafkaError as exc:
        log.debug("fetch of %s-%d at %d: %s", topic, partition, offset, exc)
        return PartitionRead(error_code(exc), -1, None)
    except OSError as exc:
        log.error("fetch of %s-%d at %d failed: %s", topic, partition, offset, exc)
        return PartitionRead(error_code(exc), -1, None)


def _first_entry_size(segment: Any, position: int) -> int:
    """The size of the whole entry at ``position`` of ``segment`` (0 when there is none)."""
    for _, _, size in segment.entries_from(position):
        return size
    return 0


def read_from_local_log(
    replicas: ReplicaManager,
    fetches: Iterable[Fetch],
    replica_id: int,
    max_bytes: int | None = None,
    leader_epochs: Iterable[int] | None = None,
    hard_limit: int | None = None,
) -> list[PartitionRead]:
    """``read_partition`` for each ``(topic, partition, offset, max_bytes)``, in order. ``max_bytes`` (Fetch
    v3+, None before) limits the whole answer (KIP-74); ``leader_epochs``: each partition's requested
    ``current_leader_epoch`` (v9+); ``hard_limit``: a limit on the whole answer before v3, which even its
    first message does not pass (a consumer's fetch quota; Kafka's ``hardMaxBytesLimit``)."""
    fetches = list(fetches)
    epochs = list(leader_epochs) if leader_epochs is not None else [NO_EPOCH] * len(fetches)
    limit = NO_LIMIT if max_bytes is None else max(0, max_bytes)
    min_one_message = max_bytes is not None
    if hard_limit is not None:
        limit = min(limit, max(0, hard_limit))
    reads = []
    for (topic, partition, offset, partition_max), epoch in zip(fetches, epochs, strict=True):
        read = read_partition(
            replicas,
            topic,
            partition,
            offset,
            min(partition_max, limit),
            replica_id,
            current_leader_epoch=epoch,
            min_one_message=min_one_message,
        )
        if read.size:
            min_one_message = False
            if limit < NO_LIMIT:
                limit = max(0, limit - read.size)
        reads.append(read)
    return reads


def max_magic(fetch_version: int) -> int:
    """The newest message format a Fetch of ``fetch_version`` reads: v0-v1 magic 0, v2-v3 magic 1, v4+ 2."""
    return 0 if fetch_version < 2 else 1 if fetch_version < 4 else 2


def records_for_fetch_version(read: PartitionRead, fetch_offset: int, fetch_version: int) -> tuple[int, Any]:
    """``(error, message set)`` a partition's read answers with: its region as a file region (sent with
    sendfile), or, for a log of a newer format than the request version reads, its entries converted down
    (``convert.down_convert``; a zstd batch below magic 2: UNSUPPORTED_COMPRESSION_TYPE, no records)."""
    region = read.region
    if read.log_magic <= max_magic(fetch_version):
        segment = region.segment
        return read.error, FileRegion(segment.retain_fd(), region.position, region.length, segment)
    try:
        return read.error, down_convert(region.read(), max_magic(fetch_version), fetch_offset)
    except KafkaError as exc:
        log.debug("down-conversion of a fetch at %d: %s", fetch_offset, exc)
        return error_code(exc), b""
