"""Consumer ids, thread ids, topic filters and the topic count a consumer registers at
``/consumers/<group>/ids/<id>``, as both lines have them; each line writes and reads the count its own way
(``topic_count07``, ``topic_count08``). Pure logic: the wildcard expansion is given the current children of
``/brokers/topics`` instead of reading them.
"""

import re
import socket
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from zkafka import utils

# Java's String.trim() strips every char <= U+0020, and nothing else.
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))
_TRIVIAL_WHITELIST = re.compile(r"[A-Za-z0-9|-]+")


def consumer_id(
    group: str,
    suffix: str | None = None,
    host: str | None = None,
    now_ms: int | None = None,
    uuid_hex: str | None = None,
) -> str:
    """``<group>_<suffix>`` if the ``consumerid`` config is set, else ``<group>_<host>-<millis>-<8 hex>``.

    Unset parts default to the local host name, the current time and the first 8 hex digits of a random
    UUID's most significant 64 bits (Java's ``Long.toHexString``, so without leading zeros).
    """
    if suffix:
        return f"{group}_{suffix}"
    if host is None:
        host = socket.gethostname()
    if now_ms is None:
        now_ms = utils.now_ms()
    if uuid_hex is None:
        uuid_hex = format(uuid.uuid4().int >> 64, "x")
    return f"{group}_{host}-{now_ms}-{uuid_hex[:8]}"


def thread_ids(consumer_id: str, n: int) -> list[str]:
    """The ids of a consumer's ``n`` streams for one topic, ``<consumerId>-0 .. <consumerId>-(n-1)``."""
    return [f"{consumer_id}-{i}" for i in range(n)]


def normalise_filter(raw: str) -> str:
    """Normalise a topic filter as 0.7 does: Java-trim, ``,`` -> ``|``, drop spaces, strip outer quotes."""
    regex = raw.strip(_JAVA_TRIM).replace(",", "|").replace(" ", "")
    return regex.lstrip("\"'").rstrip("\"'")


class TopicFilter(ABC):
    """A normalised regex that decides which topics a wildcard consumer subscribes to."""

    marker: ClassVar[str]

    def __init__(self, raw_regex: str) -> None:
        self.regex = normalise_filter(raw_regex)
        try:
            self._pattern = re.compile(self.regex)
        except re.error as e:
            raise ValueError(f"{self.regex} is an invalid regex.") from e

    def matches(self, topic: str) -> bool:
        """Whether the regex matches the whole topic name (Java ``String.matches``)."""
        return self._pattern.fullmatch(topic) is not None

    @abstractmethod
    def is_topic_allowed(self, topic: str) -> bool: ...

    @property
    @abstractmethod
    def requires_topic_event_watcher(self) -> bool: ...

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.regex == other.regex  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.regex))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.regex!r})"

    def __str__(self) -> str:
        return self.regex


class Whitelist(TopicFilter):
    """Subscribe to the topics the regex fully matches."""

    marker = "*"

    def is_topic_allowed(self, topic: str) -> bool:
        return self.matches(topic)

    @property
    def requires_topic_event_watcher(self) -> bool:
        """False only for a plain list like ``a|b-c``: ASCII alphanumerics, ``-`` and ``|``."""
        return _TRIVIAL_WHITELIST.fullmatch(self.regex) is None


class Blacklist(TopicFilter):
    """Subscribe to every topic the regex does not fully match."""

    marker = "!"

    def is_topic_allowed(self, topic: str) -> bool:
        return not self.matches(topic)

    @property
    def requires_topic_event_watcher(self) -> bool:
        return True


class TopicCount(ABC):
    """What one consumer subscribed to: the value of its ``/consumers/<group>/ids/<id>`` node."""

    consumer_id: str

    @abstractmethod
    def threads_per_topic(self, available_topics: Iterable[str] = ()) -> dict[str, list[str]]:
        """``topic -> thread ids``; wildcard counts expand against ``available_topics``."""

    @abstractmethod
    def db_string(self) -> str:
        """The znode value, byte for byte as the line's Scala consumer writes it."""


@dataclass(frozen=True)
class StaticTopicCount(TopicCount):
    """A fixed number of streams per named topic (``createMessageStreams``)."""

    consumer_id: str
    counts: Mapping[str, int]

    def threads_per_topic(self, available_topics: Iterable[str] = ()) -> dict[str, list[str]]:
        """Thread ids for every counted topic, whether it exists yet or not."""
        return {topic: thread_ids(self.consumer_id, n) for topic, n in self.counts.items()}


@dataclass(frozen=True)
class WildcardTopicCount(TopicCount):
    """``num_streams`` streams for every topic a filter allows (``createMessageStreamsByFilter``)."""

    consumer_id: str
    topic_filter: TopicFilter
    num_streams: int

    def threads_per_topic(self, available_topics: Iterable[str] = ()) -> dict[str, list[str]]:
        """Thread ids for each allowed topic among ``available_topics`` (the ``/brokers/topics`` children)."""
        ids = thread_ids(self.consumer_id, self.num_streams)
        allowed = sorted({t for t in available_topics if self.topic_filter.is_topic_allowed(t)})
        return {topic: list(ids) for topic in allowed}
