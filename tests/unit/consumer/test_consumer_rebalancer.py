"""The consumer's share computation (GroupView), small fetcher rules and how a failed ZooKeeper transaction is
read, without ZooKeeper."""

from __future__ import annotations

import pytest
from kazoo.exceptions import NodeExistsError, RolledBackError, RuntimeInconsistency

from zkafka.assignment.range_assignor import assign
from zkafka.consumer.group_view import GroupView
from zkafka.consumer.partition_state import reset_time
from zkafka.errors import InvalidConfigError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.zk.client import first_failure


def view(threads, partitions, mine):
    return GroupView(
        brokers={},
        consumers=[],
        threads_per_topic=threads,
        partitions_per_topic=partitions,
        my_threads_per_topic=mine,
    )


def test_my_share_is_my_part_of_the_range_assignment():
    threads = {"t": ["g_b-0", "g_a-0", "g_a-1"], "u": ["g_a-0", "g_b-0"]}
    parts = {"t": ["0-0", "0-1", "1-0", "1-1", "1-2"], "u": ["0-0"]}
    v = view(threads, parts, {"t": ["g_a-0", "g_a-1"], "u": ["g_a-0"]})
    full = assign(threads, parts)
    assert v.my_share() == {k: o for k, o in full.items() if o.startswith("g_a-")}
    assert v.my_share() == {
        ("t", "0-0"): "g_a-0",
        ("t", "0-1"): "g_a-0",
        ("t", "1-0"): "g_a-1",
        ("t", "1-1"): "g_a-1",
        ("u", "0-0"): "g_a-0",
    }


def test_every_member_computes_disjoint_shares_covering_everything():
    threads = {"t": [f"g_c{i}-0" for i in range(7)]}
    parts = {"t": [f"{b}-{p}" for b in range(3) for p in range(5)]}
    shares = [view(threads, parts, {"t": [f"g_c{i}-0"]}).my_share() for i in range(7)]
    keys = [k for s in shares for k in s]
    assert sorted(keys) == sorted(("t", p) for p in parts["t"])


def test_a_topic_without_partitions_or_members_gives_nothing():
    assert view({"t": ["g_a-0"]}, {"t": []}, {"t": ["g_a-0"]}).my_share() == {}
    assert view({"t": []}, {"t": ["0-0"]}, {"t": []}).my_share() == {}


def test_reset_time():
    assert reset_time("smallest") == EARLIEST_TIME
    assert reset_time("largest") == LATEST_TIME
    with pytest.raises(InvalidConfigError, match="autooffset.reset"):
        reset_time("earliest")


def test_the_failed_operation_of_a_transaction_is_the_one_not_rolled_back():
    paths = ["/o/t/0", "/o/t/1", "/o/t/2"]
    assert first_failure(paths, ["/o/t/0", "/o/t/1", "/o/t/2"]) is None
    assert first_failure(paths, [True, True, True]) is None
    taken = NodeExistsError()
    assert first_failure(paths, [RolledBackError(), taken, RuntimeInconsistency()]) == ("/o/t/1", taken)
