"""How long a consumer group takes to settle after one member leaves (and after one joins).

Starts its own ZooKeeper and one in-process broker hosting a topic of ``--partitions`` partitions, runs
``--consumers`` ZookeeperConsumerConnectors (one stream each) on this thread's gevent hub with the 0.7
default timeouts except the session timeout, lets the group settle, then repeatedly shuts one member down
(and starts a new one) and measures the time until every remaining member owns exactly its range share:
ZooKeeper's owner nodes equal the pure assignment and each member's fetchers run for its share.

    python benchmarks/consumer_group_settle.py --consumers 10 --partitions 40 --rounds 5
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import statistics
import sys
import tempfile
import time

import gevent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zkafka.assignment.range_assignor import assign, broker_partitions  # noqa: E402
from zkafka.config07 import BrokerConfig  # noqa: E402
from zkafka.consumer import ZookeeperConsumerConnector  # noqa: E402
from zkafka.launch.zookeeper_server import ZooKeeperServer  # noqa: E402
from zkafka.protocol.v07 import ProducerRequest, encode_request  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402
from zkafka.server.start import BrokerThread  # noqa: E402
from zkafka.zk.client import get_children, gevent_handler, make_zk_client, start_zk_client  # noqa: E402


def owners(zk, group: str, topic: str) -> dict[tuple[str, str], str]:
    """The owner znodes of ``topic``: their children, then every value in one pipelined round trip (the check
    itself should not add a round trip per partition to the time it measures)."""
    base = f"/consumers/{group}/owners/{topic}"
    pending = {name: zk.get_async(f"{base}/{name}") for name in get_children(zk, base)}
    out = {}
    for name, result in pending.items():
        try:
            out[(topic, name)] = result.get()[0].decode()
        except Exception:
            pass
    return out


def expected_owners(topic, members, partitions) -> dict[tuple[str, str], str]:
    """The range assignment of the members' threads, partitions named as their owner znodes are."""
    threads = [f"{m.consumer_id}-0" for m in members]
    return {(t, str(p)): v for (t, p), v in assign({topic: threads}, {topic: partitions}).items()}


def members_fetch_their_shares(topic, members, partitions) -> bool:
    """Whether every member owns exactly its range share and fetches it (either line's connectors)."""
    expected = expected_owners(topic, members, partitions)
    for m in members:
        mine = {k: v for k, v in expected.items() if v.startswith(m.consumer_id + "-")}
        owned = {(t, str(p)): v for (t, p), v in m.owned_partitions().items()}
        if owned != mine or (mine and m.owned.fetcher.running == 0):
            return False
    return True


def settled(zk, group, topic, members, partitions) -> bool:
    """Whether every member fetches its share and the owner znodes are the assignment (read last: the
    in-memory check costs ZooKeeper nothing)."""
    if not members_fetch_their_shares(topic, members, partitions):
        return False
    return owners(zk, group, topic) == expected_owners(topic, members, partitions)


def wait_settled(zk, group, topic, members, partitions, timeout=60.0) -> float:
    started = time.perf_counter()
    while not settled(zk, group, topic, members, partitions):
        if time.perf_counter() - started > timeout:
            raise TimeoutError("the group did not settle")
        gevent.sleep(0.002)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--consumers", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    topic, group = "settle", "settle-group"
    with tempfile.TemporaryDirectory(prefix="zkafka-settle-") as work:
        with ZooKeeperServer(os.path.join(work, "zk"), tick_time=500) as server:
            zk_connect = server.connect_string + "/settle"
            config = BrokerConfig({
                "brokerid": "0", "port": "0", "hostname": "127.0.0.1", "log.dir": os.path.join(work, "b0"),
                "zk.connect": zk_connect, "num.partitions": str(args.partitions), "log.flush.interval": "1",
            })  # fmt: skip
            with BrokerThread(config) as broker:
                with socket.create_connection(("127.0.0.1", broker.port)) as sock:
                    for p in range(args.partitions):
                        sock.sendall(encode_request(ProducerRequest(topic, p, build_message_set([b"x"]))))
                zk = start_zk_client(make_zk_client(zk_connect, handler=gevent_handler()))
                while len(get_children(zk, f"/brokers/topics/{topic}")) < 1:
                    gevent.sleep(0.05)
                partitions = broker_partitions({0: args.partitions})
                props = {
                    "zk.connect": zk_connect,
                    "groupid": group,
                    "zk.sessiontimeout.ms": str(args.session_timeout_ms),
                }
                serial = 0

                def new_member() -> ZookeeperConsumerConnector:
                    nonlocal serial
                    serial += 1
                    member = ZookeeperConsumerConnector({**props, "consumerid": f"m{serial:03d}"})
                    member.create_message_streams({topic: 1})
                    return member

                members = [new_member() for _ in range(args.consumers)]
                print(f"{args.consumers} consumers joined; settled after "
                      f"{wait_settled(zk, group, topic, members, partitions) * 1000:.0f} ms more")  # fmt: skip
                leaves, joins = [], []
                try:
                    for _ in range(args.rounds):
                        leaving = members.pop(0)
                        started = time.perf_counter()
                        leaving.shutdown()
                        wait_settled(zk, group, topic, members, partitions)
                        leaves.append(time.perf_counter() - started)
                        started = time.perf_counter()
                        members.append(new_member())
                        wait_settled(zk, group, topic, members, partitions)
                        joins.append(time.perf_counter() - started)
                        gevent.sleep(0.2)
                finally:
                    for m in members:
                        m.shutdown()
                    zk.stop()
                    zk.close()
                print(f"one member leaves ({args.consumers} -> {args.consumers - 1} over {args.partitions} partitions): "
                      f"median {statistics.median(leaves) * 1000:.0f} ms, max {max(leaves) * 1000:.0f} ms "
                      f"({', '.join(f'{x * 1000:.0f}' for x in leaves)})")  # fmt: skip
                print(f"one member joins ({args.consumers - 1} -> {args.consumers}): "
                      f"median {statistics.median(joins) * 1000:.0f} ms, max {max(joins) * 1000:.0f} ms "
                      f"({', '.join(f'{x * 1000:.0f}' for x in joins)})")  # fmt: skip


if __name__ == "__main__":
    main()
