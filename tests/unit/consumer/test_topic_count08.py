"""The 0.8 consumer registration (zkafka.topic_count08): JSON written as 0.8.2 writes it, and read back."""

from __future__ import annotations

import json

import pytest

from zkafka.topic_count import Blacklist, Whitelist
from zkafka.topic_count08 import (
    StaticTopicCount08,
    WildcardTopicCount08,
    parse_topic_count08,
)
from zkafka.zk.paths08 import ZkDataError


def test_static_registration_json(monkeypatch):
    monkeypatch.setattr("zkafka.topic_count08.now_ms", lambda: 1428512949385)
    count = StaticTopicCount08("g_c", {"t": 2, "u": 1})
    assert count.db_string() == (
        '{"version":1,"subscription":{"t":2,"u":1},"pattern":"static","timestamp":"1428512949385"}'
    )
    assert count.threads_per_topic() == {"t": ["g_c-0", "g_c-1"], "u": ["g_c-0"]}
    assert parse_topic_count08("g_c", count.db_string()) == count


def test_wildcard_registration_json(monkeypatch):
    monkeypatch.setattr("zkafka.topic_count08.now_ms", lambda: 7)
    white = WildcardTopicCount08("g_c", Whitelist(" 'a, b.*' "), 2)
    assert (
        white.db_string() == '{"version":1,"subscription":{"a|b.*":2},"pattern":"white_list","timestamp":"7"}'
    )
    black = WildcardTopicCount08("g_c", Blacklist("x"), 1)
    assert json.loads(black.db_string())["pattern"] == "black_list"
    assert parse_topic_count08("g_c", white.db_string()) == white
    assert parse_topic_count08("g_c", black.db_string()) == black


def test_wildcards_leave_out_internal_topics_unless_told():
    topics = ["__consumer_offsets", "a", "b1", "c"]
    assert list(WildcardTopicCount08("g_c", Whitelist(".*"), 1).threads_per_topic(topics)) == ["a", "b1", "c"]
    keep = WildcardTopicCount08("g_c", Blacklist("c"), 1, exclude_internal_topics=False)
    assert list(keep.threads_per_topic(topics)) == ["__consumer_offsets", "a", "b1"]
    parsed = parse_topic_count08("g_c", keep.db_string(), exclude_internal_topics=False)
    assert "__consumer_offsets" in parsed.threads_per_topic(topics)


def test_reads_what_a_scala_consumer_wrote():
    # key order of Kafka's JSON is not fixed: parse any
    text = '{"pattern":"static","timestamp":"1","subscription":{"orders":3},"version":1}'
    assert parse_topic_count08("g_x", text).threads_per_topic() == {"orders": ["g_x-0", "g_x-1", "g_x-2"]}


@pytest.mark.parametrize(
    "text",
    [
        '{ "t": 1 }',  # the 0.7 form
        "*1*a",
        '{"version":1,"subscription":{"a":1,"b":1},"pattern":"white_list","timestamp":"1"}',
        '{"version":1,"subscription":{"a":"1"},"pattern":"static","timestamp":"1"}',
        '{"version":1,"subscription":{"a":1},"pattern":"nope","timestamp":"1"}',
    ],
)
def test_bad_registrations_are_value_errors(text):
    with pytest.raises(ValueError):
        parse_topic_count08("g_c", text)
    assert issubclass(ZkDataError, ValueError)
