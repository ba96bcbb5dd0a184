"""Replication on the 0.8 line, three broker processes on loopback, in one run:

1. produce throughput (``zkafka perf produce``, sync, 100-byte messages, batch 200, one partition) with
   replication factor 1 and 3, acks 1 and -1, and 1 and 5 requests in flight;
2. acks=-1 latency on replication factor 3: a sync producer sends 200-message requests paced at half the rate
   measured with one in flight (or at ``--latency-rate``); each request's time from send to acknowledgement
   (the messages are then on every in-sync replica), p50 and p99;
3. failover: time from a leader's kill -9 to the next acks=-1 acknowledgement from the new leader (and to the
   state znode naming it), with ``zookeeper.session.timeout.ms`` as the floor it waits out; each round restarts
   the killed broker and waits for a full ISR;
4. a follower's catch-up rate: a follower stopped while the leader takes ``--catch-up-mb`` MB (10 KB
   messages), started again; the bytes it fetched over the time from its registration to its return to the ISR.

    python benchmarks/replication.py                      # the full run: 1 GB behind
    python benchmarks/replication.py --messages 100000 --rounds 0 --catch-up-mb 100   # a quick one
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kazoo.client import KazooClient  # noqa: E402

from benchmarks.broker_process import start_broker08  # noqa: E402
from benchmarks.clients08_perf import perf  # noqa: E402
from tests.support.replication import zk_state  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.producer.producer08 import KeyedMessage, Producer08  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402
from zkafka.zk.paths08 import PartitionState  # noqa: E402

BROKERS = (1, 2, 3)
IN_FLIGHT = (1, 5)
SESSION_MS = 6000  # 0.8's default zookeeper.session.timeout.ms


class Cluster:
    def __init__(self, work: str, zk_connect: str) -> None:
        self.work, self.zk_connect = work, zk_connect
        self.procs: dict[int, subprocess.Popen] = {}
        self.ports: dict[int, int] = {}
        self.zk = KazooClient(hosts=zk_connect)
        self.zk.start()

    def start(self, broker_id: int) -> None:
        proc, port = start_broker08(
            self.work,
            self.zk_connect,
            1,
            name=f"broker08-{broker_id}",
            broker_id=str(broker_id),
            zookeeper_session_timeout_ms=str(SESSION_MS),
            replica_lag_time_max_ms="3000",
        )
        self.procs[broker_id], self.ports[broker_id] = proc, port

    def broker_list(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports.values())

    def state(self, topic: str) -> PartitionState | None:
        return zk_state(self.zk, topic, 0)

    def topic(self, name: str, replication_factor: int) -> PartitionState:
        create_topic(self.zk, name, 1, replication_factor, rng=random.Random(name))
        return self.full_isr(name, replication_factor)

    def full_isr(self, topic: str, replicas: int = 3, timeout: float = 60) -> PartitionState:
        return wait_until(
            lambda: (s := self.state(topic)) is not None and s.leader >= 0 and len(s.isr) == replicas and s,
            timeout,
            0.02,
            f"{topic}: a leader and {replicas} in-sync replicas",
        )

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(60)
        self.zk.stop()


def throughput(cluster: Cluster, messages: int) -> dict[tuple[int, str, int], dict]:
    """perf produce's result by (replication factor, acks, requests in flight)."""
    results = {}
    for rf in (1, 3):
        for acks in ("1", "-1"):
            for in_flight in IN_FLIGHT:
                topic = f"rf{rf}-acks{acks.replace('-', 'all')}-{in_flight}"
                cluster.topic(topic, rf)
                results[(rf, acks, in_flight)] = perf(
                    "produce", "--broker-list", cluster.broker_list(), "--topic", topic,
                    "--messages", str(messages), "--message-size", "100", "--batch-size", "200",
                    "--request-required-acks", acks, "--max-in-flight", str(in_flight),
                )  # fmt: skip
    return results


def latency(cluster: Cluster, rate: float, seconds: float) -> list[float]:
    """Send → acknowledgement times (s) of acks=-1 requests of 200 100-byte messages to a replication factor 3
    topic, sent at ``rate`` messages/s for ``seconds``."""
    cluster.topic("latency", 3)
    values = [b"x" * 100] * 200
    interval = len(values) / rate
    config = {"metadata.broker.list": cluster.broker_list(), "request.required.acks": "-1"}
    times = []
    with Producer08(config) as producer:
        producer.send_batch("latency", values)  # metadata and connection before the clock
        begin = next_send = time.monotonic()
        while next_send - begin < seconds:
            time.sleep(max(0.0, next_send - time.monotonic()))
            sent = time.monotonic()
            producer.send_batch("latency", values)
            times.append(time.monotonic() - sent)
            next_send += interval
    return sorted(times)


def failover(cluster: Cluster, rounds: int) -> list[tuple[int, float, float]]:
    """(killed leader, s to the new leader in the state znode, s to the next acknowledgement) per round."""
    cluster.topic("failover", 3)
    config = {
        "metadata.broker.list": cluster.broker_list(),
        "request.required.acks": "-1",
        "request.timeout.ms": "3000",
        "message.send.max.retries": "1000",
        "retry.backoff.ms": "10",
    }
    out = []
    with Producer08(config) as producer:
        for r in range(rounds):
            first = cluster.full_isr("failover")
            producer.send(KeyedMessage("failover", None, b"before-%d" % r))
            cluster.procs[first.leader].kill()
            killed = time.monotonic()
            elected = wait_until(
                lambda old=first.leader: (
                    cluster.state("failover").leader not in (-1, old) and time.monotonic()
                ),
                60,
                0.005,
            )
            producer.send(KeyedMessage("failover", None, b"after-%d" % r))
            acked = time.monotonic()
            out.append((first.leader, elected - killed, acked - killed))
            cluster.procs[first.leader].wait(10)
            cluster.start(first.leader)
    cluster.full_isr("failover")
    return out


def catch_up(cluster: Cluster, megabytes: int) -> tuple[int, float, float]:
    """(bytes the follower fetched, s from its registration to the ISR, s from its start to registration)."""
    state = cluster.topic("catchup", 3)
    follower = next(b for b in state.isr if b != state.leader)
    proc = cluster.procs[follower]
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(60)
    cluster.full_isr("catchup", 2)
    perf(
        "produce", "--broker-list", cluster.broker_list(), "--topic", "catchup",
        "--messages", str(megabytes * 100), "--message-size", "10000", "--batch-size", "100",
        "--request-required-acks", "1", "--max-in-flight", "5",
    )  # fmt: skip
    leader_log = Path(cluster.work, f"broker08-{state.leader}", "catchup-0")
    size = sum(f.stat().st_size for f in leader_log.glob("*.log"))
    started = time.monotonic()
    cluster.start(follower)
    wait_until(lambda: cluster.zk.exists(f"/brokers/ids/{follower}"), 60, 0.005)
    registered = time.monotonic()
    cluster.full_isr("catchup", 3, timeout=300)
    return size, time.monotonic() - registered, registered - started


def registered(cluster: Cluster) -> int:
    """Brokers registered in ZooKeeper (0 before the first creates ``/brokers/ids``)."""
    return len(cluster.zk.get_children("/brokers/ids")) if cluster.zk.exists("/brokers/ids") else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="leader kills (0: none)")
    parser.add_argument("--catch-up-mb", type=int, default=1024, help="how far behind the follower restarts")
    parser.add_argument("--latency-seconds", type=float, default=5.0)
    parser.add_argument(
        "--latency-rate",
        type=float,
        help="messages/s of the acks=-1 latency run (default: half the RF 3 acks=-1 one-in-flight rate)",
    )
    options = parser.parse_args()
    os.environ["PYTHONPATH"] = (
        ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    )  # brokers and perf: this checkout
    work = tempfile.mkdtemp(prefix="replication-bench-")
    try:
        with ZooKeeperServer(os.path.join(work, "zk")) as zk:
            cluster = Cluster(work, zk.connect_string)
            try:
                for b in BROKERS:
                    cluster.start(b)
                wait_until(lambda: registered(cluster) == 3, 30, message="3 brokers registered")
                rows = throughput(cluster, options.messages)
                rate = options.latency_rate or rows[(3, "-1", 1)]["messages_per_sec"] / 2
                times = latency(cluster, rate, options.latency_seconds)
                kills = failover(cluster, options.rounds)
                fetched, catch_up_s, startup_s = catch_up(cluster, options.catch_up_mb)
            finally:
                cluster.stop()  # before ZooKeeper goes: a clean stop closes their sessions
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rows, rate, times)
    print(f"\nkill -9 of the leader (zookeeper.session.timeout.ms={SESSION_MS}):")
    for leader, elected_s, acked_s in kills:
        print(
            f"  leader {leader}: new leader in the state znode after {elected_s:.2f} s, acks=-1 after {acked_s:.2f} s"
        )
    print(
        f"\nfollower catch-up: {fetched / 1e6:.1f} MB in {catch_up_s:.2f} s from registration to the ISR"
        f" ({fetched / 1e6 / catch_up_s:.1f} MB/s; the broker took {startup_s:.2f} s to register)"
    )


def report(rows: dict[tuple[int, str, int], dict], rate: float, times: list[float]) -> None:
    columns = [(acks, n) for acks in ("1", "-1") for n in IN_FLIGHT]
    print("messages/s (100-byte messages, batch 200, one partition):\n")
    print("| topic | " + " | ".join(f"acks={a}, {n} in flight" for a, n in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for rf in (1, 3):
        cells = " | ".join(f"{rows[(rf, a, n)]['messages_per_sec'] / 1e6:.2f} M" for a, n in columns)
        print(f"| RF {rf} | {cells} |")
    most = IN_FLIGHT[-1]
    ratio = rows[(3, "-1", most)]["messages_per_sec"] / rows[(1, "1", most)]["messages_per_sec"]
    print(f"\nRF 3 acks=-1 / RF 1 acks=1, {most} in flight: {ratio:.2f}")
    p50, p99 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"\nacks=-1 RF 3 at {rate / 1e3:.0f} k messages/s ({len(times)} requests of 200): send to acknowledgement"
        f" p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
