"""Range assignment (zkafka.assignment.range_assignor): hand-checked cases and properties of the 0.7 formula."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.assignment.assignor import owned_by
from zkafka.assignment.range_assignor import (
    assign,
    broker_partitions,
    parse_partition_name,
    partition_name,
    range_assign,
    range_share,
    sort_partitions,
    sort_threads,
)


def test_partitions_sort_as_strings():
    assert sort_partitions(["2-0", "10-0", "1-2", "1-10"]) == ["1-10", "1-2", "10-0", "2-0"]


def test_threads_sort_as_strings():
    assert sort_threads(["g_c-2", "g_c-10", "g_b-0"]) == ["g_b-0", "g_c-10", "g_c-2"]


def test_partition_names():
    assert partition_name(3, 7) == "3-7"
    assert parse_partition_name("10-2") == (10, 2)
    for bad in ["1", "1-2-3", "a-1", ""]:
        with pytest.raises(ValueError):
            parse_partition_name(bad)
    assert broker_partitions({2: 1, 1: 3}) == ["1-0", "1-1", "1-2", "2-0"]
    assert broker_partitions({}) == []


def test_twelve_partitions_on_broker_1_and_two_on_broker_2():
    # Sorted: 1-0 1-1 1-10 1-11 1-2 1-3 ... 1-9 2-0 2-1 (P = 14). Threads g_a-0, g_a-1, g_b-0 (C = 3).
    # per = 14 div 3 = 4, extra = 14 mod 3 = 2:
    #   i=0: start 4*0+min(0,2) = 0,  count 4+1 = 5 -> 1-0 1-1 1-10 1-11 1-2
    #   i=1: start 4*1+min(1,2) = 5,  count 4+1 = 5 -> 1-3 1-4 1-5 1-6 1-7
    #   i=2: start 4*2+min(2,2) = 10, count 4   = 4 -> 1-8 1-9 2-0 2-1
    partitions = broker_partitions({1: 12, 2: 2})
    owner = range_assign(partitions, ["g_b-0", "g_a-1", "g_a-0"])
    by_thread = owned_by({("t", p): t for p, t in owner.items()}, ["g_a-0", "g_a-1", "g_b-0"])["t"]
    assert by_thread == {
        "g_a-0": ["1-0", "1-1", "1-10", "1-11", "1-2"],
        "g_a-1": ["1-3", "1-4", "1-5", "1-6", "1-7"],
        "g_b-0": ["1-8", "1-9", "2-0", "2-1"],
    }


def test_thread_ten_sorts_before_thread_two():
    # 11 threads c-0..c-10 sort as c-0 c-1 c-10 c-2 ... c-9; 12 partitions: per = 1, extra = 1,
    # so c-0 gets 0-0 and 0-1, c-1 gets 0-10 (third in string order), c-10 gets 0-11.
    owner = range_assign(broker_partitions({0: 12}), [f"c-{i}" for i in range(11)])
    assert [p for p, t in owner.items() if t == "c-0"] == ["0-0", "0-1"]
    assert owner["0-10"] == "c-1"
    assert owner["0-11"] == "c-10"
    assert owner["0-2"] == "c-2"


def test_more_threads_than_partitions():
    # P = 2, C = 3: per = 0, extra = 2 -> the first two sorted threads get one each, the third none.
    assert range_assign(["1-0", "0-0"], ["z", "y", "x"]) == {"0-0": "x", "1-0": "y"}


def test_range_share_formula():
    assert [range_share(10, 4, i) for i in range(4)] == [(0, 3), (3, 3), (6, 2), (8, 2)]


def test_empty_inputs_assign_nothing():
    assert range_assign([], ["a"]) == {}
    assert range_assign(["0-0"], []) == {}


def test_duplicates_are_rejected():
    with pytest.raises(ValueError):
        range_assign(["0-0", "0-0"], ["a"])
    with pytest.raises(ValueError):
        range_assign(["0-0"], ["a", "a"])


def test_assign_all_topics():
    threads = {"t1": ["g_a-0", "g_b-0"], "t2": ["g_a-0"], "no-partitions": ["g_a-0"], "no-threads": []}
    partitions = {"t1": ["0-0", "0-1", "1-0"], "t2": ["0-0"], "no-threads": ["0-0"], "no-consumers": ["0-0"]}
    owner = assign(threads, partitions)
    assert owner == {
        ("t1", "0-0"): "g_a-0",
        ("t1", "0-1"): "g_a-0",
        ("t1", "1-0"): "g_b-0",
        ("t2", "0-0"): "g_a-0",
    }
    assert owned_by(owner, ["g_b-0"]) == {"t1": {"g_b-0": ["1-0"]}}
    assert owned_by(owner, ["g_c-0"]) == {}


partition_sets = st.sets(
    st.tuples(st.integers(0, 12), st.integers(0, 15)).map(lambda bp: partition_name(*bp)), max_size=60
)
thread_sets = st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=20)


@given(partition_sets, thread_sets)
def test_every_partition_has_exactly_one_owner(partitions, threads):
    owner = range_assign(partitions, threads)
    assert set(owner) == partitions
    assert set(owner.values()) <= threads


@given(partition_sets, thread_sets)
def test_shares_follow_the_formula(partitions, threads):
    owner = range_assign(partitions, threads)
    ordered = sorted(threads)
    counts = [sum(1 for t in owner.values() if t == thread) for thread in ordered]
    per, extra = divmod(len(partitions), len(threads))
    assert max(counts) - min(counts) <= 1
    assert counts == [per + 1] * extra + [per] * (len(threads) - extra)
    # Shares are consecutive runs of the sorted partitions, in sorted-thread order.
    assert [owner[p] for p in sorted(partitions)] == [
        t for t, n in zip(ordered, counts, strict=True) for _ in range(n)
    ]


@given(partition_sets, thread_sets, st.randoms(use_true_random=False))
def test_input_order_does_not_matter(partitions, threads, rnd: random.Random):
    parts, ids = list(partitions), list(threads)
    expected = range_assign(parts, ids)
    rnd.shuffle(parts)
    rnd.shuffle(ids)
    assert range_assign(parts, ids) == expected


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), partition_sets),
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), thread_sets),
)
def test_consumers_split_each_topic_without_overlap(partitions_per_topic, threads_per_topic):
    owner = assign(threads_per_topic, partitions_per_topic)
    expected_keys = {
        (topic, p)
        for topic, parts in partitions_per_topic.items()
        if threads_per_topic.get(topic)
        for p in parts
    }
    assert set(owner) == expected_keys
    # Give each thread to one of two consumers; their shares partition the assignment.
    all_threads = {t for ts in threads_per_topic.values() for t in ts}
    first = set(sorted(all_threads)[::2])
    shares = [owned_by(owner, first), owned_by(owner, all_threads - first)]
    seen = [(topic, p) for share in shares for topic, per in share.items() for ps in per.values() for p in ps]
    assert sorted(seen) == sorted(owner)
