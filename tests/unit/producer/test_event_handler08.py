"""The 0.8 producer's pure decisions: partitioning (DefaultPartitioner08, sticky null keys), collation by
leader, reading a Produce answer. No sockets: the metadata is handed in."""

import random

import pytest

from zkafka.client08.topic_metadata import PartitionAndLeader
from zkafka.config08 import ProducerConfig08
from zkafka.errors import LeaderNotAvailableError, UnknownTopicOrPartitionError
from zkafka.producer.event_handler08 import (
    DefaultEventHandler08,
    Serialized,
    ValueBatch,
    failed_partitions,
    message_count,
    message_set,
    partition_and_collate,
)
from zkafka.producer.partitioner import DefaultPartitioner08
from zkafka.protocol.produce import ProduceResponsePartition, ProduceResponseTopic, ProduceResponseV0
from zkafka.records.compression import GZIP, NO_COMPRESSION
from zkafka.records.format08 import build_message_set, iter_messages
from zkafka.utils.java import java_string_hash


def test_default_partitioner_08_is_abs_hash_mod_n():
    p = DefaultPartitioner08()
    assert p.partition("key", 4) == 106079 % 4
    # A negative String hash: abs, not a mask.
    h = java_string_hash("user-17")
    assert p.partition("user-17", 7) == abs(h) % 7
    # Integer.MIN_VALUE: 0.8.2's Utils.abs gives 0 (0.7's Math.abs would stay negative).
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert p.partition("polygenelubricants", 3) == 0


def handler(**props):
    config = ProducerConfig08({"metadata.broker.list": "localhost:1", **props})
    return DefaultEventHandler08(config, DefaultPartitioner08(), rng=random.Random(1))


PARTS = [PartitionAndLeader("t", 0, 1), PartitionAndLeader("t", 1, None), PartitionAndLeader("t", 2, 2)]


def test_null_key_sticks_to_one_partition_with_a_leader_until_a_refresh():
    h = handler()
    first = h.choose("t", None, PARTS)
    assert PARTS[first].leader is not None
    assert {h.choose("t", None, PARTS) for _ in range(50)} == {first}
    seen = set()
    for _ in range(50):
        h.sticky.clear()  # what a metadata refresh does
        seen.add(h.choose("t", None, PARTS))
    assert seen == {0, 2}


def test_null_key_without_any_leader_fails():
    with pytest.raises(LeaderNotAvailableError):
        handler().choose("t", None, [PartitionAndLeader("t", 0, None)])


def test_keyed_message_goes_by_hash_over_all_partitions():
    h = handler()
    assert h.choose("t", "key", PARTS) == 106079 % 3


def test_partitioner_out_of_range_fails_the_message():
    class Bad:
        def partition(self, key, n):
            return n

    h = handler()
    h.partitioner = Bad()
    with pytest.raises(UnknownTopicOrPartitionError, match="partitioner returned 3"):
        h.choose("t", "k", PARTS)


def msg(topic, key, value=b"v"):
    return Serialized(topic, key, None if key is None else key.encode(), value)


def test_collate_groups_by_leader_then_partition_keeping_order():
    metadata = {
        "a": [PartitionAndLeader("a", 0, 1), PartitionAndLeader("a", 1, 2)],
        "b": [PartitionAndLeader("b", 0, 2), PartitionAndLeader("b", 1, None)],
    }

    def partitions_for(topic):
        if topic not in metadata:
            raise LeaderNotAvailableError(f"{topic} is being created")
        return metadata[topic]

    def choose(topic, key, partitions):
        return int(key)

    messages = [
        msg("a", "0", b"1"),
        msg("b", "0", b"2"),
        msg("a", "1", b"3"),
        msg("a", "0", b"4"),
        msg("b", "1", b"5"),
        msg("new", "0", b"6"),
    ]
    collated, failed = partition_and_collate(messages, partitions_for, choose)
    assert {
        leader: {k: [m.value for m in ms] for k, ms in groups.items()} for leader, groups in collated.items()
    } == {
        1: {("a", 0): [b"1", b"4"]},
        2: {("b", 0): [b"2"], ("a", 1): [b"3"]},
    }
    assert sorted(m.value for m in failed) == [b"5", b"6"]  # leaderless partition, topic without metadata


def test_a_value_batch_is_placed_as_one_message_and_sent_as_one_set():
    parts = {"a": [PartitionAndLeader("a", 0, 1), PartitionAndLeader("a", 1, 2)]}
    h = handler()
    keyed = ValueBatch("a", "key", b"key", [b"1", b"2", None])
    null = ValueBatch("a", None, None, [b"3"])
    single = ValueBatch("a", None, None, [b"4"])  # a null key joins the first one's partition
    collated, failed = partition_and_collate([keyed, null, single], parts.__getitem__, h.choose)
    assert failed == []
    keyed_at = ("a", 106079 % 2)
    null_at = ("a", h.sticky["a"])
    groups = {k: v for by_key in collated.values() for k, v in by_key.items()}
    if keyed_at == null_at:
        assert groups == {keyed_at: [keyed, null, single]}
    else:
        assert groups == {keyed_at: [keyed], null_at: [null, single]}
    assert message_count([keyed, null, single]) == 5
    assert message_set([keyed], NO_COMPRESSION) == build_message_set([(b"key", v) for v in keyed.values])
    mixed = message_set([keyed, null, single], GZIP)
    assert [(m.offset, m.key, m.value) for m in iter_messages(mixed)] == [
        (0, b"key", b"1"), (1, b"key", b"2"), (2, b"key", None), (3, None, b"3"), (4, None, b"4")
    ]  # fmt: skip


def response(*statuses):
    topics = {}
    for topic, partition, error in statuses:
        topics.setdefault(topic, []).append(ProduceResponsePartition(partition, error, -1 if error else 0))
    return ProduceResponseV0([ProduceResponseTopic(t, ps) for t, ps in topics.items()])


def test_failed_partitions_from_an_answer():
    sent = [("a", 0), ("a", 1), ("b", 0)]
    assert failed_partitions(sent, response(("a", 0, 0), ("a", 1, 0), ("b", 0, 0))) == []
    assert failed_partitions(sent, response(("a", 0, 0), ("a", 1, 6), ("b", 0, 5))) == [("a", 1), ("b", 0)]
    # An answer that does not cover what was sent: all of it is resent.
    assert failed_partitions(sent, response(("a", 0, 0), ("a", 1, 0))) == sent
