"""The errors of the group coordinator's requests (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
OffsetCommit/Fetch, DescribeGroups, DeleteGroups), importable from ``zkafka.errors`` as every other exception is
(which maps them to and from their codes)."""

from __future__ import annotations

from zkafka.protocol.errors import ErrorCode, KafkaError


class GroupLoadInProgressError(KafkaError):
    """Error code 14: the coordinator is still loading the group's offsets partition."""

    error_code = ErrorCode.GROUP_LOAD_IN_PROGRESS


class GroupCoordinatorNotAvailableError(KafkaError):
    """Error code 15: the group's offsets partition has no leader."""

    error_code = ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE


class NotCoordinatorForGroupError(KafkaError):
    """Error code 16: a group request sent to a broker that is not the group's coordinator."""

    error_code = ErrorCode.NOT_COORDINATOR_FOR_GROUP


class IllegalGenerationError(KafkaError):
    """Error code 22: a generation id that is not the group's current one."""

    error_code = ErrorCode.ILLEGAL_GENERATION


class InconsistentGroupProtocolError(KafkaError):
    """Error code 23: a protocol type, or protocols, that the group's members have nothing in common with."""

    error_code = ErrorCode.INCONSISTENT_GROUP_PROTOCOL


class InvalidGroupIdError(KafkaError):
    """Error code 24: an empty or null group id."""

    error_code = ErrorCode.INVALID_GROUP_ID


class UnknownMemberIdError(KafkaError):
    """Error code 25: a member id the group does not know (or the group is unknown or dead)."""

    error_code = ErrorCode.UNKNOWN_MEMBER_ID


class InvalidSessionTimeoutError(KafkaError):
    """Error code 26: a session timeout outside ``group.min/max.session.timeout.ms``."""

    error_code = ErrorCode.INVALID_SESSION_TIMEOUT


class RebalanceInProgressError(KafkaError):
    """Error code 27: the group is rebalancing; the member must rejoin."""

    error_code = ErrorCode.REBALANCE_IN_PROGRESS


class InvalidCommitOffsetSizeError(KafkaError):
    """Error code 28: an offset commit too large to append to the offsets topic."""

    error_code = ErrorCode.INVALID_COMMIT_OFFSET_SIZE


class NonEmptyGroupError(KafkaError):
    """Error code 68 (1.1): DeleteGroups of a group that still has members."""

    error_code = ErrorCode.NON_EMPTY_GROUP


class GroupIdNotFoundError(KafkaError):
    """Error code 69 (1.1): DeleteGroups or OffsetDelete of a group this coordinator does not have."""

    error_code = ErrorCode.GROUP_ID_NOT_FOUND


class MemberIdRequiredError(KafkaError):
    """Error code 79 (2.2, KIP-394): a new member must rejoin with the member id the answer carries."""

    error_code = ErrorCode.MEMBER_ID_REQUIRED


class GroupMaxSizeReachedError(KafkaError):
    """Error code 81 (2.2, KIP-389): the group already has ``group.max.size`` members."""

    error_code = ErrorCode.GROUP_MAX_SIZE_REACHED


class GroupSubscribedToTopicError(KafkaError):
    """Error code 86 (2.4, KIP-496): OffsetDelete of a topic the group's members are subscribed to."""

    error_code = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC


class FencedInstanceIdError(KafkaError):
    """Error code 82 (2.3): another consumer with this ``group.instance.id`` took this member's place."""

    error_code = ErrorCode.FENCED_INSTANCE_ID
