"""Consumer ids, thread ids and topic-count strings (zkafka.topic_count)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.topic_count import (
    Blacklist,
    StaticTopicCount,
    Whitelist,
    WildcardTopicCount,
    consumer_id,
    normalise_filter,
    parse_topic_count,
    thread_ids,
)


def test_consumer_id():
    assert consumer_id("g", suffix="c1") == "g_c1"
    assert (
        consumer_id("g", host="h1", now_ms=1315436360737, uuid_hex="0123abcdef55")
        == "g_h1-1315436360737-0123abcd"
    )
    generated = consumer_id("grp", host="h")
    group_host, millis, hex8 = generated.rsplit("-", 2)
    assert group_host == "grp_h" and millis.isdigit() and len(hex8) == 8
    int(hex8, 16)


def test_thread_ids():
    assert thread_ids("g_c", 3) == ["g_c-0", "g_c-1", "g_c-2"]
    assert thread_ids("g_c", 0) == []


def test_static_db_string_exact():
    assert StaticTopicCount("g_c", {"topic1": 4, "topic2": 2}).db_string() == '{ "topic1": 4,"topic2": 2 }'
    assert StaticTopicCount("g_c", {"t": 1}).db_string() == '{ "t": 1 }'


def test_static_parse_and_threads():
    count = parse_topic_count("g_c", '{ "topic1": 4,"topic2": 2 }')
    assert count == StaticTopicCount("g_c", {"topic1": 4, "topic2": 2})
    assert parse_topic_count("g_c", '{"topic": 1}') == StaticTopicCount("g_c", {"topic": 1})
    assert count.threads_per_topic(["unrelated"]) == {
        "topic1": ["g_c-0", "g_c-1", "g_c-2", "g_c-3"],
        "topic2": ["g_c-0", "g_c-1"],
    }


def test_wildcard_db_strings_exact():
    assert WildcardTopicCount("g_c", Whitelist("whitetopic.*"), 4).db_string() == "*4*whitetopic.*"
    assert WildcardTopicCount("g_c", Blacklist("blacktopic.*"), 1).db_string() == "!1!blacktopic.*"


def test_wildcard_parse_and_expand():
    white = parse_topic_count("g_c", "*2*white.*")
    assert white == WildcardTopicCount("g_c", Whitelist("white.*"), 2)
    topics = ["whitetopic", "black1", "white", "xwhite"]
    assert white.threads_per_topic(topics) == {"white": ["g_c-0", "g_c-1"], "whitetopic": ["g_c-0", "g_c-1"]}
    black = parse_topic_count("g_c", "!1!black.*")
    assert black == WildcardTopicCount("g_c", Blacklist("black.*"), 1)
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


def test_filter_normalisation():
    assert normalise_filter(' "a, b,c" ') == "a|b|c"
    assert normalise_filter("'topic.*'") == "topic.*"
    assert normalise_filter("\t\"'x'\"\n") == "x"
    assert Whitelist(" a , b ").regex == "a|b"
    with pytest.raises(ValueError):
        Whitelist("a(")


def test_full_match_semantics():
    assert Whitelist("topic").is_topic_allowed("topic")
    assert not Whitelist("topic").is_topic_allowed("topic1")
    assert not Whitelist("topic").is_topic_allowed("xtopic")
    assert Whitelist("a|ab").is_topic_allowed("ab")
    assert Blacklist("black.*").is_topic_allowed("white")
    assert not Blacklist("black.*").is_topic_allowed("blacktopic")


def test_topic_event_watcher():
    assert not Whitelist("topic-a|b").requires_topic_event_watcher
    assert not Whitelist("Topic1,topic2").requires_topic_event_watcher
    assert Whitelist("a.b").requires_topic_event_watcher
    assert Whitelist("a_b").requires_topic_event_watcher
    assert Whitelist("é").requires_topic_event_watcher
    assert Blacklist("abc").requires_topic_event_watcher


topic_names = st.text(st.sampled_from("abcxyzXYZ019-_."), min_size=1, max_size=12)


@given(st.dictionaries(topic_names, st.integers(0, 64), min_size=1), st.text("abc_-1", min_size=1))
def test_static_round_trip(counts, cid):
    count = StaticTopicCount(cid, counts)
    assert parse_topic_count(cid, count.db_string()) == count


@given(st.sampled_from([Whitelist, Blacklist]), st.text("abcXYZ09-|.*", min_size=1), st.integers(0, 99))
def test_wildcard_round_trip(kind, regex, n):
    try:
        topic_filter = kind(regex)
    except ValueError:
        return
    count = WildcardTopicCount("g_c", topic_filter, n)
    assert parse_topic_count("g_c", count.db_string()) == count
