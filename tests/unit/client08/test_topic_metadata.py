"""TopicMetadataCache.partitions: made once per metadata answer (the producer asks on every request), the
same answer as before, and a fresh list each call."""

from __future__ import annotations

from zkafka.client08.topic_metadata import PartitionAndLeader, TopicMetadataCache
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
