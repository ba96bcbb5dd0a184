"""OffsetsLog: how the coordinator reads and writes the ``__consumer_offsets`` partitions this broker leads.

``append`` writes keyed records (uncompressed, as 0.9 writes them) through the replica manager as the leader
(``ReplicaLog.append_messages``, 0.9's ``ReplicaManager.appendMessages``, the same call a Produce makes).
With ``done``, the write waits as a Produce with ``offsets.commit.required.acks`` (-1: the whole ISR) does:
parked in the broker's produce purgatory until the replicas have the records (the high watermark passed them)
or ``offsets.commit.timeout.ms`` passed (REQUEST_TIMED_OUT); ``done(error code)`` runs then, on the hub, or
at once when nothing needs waiting for (acks 0 or 1, one in-sync replica, an error). Without ``done`` only
the leader's append happens (0.9 writes expiry and group tombstones so).

``read`` replays a partition from its log start in chunks of ``offsets.load.buffer.size`` up to its log end
offset, as later Kafka loads (0.9.0 stopped at the high watermark, which a new leader may only learn after its
followers' next fetch: records acknowledged by the old leader would be skipped). A new leader's log holds
everything its predecessor acknowledged, and its followers truncate to it.

The replica manager is injected (``ReplicaLog``): the coordinator package imports nothing from server/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from zkafka.coordinator.offsets_cache import Record
from zkafka.errors import KafkaError
from zkafka.protocol.errors import ErrorCode
from zkafka.records.down_convert import MAGIC_AT, to_magic0
from zkafka.records.format08 import LOG_OVERHEAD, build_message_set, iter_messages
from zkafka.records.record_batch import MAGIC as BATCH_MAGIC
from zkafka.records.record_batch import read_batch
from zkafka.topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

Done = Callable[[int], Any]


class AppendStatus(Protocol):
    """One partition's outcome of an append: its error code (0: stored as asked)."""

    error: int


class ReplicaLog(Protocol):
    """What the offsets log needs of the broker's replica manager (server/replica_manager.py)."""

    def append_messages(
        self,
        timeout_ms: int,
        required_acks: int,
        entries: Iterable[tuple[str, int, Any]],
        respond: Callable[[Sequence[AppendStatus]], Any],
    ) -> Any:
        """Append ``(topic, partition, message set)`` entries as the leader; ``respond(statuses)`` once
        ``required_acks`` replicas have them (or ``timeout_ms`` passed)."""

    def leader_log(self, topic: str, partition: int) -> Any:
        """The log of a partition led here (NotLeaderForPartition or UnknownTopicOrPartition otherwise)."""


class OffsetsLog:
    """The offsets partitions' logs, seen through the replica manager (and its produce purgatory)."""

    def __init__(
        self,
        replica_manager: ReplicaLog,
        load_buffer_size: int = 5 * 1024 * 1024,
        *,
        required_acks: int = -1,
        timeout_ms: int = 5000,
    ) -> None:
        self.replica_manager = replica_manager
        self.load_buffer_size = load_buffer_size
        self.required_acks = required_acks
        self.timeout_ms = timeout_ms

    def append(self, partition: int, records: list[Record], done: Done | None = None) -> None:
        """Append ``(key, value)`` records to offsets partition ``partition``; with ``done``, call
        ``done(error code)`` once they are replicated as ``offsets.commit.required.acks`` asks (0: stored)."""
        acks = self.required_acks if done is not None else 1

        def finish(code: int) -> None:  # never raises: a failing ``done`` is logged, as a delayed produce's is
            if done is None:
                if code:
                    log.warning("append to %s-%d failed: error %d", OFFSETS_TOPIC, partition, code)
                return
            try:
                done(code)
            except Exception as exc:
                log.warning("append to %s-%d: its callback failed: %s", OFFSETS_TOPIC, partition, exc)

        try:
            entry = (OFFSETS_TOPIC, partition, build_message_set(records))
            self.replica_manager.append_messages(
                self.timeout_ms, acks, [entry], lambda statuses: finish(statuses[0].error)
            )
        except Exception:  # an OSError: the replica manager halted the broker
            log.exception("append to %s-%d failed", OFFSETS_TOPIC, partition)
            finish(ErrorCode.UNKNOWN)

    def read(self, partition: int) -> Iterator[Record]:
        """Every ``(key, value)`` of the partition up to its log end, in offset order."""
        log_: Any = self.replica_manager.leader_log(OFFSETS_TOPIC, partition)
        end = log_.log_end_offset
        offset = log_.log_start
        while offset < end:
            data = log_.read(offset, self.load_buffer_size, end).read()
            start = offset
            for at, key, value in log_records(data, offset):
                if at >= end:
                    return
                yield key, value
                offset = at + 1
            if offset == start:
                if not data:
                    return  # nothing readable before the end (a gap left by compaction at the tail)
                raise KafkaError(
                    f"{OFFSETS_TOPIC}-{partition}: the entry at offset {offset} is larger than"
                    f" offsets.load.buffer.size ({self.load_buffer_size} bytes)"
                )


def log_records(data: bytes, start_offset: int) -> Iterator[tuple[int, bytes | None, bytes | None]]:
    """``(offset, key, value)`` of every message from ``start_offset`` in a read of the offsets log, whatever
    format each entry has (``log.message.format.version``: messages of magic 0 or 1, record batches; a log
    upgraded in place holds several); a partial entry at the end is left out."""
    pos = 0
    while len(data) - pos > MAGIC_AT:
        end = pos + LOG_OVERHEAD + int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        if end > len(data) or end <= pos + MAGIC_AT:
            return
        magic = data[pos + MAGIC_AT]
        if magic == BATCH_MAGIC:
            entries = ((r.offset, r.key, r.value) for r in read_batch(data, pos).records)
        else:
            entry = data[pos:end] if magic == 0 else to_magic0(data[pos:end])
            entries = ((m.offset, m.key, m.value) for m in iter_messages(entry, start_offset))
        yield from ((at, key, value) for at, key, value in entries if at >= start_offset)
        pos = end

