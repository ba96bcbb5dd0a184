"""The 0.8 consumer's registration at ``/consumers/<group>/ids/<id>``: the shared topic counts, written as JSON.

A 0.8.2 consumer registers ``{"version":1,"subscription":{...},"pattern":...,"timestamp":"..."}``: for a
static count the subscription is ``topic -> streams`` with pattern ``static``; for a wildcard count it is
``regex -> streams`` with pattern ``white_list`` or ``black_list``. Topic filters are the shared ones (0.7's
normalisation); 0.8 adds ``exclude.internal.topics``, which keeps a wildcard off ``__consumer_offsets``.
Pure logic, like ``zkafka.topic_count``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zkafka.topic import INTERNAL_TOPICS
from zkafka.topic_count import (
    Blacklist,
    StaticTopicCount,
    TopicCount,
    Whitelist,
    WildcardTopicCount,
)
from zkafka.utils import now_ms
from zkafka.zk.paths08 import ConsumerRegistration, ZkDataError

STATIC_PATTERN = "static"
WHITELIST_PATTERN = "white_list"
BLACKLIST_PATTERN = "black_list"


class StaticTopicCount08(StaticTopicCount):
    """A fixed number of streams per named topic, registered as 0.8 JSON."""

    def db_string(self) -> str:
        return ConsumerRegistration(dict(self.counts), STATIC_PATTERN, str(now_ms())).to_json()


@dataclass(frozen=True)
class WildcardTopicCount08(WildcardTopicCount):
    """Streams for every topic a filter allows (internal topics left out unless told), registered as JSON."""

    exclude_internal_topics: bool = True

    def threads_per_topic(self, available_topics: Iterable[str] = ()) -> dict[str, list[str]]:
        if self.exclude_internal_topics:
            available_topics = [t for t in available_topics if t not in INTERNAL_TOPICS]
        return super().threads_per_topic(available_topics)

    def db_string(self) -> str:
        pattern = WHITELIST_PATTERN if isinstance(self.topic_filter, Whitelist) else BLACKLIST_PATTERN
        subscription = {self.topic_filter.regex: self.num_streams}
        return ConsumerRegistration(subscription, pattern, str(now_ms())).to_json()


def parse_topic_count08(
    consumer_id: str, value: str | bytes, exclude_internal_topics: bool = True
) -> TopicCount:
    """A member's topic count from its 0.8 registration; ValueError (ZkDataError) for anything else."""
    registration = ConsumerRegistration.parse(value)
    subscription = dict(registration.subscription)
    if registration.pattern == STATIC_PATTERN:
        return StaticTopicCount08(consumer_id, subscription)
    if len(subscription) != 1:
        raise ZkDataError(
            f"consumer registration: a wildcard subscription names one regex, not {subscription}"
        )
    ((regex, streams),) = subscription.items()
    topic_filter = Whitelist(regex) if registration.pattern == WHITELIST_PATTERN else Blacklist(regex)
    return WildcardTopicCount08(consumer_id, topic_filter, streams, exclude_internal_topics)
