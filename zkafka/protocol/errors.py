"""The wire error codes of both protocol lines, named as 0.9's ``Errors.java`` (0.7 uses -1..4, same meanings),
the root exception ``KafkaError`` (every zkafka exception carries the code it answers with) and the codec's
own ``InvalidRequestError``.

Defined once here; ``zkafka.errors`` holds the other exceptions and pairs each code with its class, so the
codecs raise without importing it. Pure: no imports of zkafka.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """An ``int16`` error code in a response (an ``int``: it packs and compares as one)."""

    UNKNOWN = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2  # 0.7/0.8.2 Scala: InvalidMessage
    UNKNOWN_TOPIC_OR_PARTITION = 3  # 0.7: WrongPartition
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_FOR_PARTITION = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10  # Scala: MessageSizeTooLarge
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    STALE_LEADER_EPOCH = 13  # what a broker sends; 0.9's Java client names 13 NETWORK_EXCEPTION (client-side)
    GROUP_LOAD_IN_PROGRESS = 14  # 0.8.2: OffsetsLoadInProgress
    GROUP_COORDINATOR_NOT_AVAILABLE = 15  # 0.8.2: ConsumerCoordinatorNotAvailable
    NOT_COORDINATOR_FOR_GROUP = 16  # 0.8.2: NotCoordinatorForConsumer
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18  # 0.8.2: MessageSetSizeTooLarge
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32  # 0.10
    UNSUPPORTED_SASL_MECHANISM = 33  # 0.10
    ILLEGAL_SASL_STATE = 34  # 0.10
    UNSUPPORTED_VERSION = 35  # 0.10
    TOPIC_ALREADY_EXISTS = 36  # 0.10.1: the admin APIs (KIP-4)
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42  # 0.10.1/0.11: a request the broker understood but refuses (a FindCoordinator key type)
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43  # 0.11: a record batch feature the log's message format lacks
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45  # 0.11 (KIP-98): a producer's batch skips sequence numbers
    INVALID_PRODUCER_EPOCH = 47  # 0.11 (KIP-98): a producer epoch older than the partition's (fenced)
    SECURITY_DISABLED = 54  # 0.11 (KIP-140): an ACL request to a broker with no authorizer
    KAFKA_STORAGE_ERROR = 56  # 1.0 (KIP-112): a partition's log (directory) cannot be created or written
    SASL_AUTHENTICATION_FAILED = 58  # 1.0 (KIP-152): wrong credentials, in SaslAuthenticate's answer
    UNKNOWN_PRODUCER_ID = 59  # 1.0 (KIP-98): a producer id the partition has no state for, sequence not 0
    NON_EMPTY_GROUP = 68  # 1.1 (KIP-229): DeleteGroups of a group with members
    GROUP_ID_NOT_FOUND = 69  # 1.1 (KIP-229): DeleteGroups or OffsetDelete of a group the coordinator lacks
    FETCH_SESSION_ID_NOT_FOUND = 70  # 1.1 (KIP-227): an incremental fetch names a session the broker lacks
    INVALID_FETCH_SESSION_EPOCH = 71  # 1.1 (KIP-227): an incremental fetch out of its session's order
    TOPIC_DELETION_DISABLED = 73  # 2.1: DeleteTopics with delete.topic.enable=false
    FENCED_LEADER_EPOCH = 74  # 2.1 (KIP-320): the request's leader epoch is older than the leader's
    UNKNOWN_LEADER_EPOCH = 75  # 2.1 (KIP-320): the request's leader epoch is newer than the leader's
    UNSUPPORTED_COMPRESSION_TYPE = 76  # 2.1: zstd where the produce version or message format lacks it
    MEMBER_ID_REQUIRED = 79  # 2.2 (KIP-394): rejoin with the member id this answer carries
    GROUP_MAX_SIZE_REACHED = 81  # 2.2 (KIP-389): the group already has group.max.size members
    FENCED_INSTANCE_ID = 82  # 2.3 (KIP-345): a static member's old incarnation, replaced by a newer one
    GROUP_SUBSCRIBED_TO_TOPIC = 86  # 2.4 (KIP-496): OffsetDelete of a topic the group's members consume
    INVALID_RECORD = 87  # 2.5: a record batch that breaks the produce rules (a control batch, a bad count)


LAST_CODE_07 = ErrorCode.INVALID_FETCH_SIZE  # the highest code a 0.7 broker sends
LAST_CODE_09 = ErrorCode.CLUSTER_AUTHORIZATION_FAILED  # the highest code a 0.9.0.1 broker sends
LAST_CODE = ErrorCode.INVALID_RECORD


def error_name(code: int) -> str:
    """``NOT_LEADER_FOR_PARTITION`` for 6; ``UNKNOWN_CODE_99`` for a code no line defines."""
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"UNKNOWN_CODE_{code}"


class KafkaError(Exception):
    """Base class of every zkafka error."""

    error_code: int = ErrorCode.UNKNOWN


class InvalidRequestError(KafkaError):
    """A request frame that cannot be parsed: the broker closes that connection."""


class SaslAuthenticationError(KafkaError):
    """Error code 58 (1.0, KIP-152): SASL credentials refused; the message goes back in SaslAuthenticate's
    ``error_message``."""

    error_code = ErrorCode.SASL_AUTHENTICATION_FAILED
