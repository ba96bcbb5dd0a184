"""Step-by-step explanations of partition assignment: the ZooKeeper consumers' rebalance (``zk_rebalance``) and
the coordinator group's assignors (``group_assignment``), with what would move if a member left or joined.

Pure: the results come from the real algorithms; this package only lays out their inputs, their intermediate
values and their output as numbered steps (``steps``), each naming the function that does it. ``zkafka
explain`` prints them and the web view (``zkafka.ui``) shows them in its rebalance timeline.
"""

from zkafka.explain.group_assignment import coordinator_assign, explain_assignment
from zkafka.explain.steps import Explanation, Move, Step, diff_owners, parse_counted, share_text, where
from zkafka.explain.zk_rebalance import (
    explain_zk_rebalance,
    members_from_streams,
    parse_partitions,
    zk_assign,
)

__all__ = [
    "Explanation",
    "Move",
    "Step",
    "coordinator_assign",
    "diff_owners",
    "explain_assignment",
    "explain_zk_rebalance",
    "members_from_streams",
    "parse_counted",
    "parse_partitions",
    "share_text",
    "where",
    "zk_assign",
]
