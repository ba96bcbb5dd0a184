"""GroupState: the four states of a 0.9 consumer group (0.9's ``GroupState`` in GroupMetadata.scala). Pure."""

from enum import StrEnum


class GroupState(StrEnum):
    """The four 0.9 states, valued with the names DescribeGroups sends."""

    STABLE = "Stable"
    PREPARING_REBALANCE = "PreparingRebalance"
    AWAITING_SYNC = "AwaitingSync"
    DEAD = "Dead"
