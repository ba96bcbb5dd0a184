"""SubscriptionState (pure): subscribing, patterns, assignments, positions and resets."""

from __future__ import annotations

import pytest

from zkafka.consumer.group.subscription import IllegalSubscriptionError, SubscriptionState, TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_subscribing_asks_for_an_assignment_and_a_changed_topic_set_asks_again():
    s = SubscriptionState()
    s.subscribe(["t"])
    assert s.auto_assigned and s.needs_partition_assignment
    s.needs_partition_assignment = False
    assert not s.change_topics({"t"})
    assert s.change_topics({"t", "u"}) and s.needs_partition_assignment


def test_a_pattern_matches_whole_names_and_skips_internal_topics():
    s = SubscriptionState()
    s.subscribe_pattern(r"ord.*")
    assert s.matching(["orders", "reorders", "__consumer_offsets", "ord"]) == {"orders", "ord"}


def test_mixing_subscribe_and_assign_is_refused():
    s = SubscriptionState()
    s.subscribe(["t"])
    with pytest.raises(IllegalSubscriptionError, match="unsubscribe"):
        s.assign([T0])
    s.unsubscribe()
    s.assign([T0])
    with pytest.raises(IllegalSubscriptionError, match="unsubscribe"):
        s.subscribe(["t"])


def test_positions_resets_and_revocation():
    s = SubscriptionState(default_reset="earliest")
    s.subscribe(["t"])
    s.set_group_assignment([T0, T1])
    assert s.missing_positions() == [T0, T1] and s.fetchable() == {}
    s.seek(T0, 5)
    s.request_reset(T1)
    assert s.resets() == {T1: "earliest"} and s.missing_positions() == []
    assert s.fetchable() == {T0: 5} and s.positions() == {T0: 5}
    s.state(T0).paused = True
    assert s.fetchable() == {}
    epoch = s.epoch
    assert s.revoke_all() == {T0, T1}
    assert s.assigned() == set() and s.epoch > epoch and s.needs_partition_assignment
    with pytest.raises(IllegalSubscriptionError, match="t-0 is not assigned"):
        s.seek(T0, 1)
