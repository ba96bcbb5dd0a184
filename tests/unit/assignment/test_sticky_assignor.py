"""Sticky and cooperative-sticky assignment on plain inputs (the group client's StickyAssignor is tested with its user data in
tests/unit/consumer/group/test_assignors.py)."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from zkafka.assignment.sticky_assignor import cooperative_assign, sticky_assign

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


@settings(max_examples=60, deadline=None)
@given(
    members=st.integers(1, 6),
    partitions=st.integers(0, 20),
    seed=st.integers(0, 1 << 30),
)
def test_cooperative_never_gives_a_partition_to_a_new_owner_while_another_owns_it(members, partitions, seed):
    """Whatever each member owned (random, possibly overlapping), a partition goes to a member in the result
    only if that member owned it or nobody did; a second round with the result as ownership is balanced."""
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(members)]
    valid = [("t", p) for p in range(partitions)]
    topics = dict.fromkeys(names, {"t"})
    previous = {m: ([tp for tp in valid if rng.random() < 0.3], rng.randint(-1, 3)) for m in names}
    result = cooperative_assign(valid, topics, previous)
    for member, tps in result.items():
        for tp in tps:
            claimants = {m for m, (owned, _) in previous.items() if tp in owned}
            assert not claimants or member in claimants
    assert len({tp for tps in result.values() for tp in tps}) == sum(len(tps) for tps in result.values())
    settled = cooperative_assign(valid, topics, {m: (tps, 5) for m, tps in result.items()})
    assert sorted(tp for tps in settled.values() for tp in tps) == valid
    counts = [len(tps) for tps in settled.values()]
    assert max(counts) - min(counts) <= 1
