"""The controller's decisions without ZooKeeper: new partitions, dead leaders, ISR shrink, unclean election."""

import pytest

from zkafka.controller.leader_selector import (
    StateChange,
    imbalanced_partitions,
    new_partition_state,
    next_partition_state,
    partition_state_changes,
    preferred_replica_changes,
    preferred_replica_state,
)
from zkafka.zk.paths08 import PartitionState


def state(leader, epoch, isr, controller_epoch=1, zk_version=0):
    return PartitionState(leader, epoch, tuple(isr), controller_epoch, zk_version)


def test_new_partition_takes_the_first_live_replica_and_all_live_replicas_as_isr():
    assert new_partition_state([1, 2, 3], {2, 3}, 5) == PartitionState(2, 0, (2, 3), 5)
    assert new_partition_state([1], {1}, 1) == PartitionState(1, 0, (1,), 1)
    assert new_partition_state([1, 2], {3}, 1) is None


def test_live_leader_with_a_full_isr_stands():
    assert next_partition_state([1, 2], state(1, 3, [1, 2]), {1, 2}, True, 2) is None


def test_dead_isr_members_leave_the_isr_of_a_live_leader():
    assert next_partition_state([1, 2, 3], state(1, 3, [1, 2, 3]), {1, 3}, True, 2) == state(
        1, 4, [1, 3], 2, -1
    )


def test_dead_leader_hands_over_to_the_first_live_isr_member_in_assignment_order():
    new = next_partition_state([3, 1, 2], state(3, 0, [2, 1, 3]), {1, 2}, False, 2)
    assert new == PartitionState(1, 1, (2, 1), 2)


def test_single_replica_dies_then_returns():
    # one replica: the partition goes offline (leader -1, empty ISR under unclean election), then comes back
    offline = next_partition_state([1], state(1, 0, [1]), set(), True, 1)
    assert offline == PartitionState(-1, 1, (), 1)
    assert next_partition_state([1], offline, set(), True, 1) is None  # already offline: nothing to write
    back = next_partition_state([1], offline, {1}, True, 1)
    assert back == PartitionState(1, 2, (1,), 1)


def test_without_unclean_election_the_isr_is_never_emptied_and_only_an_isr_member_may_lead():
    offline = next_partition_state([1, 2], state(1, 0, [1]), {2}, False, 1)
    assert offline == PartitionState(-1, 1, (1,), 1)
    assert next_partition_state([1, 2], offline, {2}, False, 1) is None  # 2 is not in the ISR
    assert next_partition_state([1, 2], offline, {1, 2}, False, 1) == PartitionState(1, 2, (1,), 1)


def test_unclean_election_takes_the_first_live_replica_with_isr_of_itself():
    new = next_partition_state([1, 2, 3], state(1, 4, [1]), {2, 3}, True, 1)
    assert new == PartitionState(2, 5, (2,), 1)


def test_a_state_from_a_newer_controller_is_never_touched():
    assert next_partition_state([1], state(1, 0, [1], controller_epoch=9), set(), True, 8) is None


def test_partition_state_changes_over_a_cluster_view():
    assignments = {"b": {0: [1], 1: [2]}, "a": {0: [2]}, "gone": {0: [1]}}
    states = {("b", 0): state(1, 0, [1], zk_version=3), ("b", 1): None, ("a", 0): state(2, 0, [2])}
    asked = []

    def unclean(topic):
        asked.append(topic)
        return True

    changes = partition_state_changes(assignments, states, {2}, 4, unclean=unclean, skip_topics={"gone"})
    assert changes == [
        StateChange("b", 0, states[("b", 0)], PartitionState(-1, 1, (), 4)),
        StateChange("b", 1, None, PartitionState(2, 0, (2,), 4)),
    ]
    assert asked == ["b"]  # only a partition with no live ISR member needs the topic's setting


@pytest.mark.parametrize("unclean, leader", [(True, 2), (False, -1)])
def test_partition_state_changes_asks_the_topic_about_unclean_election(unclean, leader):
    changes = partition_state_changes(
        {"t": {0: [1, 2]}}, {("t", 0): state(1, 0, [1])}, {2}, 1, lambda t: unclean
    )
    assert changes[0].new.leader == leader


def test_controlled_shutdown_moves_leadership_to_the_first_other_isr_member():
    new = next_partition_state([1, 2, 3], state(1, 4, [1, 3, 2]), {1, 2, 3}, True, 2, shutting_down={1})
    assert new == PartitionState(2, 5, (3, 2), 2)


def test_controlled_shutdown_takes_a_follower_out_of_the_isr():
    new = next_partition_state([1, 2, 3], state(2, 4, [1, 2, 3]), {1, 2, 3}, True, 2, shutting_down={3})
    assert new == PartitionState(2, 5, (1, 2), 2)


def test_a_broker_shutting_down_keeps_what_no_other_isr_member_can_take():
    # one replica, or no other live ISR member: it stays leader until it goes (never an unclean move)
    assert next_partition_state([1], state(1, 4, [1]), {1}, True, 2, shutting_down={1}) is None
    assert next_partition_state([1, 2], state(1, 4, [1]), {1, 2}, True, 2, shutting_down={1}) is None


def test_a_broker_shutting_down_is_not_elected_for_an_offline_or_new_partition():
    offline = state(3, 4, [3, 1])
    assert next_partition_state([3, 1], offline, {1}, True, 2, shutting_down={1}) == PartitionState(
        -1, 5, (), 2
    )
    changes = partition_state_changes({"n": {0: (1, 2)}}, {}, {1, 2}, 2, shutting_down={1})
    assert [c.new for c in changes] == [PartitionState(2, 0, (2,), 2)]


def test_a_preferred_replica_election_moves_leadership_to_the_live_in_sync_first_replica():
    assert preferred_replica_state([1, 2, 3], state(2, 4, [2, 1, 3]), {1, 2, 3}, 2) == PartitionState(
        1, 5, (2, 1, 3), 2
    )
    assert preferred_replica_state([1, 2, 3], state(1, 4, [1, 2]), {1, 2, 3}, 2) is None  # leads already
    assert preferred_replica_state([1, 2, 3], state(2, 4, [2, 3]), {1, 2, 3}, 2) is None  # not in the ISR
    assert preferred_replica_state([1, 2, 3], state(2, 4, [2, 1]), {2, 3}, 2) is None  # dead
    changes = preferred_replica_changes(
        {"t": {0: (1, 2), 1: (2, 1)}},
        {("t", 0): state(2, 1, [1, 2]), ("t", 1): state(2, 1, [1, 2])},
        [("t", 0), ("t", 1), ("gone", 0)],
        {1, 2},
        3,
    )
    assert [(c.partition, c.new.leader) for c in changes] == [(0, 1)]


def test_auto_rebalance_hands_back_partitions_of_brokers_over_the_imbalance_percentage():
    assignments = {
        "t": {p: (1 + p % 2, 2 - p % 2) for p in range(10)}
    }  # 1 prefers 0,2,4,..; 2 prefers 1,3,..
    states = {("t", p): state(1, 1, [1, 2]) for p in range(10)}  # 1 leads all
    assert imbalanced_partitions(assignments, states, {1, 2}, 10) == {("t", p) for p in range(1, 10, 2)}
    assert imbalanced_partitions(assignments, states, {1}, 10) == set()  # 2 is dead: nothing to hand back
    states |= {("t", p): state(2, 1, [2, 1]) for p in (1, 3, 5, 7)}  # 1 of 5 elsewhere: 20 %
    assert imbalanced_partitions(assignments, states, {1, 2}, 20) == set()
    assert imbalanced_partitions(assignments, states, {1, 2}, 19) == {("t", 9)}
