"""One mapping of wire error codes to exceptions for both lines; 0.7 keeps answering only -1..4."""

from __future__ import annotations

import pytest

from zkafka import errors
from zkafka.protocol.errors import LAST_CODE, LAST_CODE_07, ErrorCode, error_name


def test_every_code_of_both_lines_has_one_exception_class():
    assert sorted(errors.ERROR_CODES) == [-1, *range(1, 44), 45, 47, 54, 56, 58, 59, 68, 69, 70, 71, 73, 74, 75, 76, 79, 81, 82, 86, 87]
    assert [c.value for c in ErrorCode] == [*range(-1, 44), 45, 47, 54, 56, 58, 59, 68, 69, 70, 71, 73, 74, 75, 76, 79, 81, 82, 86, 87]
    for code, cls in errors.ERROR_CODES.items():
        assert cls.error_code == code and issubclass(cls, errors.KafkaError)


@pytest.mark.parametrize(
    "code, cls, name",
    [
        (-1, errors.UnknownError, "UNKNOWN"),
        (1, errors.OffsetOutOfRangeError, "OFFSET_OUT_OF_RANGE"),
        (2, errors.InvalidMessageError, "CORRUPT_MESSAGE"),
        (3, errors.InvalidPartitionError, "UNKNOWN_TOPIC_OR_PARTITION"),
        (4, errors.InvalidMessageSizeError, "INVALID_FETCH_SIZE"),
        (5, errors.LeaderNotAvailableError, "LEADER_NOT_AVAILABLE"),
        (6, errors.NotLeaderForPartitionError, "NOT_LEADER_FOR_PARTITION"),
        (7, errors.RequestTimedOutError, "REQUEST_TIMED_OUT"),
        (10, errors.MessageSizeTooLargeError, "MESSAGE_TOO_LARGE"),
        (13, errors.StaleLeaderEpochError, "STALE_LEADER_EPOCH"),
        (16, errors.NotCoordinatorForGroupError, "NOT_COORDINATOR_FOR_GROUP"),
        (17, errors.InvalidTopicError, "INVALID_TOPIC_EXCEPTION"),
        (18, errors.RecordListTooLargeError, "RECORD_LIST_TOO_LARGE"),
        (22, errors.IllegalGenerationError, "ILLEGAL_GENERATION"),
        (25, errors.UnknownMemberIdError, "UNKNOWN_MEMBER_ID"),
        (27, errors.RebalanceInProgressError, "REBALANCE_IN_PROGRESS"),
        (35, errors.UnsupportedVersionError, "UNSUPPORTED_VERSION"),
        (82, errors.FencedInstanceIdError, "FENCED_INSTANCE_ID"),
    ],
)
def test_codes_names_and_classes(code, cls, name):
    assert errors.error_for_code(code) is cls
    assert error_name(code) == name
    assert errors.code_for_error(cls("x"), LAST_CODE) == code


def test_0_9_names_of_the_0_7_classes_are_the_same_classes():
    assert errors.UnknownTopicOrPartitionError is errors.InvalidPartitionError
    assert errors.CorruptMessageError is errors.InvalidMessageError
    assert errors.InvalidFetchSizeError is errors.InvalidMessageSizeError
    assert errors.MessageSetSizeTooLargeError is errors.RecordListTooLargeError


def test_no_error_and_codes_no_line_has():
    assert errors.error_for_code(0) is None
    assert errors.error_for_code(99) is errors.UnknownError
    assert error_name(0) == "NONE" and error_name(99) == "UNKNOWN_CODE_99"


@pytest.mark.parametrize(
    "exc, code_07, code_08",
    [
        (errors.OffsetOutOfRangeError(), 1, 1),
        (errors.UnknownCodecError(), 2, 2),  # subclasses keep their parent's code
        (errors.InvalidPartitionError(), 3, 3),
        (errors.InvalidMessageSizeError(), 4, 4),
        (errors.MessageSizeTooLargeError(), -1, 10),  # 0.7 has no code for these
        (errors.InvalidTopicError(), -1, 17),
        (errors.NotLeaderForPartitionError(), -1, 6),
        (errors.InvalidRequestError(), -1, -1),
        (ValueError(), -1, -1),
    ],
)
def test_code_for_error_answers_only_the_codes_a_line_has(exc, code_07, code_08):
    assert errors.code_for_error(exc) == code_07  # the 0.7 default
    assert errors.code_for_error(exc, LAST_CODE_07) == code_07
    assert errors.code_for_error(exc, LAST_CODE) == code_08
