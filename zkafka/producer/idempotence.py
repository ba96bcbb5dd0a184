"""The idempotent producer's side (``enable.idempotence=true``, KIP-98), as the Java producer's
``TransactionManager`` keeps it without transactions: a producer id and epoch asked once with InitProducerId,
and per partition the sequence of the next record. Each partition's messages are sealed into one record batch
(``SealedBatch``: its producer id, epoch and first sequence fixed) the moment they are given a partition, and a
retry sends that same batch to the same partition, so a broker that already holds it answers with its first
offset instead of storing it twice. A batch given up on drops the producer id: the next batch asks for a new
one and starts again at sequence 0 (the gap would otherwise be OUT_OF_ORDER_SEQUENCE_NUMBER for good).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from zkafka.client08.api_versions import version_for
from zkafka.errors import KafkaError, UnsupportedVersionError, error_for_code
from zkafka.protocol.api_keys import INIT_PRODUCER_ID
from zkafka.protocol.init_producer_id import INIT_PRODUCER_ID_APIS
from zkafka.protocol.versioned import make
from zkafka.records.default_record import Record
from zkafka.records.record_batch import build_batch
from zkafka.utils.java import INT32_MAX

log = logging.getLogger(__name__)


class SealedBatch(NamedTuple):
    """One partition's messages built into a record batch with the producer's id, epoch and sequence."""

    topic: str
    partition: int
    data: bytes
    count: int
    part_key: Any = None  # never partitioned again: the batch keeps ``partition``


class IdempotentProducerState:
    """The producer id and epoch (``ensure_producer_id``) and the next sequence of each partition."""

    def __init__(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.sequences: dict[tuple[str, int], int] = {}

    def seal(self, topic: str, partition: int, records: Sequence[Record], codec: int) -> SealedBatch:
        """``records`` as the partition's next batch (its sequence taken here)."""
        key = (topic, partition)
        sequence = self.sequences.get(key, 0)
        self.sequences[key] = (sequence + len(records)) % (INT32_MAX + 1)
        numbered = [r._replace(offset=i) for i, r in enumerate(records)]
        data = build_batch(
            numbered,
            compression=codec,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=sequence,
        )
        return SealedBatch(topic, partition, data, len(records))

    def seal_groups(
        self,
        collated: dict[int, dict[tuple[str, int], list[Any]]],
        channel_for: Callable[[int], Any],
        codec_for: Callable[[str], int],
        records_for: Callable[[Sequence[Any]], list[Record]],
    ) -> None:
        """Each partition's new messages in ``collated`` (leader -> partition -> messages) replaced by its
        next sealed batch; the producer id asked of the first leader when none is held (KafkaError, OSError)."""
        for broker_id, groups in collated.items():
            self.ensure_producer_id(channel_for(broker_id))
            for (topic, partition), group in groups.items():
                groups[(topic, partition)] = [self.seal(topic, partition, records_for(group), codec_for(topic))]

    @staticmethod
    def route(
        sealed: Sequence[SealedBatch],
        collated: dict[int, dict[tuple[str, int], list[Any]]],
        failed: list[Any],
        metadata: Any,
    ) -> None:
        """Sealed batches (retries) to their partition's leader in ``collated``; to ``failed`` when it has none
        now (or a new batch of the partition goes in this round: the retry follows it next round)."""
        for batch in sealed:
            try:
                found = [p.leader for p in metadata.partitions(batch.topic) if p.partition == batch.partition]
            except (KafkaError, OSError):
                found = []
            groups = collated.setdefault(found[0], {}) if found and found[0] is not None else None
            if groups is None or (batch.topic, batch.partition) in groups:
                failed.append(batch)
            else:
                groups[(batch.topic, batch.partition)] = [batch]

    def reset(self) -> None:
        """Forget the producer id and the sequences (a batch was given up on)."""
        if self.producer_id >= 0:
            log.warning("dropping producer id %d after an undelivered batch: the next asks anew", self.producer_id)
        self.producer_id, self.producer_epoch = -1, -1
        self.sequences.clear()

    def ensure_producer_id(self, channel: Any) -> None:
        """Ask ``channel``'s broker for a producer id unless one is held; KafkaError or OSError when it fails."""
        if self.producer_id >= 0:
            return
        version = version_for(channel, INIT_PRODUCER_ID)
        if INIT_PRODUCER_ID not in channel.codec.api_versions:
            raise UnsupportedVersionError(
                f"{channel} serves no InitProducerId: enable.idempotence needs a broker of Kafka 0.11 or later"
            )
        request = INIT_PRODUCER_ID_APIS[version][0]
        answer = channel.request(
            make(request, transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)
        )
        error = error_for_code(answer.error)
        if error is not None:
            raise error(f"InitProducerId at {channel}: error {answer.error}")
        self.producer_id, self.producer_epoch = answer.producer_id, answer.producer_epoch
        log.info("producer id %d, epoch %d from %s", self.producer_id, self.producer_epoch, channel)
