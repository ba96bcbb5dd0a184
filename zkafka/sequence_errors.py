"""The errors of a partition's producer-state checks (KIP-98, the idempotent producer), importable from
``zkafka.errors`` as every other exception is (which maps them to and from their codes)."""

from __future__ import annotations

from zkafka.protocol.errors import ErrorCode, KafkaError


class OutOfOrderSequenceNumberError(KafkaError):
    """Error code 45 (0.11): an idempotent batch's first sequence does not follow the producer's last one."""

    error_code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerEpochError(KafkaError):
    """Error code 47 (0.11): the batch's producer epoch is older than the partition's (the producer is fenced)."""

    error_code = ErrorCode.INVALID_PRODUCER_EPOCH


class UnknownProducerIdError(KafkaError):
    """Error code 59 (1.0): the partition keeps no state for the producer id and the sequence is not 0."""

    error_code = ErrorCode.UNKNOWN_PRODUCER_ID
