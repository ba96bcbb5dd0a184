"""What the group state machine (``group.py``) asks the broker to do, and what its calls return.

Effects are plain values: answer a parked JoinGroup or SyncGroup, arm or disarm a member's session timer,
park or retry the group's delayed join, store the group record, remove the group. ``coordinator.py``
executes them. Pure.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class JoinResult(NamedTuple):
    """A JoinGroup answer; ``members`` ((member id, metadata) pairs) is filled only for the leader, and so is
    ``instance_ids`` ((member id, group.instance.id) of each static member; JoinGroup v5 lists them);
    ``skip_assignment`` (v9, KIP-814): the leader is a restarted static member that keeps the assignment."""

    error: int
    generation_id: int = 0
    protocol: str = ""
    leader_id: str = ""
    member_id: str = ""
    members: tuple = ()
    instance_ids: tuple = ()
    skip_assignment: bool = False


class AnswerJoin(NamedTuple):
    """Answer the member's parked JoinGroup."""

    member_id: str
    result: JoinResult


class AnswerSync(NamedTuple):
    """Answer the member's parked SyncGroup."""

    member_id: str
    error: int
    assignment: bytes


class ArmHeartbeat(NamedTuple):
    """(Re)start the member's session timer: at ``deadline_ms`` call ``expire(member_id, deadline_ms)``."""

    member_id: str
    deadline_ms: int


class DisarmHeartbeat(NamedTuple):
    """Stop the member's session timer (it left the group)."""

    member_id: str


class AwaitJoins(NamedTuple):
    """Park the group's delayed join: ``join_ready()`` completes it, else the timeout (``complete_join``)."""

    timeout_ms: int


class CheckJoins(NamedTuple):
    """Retry the group's parked delayed join now (a member joined, left or expired)."""


class StoreGroup(NamedTuple):
    """Append the group record (``GroupValueV0``) of ``generation``, then call ``stored``."""

    generation: int
    value: Any


Effects = list


class JoinOutcome(NamedTuple):
    """``result`` None: the JoinGroup is parked under ``member_id`` until an ``AnswerJoin``."""

    member_id: str
    result: JoinResult | None
    effects: Effects


class SyncOutcome(NamedTuple):
    """``parked``: the SyncGroup waits for an ``AnswerSync``; else ``error``/``assignment`` answer it now."""

    error: int
    assignment: bytes
    parked: bool
    effects: Effects


def join_error(member_id: str, error: int) -> JoinResult:
    """A JoinGroup error answer: generation 0, no protocol, no leader, no members."""
    return JoinResult(error, 0, "", "", member_id, ())
