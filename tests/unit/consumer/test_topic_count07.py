"""The 0.7 topic-count strings: written and read back (zkafka.topic_count07)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.topic_count import Blacklist, Whitelist
from zkafka.topic_count07 import StaticTopicCount07, WildcardTopicCount07, parse_topic_count


def test_static_db_string_exact():
    assert StaticTopicCount07("g_c", {"topic1": 4, "topic2": 2}).db_string() == '{ "topic1": 4,"topic2": 2 }'
    assert StaticTopicCount07("g_c", {"t": 1}).db_string() == '{ "t": 1 }'


def test_static_parse_and_threads():
    count = parse_topic_count("g_c", '{ "topic1": 4,"topic2": 2 }')
    assert count == StaticTopicCount07("g_c", {"topic1": 4, "topic2": 2})
    assert parse_topic_count("g_c", '{"topic": 1}') == StaticTopicCount07("g_c", {"topic": 1})
    assert count.threads_per_topic(["unrelated"]) == {
        "topic1": ["g_c-0", "g_c-1", "g_c-2", "g_c-3"],
        "topic2": ["g_c-0", "g_c-1"],
    }


def test_wildcard_db_strings_exact():
    assert WildcardTopicCount07("g_c", Whitelist("whitetopic.*"), 4).db_string() == "*4*whitetopic.*"
    assert WildcardTopicCount07("g_c", Blacklist("blacktopic.*"), 1).db_string() == "!1!blacktopic.*"


def test_wildcard_parse_and_expand():
    white = parse_topic_count("g_c", "*2*white.*")
    assert white == WildcardTopicCount07("g_c", Whitelist("white.*"), 2)
    topics = ["whitetopic", "black1", "white", "xwhite"]
    assert white.threads_per_topic(topics) == {"white": ["g_c-0", "g_c-1"], "whitetopic": ["g_c-0", "g_c-1"]}
    black = parse_topic_count("g_c", "!1!black.*")
    assert black == WildcardTopicCount07("g_c", Blacklist("black.*"), 1)
    assert black.threads_per_topic(topics) == {
        "white": ["g_c-0"],
        "whitetopic": ["g_c-0"],
        "xwhite": ["g_c-0"],
    }
    # The stored regex is normalised again when read back.
    assert parse_topic_count("g_c", "*1*a, b").topic_filter.regex == "a|b"


@pytest.mark.parametrize(
    "value",
    ["", "garbage", "[1, 2]", '{"t": "4"}', '{"t": 4.0}', '{"t": true}', "*x*abc", "*1!abc", "!1*a", "*1*("],
)
def test_malformed_counts_are_rejected(value):
    with pytest.raises(ValueError):
        parse_topic_count("g_c", value)


topic_names = st.text(st.sampled_from("abcxyzXYZ019-_."), min_size=1, max_size=12)


@given(st.dictionaries(topic_names, st.integers(0, 64), min_size=1), st.text("abc_-1", min_size=1))
def test_static_round_trip(counts, cid):
    count = StaticTopicCount07(cid, counts)
    assert parse_topic_count(cid, count.db_string()) == count


@given(st.sampled_from([Whitelist, Blacklist]), st.text("abcXYZ09-|.*", min_size=1), st.integers(0, 99))
def test_wildcard_round_trip(kind, regex, n):
    try:
        topic_filter = kind(regex)
    except ValueError:
        return
    count = WildcardTopicCount07("g_c", topic_filter, n)
    assert parse_topic_count("g_c", count.db_string()) == count
