"""TopicMetadataCache.partitions: made once per metadata answer (the producer asks on every request), the
same answer as before, and a fresh list each call. The order brokers are asked in: those that failed last."""

from __future__ import annotations

import random

import pytest

from zkafka.client08.topic_metadata import (
    PartitionAndLeader,
    TopicMetadataCache,
    ask_order,
    fetch_topic_metadata,
)
from zkafka.errors import BrokerNotAvailableError
from zkafka.launch.zookeeper_server import free_port
from zkafka.protocol.metadata import PartitionMetadata, TopicMetadata


def topic_metadata(leaders: dict[int, int]) -> TopicMetadata:
    return TopicMetadata(0, "t", [PartitionMetadata(0, p, leader, [], []) for p, leader in leaders.items()])


def test_partitions_by_id_with_leaders_until_the_next_answer() -> None:
    cache = TopicMetadataCache([("127.0.0.1", 1)])
    cache.topics["t"] = topic_metadata({1: 5, 0: -1})
    first = cache.partitions("t")
    assert first == [PartitionAndLeader("t", 0, None), PartitionAndLeader("t", 1, 5)]
    first.clear()  # a caller's list is its own
    assert cache.partitions("t") == [PartitionAndLeader("t", 0, None), PartitionAndLeader("t", 1, 5)]
    cache.topics["t"] = topic_metadata({0: 7, 1: 5})  # a new answer replaces the topic's metadata
    assert cache.partitions("t") == [PartitionAndLeader("t", 0, 7), PartitionAndLeader("t", 1, 5)]


def test_brokers_that_failed_are_asked_last_the_latest_failure_last() -> None:
    brokers = [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("b", 2)]
    failed = {("a", 1): 20.0, ("c", 3): 10.0}
    firsts = set()
    for seed in range(20):
        order = ask_order(brokers, failed, random.Random(seed))
        assert sorted(order[:2]) == [("b", 2), ("d", 4)]
        assert order[2:] == [("c", 3), ("a", 1)]
        firsts.add(order[0])
    assert firsts == {("b", 2), ("d", 4)}  # the others in random order


def test_a_metadata_lookup_remembers_a_broker_that_failed_it() -> None:
    port = free_port()  # nothing listens: the connection is refused
    failed: dict[tuple[str, int], float] = {}
    with pytest.raises(BrokerNotAvailableError, match=f"127.0.0.1:{port}"):
        fetch_topic_metadata(["t"], [("127.0.0.1", port)], timeout_ms=2000, failed=failed)
    assert list(failed) == [("127.0.0.1", port)]
