"""How long a group member waits for its coordinator (coordinator_channel._bounded), without a broker."""

from __future__ import annotations

from zkafka.consumer.group.coordinator_channel import _bounded


def test_a_request_waits_the_request_timeout_unless_told_longer():
    assert _bounded((30.0, 30.0), None, None) == (30.0, 30.0)
    assert _bounded((30.0, 30.0), 305.0, None) == (305.0, 30.0)  # a JoinGroup waits for the rebalance
    assert _bounded((30.0, 30.0), 10.0, None) == (30.0, 30.0)  # never shorter than the request timeout


def test_a_heartbeat_waits_at_most_what_is_left_of_the_session_connecting_included():
    assert _bounded((600.0, 600.0), None, 4.5) == (4.5, 4.5)
    assert _bounded((2.0, 1.0), None, 4.5) == (2.0, 1.0)  # the request timeout is shorter still
    assert _bounded((None, None), None, 4.5) == (4.5, 4.5)  # no timeout at all: the session bounds it
    assert _bounded((600.0, 600.0), None, -1.0) == (0.001, 0.001)  # the session is over: next to nothing
