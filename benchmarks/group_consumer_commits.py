"""Offset commits per second through zkafka's own group consumer (GroupConsumer.commit, OffsetCommit v2 in
its generation), against one 0.8 broker process: a member of a one-member group owning ``--partitions``
partitions commits one partition's offset per call, then all of its partitions per call, synchronously and
with commit_async (a batch of ``--in-flight`` commits awaited together), for ``--seconds`` each.

    python benchmarks/group_consumer_commits.py [--partitions 40] [--seconds 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import gevent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import broker08_cluster  # noqa: E402
from zkafka.consumer.group import GroupConsumer, TopicPartition  # noqa: E402

TOPIC, GROUP = "bench", "bench-commits"


def rate(seconds: float, step) -> float:
    """Offsets committed per second by repeated ``step(i)`` calls (each returns the offsets it committed)."""
    done, i = 0, 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        done += step(i)
        i += 1
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--in-flight", type=int, default=10)
    opts = parser.parse_args()
    with broker08_cluster(opts.partitions, **{"offsets.topic.num.partitions": "1"}) as (_, port):
        consumer = None
        try:
            consumer = GroupConsumer(
                {
                    "bootstrap.servers": f"127.0.0.1:{port}",
                    "group.id": GROUP,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": "false",
                    "session.timeout.ms": "10000",
                    "heartbeat.interval.ms": "1000",
                }
            )
            consumer.subscribe([TOPIC])
            deadline = time.monotonic() + 60
            while len(consumer.assignment()) < opts.partitions or any(
                consumer.position(tp) is None for tp in consumer.assignment()
            ):
                assert time.monotonic() < deadline, "the group did not settle"
                consumer.poll(100)
            owned = sorted(consumer.assignment())
            print(f"one member owning {len(owned)} partitions of {TOPIC}; OffsetCommit v2 to one broker")

            def single(i: int) -> int:
                consumer.commit({owned[i % len(owned)]: i})
                return 1

            def whole(i: int) -> int:
                consumer.commit({tp: i for tp in owned})
                return len(owned)

            def async_single(i: int) -> int:
                batch = [
                    consumer.commit_async({owned[(i + k) % len(owned)]: i}) for k in range(opts.in_flight)
                ]
                gevent.joinall(batch)
                return len(batch)

            for name, step in (
                ("commit(), 1 offset per call", single),
                (f"commit(), {len(owned)} offsets per call", whole),
                (f"commit_async(), 1 offset per call, {opts.in_flight} at a time", async_single),
            ):
                print(f"  {name}: {rate(opts.seconds, step):,.0f} offsets/s")
            assert consumer.committed(TopicPartition(TOPIC, 0)) is not None
        finally:
            if consumer is not None:
                consumer.close()


if __name__ == "__main__":
    main()
