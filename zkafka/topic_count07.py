"""The 0.7 consumer's topic count at ``/consumers/<group>/ids/<id>``: written and read as 0.7 does.

A static count is a JSON object ``topic -> number of streams``; a wildcard count (0.7.1+) is
``*<n>*<regex>`` for a whitelist or ``!<n>!<regex>`` for a blacklist.
"""

import json
import re

from zkafka.topic_count import Blacklist, StaticTopicCount, TopicCount, Whitelist, WildcardTopicCount

_WILDCARD_COUNT = re.compile(r"([*!])([0-9]+)\1(.*)")


class StaticTopicCount07(StaticTopicCount):
    """A fixed number of streams per named topic, registered as 0.7 writes it."""

    def db_string(self) -> str:
        """``{ "t1": 4,"t2": 2 }`` in the mapping's order; topic names are not escaped (as in 0.7)."""
        return "{ " + ",".join(f'"{topic}": {n}' for topic, n in self.counts.items()) + " }"


class WildcardTopicCount07(WildcardTopicCount):
    """Streams for every topic a filter allows, registered as 0.7 writes it."""

    def db_string(self) -> str:
        """``*<n>*<regex>`` for a whitelist, ``!<n>!<regex>`` for a blacklist."""
        marker = self.topic_filter.marker
        return f"{marker}{self.num_streams}{marker}{self.topic_filter.regex}"


def parse_topic_count(consumer_id: str, value: str) -> TopicCount:
    """Read the topic count stored for ``consumer_id``; a malformed value is a ValueError.

    A leading ``*`` or ``!`` means a wildcard count (its regex is normalised again); anything else must be
    a JSON object whose values are ints.
    """
    if value.startswith(("*", "!")):
        found = _WILDCARD_COUNT.fullmatch(value)
        if found is None:
            raise ValueError(f"error constructing TopicCount: {value!r}")
        marker, n, regex = found.groups()
        topic_filter = Whitelist(regex) if marker == "*" else Blacklist(regex)
        return WildcardTopicCount07(consumer_id, topic_filter, int(n))
    try:
        parsed = json.loads(value)
    except ValueError as e:
        raise ValueError(f"error constructing TopicCount: {value!r}") from e
    if not isinstance(parsed, dict) or not all(
        type(n) is int
        for n in parsed.values()  # bool and float are rejected, as by 0.7's int parser
    ):
        raise ValueError(f"error constructing TopicCount: {value!r}")
    return StaticTopicCount07(consumer_id, parsed)
