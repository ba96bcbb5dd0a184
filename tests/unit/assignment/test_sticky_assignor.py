"""Sticky assignment on plain inputs (the group client's StickyAssignor is tested with its user data in
tests/unit/consumer/group/test_assignors.py)."""

from zkafka.assignment.sticky_assignor import sticky_assign

PARTITIONS = [("t", p) for p in range(6)]
TOPICS = {"a": {"t"}, "b": {"t"}, "c": {"t"}}


def test_without_history_every_member_gets_a_fair_share():
    owned = sticky_assign(PARTITIONS, TOPICS, {})
    assert sorted(len(tps) for tps in owned.values()) == [2, 2, 2]
    assert sorted(tp for tps in owned.values() for tp in tps) == PARTITIONS


def test_members_keep_what_they_owned_and_a_joiner_takes_only_what_balance_needs():
    previous = {"a": ([("t", 0), ("t", 1), ("t", 2)], 3), "b": ([("t", 3), ("t", 4), ("t", 5)], 3)}
    owned = sticky_assign(PARTITIONS, TOPICS, previous)
    assert len(owned["c"]) == 2
    assert set(owned["a"]) <= {("t", 0), ("t", 1), ("t", 2)}
    assert set(owned["b"]) <= {("t", 3), ("t", 4), ("t", 5)}


def test_a_partition_claimed_twice_goes_to_the_later_generation():
    previous = {"a": ([("t", 0)], 1), "b": ([("t", 0)], 2)}
    owned = sticky_assign([("t", 0)], {"a": {"t"}, "b": {"t"}}, previous)
    assert owned == {"a": [], "b": [("t", 0)]}
