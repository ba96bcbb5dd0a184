"""How long a rebalance stops consumption, eager against cooperative (KIP-429): a group of ``--members``
zkafka GroupConsumers on a topic of ``--partitions`` partitions, a producer writing one record to every
partition between two rounds of polls, is joined by one more member (``tests/support/rebalance_drill.py``).
The members use Kafka's default ``heartbeat.interval.ms`` (3 s): how soon a member hears of a rebalance.

For each strategy it prints: the longest consumption gap of a member that kept all its partitions (and of any
member), the partitions moved, the joins the old members made, and how long the group took to settle.
Targets: the unaffected member's gap with cooperative-sticky at most 1/10 of eager's; partitions moved at
most sticky's figure.

    PYTHONPATH=. python benchmarks/rebalance_gap.py --members 10 --partitions 40
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import broker08_cluster  # noqa: E402
from tests.support.rebalance_drill import grow_by_one  # noqa: E402
from tests.support.server08 import Client08, wait_for_leaders  # noqa: E402

TOPIC = "gap"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--strategies", default="range,sticky,cooperative-sticky")
    parser.add_argument("--heartbeat-interval-ms", default="3000", help="Kafka's default")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    props = {"offsets.topic.num.partitions": "1"}
    with broker08_cluster(args.partitions, **props) as (_, port):
        with Client08(port) as client:
            wait_for_leaders(client, [TOPIC])
        bootstrap = f"127.0.0.1:{port}"
        print(
            f"{args.members} -> {args.members + 1} members x {args.partitions} partitions, "
            f"heartbeat.interval.ms {args.heartbeat_interval_ms}"
        )
        for strategy in args.strategies.split(","):
            heartbeat = {"heartbeat.interval.ms": args.heartbeat_interval_ms}
            r = grow_by_one(bootstrap, port, TOPIC, args.partitions, args.members, strategy, **heartbeat)
            unaffected = [f.longest_gap for f in r.members if f.unaffected]
            gap = f"{max(unaffected) * 1000:.0f} ms" if unaffected else "none unaffected"
            print(
                f"  {strategy:20} longest gap: unaffected member {gap}, any member "
                f"{max(f.longest_gap for f in r.members) * 1000:.0f} ms; {r.moved} partitions moved; "
                f"{r.joins} joins; settled in {r.seconds * 1000:.0f} ms; "
                f"records while joining {sum(f.received_while_joining for f in r.members)}"
            )


if __name__ == "__main__":
    main()
