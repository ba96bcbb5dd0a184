"""Replica assignment (0.8.2's AdminUtils.assignReplicasToBrokers), manual assignments and topic names."""

import random
from collections import Counter

import pytest

from zkafka.admin.assignment import (
    AdminOperationError,
    assign_replicas_to_brokers,
    check_assignment,
    new_partitions,
    parse_replica_assignment,
)
from zkafka.errors import InvalidPartitionsError, InvalidReplicaAssignmentError, InvalidTopicError
from zkafka.topic import validate_topic_08


def test_fixed_start_matches_kafkas_own_expectation():
    expected = {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }
    assert assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, fixed_start_index=0) == expected


def test_adding_partitions_continues_the_numbering_with_the_given_start():
    # as when a topic with 3 partitions whose partition 0 starts on broker 1 grows to 5
    added = assign_replicas_to_brokers([1, 2, 3], 2, 2, fixed_start_index=1, start_partition_id=3)
    assert added == {3: [2, 3], 4: [3, 1]}  # p=3 wraps the broker list: the shift grows to 2


def test_random_start_is_seedable_and_spreads_leaders_and_replicas():
    brokers = [10, 11, 12, 13]
    first = assign_replicas_to_brokers(brokers, 8, 3, rng=random.Random(7))
    assert first == assign_replicas_to_brokers(brokers, 8, 3, rng=random.Random(7))
    assert sorted(first) == list(range(8))
    assert all(len(set(replicas)) == 3 and set(replicas) <= set(brokers) for replicas in first.values())
    assert Counter(replicas[0] for replicas in first.values()) == {b: 2 for b in brokers}
    assert Counter(r for replicas in first.values() for r in replicas) == {b: 6 for b in brokers}


def test_one_broker_one_replica():
    assert assign_replicas_to_brokers([5], 3, 1, rng=random.Random(1)) == {0: [5], 1: [5], 2: [5]}


@pytest.mark.parametrize(
    "partitions, factor, message",
    [
        (0, 1, "number of partitions must be larger than 0"),
        (1, 0, "replication factor must be larger than 0"),
        (1, 3, "replication factor: 3 larger than available brokers: 2"),
    ],
)
def test_bad_counts(partitions, factor, message):
    with pytest.raises(AdminOperationError, match=message):
        assign_replicas_to_brokers([1, 2], partitions, factor)


def test_manual_assignment():
    assert parse_replica_assignment("1:2,2:3") == {0: [1, 2], 1: [2, 3]}
    assert parse_replica_assignment(" 3 , 1", first_partition=4) == {4: [3], 5: [1]}
    with pytest.raises(AdminOperationError, match="duplicate entries: 2"):
        parse_replica_assignment("1:2,2:2")
    with pytest.raises(AdminOperationError, match="partition 1 has a different replication factor"):
        parse_replica_assignment("1:2,3")
    with pytest.raises(AdminOperationError, match="'x' is not a list of broker ids"):
        parse_replica_assignment("1,x")


def test_check_assignment():
    check_assignment({0: [1, 2], 1: [2, 1]})
    with pytest.raises(AdminOperationError, match="same number of replicas"):
        check_assignment({0: [1, 2], 1: [2]})
    with pytest.raises(AdminOperationError, match="duplicate"):
        check_assignment({0: [1, 1]})


@pytest.mark.parametrize("name", ["t", "a.b_c-D9", "x" * 249, "..."])
def test_legal_0_8_topic_names(name):
    assert validate_topic_08(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "x" * 250, "x" * 255, "a b", "a/b", "é", "a:b"])
def test_illegal_0_8_topic_names(name):
    with pytest.raises(InvalidTopicError):
        validate_topic_08(name)


def test_new_partitions_placed_or_given():
    existing = {0: [1, 2], 1: [2, 1]}
    assert new_partitions(existing, 4, [1, 2, 3], [[3, 1], [2, 3]]) == {2: [3, 1], 3: [2, 3]}
    placed = new_partitions(existing, 3, [1, 2, 3])
    assert list(placed) == [2] and len(set(placed[2])) == 2
    with pytest.raises(InvalidPartitionsError, match="can only be increased"):
        new_partitions(existing, 2, [1, 2])
    with pytest.raises(InvalidPartitionsError, match="at most"):
        new_partitions(existing, 2**31 - 1, [1, 2])  # refused before anything is built
    with pytest.raises(InvalidReplicaAssignmentError, match="2 but 1 assignments"):
        new_partitions(existing, 4, [1, 2], [[1, 2]])
    with pytest.raises(InvalidReplicaAssignmentError, match="not available"):
        new_partitions(existing, 3, [1, 2], [[1, 9]])
    with pytest.raises(InvalidReplicaAssignmentError, match="2 distinct brokers"):
        new_partitions(existing, 3, [1, 2], [[1, 1]])
