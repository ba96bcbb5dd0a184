"""What a fetch reads from the partitions led here (0.8-line only): 0.9's ``ReplicaManager.readFromLocalLog``
and its ``LogReadResult``.

Consumers (replica id < 0) read below the high watermark, followers up to the log end; a partition not led
here answers its error code (NOT_LEADER_FOR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION) with high watermark -1.
The Fetch handler reads with it, and so does a DelayedFetch to check whether it can complete and to answer.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any, NamedTuple

from zkafka.errors import KafkaError
from zkafka.network.send import FileRegion
from zkafka.records.convert import down_convert
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)

Fetch = tuple[str, int, int, int]  # topic, partition, fetch offset, max bytes


class PartitionRead(NamedTuple):
    """What a fetch reads from one partition: an error code, the high watermark and the bytes' region.

    ``region`` is a log region (segment, position, length) or None when nothing is returned; ``behind`` says
    the region lies in an older segment than the log's last one; ``log_magic`` is the message format of a
    consumer's log (followers take the entries as they are: 0).
    """

    error: int
    high_watermark: int
    region: Any
    behind: bool = False
    log_magic: int = 0

    @property
    def size(self) -> int:
        return self.region.length if self.region is not None else 0


def read_partition(
    replicas: ReplicaManager, topic: str, partition: int, offset: int, max_bytes: int, replica_id: int
) -> PartitionRead:
    """One partition of a fetch. Errors come back as codes with high watermark -1."""
    try:
        partition_log = replicas.leader_log(topic, partition)
        high_watermark = replicas.high_watermark(partition_log)
        max_offset = high_watermark if replica_id < 0 else partition_log.log_end_offset
        region = partition_log.read(offset, max_bytes, max_offset)
        if region is None or not region.length:
            return PartitionRead(0, high_watermark, None)
        behind = region.segment is not partition_log.segments[-1]
        magic = partition_log.config.message_format_magic if replica_id < 0 else 0
        return PartitionRead(0, high_watermark, region, behind, magic)
    except KafkaError as exc:
        log.debug("fetch of %s-%d at %d: %s", topic, partition, offset, exc)
        return PartitionRead(error_code(exc), -1, None)
    except OSError as exc:
        log.error("fetch of %s-%d at %d failed: %s", topic, partition, offset, exc)
        return PartitionRead(error_code(exc), -1, None)


def read_from_local_log(
    replicas: ReplicaManager, fetches: Iterable[Fetch], replica_id: int
) -> list[PartitionRead]:
    """``read_partition`` for each ``(topic, partition, offset, max_bytes)``, in order."""
    return [
        read_partition(replicas, topic, partition, offset, max_bytes, replica_id)
        for topic, partition, offset, max_bytes in fetches
    ]


def max_magic(fetch_version: int) -> int:
    """The newest message format a Fetch of ``fetch_version`` reads: v0-v1 magic 0, v2-v3 magic 1, v4+ 2."""
    return 0 if fetch_version < 2 else 1 if fetch_version < 4 else 2


def records_for_fetch_version(read: PartitionRead, fetch_offset: int, fetch_version: int) -> tuple[int, Any]:
    """``(error, message set)`` a partition's read answers with: its region as a file region (sent with
    sendfile), or, for a log of a newer format than the request version reads, its entries converted down
    (``convert.down_convert``; a zstd batch below magic 2: UNSUPPORTED_COMPRESSION_TYPE, no records)."""
    region = read.region
    if read.log_magic <= max_magic(fetch_version):
        return read.error, FileRegion(os.dup(region.segment.fileno()), region.position, region.length)
    try:
        return read.error, down_convert(region.read(), max_magic(fetch_version), fetch_offset)
    except KafkaError as exc:
        log.debug("down-conversion of a fetch at %d: %s", fetch_offset, exc)
        return error_code(exc), b""
