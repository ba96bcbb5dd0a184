"""GroupState: the five states of a consumer group and the moves between them (Kafka 2.x+'s ``GroupState`` in
GroupMetadata.scala; 0.9 had no Empty and called CompletingRebalance AwaitingSync). Pure.

Empty (no members; offsets may remain) → PreparingRebalance (a member joins) → CompletingRebalance (every
member rejoined: a new generation, waiting for the leader's assignment) → Stable (the assignment stored);
PreparingRebalance → Empty when no member is left; any state → Dead (the group deleted, expired or no
longer coordinated here).
"""

from enum import StrEnum


class GroupState(StrEnum):
    """The five states, valued with the names DescribeGroups and ListGroups send."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}
    ),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


class IllegalGroupTransition(ValueError):
    """A move Kafka's group state machine does not make (a bug in the caller)."""


def check_transition(current: GroupState, target: GroupState) -> None:
    """Raise IllegalGroupTransition unless ``current`` → ``target`` is one of Kafka's moves."""
    if current not in VALID_PREVIOUS_STATES[target]:
        raise IllegalGroupTransition(f"group cannot move from {current.value} to {target.value}")
