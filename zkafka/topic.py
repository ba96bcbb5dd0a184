"""Topic names: the 0.7.2 and 0.8.2 validation rules and the ``<topic>-<partition>`` names of log directories."""

from __future__ import annotations

import re

from zkafka.errors import InvalidTopicError

DEFAULT_MAX_TOPIC_LENGTH = 255
OFFSETS_TOPIC = "__consumer_offsets"  # the group coordinator's offsets log (0.8.2's OffsetManager)
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC})  # 0.8.2's Topic.InternalTopics: no whitelist matches them
# Kafka 0.10's limit for the 0.8 line: ``<topic>-<partition>`` (up to 6 more characters) must fit a 255-byte
# file name, or no broker can create the partition's log directory.
MAX_TOPIC_LENGTH_08 = 249

# Java checks UTF-16 code units, so a character outside the BMP reaches the check as a surrogate pair
# (U+D800-U+DFFF) and is refused: the last range below stands for those characters.
_FORBIDDEN = re.compile("[/\x00-\x1f\x7f-\x9f\ud800-\uf8ff\ufff0-\uffff\U00010000-\U0010ffff]")
_PARTITION = re.compile(r"0|[1-9][0-9]*")
_LEGAL_08 = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic(name: str, max_length: int = DEFAULT_MAX_TOPIC_LENGTH, *, line: str = "0.7") -> str:
    """Return the name if the broker of ``line`` ("0.7" or "0.8") accepts it as a topic, else raise
    InvalidTopicError saying why.

    Both refuse an empty name, ``.``, ``..`` and names over ``max_length`` characters (0.8: always 249, so
    that the partition directories fit a file name).
    0.7.2 refuses ``/`` and control, private-use and surrogate characters; 0.8.2 allows only ASCII
    alphanumerics, ``.``, ``_`` and ``-``, so a valid 0.8 name is a valid 0.7 name too.
    """
    if line not in ("0.7", "0.8"):
        raise ValueError(f"unknown line {line!r} (0.7 or 0.8)")
    if not name:
        raise InvalidTopicError("topic name is empty")
    if line == "0.8":
        max_length = MAX_TOPIC_LENGTH_08
    if len(name) > max_length:
        shown = f"{name!r}" if line == "0.7" else f"{name[:20]!r}..."
        raise InvalidTopicError(
            f"topic name {shown} is {len(name)} characters long; "
            + (
                f"max.topic.name.length is {max_length}"
                if line == "0.7"
                else f"at most {max_length} are allowed (its <topic>-<partition> log directories must fit a"
                " file name)"
            )
        )
    if name in (".", ".."):
        raise InvalidTopicError(f"topic name {name!r} is not allowed")
    if line == "0.8":
        if not _LEGAL_08.fullmatch(name):
            raise InvalidTopicError(
                f"topic name {name!r} contains a character other than ASCII alphanumerics, '.', '_' and '-'"
            )
        return name
    bad = _FORBIDDEN.search(name)
    if bad:
        raise InvalidTopicError(
            f"topic name {name!r} contains the character U+{ord(bad.group()):04X} at index {bad.start()};"
            " '/' and control, private-use and surrogate characters are not allowed"
        )
    return name


def validate_topic_08(name: str) -> str:
    """``validate_topic`` with the 0.8 line's rule: the one check of the tools, auto-creation and the broker."""
    return validate_topic(name, line="0.8")


class TopicValidator:
    """``validate_topic`` for a client's sends: each name is checked once (a bounded memo, as the names come
    from callers). A hot path may test ``topic in validator.valid`` before calling it."""

    def __init__(self, line: str = "0.7", limit: int = 10000) -> None:
        self.line = line
        self.limit = limit
        self.valid: set[str] = set()

    def __call__(self, topic: str) -> str:
        if topic not in self.valid:
            validate_topic(topic, line=self.line)
            if len(self.valid) < self.limit:
                self.valid.add(topic)
        return topic


def log_dir_name(topic: str, partition: int) -> str:
    """The directory holding one partition's log: ``<topic>-<partition>``."""
    return f"{topic}-{partition}"


def parse_log_dir_name(dirname: str) -> tuple[str, int]:
    """Split a log directory name at its last ``-`` into (topic, partition); ValueError if it is not one.

    The partition must be written as ``log_dir_name`` writes it (decimal, no sign, no leading zeros), so two
    directories can never name the same partition. The topic is not validated here.
    """
    topic, sep, partition = dirname.rpartition("-")
    if not sep or not topic or not _PARTITION.fullmatch(partition):
        raise ValueError(f"{dirname!r} is not a log directory name of the form <topic>-<partition>")
    return topic, int(partition)
