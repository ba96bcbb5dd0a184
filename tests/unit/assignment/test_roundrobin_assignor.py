"""The 0.8 ZooKeeper consumer's assignors (zkafka.assignment): range over partition ids and roundrobin."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.assignment.assignor import ASSIGNORS, member_share
from zkafka.assignment.range_assignor import assign
from zkafka.assignment.roundrobin_assignor import deal, roundrobin_assign, topic_partition_hash
from zkafka.topic_count import thread_ids


def test_range_sorts_partition_ids_as_numbers():
    # 0.7 names sort as strings ("10" before "2"); 0.8 ids as numbers: 12 partitions, 5 threads,
    # per = 2, extra = 2 -> c-0: 0 1 2, c-1: 3 4 5, c-2: 6 7, c-3: 8 9, c-4: 10 11.
    owner = assign({"t": [f"c-{i}" for i in range(5)]}, {"t": list(range(11, -1, -1))})
    by_thread: dict[str, list[int]] = {}
    for (_, partition), thread in sorted(owner.items()):
        by_thread.setdefault(thread, []).append(partition)
    assert by_thread == {"c-0": [0, 1, 2], "c-1": [3, 4, 5], "c-2": [6, 7], "c-3": [8, 9], "c-4": [10, 11]}


def test_topic_partition_hash_is_javas_hash_of_the_bracketed_name():
    # "[a,0]".hashCode: 91 -> 91*31+97 = 2918 -> *31+44 = 90502 -> *31+48 = 2805610 -> *31+93 = 86974003
    assert topic_partition_hash("a", 0) == 86974003
    assert topic_partition_hash("a", 1) == 86974003 + 31
    # "[t,10]": 91, 2937, 91091, 2823870, 87540018, 2713740651 -> wraps to 2713740651 - 2**32
    assert topic_partition_hash("t", 10) == 2713740651 - 2**32


def test_roundrobin_deals_in_hash_order():
    # "[t,10]" and "[t,11]" wrap negative, so they come first: 10 11 0 1 2 ... 9 dealt to c-0 c-1 c-2.
    owner = roundrobin_assign({"t": ["c-2", "c-0", "c-1"]}, {"t": list(range(12))})
    by_thread: dict[str, list[int]] = {}
    for (_, partition), thread in owner.items():
        by_thread.setdefault(thread, []).append(partition)
    assert {t: sorted(ps) for t, ps in by_thread.items()} == {
        "c-0": [1, 4, 7, 10],
        "c-1": [2, 5, 8, 11],
        "c-2": [0, 3, 6, 9],
    }


def test_roundrobin_deals_across_topics():
    # "[orders,p]" hashes are negative, "[payments,p]" positive: orders 0-3 then payments 0-3.
    threads = {"orders": ["g_a-0", "g_b-0", "g_b-1"], "payments": ["g_b-1", "g_a-0", "g_b-0"]}
    owner = roundrobin_assign(threads, {"orders": [0, 1, 2, 3], "payments": [0, 1, 2, 3]})
    assert owner == {
        ("orders", 0): "g_a-0",
        ("orders", 1): "g_b-0",
        ("orders", 2): "g_b-1",
        ("orders", 3): "g_a-0",
        ("payments", 0): "g_b-0",
        ("payments", 1): "g_b-1",
        ("payments", 2): "g_a-0",
        ("payments", 3): "g_b-0",
    }
    assert member_share(
        threads, {"orders": [0, 1, 2, 3], "payments": [0, 1, 2, 3]}, ["g_a-0"], roundrobin_assign
    ) == {
        ("orders", 0): "g_a-0",
        ("orders", 3): "g_a-0",
        ("payments", 2): "g_a-0",
    }


def test_roundrobin_refuses_different_subscriptions():
    with pytest.raises(ValueError, match="same topics"):
        roundrobin_assign({"a": ["c1-0", "c2-0"], "b": ["c1-0"]}, {"a": [0], "b": [0]})
    with pytest.raises(ValueError, match="same topics"):  # same topics, different stream counts
        roundrobin_assign({"a": ["c1-0", "c1-1", "c2-0"], "b": ["c1-0", "c2-0"]}, {"a": [0], "b": [0]})


def test_roundrobin_edges():
    assert roundrobin_assign({}, {"t": [0]}) == {}
    assert roundrobin_assign({"t": ["c-0"]}, {}) == {}
    assert roundrobin_assign({"t": ["c-0"]}, {"t": []}) == {}
    with pytest.raises(ValueError, match="duplicate"):
        roundrobin_assign({"t": ["c-0"]}, {"t": [1, 1]})
    assert set(ASSIGNORS) == {"range", "roundrobin"}


@given(
    st.dictionaries(st.sampled_from(["a", "b", "orders", "x.y-z"]), st.integers(0, 40), min_size=1),
    st.dictionaries(st.sampled_from(["g_c1", "g_c2", "g_c3"]), st.integers(1, 4), min_size=1),
)
def test_both_assignors_give_every_partition_to_exactly_one_thread(partitions, consumers):
    # Identical subscriptions: every consumer subscribes to every topic with its stream count.
    all_threads = [tid for c, n in consumers.items() for tid in thread_ids(c, n)]
    threads = {topic: list(all_threads) for topic in partitions}
    parts = {topic: list(range(n)) for topic, n in partitions.items()}
    for name, assignor in ASSIGNORS.items():
        owner = assignor(threads, parts)
        assert set(owner) == {(t, p) for t, ps in parts.items() for p in ps}, name
        shares = [member_share(threads, parts, thread_ids(c, n), assignor) for c, n in consumers.items()]
        assert sum(len(s) for s in shares) == len(owner)
        merged = {k: v for s in shares for k, v in s.items()}
        assert merged == owner
    # roundrobin balances over all topics together: thread loads differ by at most one
    loads = {tid: 0 for tid in all_threads}
    for thread in roundrobin_assign(threads, parts).values():
        loads[thread] += 1
    assert max(loads.values()) - min(loads.values()) <= 1


def test_deal_skips_takers_not_subscribed_to_the_topic():
    ordered = [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert deal(ordered, ["m1", "m2"]) == {("a", 0): "m1", ("a", 1): "m2", ("b", 0): "m1", ("b", 1): "m2"}
    topics_of = {"m1": {"a"}, "m2": {"a", "b"}}
    assert deal(ordered, ["m1", "m2"], topics_of) == {
        ("a", 0): "m1",
        ("a", 1): "m2",
        ("b", 0): "m2",
        ("b", 1): "m2",
    }
