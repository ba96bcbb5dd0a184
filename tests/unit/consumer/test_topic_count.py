"""Consumer ids, thread ids and topic filters (zkafka.topic_count)."""

import pytest

from zkafka.topic_count import Blacklist, Whitelist, consumer_id, normalise_filter, thread_ids


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
