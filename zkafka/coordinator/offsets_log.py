"""OffsetsLog: how the coordinator reads and writes the ``__consumer_offsets`` partitions this broker leads.

``append`` writes keyed records (uncompressed, as 0.9 writes them) through the replica manager as the leader
and returns an error code (0 when stored: with one replica an append is committed at once). ``read`` replays
a partition from its log start up to its high watermark in chunks of ``offsets.load.buffer.size``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zkafka.broker.replica_manager import ReplicaManager, error_code
from zkafka.coordinator.offsets_cache import Record
from zkafka.coordinator.offsets_schema import OFFSETS_TOPIC
from zkafka.errors import KafkaError
from zkafka.protocol.errors import ErrorCode
from zkafka.records.format08 import build_message_set, iter_messages


class OffsetsLog:
    """The offsets partitions' logs, seen through the replica manager."""

    def __init__(self, replica_manager: ReplicaManager, load_buffer_size: int = 5 * 1024 * 1024) -> None:
        self.replica_manager = replica_manager
        self.load_buffer_size = load_buffer_size

    def append(self, partition: int, records: list[Record]) -> int:
        """Append ``(key, value)`` records to offsets partition ``partition``; 0 or the error code."""
        try:
            self.replica_manager.append(OFFSETS_TOPIC, partition, build_message_set(records))
        except KafkaError as exc:
            return error_code(exc)
        except Exception:
            return ErrorCode.UNKNOWN
        return ErrorCode.NONE

    def read(self, partition: int) -> Iterator[Record]:
        """Every ``(key, value)`` of the partition below its high watermark, in offset order."""
        log: Any = self.replica_manager.leader_log(OFFSETS_TOPIC, partition)
        end = self.replica_manager.high_watermark(log)
        offset = log.log_start
        while offset < end:
            data = log.read(offset, self.load_buffer_size, end).read()
            start = offset
            for message in iter_messages(data, offset):
                if message.offset >= end:
                    return
                yield message.key, message.value
                offset = message.offset + 1
            if offset == start:
                if not data:
                    return  # nothing readable before the end (a gap left by compaction at the tail)
                raise KafkaError(
                    f"{OFFSETS_TOPIC}-{partition}: the entry at offset {offset} is larger than"
                    f" offsets.load.buffer.size ({self.load_buffer_size} bytes)"
                )
