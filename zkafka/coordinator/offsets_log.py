"""OffsetsLog: how the coordinator reads and writes the ``__consumer_offsets`` partitions this broker leads.

``append`` writes keyed records (uncompressed, as 0.9 writes them) through the replica manager as the leader.
With ``done``, the write waits as a Produce with ``offsets.commit.required.acks`` (-1: the whole ISR) does:
a DelayedProduce in the broker's produce purgatory, completed when the replicas have the records (the high
watermark passed them) or after ``offsets.commit.timeout.ms`` (REQUEST_TIMED_OUT); ``done(error code)`` runs
then, on the hub, or at once when nothing needs waiting for (acks 0 or 1, one in-sync replica, an error).
Without ``done`` only the leader's append happens (0.9 writes expiry and group tombstones so).

``read`` replays a partition from its log start in chunks of ``offsets.load.buffer.size`` up to its log end
offset, as later Kafka loads (0.9.0 stopped at the high watermark, which a new leader may only learn after its
followers' next fetch: records acknowledged by the old leader would be skipped). A new leader's log holds
everything its predecessor acknowledged, and its followers truncate to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from zkafka.coordinator.offsets_cache import Record
from zkafka.coordinator.offsets_schema import OFFSETS_TOPIC
from zkafka.errors import KafkaError
from zkafka.protocol.errors import ErrorCode
from zkafka.records.format08 import build_message_set, iter_messages
from zkafka.server.delayed_produce import DelayedProduce, ProduceStatus
from zkafka.server.purgatory import Purgatory
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)

Done = Callable[[int], Any]


class OffsetsLog:
    """The offsets partitions' logs, seen through the replica manager (and its produce purgatory)."""

    def __init__(
        self,
        replica_manager: ReplicaManager,
        load_buffer_size: int = 5 * 1024 * 1024,
        *,
        purgatory: Purgatory | None = None,
        required_acks: int = -1,
        timeout_ms: int = 5000,
    ) -> None:
        self.replica_manager = replica_manager
        self.load_buffer_size = load_buffer_size
        # Where waiting writes park: the broker's produce purgatory, woken as follower fetches move the HW.
        self.purgatory = purgatory if purgatory is not None else Purgatory("offsets-commit")
        self.required_acks = required_acks
        self.timeout_ms = timeout_ms

    def append(self, partition: int, records: list[Record], done: Done | None = None) -> None:
        """Append ``(key, value)`` records to offsets partition ``partition``; with ``done``, call
        ``done(error code)`` once they are replicated as ``offsets.commit.required.acks`` asks (0: stored)."""
        acks = self.required_acks if done is not None else 1
        try:
            info = self.replica_manager.append(OFFSETS_TOPIC, partition, build_message_set(records), acks)
        except KafkaError as exc:
            code = error_code(exc)
        except Exception:
            log.exception("append to %s-%d failed", OFFSETS_TOPIC, partition)
            code = ErrorCode.UNKNOWN
        else:
            if done is None:
                return
            status = ProduceStatus(
                OFFSETS_TOPIC, partition, 0, info.first_offset, info.next_offset, acks not in (0, 1)
            )
            delayed = DelayedProduce(
                self.timeout_ms,
                acks,
                [status],
                self.replica_manager.check_produce,
                lambda statuses: done(statuses[0].error),
            )
            self.purgatory.try_complete_else_watch(delayed, delayed.watch_keys())
            return
        if done is not None:
            done(code)
        else:
            log.warning("append to %s-%d failed: error %d", OFFSETS_TOPIC, partition, code)

    def read(self, partition: int) -> Iterator[Record]:
        """Every ``(key, value)`` of the partition up to its log end, in offset order."""
        log_: Any = self.replica_manager.leader_log(OFFSETS_TOPIC, partition)
        end = log_.log_end_offset
        offset = log_.log_start
        while offset < end:
            data = log_.read(offset, self.load_buffer_size, end).read()
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
