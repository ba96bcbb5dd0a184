"""The producer state of one partition (KIP-98 idempotence, no transactions), as Kafka 2.2's
``ProducerStateManager``: for each producer id its epoch and its last five batches (first and last sequence,
first and last offset, max timestamp).

A leader checks each idempotent batch (producer id >= 0) before appending it (``analyze``), in Kafka 2.2's
order: an epoch older than the producer's INVALID_PRODUCER_EPOCH (47); a batch with the same epoch and
sequence range as one of the five kept is a duplicate (``Duplicate``: the caller appends nothing and answers
the kept batch's offsets, as a 2.x broker answers NONE); a new epoch must start at sequence 0 (else
OUT_OF_ORDER_SEQUENCE_NUMBER, 45, or UNKNOWN_PRODUCER_ID, 59, for a producer the partition has no state for);
the same epoch must continue at the last sequence + 1 (wrapping to 0 after int32's maximum; else 45). A
follower replays the leader's batches without checks (``client=False``) and so keeps the same state.

Snapshots (``<offset>.snapshot``, the state of every offset below ``offset``) keep each producer's last batch
in Kafka's layout: version int16 = 1, crc uint32 (CRC-32C of what follows), then an int32 count of entries
{producer_id int64, epoch int16, last_sequence int32, last_offset int64, offset_delta int32, timestamp int64,
coordinator_epoch int32, current_txn_first_offset int64}. Pure: batches and bytes in, state out.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any, NamedTuple

from crc32c import crc32c

from zkafka.errors import (
    InvalidMessageError,
    InvalidProducerEpochError,
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
)
from zkafka.records.record_batch import (
    MAGIC,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    batch_spans,
    read_batch_header,
)
from zkafka.utils.java import INT32_MAX

NUM_BATCHES_TO_RETAIN = 5
SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
DEFAULT_EXPIRATION_MS = (
    7 * 24 * 3600 * 1000
)  # transactional.id.expiration.ms: 2.x expires producer ids with it

_SNAPSHOT_HEADER = struct.Struct(">hIi")
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
_MAGIC_AT = 16
_PRODUCER_ID = struct.Struct(">q")
_PRODUCER_ID_AT = 43
_NO_COORDINATOR_EPOCH = -1
_NO_TXN_OFFSET = -1


class BatchMetadata(NamedTuple):
    """One batch a producer appended: its sequence range, its offsets and its max timestamp."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


class ProducerBatch(NamedTuple):
    """What the producer state needs of one idempotent record batch."""

    producer_id: int
    epoch: int
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    max_timestamp: int

    @property
    def metadata(self) -> BatchMetadata:
        return BatchMetadata(
            self.first_seq, self.last_seq, self.first_offset, self.last_offset, self.max_timestamp
        )


class Duplicate(NamedTuple):
    """A batch the partition already holds: the kept batch whose offsets the produce is answered with."""

    batch: BatchMetadata


class ProducerStateEntry(NamedTuple):
    """One producer's epoch and its last batches, oldest first (at most five)."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    batches: tuple[BatchMetadata, ...] = ()

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def last_timestamp(self) -> int:
        return self.batches[-1].timestamp if self.batches else -1

    def duplicate_of(self, batch: ProducerBatch) -> BatchMetadata | None:
        """The kept batch with ``batch``'s epoch and exact sequence range, if any."""
        if batch.epoch != self.epoch:
            return None
        for kept in self.batches:
            if (kept.first_seq, kept.last_seq) == (batch.first_seq, batch.last_seq):
                return kept
        return None

    def with_batch(self, batch: ProducerBatch) -> ProducerStateEntry:
        """This entry after ``batch``: a new epoch forgets the old epoch's batches."""
        kept = self.batches if batch.epoch == self.epoch else ()
        return ProducerStateEntry(
            self.producer_id, batch.epoch, (*kept, batch.metadata)[-NUM_BATCHES_TO_RETAIN:]
        )


def producer_batches(data: Any) -> list[ProducerBatch]:
    """The idempotent batches (producer id >= 0) of ``data``, a set of record batches with their offsets; a
    set of older messages has none."""
    if len(data) <= _MAGIC_AT or data[_MAGIC_AT] != MAGIC:
        return []
    found = []
    for pos, _ in batch_spans(data):
        if _PRODUCER_ID.unpack_from(data, pos + _PRODUCER_ID_AT)[0] == NO_PRODUCER_ID:
            continue  # most batches: read no further
        h = read_batch_header(data, pos)
        if h.has_producer_id:
            found.append(
                ProducerBatch(
                    h.producer_id,
                    h.producer_epoch,
                    h.base_sequence,
                    h.last_sequence,
                    h.base_offset,
                    h.last_offset,
                    h.max_timestamp,
                )
            )
    return found


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """Whether ``next_seq`` follows ``last_seq`` (after int32's maximum comes 0)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class ProducerStateManager:
    """The producer ids of one partition and what each last appended."""

    def __init__(self, partition: str, expiration_ms: int = DEFAULT_EXPIRATION_MS) -> None:
        self.partition = partition
        self.expiration_ms = expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}

    def analyze(
        self, batches: Iterable[ProducerBatch], *, client: bool = True
    ) -> dict[int, ProducerStateEntry] | Duplicate:
        """The entries ``batches`` leave, checked when they come from a ``client`` (the leader; a follower
        replays): a Duplicate of the first batch the partition already holds, else raises for a batch out
        of place (see the module docstring). The state itself is unchanged until ``update``."""
        updated: dict[int, ProducerStateEntry] = {}
        for batch in batches:
            pid = batch.producer_id
            entry = updated.get(pid) or self.producers.get(pid) or ProducerStateEntry(pid)
            if client:
                duplicate = entry.duplicate_of(batch)
                if duplicate is not None:
                    return Duplicate(duplicate)
                self._check(entry, batch)
            updated[pid] = entry.with_batch(batch)
        return updated

    def _check(self, entry: ProducerStateEntry, batch: ProducerBatch) -> None:
        where = f"producer id {batch.producer_id} at offset {batch.first_offset} of {self.partition}"
        if batch.epoch < entry.epoch:
            raise InvalidProducerEpochError(
                f"{where}: epoch {batch.epoch} is older than the producer's current epoch {entry.epoch}"
            )
        if batch.epoch != entry.epoch:
            if batch.first_seq == 0:
                return
            if entry.epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceNumberError(
                    f"{where}: a new epoch {batch.epoch} must start at sequence 0, not {batch.first_seq}"
                )
            raise UnknownProducerIdError(
                f"{where}: no state for this producer id (expired or removed with the log's start) and"
                f" sequence {batch.first_seq} is not 0"
            )
        if entry.last_seq == NO_SEQUENCE and batch.first_seq != 0:
            raise UnknownProducerIdError(
                f"{where}: its next sequence is not known here, {batch.first_seq} given"
            )
        if entry.last_seq != NO_SEQUENCE and not in_sequence(entry.last_seq, batch.first_seq):
            raise OutOfOrderSequenceNumberError(
                f"{where}: sequence {batch.first_seq} does not follow the last one appended, {entry.last_seq}"
            )

    def update(self, updated: dict[int, ProducerStateEntry]) -> None:
        """Keep what ``analyze`` returned once its batches are in the log."""
        self.producers.update(updated)

    def replay(self, batches: Iterable[ProducerBatch]) -> None:
        """Take in batches as they are, unchecked (a follower's append, recovery from the log)."""
        updated = self.analyze(batches, client=False)
        assert isinstance(updated, dict)
        self.producers.update(updated)

    def remove_expired(self, now_ms: int) -> list[int]:
        """Forget producers whose last batch is older than ``expiration_ms``; the ids forgotten."""
        expired = [pid for pid, e in self.producers.items() if now_ms - e.last_timestamp > self.expiration_ms]
        for pid in expired:
            del self.producers[pid]
        return expired

    def truncate_head(self, log_start: int) -> None:
        """Forget producers whose last batch is below ``log_start`` (retention or DeleteRecords removed it)."""
        gone = [pid for pid, e in self.producers.items() if e.last_offset < log_start]
        for pid in gone:
            del self.producers[pid]

    def reset(self, entries: dict[int, ProducerStateEntry]) -> None:
        self.producers = dict(entries)

    def snapshot(self) -> bytes:
        """The state as a ``.snapshot`` file's bytes (each producer's last batch)."""
        return encode_snapshot(self.producers.values())


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """Each producer's epoch and last batch in Kafka's snapshot layout (see the module docstring)."""
    body = bytearray()
    count = 0
    for e in entries:
        if not e.batches:
            continue
        last = e.batches[-1]
        body += _SNAPSHOT_ENTRY.pack(
            e.producer_id,
            e.epoch,
            last.last_seq,
            last.last_offset,
            last.last_offset - last.first_offset,
            last.timestamp,
            _NO_COORDINATOR_EPOCH,
            _NO_TXN_OFFSET,
        )
        count += 1
    tail = struct.pack(">i", count) + bytes(body)
    return struct.pack(">hI", SNAPSHOT_VERSION, crc32c(tail)) + tail


def decode_snapshot(data: bytes, where: str) -> dict[int, ProducerStateEntry]:
    """The entries of a ``.snapshot`` file's bytes; a damaged file raises InvalidMessageError naming ``where``."""
    if len(data) < _SNAPSHOT_HEADER.size:
        raise InvalidMessageError(f"producer snapshot {where} holds {len(data)} bytes, fewer than its header")
    version, crc, count = _SNAPSHOT_HEADER.unpack_from(data)
    if version != SNAPSHOT_VERSION:
        raise InvalidMessageError(f"producer snapshot {where} has version {version}, not {SNAPSHOT_VERSION}")
    if crc32c(data[6:]) != crc or len(data) != _SNAPSHOT_HEADER.size + count * _SNAPSHOT_ENTRY.size:
        raise InvalidMessageError(f"producer snapshot {where} fails its CRC-32C or length check")
    entries = {}
    for i in range(count):
        pid, epoch, last_seq, last_offset, delta, ts, _, _ = _SNAPSHOT_ENTRY.unpack_from(
            data, _SNAPSHOT_HEADER.size + i * _SNAPSHOT_ENTRY.size
        )
        first_seq = (last_seq - delta) % (INT32_MAX + 1)
        batch = BatchMetadata(first_seq, last_seq, last_offset - delta, last_offset, ts)
        entries[pid] = ProducerStateEntry(pid, epoch, (batch,))
    return entries
