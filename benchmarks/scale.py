"""What grows with the partition count: the controller's failover and a ZooKeeper rebalance, at 1k and 10k.

1. Controller failover (0.8 line): a ZooKeeper and three broker processes, ``--partitions`` partitions in
   topics of 1,000 with replication factor 2. kill -9 of the controller (it also leads a third of the
   partitions); measured: the time until another broker holds /controller (the dead one's session timeout
   is most of it), the time until a live broker's metadata names a live leader for every partition, and
   ZooKeeper's writes in between (the zxid's advance), per partition that moved.
2. ZooKeeper consumer rebalance (0.7 line, the ZookeeperConsumerConnector): two broker processes hosting one
   topic of ``--partitions`` partitions, ``--consumers`` members; one more joins; measured: the time until the owner
   znodes equal the range assignment and every member fetches its share, ZooKeeper's writes for it (zxid),
   and the watches each member holds (``wchc``). The group coordinator's rebalance writes nothing to ZooKeeper
   (its state is in __consumer_offsets), so only the ZooKeeper consumer is measured here.

    python benchmarks/scale.py --partitions 1000 10000
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import gevent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import start_broker, start_broker08  # noqa: E402
from benchmarks.consumer_group_settle import wait_settled  # noqa: E402
from tests.support.server08 import Client08  # noqa: E402
from zkafka.admin.topics import create_topic  # noqa: E402
from zkafka.assignment.range_assignor import broker_partitions  # noqa: E402
from zkafka.consumer import ZookeeperConsumerConnector  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer, four_letter_word  # noqa: E402
from zkafka.protocol.metadata import MetadataRequestV0  # noqa: E402
from zkafka.protocol.v07 import ProducerRequest, encode_request  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402
from zkafka.zk.client import get_children, gevent_handler, make_zk_client, start_zk_client  # noqa: E402
from zkafka.zk.paths08 import parse_controller  # noqa: E402

TOPIC_SIZE = 100
SESSION_MS = 3000


def zxid(server: ZooKeeperServer) -> int:
    """The last transaction id ZooKeeper committed (one per write)."""
    for line in four_letter_word(server.host, server.port, "srvr").splitlines():
        if line.startswith("Zxid:"):
            return int(line.split()[1], 16) & 0xFFFFFFFF
    raise RuntimeError("no Zxid in srvr")


def leaders(port: int, topics: list[str]) -> dict[tuple[str, int], int]:
    """partition -> leader in the broker's metadata (empty while it does not answer)."""
    try:
        with Client08(port) as client:
            client.sock.settimeout(120)
            answer = client.call(MetadataRequestV0(topics))
    except OSError:
        return {}
    return {(t.topic, p.partition): p.leader for t in answer.topics for p in t.partitions}


def controller_failover(work: str, partitions: int) -> dict:
    with ZooKeeperServer(os.path.join(work, "zk-ctl"), tick_time=500) as server:
        zk = start_zk_client(make_zk_client(server.connect_string, 30000))
        procs, ports = {}, {}
        for b in (1, 2, 3):
            procs[b], ports[b] = start_broker08(
                work, server.connect_string, 1, name=f"ctl-{b}", broker_id=str(b),
                zookeeper_session_timeout_ms=str(SESSION_MS), replica_fetch_wait_max_ms="500",
                replica_lag_time_max_ms="30000", log_index_size_max_bytes="65536",
                # a LeaderAndIsr creating hundreds of logs takes longer than the default 30 s; resent, it
                # would be handled beside the first one, which deadlocks LogManager08.create_log today
                controller_socket_timeout_ms="600000",
            )  # fmt: skip
        try:
            topics = [f"s{i}" for i in range(max(1, partitions // TOPIC_SIZE))]
            began = time.monotonic()
            size = min(TOPIC_SIZE, partitions)
            # One topic at a time, every partition led before the next: ~900 new partitions in one burst stall
            # the controller today (its greenlet waits for good after writing their state znodes).
            for i, topic in enumerate(topics):
                create_topic(zk, topic, size, 2, rng=random.Random(i))
                led = wait_until(
                    lambda n=i + 1: (m := leaders(ports[1], topics[:n])) and len(m) == n * size and min(m.values()) >= 0
                    and m, 1800, 0.5,
                    f"every partition of {topic} led",
                )  # fmt: skip
            assert len(led) == partitions
            created_s = time.monotonic() - began
            controller = parse_controller(zk.get("/controller")[0])
            moved = sum(1 for leader in led.values() if leader == controller)
            survivor = ports[next(b for b in procs if b != controller)]
            before = zxid(server)
            procs[controller].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            wait_until(lambda: parse_controller(zk.get("/controller")[0]) != controller, 120, 0.01, "new controller")
            elected_s = time.monotonic() - killed

            def moved_all() -> bool:
                now = leaders(survivor, topics)
                return len(now) == partitions and all(v not in (-1, controller) for v in now.values())

            wait_until(moved_all, 1800, 0.05, "every partition led by a live broker")
            done_s = time.monotonic() - killed
            writes = zxid(server) - before
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.terminate()
            for proc in procs.values():
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            zk.stop()
            zk.close()
    return {
        "partitions": partitions, "create_and_lead_s": round(created_s, 1), "moved": moved,
        "new_controller_s": round(elected_s, 2), "all_led_again_s": round(done_s, 2),
        "controller_work_s": round(done_s - elected_s, 2), "zk_writes": writes,
        "zk_writes_per_moved_partition": round(writes / max(moved, 1), 2),
    }  # fmt: skip


def watches_by_session(server: ZooKeeperServer) -> dict[str, int]:
    """wchc: the watched paths of each session."""
    counts: dict[str, int] = {}
    session = None
    for line in four_letter_word(server.host, server.port, "wchc", timeout=30).splitlines():
        if line.startswith("0x"):
            session = line.strip()
            counts[session] = 0
        elif line.strip() and session:
            counts[session] += 1
    return counts


def zk_rebalance(work: str, partitions: int, consumers: int) -> dict:
    topic, group = "scale", "scale-group"
    per_broker = partitions // 2  # two broker processes: each keeps its logs' files open
    with ZooKeeperServer(os.path.join(work, "zk-reb"), tick_time=500) as server:
        brokers = [
            start_broker(work, server.connect_string, per_broker, name=f"reb-{b}", brokerid=str(b))
            for b in (0, 1)
        ]
        zk = start_zk_client(make_zk_client(server.connect_string, handler=gevent_handler()))
        try:
            for _, port in brokers:
                with socket.create_connection(("127.0.0.1", port)) as sock:
                    for p in range(per_broker):
                        sock.sendall(encode_request(ProducerRequest(topic, p, build_message_set([b"x"]))))
            wait_until(lambda: len(get_children(zk, f"/brokers/topics/{topic}")) == 2, 300, 0.1, "registered")
            expected = broker_partitions({0: per_broker, 1: per_broker})
            props = {
                "zk.connect": server.connect_string, "groupid": group, "zk.sessiontimeout.ms": "30000",
                "rebalance.retries.max": "20", "fetcher.backoff.ms": "1000",
            }  # fmt: skip

            def member(i: int) -> ZookeeperConsumerConnector:
                connector = ZookeeperConsumerConnector({**props, "consumerid": f"m{i:03d}"})
                connector.create_message_streams({topic: 1})
                return connector

            members = [member(i) for i in range(consumers)]
            try:
                wait_settled(zk, group, topic, members, expected, timeout=1800)
                gevent.sleep(1.0)
                watches = watches_by_session(server)
                before = zxid(server)
                began = time.perf_counter()
                members.append(member(consumers))
                wait_settled(zk, group, topic, members, expected, timeout=1800)
                join_s = time.perf_counter() - began
                writes = zxid(server) - before
            finally:
                for m in members:
                    m.shutdown()
        finally:
            zk.stop()
            zk.close()
            for proc, _ in brokers:
                proc.kill()
                proc.wait()
    per_session = sorted(watches.values())
    return {
        "partitions": partitions, "consumers": f"{consumers}->{consumers + 1}", "settle_s": round(join_s, 2),
        "zk_writes": writes, "watches_per_session": per_session,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--only", choices=["controller", "rebalance"])
    parser.add_argument("--work", help="Keep the logs in this directory (default: a temporary one).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    for partitions in args.partitions:
        with tempfile.TemporaryDirectory(prefix="zkafka-scale-", dir=args.work) as work:
            if args.only != "rebalance":
                print("controller failover:", controller_failover(work, partitions), flush=True)
            if args.only != "controller":
                print("zookeeper rebalance:", zk_rebalance(work, partitions, args.consumers), flush=True)


if __name__ == "__main__":
    main()
