"""The steps of a partition reassignment (§8.7), without ZooKeeper."""

from zkafka.controller.reassignment import ReassignmentStep, reassignment_step
from zkafka.zk.paths08 import PartitionState


def state(leader, epoch, isr):
    return PartitionState(leader, epoch, tuple(isr), 1, 3)


def test_a_move_walks_expand_wait_finish_done():
    # [1, 2] -> [2, 3]
    step = reassignment_step([2, 3], [1, 2], state(1, 4, [1, 2]), {1, 2, 3}, 2)
    assert step == ReassignmentStep("expand", (1, 2, 3), PartitionState(1, 5, (1, 2), 2))
    assert reassignment_step([2, 3], [1, 2, 3], state(1, 5, [1, 2]), {1, 2, 3}, 2).action == "wait"
    step = reassignment_step([2, 3], [1, 2, 3], state(1, 5, [1, 2, 3]), {1, 2, 3}, 2)
    assert step == ReassignmentStep("finish", (2, 3), PartitionState(2, 6, (2, 3), 2))  # 1 gave way
    assert reassignment_step([2, 3], [2, 3], state(2, 6, [2, 3]), {1, 2, 3}, 2).action == "done"


def test_a_leader_kept_in_the_new_replicas_stays_leader():
    step = reassignment_step([3, 1], [1, 2, 3], state(1, 5, [3, 2, 1]), {1, 2, 3}, 2)
    assert step == ReassignmentStep("finish", (3, 1), PartitionState(1, 6, (3, 1), 2))


def test_a_dead_leader_gives_way_to_a_live_new_replica_in_the_isr():
    step = reassignment_step([1, 3], [1, 2, 3], state(1, 5, [1, 3, 2]), {2, 3}, 2)
    assert step.action == "abort"  # 1 is a new replica and it is dead
    step = reassignment_step([3, 2], [1, 2, 3], state(1, 5, [1, 3, 2]), {2, 3}, 2)
    assert step == ReassignmentStep("finish", (3, 2), PartitionState(3, 6, (3, 2), 2))


def test_a_move_to_a_dead_or_duplicate_broker_is_abandoned():
    assert reassignment_step([2, 9], [1, 2], state(1, 1, [1, 2]), {1, 2}, 2).action == "abort"
    assert reassignment_step([2, 2], [1, 2], state(1, 1, [1, 2]), {1, 2}, 2).action == "abort"
    assert reassignment_step([], [1, 2], state(1, 1, [1, 2]), {1, 2}, 2).action == "abort"
