"""0.8 broker: end-to-end latency through a long-poll fetch, and the cost of an append with parked fetches.

Starts its own ZooKeeper and a 0.8 broker process (``zkafka broker start``), then:

1. latency: ``--messages`` times, a consumer sends a Fetch (max_wait 10 s, min_bytes 1) for the next offset,
   which parks in the broker's purgatory; a producer then sends one message (acks=1). Measured: from the
   produce being sent to the fetch response being read (p50/p99/max).
2. append cost: ``--appends`` single-message produces (acks=1, round trips) with no parked fetch, then again
   with ``--parked`` fetches parked on another partition (each on its own connection). Measured: the
   produce round trip (p50/p99) and the broker's CPU time per append (from /proc).

    python benchmarks/latency08.py [--messages 1000] [--appends 2000] [--parked 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker08  # noqa: E402
from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.records import format08  # noqa: E402

PARK_S = 0.002  # time given to a fetch to reach the broker and park before the produce that completes it


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
    }


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def long_poll_latency(port: int, messages: int) -> dict:
    samples = []
    with Client08(port) as consumer, Client08(port) as producer:
        for offset in range(messages):
            request = fetch_request("latency", 0, offset, max_wait_ms=10_000, min_bytes=1)
            consumer.send(request)
            time.sleep(PARK_S)
            message = format08.build_message_set([(None, b"m%d" % offset)])
            sent = time.perf_counter()
            producer.send(produce_request("latency", 0, message))
            answer = consumer.receive(request).body.topics[0].partitions[0]
            samples.append(time.perf_counter() - sent)
            producer.receive(produce_request("latency", 0, b""))
            assert answer.high_watermark == offset + 1, answer
    return percentiles(samples)


def append_cost(port: int, pid: int, appends: int) -> dict:
    samples = []
    message = format08.build_message_set([(None, b"x" * 100)])
    with Client08(port) as producer:
        before = cpu_seconds(pid)
        for _ in range(appends):
            started = time.perf_counter()
            producer.call(produce_request("appends", 0, message))
            samples.append(time.perf_counter() - started)
        cpu = cpu_seconds(pid) - before
    return {**percentiles(samples), "broker_cpu_us_per_append": round(cpu / appends * 1e6, 1)}


def park(port: int, count: int) -> list[Client08]:
    parked = []
    for _ in range(count):
        client = Client08(port)
        client.send(fetch_request("idle", 0, 0, max_wait_ms=600_000, min_bytes=1))
        parked.append(client)
    return parked


def run(messages: int, appends: int, parked_count: int) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, parked_count + 1000)), hard))
    with tempfile.TemporaryDirectory() as work, ZooKeeperServer(os.path.join(work, "zk")) as zk:
        proc, port = start_broker08(work, zk.connect_string, 1)
        try:
            with Client08(port) as client:
                wait_for_leaders(client, ["latency", "appends", "idle"])
            results = {"long_poll_latency": long_poll_latency(port, messages)}
            results["append_0_parked"] = append_cost(port, proc.pid, appends)
            parked = park(port, parked_count)
            try:
                time.sleep(1.0)  # every fetch parked
                results[f"append_{parked_count}_parked"] = append_cost(port, proc.pid, appends)
            finally:
                for client in parked:
                    client.close()
            return results
        finally:
            proc.terminate()
            proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--parked", type=int, default=10_000)
    args = parser.parse_args()
    print(json.dumps(run(args.messages, args.appends, args.parked), indent=2))


if __name__ == "__main__":
    main()
