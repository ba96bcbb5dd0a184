"""Exceptions and the 0.7 ``ErrorMapping`` between wire error codes and exceptions."""

from __future__ import annotations


class KafkaError(Exception):
    """Base class of every zkafka error."""

    error_code = -1


class UnknownError(KafkaError):
    """Error code -1: any failure the protocol has no code for."""


class OffsetOutOfRangeError(KafkaError):
    """Error code 1: the fetch offset is before the log start or past its flushed end."""

    error_code = 1


class InvalidMessageError(KafkaError):
    """Error code 2: a message whose CRC does not match its payload (or that is too short to be one)."""

    error_code = 2


class InvalidPartitionError(KafkaError):
    """Error code 3: a partition number outside ``[0, partition count)`` for the topic."""

    error_code = 3


class InvalidMessageSizeError(KafkaError):
    """Error code 4: a negative or oversized length prefix on the first entry of a message set."""

    error_code = 4


class UnknownMagicByteError(InvalidMessageError):
    """A message whose magic byte is neither 0 nor 1."""


class UnknownCodecError(InvalidMessageError):
    """A message whose attributes name a compression codec other than 0, 1 or 2."""


class MessageSizeTooLargeError(KafkaError):
    """A top-level message payload over ``max.message.size``."""


class InvalidTopicError(KafkaError):
    """A topic name that cannot become a log directory."""


class InvalidRequestError(KafkaError):
    """A request frame that cannot be parsed: the broker closes that connection."""


class InvalidConfigError(KafkaError, ValueError):
    """A configuration key with a value that is not allowed."""


ERROR_CODES: dict[int, type[KafkaError]] = {
    -1: UnknownError,
    1: OffsetOutOfRangeError,
    2: InvalidMessageError,
    3: InvalidPartitionError,
    4: InvalidMessageSizeError,
}


def error_for_code(code: int) -> type[KafkaError] | None:
    """The exception class for a non-zero wire error code (None for 0)."""
    if code == 0:
        return None
    return ERROR_CODES.get(code, UnknownError)


def code_for_error(exc: BaseException) -> int:
    """The wire error code the broker answers with for an exception raised while serving a request."""
    return exc.error_code if isinstance(exc, KafkaError) else -1
