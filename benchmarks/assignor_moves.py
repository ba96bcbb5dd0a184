"""Partitions moved per rebalance: range vs roundrobin vs sticky over a scripted sequence of joins and leaves.

A partition counts as moved when its owner before the rebalance is a different member from its owner after
(a member leaving makes its partitions move whatever the assignor). Every member subscribes to the same
topics; the sticky members send what they owned. The script: ``--members`` join one by one, then a member
leaves, one joins, two leave, two join, and the first member leaves and comes back.

    python benchmarks/assignor_moves.py [--members 10] [--partitions 40] [--topics 2]
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zkafka.consumer.group.assignors import (  # noqa: E402
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    partitions_moved,
)


def script(members: int) -> list[tuple[str, str]]:
    """The membership changes: ("join"|"leave", member id)."""
    ids = [f"consumer-{i:02d}" for i in range(members)]
    steps = [("join", m) for m in ids]
    steps += [("leave", ids[3]), ("join", "consumer-x1")]
    steps += [("leave", ids[5]), ("leave", ids[7]), ("join", "consumer-x2"), ("join", "consumer-x3")]
    steps += [("leave", ids[0]), ("join", ids[0])]
    return steps


def run(assignor, partitions_per_topic: dict[str, int], steps: list[tuple[str, str]]) -> list[int]:
    """Partitions moved at each step."""
    topics = sorted(partitions_per_topic)
    members: list[str] = []
    previous: dict = {}
    moved = []
    for generation, (action, member) in enumerate(steps, start=1):
        if action == "join":
            members.append(member)
        else:
            members.remove(member)
        subscriptions = {
            m: Subscription(topics, assignor.user_data(previous.get(m), generation - 1)) for m in members
        }
        current = assignor.assign(partitions_per_topic, subscriptions)
        moved.append(partitions_moved(previous, current))
        previous = current
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=40, help="partitions in all, split over the topics")
    parser.add_argument("--topics", type=int, default=2)
    args = parser.parse_args()
    per_topic = {f"topic-{t}": args.partitions // args.topics for t in range(args.topics)}
    steps = script(args.members)
    results = {
        a.name: run(a, per_topic, steps) for a in (RangeAssignor(), RoundRobinAssignor(), StickyAssignor())
    }
    print(
        f"{sum(per_topic.values())} partitions over {len(per_topic)} topics; partitions moved per rebalance"
    )
    print(f"{'step':<24}" + "".join(f"{name:>12}" for name in results))
    for i, (action, member) in enumerate(steps):
        print(f"{action + ' ' + member:<24}" + "".join(f"{moves[i]:>12}" for moves in results.values()))
    print(f"{'total':<24}" + "".join(f"{sum(m):>12}" for m in results.values()))
    print(f"{'mean per rebalance':<24}" + "".join(f"{sum(m) / len(m):>12.1f}" for m in results.values()))


if __name__ == "__main__":
    main()
