"""Exceptions, and the one mapping between wire error codes and exceptions for both protocol lines.

The codes are ``zkafka.protocol.errors.ErrorCode``; 0.7 sends -1..4, which mean the same on 0.8/0.9. Each
exception class carries its ``error_code``; ``error_for_code`` and ``code_for_error`` convert both ways. The
root ``KafkaError`` and the codec's errors are defined beside the codes, the group coordinator's in
``zkafka.group_errors`` and the producer-state checks' in ``zkafka.sequence_errors``; all importable from here.
"""

from __future__ import annotations

from zkafka.group_errors import FencedInstanceIdError as FencedInstanceIdError
from zkafka.group_errors import GroupCoordinatorNotAvailableError as GroupCoordinatorNotAvailableError
from zkafka.group_errors import GroupIdNotFoundError as GroupIdNotFoundError
from zkafka.group_errors import GroupLoadInProgressError as GroupLoadInProgressError
from zkafka.group_errors import GroupMaxSizeReachedError as GroupMaxSizeReachedError
from zkafka.group_errors import GroupSubscribedToTopicError as GroupSubscribedToTopicError
from zkafka.group_errors import IllegalGenerationError as IllegalGenerationError
from zkafka.group_errors import InconsistentGroupProtocolError as InconsistentGroupProtocolError
from zkafka.group_errors import InvalidCommitOffsetSizeError as InvalidCommitOffsetSizeError
from zkafka.group_errors import InvalidGroupIdError as InvalidGroupIdError
from zkafka.group_errors import InvalidSessionTimeoutError as InvalidSessionTimeoutError
from zkafka.group_errors import MemberIdRequiredError as MemberIdRequiredError
from zkafka.group_errors import NonEmptyGroupError as NonEmptyGroupError
from zkafka.group_errors import NotCoordinatorForGroupError as NotCoordinatorForGroupError
from zkafka.group_errors import RebalanceInProgressError as RebalanceInProgressError
from zkafka.group_errors import UnknownMemberIdError as UnknownMemberIdError
from zkafka.protocol.errors import LAST_CODE_07, ErrorCode, KafkaError
from zkafka.protocol.errors import InvalidRequestError as InvalidRequestError
from zkafka.protocol.errors import SaslAuthenticationError as SaslAuthenticationError
from zkafka.sequence_errors import InvalidProducerEpochError as InvalidProducerEpochError
from zkafka.sequence_errors import OutOfOrderSequenceNumberError as OutOfOrderSequenceNumberError
from zkafka.sequence_errors import UnknownProducerIdError as UnknownProducerIdError


class UnknownError(KafkaError):
    """Error code -1: any failure the protocol has no code for."""


class OffsetOutOfRangeError(KafkaError):
    """Error code 1: the fetch offset is before the log start or past its (flushed, 0.7) end."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE


class InvalidMessageError(KafkaError):
    """Error code 2: a message whose CRC does not match its payload (or that is too short to be one)."""

    error_code = ErrorCode.CORRUPT_MESSAGE


class InvalidPartitionError(KafkaError):
    """Error code 3: a partition number outside ``[0, partition count)`` for the topic (0.7), a topic or
    partition this broker does not host (0.8)."""

    error_code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


class InvalidMessageSizeError(KafkaError):
    """Error code 4: a negative or oversized length prefix on the first entry of a message set."""

    error_code = ErrorCode.INVALID_FETCH_SIZE


CorruptMessageError = InvalidMessageError  # 0.9's names for codes 2, 3 and 4
UnknownTopicOrPartitionError = InvalidPartitionError
InvalidFetchSizeError = InvalidMessageSizeError


class UnknownMagicByteError(InvalidMessageError):
    """A message whose magic byte is neither 0 nor 1."""


class UnknownCodecError(InvalidMessageError):
    """A message whose attributes name a compression codec this line does not know."""


class LeaderNotAvailableError(KafkaError):
    """Error code 5: the topic was just auto-created, or the partition's leader is down."""

    error_code = ErrorCode.LEADER_NOT_AVAILABLE


class NotLeaderForPartitionError(KafkaError):
    """Error code 6: a produce, fetch or offsets request sent to a broker that does not lead the partition."""

    error_code = ErrorCode.NOT_LEADER_FOR_PARTITION


class RequestTimedOutError(KafkaError):
    """Error code 7: an acks=-1 produce not replicated within its timeout."""

    error_code = ErrorCode.REQUEST_TIMED_OUT


class BrokerNotAvailableError(KafkaError):
    """Error code 8: a controlled shutdown for a broker id the controller does not know."""

    error_code = ErrorCode.BROKER_NOT_AVAILABLE


class ReplicaNotAvailableError(KafkaError):
    """Error code 9: a replica or ISR member of the partition is down (its leader is valid)."""

    error_code = ErrorCode.REPLICA_NOT_AVAILABLE


class MessageSizeTooLargeError(KafkaError):
    """Error code 10 (0.8): a message over ``message.max.bytes``; 0.7: a top-level payload over
    ``max.message.size`` (0.7 has no code for it and answers -1)."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


class StaleControllerEpochError(KafkaError):
    """Error code 11: a controller request carrying an older controller epoch than one already seen."""

    error_code = ErrorCode.STALE_CONTROLLER_EPOCH


class OffsetMetadataTooLargeError(KafkaError):
    """Error code 12: committed offset metadata over ``offset.metadata.max.bytes``."""

    error_code = ErrorCode.OFFSET_METADATA_TOO_LARGE


class StaleLeaderEpochError(KafkaError):
    """Error code 13: a LeaderAndIsr request with a leader epoch not newer than the partition's."""

    error_code = ErrorCode.STALE_LEADER_EPOCH


class InvalidTopicError(KafkaError):
    """Error code 17 (0.8): a topic name that cannot become a log directory, or a produce to an internal
    topic (0.7 has no code for it and answers -1)."""

    error_code = ErrorCode.INVALID_TOPIC_EXCEPTION


class RecordListTooLargeError(KafkaError):
    """Error code 18: a message set larger than a log segment."""

    error_code = ErrorCode.RECORD_LIST_TOO_LARGE


MessageSetSizeTooLargeError = RecordListTooLargeError  # 0.8.2's name


class NotEnoughReplicasError(KafkaError):
    """Error code 19: acks=-1 while the ISR is smaller than ``min.insync.replicas`` (nothing appended)."""

    error_code = ErrorCode.NOT_ENOUGH_REPLICAS


class NotEnoughReplicasAfterAppendError(KafkaError):
    """Error code 20: appended, but the ISR fell below ``min.insync.replicas`` while waiting."""

    error_code = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND


class InvalidRequiredAcksError(KafkaError):
    """Error code 21: a produce with acks other than -1, 0 or 1 (0.9)."""

    error_code = ErrorCode.INVALID_REQUIRED_ACKS


class TopicAuthorizationFailedError(KafkaError):
    """Error code 29: an ACL denies access to the topic."""

    error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED


class GroupAuthorizationFailedError(KafkaError):
    """Error code 30: an ACL denies access to the group."""

    error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED


class ClusterAuthorizationFailedError(KafkaError):
    """Error code 31: an ACL denies the cluster action."""

    error_code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


class InvalidTimestampError(KafkaError):
    """Error code 32 (0.10): a message timestamp out of range."""

    error_code = ErrorCode.INVALID_TIMESTAMP


class UnsupportedSaslMechanismError(KafkaError):
    """Error code 33 (0.10): a SASL mechanism the broker does not enable."""

    error_code = ErrorCode.UNSUPPORTED_SASL_MECHANISM


class IllegalSaslStateError(KafkaError):
    """Error code 34 (0.10): a SASL request out of order."""

    error_code = ErrorCode.ILLEGAL_SASL_STATE


class UnsupportedVersionError(KafkaError):
    """Error code 35 (0.10): an API version the broker does not answer."""

    error_code = ErrorCode.UNSUPPORTED_VERSION


class SecurityDisabledError(KafkaError):
    """Error code 54 (0.11, KIP-140): an ACL request to a broker without an authorizer."""

    error_code = ErrorCode.SECURITY_DISABLED


class KafkaStorageError(KafkaError):
    """Error code 56 (1.0, KIP-112): a partition's log cannot be created or written on this broker."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR


class InvalidRequestCodeError(KafkaError):
    """Error code 42 (0.11): a well-formed request the broker refuses (the codec's InvalidRequestError closes
    the connection instead)."""

    error_code = ErrorCode.INVALID_REQUEST


class UnsupportedForMessageFormatError(KafkaError):
    """Error code 43 (0.11): a record batch needs what the log's message format lacks (headers, a producer id)."""

    error_code = ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT


class FetchSessionIdNotFoundError(KafkaError):
    """Error code 70 (1.1, KIP-227): an incremental fetch names a session this broker does not have."""

    error_code = ErrorCode.FETCH_SESSION_ID_NOT_FOUND


class InvalidFetchSessionEpochError(KafkaError):
    """Error code 71 (1.1, KIP-227): an incremental fetch's epoch is not the one its session expects."""

    error_code = ErrorCode.INVALID_FETCH_SESSION_EPOCH


class FencedLeaderEpochError(KafkaError):
    """Error code 74 (2.1, KIP-320): the request names an older leader epoch than this leader's."""

    error_code = ErrorCode.FENCED_LEADER_EPOCH


class UnknownLeaderEpochError(KafkaError):
    """Error code 75 (2.1, KIP-320): the request names a newer leader epoch than this broker knows."""

    error_code = ErrorCode.UNKNOWN_LEADER_EPOCH


class UnsupportedCompressionTypeError(KafkaError):
    """Error code 76 (2.1): a codec (zstd) the produce version or the log's message format cannot hold."""

    error_code = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


class InvalidRecordError(KafkaError):
    """Error code 87 (2.5): records a client may not write (a control batch, a count off its offsets)."""

    error_code = ErrorCode.INVALID_RECORD


class InvalidConfigError(KafkaError, ValueError):
    """A configuration key with a value that is not allowed (code 40 when a request carried it)."""

    error_code = ErrorCode.INVALID_CONFIG


class AdminOperationError(InvalidRequestCodeError):
    """An admin operation that cannot be carried out: INVALID_REQUEST (42) unless a subclass says more."""


class TopicExistsError(AdminOperationError):
    """Error code 36 (0.10.1): the topic already has an assignment in ZooKeeper."""

    error_code = ErrorCode.TOPIC_ALREADY_EXISTS


class InvalidPartitionsError(AdminOperationError):
    """Error code 37 (0.10.1): a partition count that is not allowed."""

    error_code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactorError(AdminOperationError):
    """Error code 38 (0.10.1): a replication factor under 1 or over the live brokers."""

    error_code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidReplicaAssignmentError(AdminOperationError):
    """Error code 39 (0.10.1): a manual replica assignment that cannot be written."""

    error_code = ErrorCode.INVALID_REPLICA_ASSIGNMENT


class NotControllerError(KafkaError):
    """Error code 41 (0.10.1): an admin request sent to a broker that is not the controller."""

    error_code = ErrorCode.NOT_CONTROLLER


class TopicDeletionDisabledError(KafkaError):
    """Error code 73 (2.1): DeleteTopics with ``delete.topic.enable=false``."""

    error_code = ErrorCode.TOPIC_DELETION_DISABLED  # answered as INVALID_REQUEST (42) before DeleteTopics v3


class ZooKeeperUnreachableError(KafkaError):
    """No ZooKeeper server answered within the connection timeout (no protocol code: a client-side failure)."""


def _declared_codes() -> dict[int, type[KafkaError]]:
    """Every exception class here that declares its own ``error_code``, by code (subclasses that only refine
    one, such as ``UnknownMagicByteError``, inherit it and map back to their parent)."""
    declared: dict[int, type[KafkaError]] = {ErrorCode.UNKNOWN: UnknownError}
    for cls in globals().values():
        if isinstance(cls, type) and issubclass(cls, KafkaError) and "error_code" in vars(cls):
            declared.setdefault(cls.error_code, cls)
    return declared


ERROR_CODES: dict[int, type[KafkaError]] = _declared_codes()


def error_for_code(code: int) -> type[KafkaError] | None:
    """The exception class for a non-zero wire error code (None for 0; UnknownError for a code no line has)."""
    if code == 0:
        return None
    return ERROR_CODES.get(code, UnknownError)


def code_for_error(exc: BaseException, last_code: int = LAST_CODE_07) -> int:
    """The wire error code a broker answers with for an exception raised while serving a request.

    ``last_code`` is the highest code the protocol line has: the 0.7 default answers -1 (Unknown) for the
    errors 0.7 has no code for, as 0.7's ErrorMapping does; the 0.8/0.9 handlers pass ``ErrorCode`` 's
    ``LAST_CODE``.
    """
    code = exc.error_code if isinstance(exc, KafkaError) else ErrorCode.UNKNOWN
    return code if code <= last_code else ErrorCode.UNKNOWN
