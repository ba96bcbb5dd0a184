"""Assignors: range and roundrobin on 0.9's Java test cases, properties of all three with hypothesis, and the
sticky assignor's moves across membership changes."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkafka.consumer.group.assignors import (
    COOPERATIVE,
    EAGER,
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    all_partitions_sorted,
    assign_group,
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_sticky_user_data,
    get_assignor,
    owners,
    partitions_moved,
    subscription_metadata,
)
from zkafka.errors import InvalidRequestError
from zkafka.protocol.group_membership import ConsumerProtocolMetadata

ASSIGNORS = [RangeAssignor(), RoundRobinAssignor(), StickyAssignor()]
MIXED = {"c1": Subscription(["t1"]), "c2": Subscription(["t1", "t2"]), "c3": Subscription(["t1"])}
BOTH = {"c1": Subscription(["t1", "t2"]), "c2": Subscription(["t1", "t2"])}


def test_range_java_cases() -> None:
    assert RangeAssignor().assign({"t1": 3, "t2": 2}, MIXED) == {
        "c1": {"t1": [0]},
        "c2": {"t1": [1], "t2": [0, 1]},
        "c3": {"t1": [2]},
    }
    assert RangeAssignor().assign({"t1": 3, "t2": 3}, BOTH) == {
        "c1": {"t1": [0, 1], "t2": [0, 1]},
        "c2": {"t1": [2], "t2": [2]},
    }


def test_roundrobin_java_cases() -> None:
    assert RoundRobinAssignor().assign({"t1": 3, "t2": 2}, MIXED) == {
        "c1": {"t1": [0]},
        "c2": {"t1": [1], "t2": [0, 1]},
        "c3": {"t1": [2]},
    }
    assert RoundRobinAssignor().assign({"t1": 3, "t2": 3}, BOTH) == {
        "c1": {"t1": [0, 2], "t2": [1]},
        "c2": {"t1": [1], "t2": [0, 2]},
    }


@pytest.mark.parametrize("assignor", ASSIGNORS, ids=lambda a: a.name)
def test_topics_without_metadata_and_members_without_topics(assignor) -> None:
    subscriptions = {"a": Subscription(["t", "missing"]), "b": Subscription([])}
    assert assignor.assign({"t": 2}, subscriptions) == {"a": {"t": [0, 1]}, "b": {}}
    assert assignor.assign({}, {}) == {}


def test_get_assignor_by_protocol_or_java_class_name() -> None:
    assert get_assignor("range").name == "range"
    assert get_assignor("org.apache.kafka.clients.consumer.RoundRobinAssignor").name == "roundrobin"
    assert get_assignor("sticky").name == "sticky"
    with pytest.raises(ValueError, match="unknown partition assignor 'nope'"):
        get_assignor("nope")


def test_assign_group_is_the_leaders_step_on_the_wire_bytes() -> None:
    metadata = {m: subscription_metadata(RangeAssignor(), ["t"]) for m in ("m2", "m1")}
    # ConsumerProtocolSubscription v2: topics, user data, owned partitions (v1), generation (v2)
    assert metadata["m1"].hex() == "0002" "00000001" "000174" "00000000" "00000000" "ffffffff"
    assert ConsumerProtocolMetadata.decode(metadata["m1"]) == ConsumerProtocolMetadata(2, ["t"], b"")
    result = assign_group(RangeAssignor(), {"t": 3}, metadata)
    assert {m: decode_assignment(data) for m, data in result.items()} == {
        "m1": {"t": [0, 1]},
        "m2": {"t": [2]},
    }
    assert decode_assignment(b"") == {}


def test_sticky_user_data_round_trip_and_errors() -> None:
    data = encode_sticky_user_data({"t": [2, 0], "u": []}, 7)
    assert data.hex() == "00000000000100017400000002000000000000000200000007"
    assert decode_sticky_user_data(data) == ([("t", 0), ("t", 2)], 7)
    assert decode_sticky_user_data(b"") == ([], -1)
    with pytest.raises(InvalidRequestError):
        decode_sticky_user_data(b"\x00\x00\x00")


# -- properties -------------------------------------------------------------------------------------------

topic_names = st.sampled_from(["a", "b", "c", "d"])
cluster = st.dictionaries(topic_names, st.integers(0, 12), max_size=4)
member_ids = st.text("xyz0123", min_size=1, max_size=4)
subscriptions = st.dictionaries(
    member_ids, st.lists(topic_names, max_size=4, unique=True).map(Subscription), max_size=7
)


def _check_exactly_once(partitions_per_topic, subs, assignment) -> None:
    assert set(assignment) == set(subs)
    seen = [(t, p) for topics in assignment.values() for t, ps in topics.items() for p in ps]
    assert len(seen) == len(set(seen))
    assert set(seen) == set(all_partitions_sorted(partitions_per_topic, subs))
    for member, topics in assignment.items():
        assert set(topics) <= set(subs[member].topics)
        assert all(ps == sorted(ps) and ps for ps in topics.values())


@settings(max_examples=200, deadline=None)
@given(cluster, subscriptions, st.randoms(use_true_random=False))
def test_every_partition_is_assigned_exactly_once_and_deterministically(partitions, subs, rng) -> None:
    for assignor in ASSIGNORS:
        assignment = assignor.assign(partitions, subs)
        _check_exactly_once(partitions, subs, assignment)
        shuffled = list(subs.items())
        rng.shuffle(shuffled)
        assert assignor.assign(partitions, dict(shuffled)) == assignment


@settings(max_examples=200, deadline=None)
@given(cluster, st.sets(member_ids, min_size=1, max_size=7))
def test_equal_subscriptions_are_balanced(partitions, members) -> None:
    subs = {m: Subscription(sorted(partitions)) for m in members}
    for assignor in (RoundRobinAssignor(), StickyAssignor()):
        counts = [sum(map(len, t.values())) for t in assignor.assign(partitions, subs).values()]
        assert max(counts) - min(counts) <= 1
    for topic in partitions:  # range balances each topic on its own
        counts = [len(t.get(topic, [])) for t in RangeAssignor().assign(partitions, subs).values()]
        assert max(counts) - min(counts) <= 1


def _with_owned(subs, assignment, generation=1):
    sticky = StickyAssignor()
    return {
        m: Subscription(s.topics, sticky.user_data(assignment.get(m), generation)) for m, s in subs.items()
    }


@settings(max_examples=200, deadline=None)
@given(cluster, subscriptions, subscriptions)
def test_sticky_ends_locally_balanced_whatever_it_owned_before(partitions, before, after) -> None:
    sticky = StickyAssignor()
    previous = sticky.assign(partitions, before)
    subs = _with_owned(after, previous)
    assignment = sticky.assign(partitions, subs)
    _check_exactly_once(partitions, subs, assignment)
    count = {m: sum(map(len, t.values())) for m, t in assignment.items()}
    for (topic, _), member in owners(assignment).items():
        for other, sub in subs.items():
            assert not (topic in sub.topics and count[member] - count[other] > 1)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 60), st.sets(member_ids, min_size=2, max_size=8), st.data())
def test_sticky_moves_only_what_a_leave_or_a_join_requires(partition_count, members, data) -> None:
    partitions = {"t": partition_count}
    sticky = StickyAssignor()
    subs = {m: Subscription(["t"]) for m in members}
    previous = sticky.assign(partitions, subs)
    leaver = data.draw(st.sampled_from(sorted(members)))
    remaining = {m: s for m, s in subs.items() if m != leaver}
    after_leave = sticky.assign(partitions, _with_owned(remaining, previous))
    for member in remaining:  # nobody loses a partition when a member leaves
        assert set(owners({member: previous[member]})) <= set(owners({member: after_leave[member]}))
    joined = sticky.assign(partitions, _with_owned(subs, after_leave, 2))
    # Only the newcomer gains, and only up to its fair share.
    assert partitions_moved(after_leave, joined) == sum(map(len, joined[leaver].values()))
    assert sum(map(len, joined[leaver].values())) == partition_count // len(members)


def test_sticky_conflicting_claims_go_to_the_later_generation() -> None:
    sticky = StickyAssignor()
    subs = {
        "a": Subscription(["t"], sticky.user_data({"t": [0, 1]}, 3)),
        "b": Subscription(["t"], sticky.user_data({"t": [1]}, 4)),
    }
    assert sticky.assign({"t": 2}, subs) == {"a": {"t": [0]}, "b": {"t": [1]}}


def test_sticky_drops_partitions_that_vanished_or_are_no_longer_subscribed() -> None:
    sticky = StickyAssignor()
    subs = {
        "a": Subscription(["t"], sticky.user_data({"t": [0, 5], "u": [0]}, 1)),
        "b": Subscription(["t", "u"], sticky.user_data({}, 1)),
    }
    assert sticky.assign({"t": 2, "u": 1}, subs) == {"a": {"t": [0]}, "b": {"t": [1], "u": [0]}}


def test_scripted_joins_and_leaves_sticky_moves_least() -> None:
    rng = random.Random(5)
    partitions = {"t": 24, "u": 16}
    totals = {}
    for assignor in ASSIGNORS:
        members: list[str] = []
        previous: dict = {}
        moved = 0
        for step in range(30):
            if len(members) < 2 or (rng.random() < 0.6 and len(members) < 10):
                members.append(f"m{step:02d}")
            else:
                members.remove(rng.choice(members))
            subs = {m: Subscription(["t", "u"], assignor.user_data(previous.get(m), step)) for m in members}
            current = assignor.assign(partitions, subs)
            moved += partitions_moved(previous, current)
            previous = current
        totals[assignor.name] = moved
        rng = random.Random(5)
    assert totals["sticky"] < totals["roundrobin"]
    assert totals["sticky"] < totals["range"]


def test_the_subscription_carries_owned_partitions_only_for_a_cooperative_member() -> None:
    owned = {"t": [3, 1]}
    eager = decode_subscription(subscription_metadata(StickyAssignor(), ["t"], owned, 4))
    assert (eager.owned, eager.generation) == ([], 4)
    assert decode_sticky_user_data(eager.user_data) == ([("t", 1), ("t", 3)], 4)
    data = subscription_metadata(CooperativeStickyAssignor(), ["t"], owned, 4, still_owned=True)
    assert data.hex() == "0002" "00000001" "000174" "00000004" "00000004" + (
        "00000001" "000174" "00000002" "00000001" "00000003" "00000004"
    )
    assert decode_subscription(data) == Subscription(["t"], bytes.fromhex("00000004"), [("t", 1), ("t", 3)], 4)


def test_older_and_newer_subscription_versions_are_read() -> None:
    v0 = ConsumerProtocolMetadata(0, ["t"], b"").encode()
    assert decode_subscription(v0) == Subscription(["t"], b"", [], -1)
    # v3 (3.4) appends a rack id, which is ignored; v1 has no generation
    v1_head = ConsumerProtocolMetadata(1, ["t"], None).encode()
    v1 = v1_head + bytes.fromhex("00000001 000174 00000001 00000002")
    assert decode_subscription(v1) == Subscription(["t"], b"", [("t", 2)], -1)
    v3 = ConsumerProtocolMetadata(3, ["t"], b"").encode() + bytes.fromhex("00000000 00000007 0002 7231")
    assert decode_subscription(v3).generation == 7
    with pytest.raises(InvalidRequestError):
        decode_subscription(ConsumerProtocolMetadata(-1, ["t"], b"").encode())


def test_assignor_names_and_rebalance_protocols() -> None:
    for name in ("cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"):
        assert get_assignor(name).rebalance_protocol == COOPERATIVE
    for name in ("range", "roundrobin", "sticky", "org.apache.kafka.clients.consumer.StickyAssignor"):
        assert get_assignor(name).rebalance_protocol == EAGER


def test_cooperative_sticky_hands_a_moved_partition_over_in_a_second_rebalance() -> None:
    """Four members own 16 partitions; a fifth joins. First rebalance: the owners lose what balance takes
    but nobody gets it; second: the newcomer gets exactly those, nobody else changes."""
    assignor = CooperativeStickyAssignor()
    old = [f"m{i}" for i in range(4)]
    first = assignor.assign({"t": 16}, {m: Subscription(["t"]) for m in old})
    subs = {m: Subscription(["t"], b"", [("t", p) for p in first[m]["t"]], 1) for m in old}
    subs["m4"] = Subscription(["t"], b"", [], -1)
    second = assignor.assign({"t": 16}, subs)
    assert second["m4"] == {}
    revoked = {("t", p) for m in old for p in first[m]["t"]} - set(owners(second))
    assert len(revoked) == 3
    assert all(set(second[m]["t"]) <= set(first[m]["t"]) for m in old)
    subs = {m: Subscription(["t"], b"", [("t", p) for p in second[m].get("t", [])], 2) for m in second}
    third = assignor.assign({"t": 16}, subs)
    assert {("t", p) for p in third["m4"]["t"]} == revoked
    assert all(third[m] == second[m] for m in old)
    assert sorted(len(third[m]["t"]) for m in third) == [3, 3, 3, 3, 4]
