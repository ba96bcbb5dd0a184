"""How long a group of ``--members`` on ``--partitions`` partitions takes to settle after one member leaves and
after one joins: through the group coordinator (0.9) and through ZooKeeper (the 0.8 and the 0.7 ZooKeeper
consumer), side by side, against one ZooKeeper, one 0.8 broker process and one 0.7 broker process (under the
chroot ``/v07``).

Coordinator: the members of ``coordinator_rebalance.py`` (the group protocol over their own connections,
Heartbeat every ``--heartbeat-ms``, LeaveGroup at once when leaving). ZooKeeper:
ZookeeperConsumerConnector08s (or 0.7's ZookeeperConsumerConnectors) on this thread's gevent hub (one stream
each; a leaving one shuts down). Each
event comes at a random point of the members' heartbeat cycle; the group has settled when every member has
its range share and nothing else (coordinator: the new generation synced by all; ZooKeeper: the owner znodes
are the assignment and every member fetches its share). For the coordinator the time after the last member
heard of the rebalance (its Heartbeat answered REBALANCE_IN_PROGRESS) is shown too: the join's own round trips.

    python benchmarks/rebalance.py [--members 10] [--partitions 40] [--rounds 10] [--heartbeat-ms 100]
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import gevent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import broker08_cluster, start_broker  # noqa: E402
from benchmarks.consumer_group_settle import members_fetch_their_shares  # noqa: E402
from benchmarks.consumer_group_settle import settled as zk_settled  # noqa: E402
from benchmarks.coordinator_rebalance import TOPIC, Connection, Member, settled  # noqa: E402
from zkafka.assignment.range_assignor import broker_partitions  # noqa: E402
from zkafka.consumer import ZookeeperConsumerConnector  # noqa: E402
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08  # noqa: E402
from zkafka.protocol.metadata import MetadataRequestV0  # noqa: E402
from zkafka.protocol.offset_commit import GroupCoordinatorRequestV0  # noqa: E402
from zkafka.protocol.v07 import ProducerRequest, encode_request  # noqa: E402
from zkafka.records.message07 import build_message_set  # noqa: E402
from zkafka.utils import wait_until  # noqa: E402
from zkafka.zk.client import get_children, gevent_handler, make_zk_client, start_zk_client  # noqa: E402

ZK_GROUP = "bench-zk-group"


def zk_requests(zk_connect: str) -> int:
    """Requests ZooKeeper has received so far (its ``srvr`` four-letter command)."""
    host, port = zk_connect.split("/")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"srvr")
        answer = b"".join(iter(lambda: sock.recv(4096), b"")).decode()
    return int(next(line for line in answer.splitlines() if line.startswith("Received:")).split()[1])


def rounds(
    members: list, new_member: Callable[[], object], leave: Callable[[object], None], is_settled, opts
) -> dict[str, list[float]]:
    """``opts.rounds`` of (one member leaves, one joins), each at a random point of the heartbeat cycle:
    the seconds each took to settle, (coordinator members) the seconds after the last member heard of it,
    and the requests ZooKeeper received meanwhile."""
    out: dict[str, list[float]] = {"leave": [], "join": [], "heard": [], "leave zk": [], "join zk": []}
    for _ in range(opts.rounds):
        for event in ("leave", "join"):
            gevent.sleep(random.uniform(0, opts.heartbeat_ms / 1000))
            before, requests, reads = is_settled.mark(), zk_requests(opts.zk_connect), is_settled.reads
            started = time.perf_counter()
            if event == "leave":
                leave(members.pop(0))
            else:
                members.append(new_member())
            wait_until(lambda b=before: is_settled(members, b), 60, 0.001, f"settled after a {event}")
            ended = time.perf_counter()
            out[event].append(ended - started)
            # not our own srvr, nor the settled check's reads
            out[f"{event} zk"].append(
                zk_requests(opts.zk_connect) - requests - 1 - (is_settled.reads - reads)
            )
            heard = [m.heard_at for m in members if getattr(m, "heard_at", None)]
            if heard and max(heard) > started:
                out["heard"].append(ended - max(heard))
    return out


class CoordinatorSettled:
    """Settled: one generation newer than the one before the event, covering the topic once."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.members: list[Member] = []

    reads = 0  # no ZooKeeper reads

    def mark(self) -> int:
        return max(m.generation for m in self.members)

    def __call__(self, members: list[Member], before: int) -> bool:
        self.members = members
        return settled(members, self.partitions, before)


class ZooKeeperSettled:
    """Settled: every member fetches exactly its range share and the owner znodes are the assignment
    (``consumer_group_settle.settled``); ``reads`` counts the ZooKeeper requests this check made."""

    def __init__(self, zk, partitions: list) -> None:
        self.zk, self.partitions = zk, partitions
        self.reads = 0

    def mark(self) -> None:
        return None

    def __call__(self, members: list, _before: None) -> bool:
        if not members_fetch_their_shares(TOPIC, members, self.partitions):
            return False
        self.reads += 1 + len(self.partitions)  # the owners' children, then each owner
        return zk_settled(self.zk, ZK_GROUP, TOPIC, members, self.partitions)


def coordinator_figures(port: int, opts) -> dict[str, list[float]]:
    names = (f"member-{i}" for i in itertools.count())
    heartbeat_s = opts.heartbeat_ms / 1000

    def new_member() -> Member:
        return Member(port, next(names), opts.partitions, heartbeat_s)

    members = [new_member() for _ in range(opts.members)]
    is_settled = CoordinatorSettled(opts.partitions)
    wait_until(lambda: is_settled(members, 0), 60, message="the group settled")
    try:
        return rounds(members, new_member, Member.leave, is_settled, opts)
    finally:
        for member in members:
            member.leave()


def zookeeper_figures(zk_connect: str, opts, line07: bool = False) -> dict[str, list[float]]:
    """The ZooKeeper consumers' figures: 0.8's, or 0.7's (``zk_connect`` then names the 0.7 chroot)."""
    serial = itertools.count()
    if line07:
        connector, partitions = ZookeeperConsumerConnector, broker_partitions({0: opts.partitions})
        props = {"zk.connect": zk_connect, "groupid": ZK_GROUP, "autocommit.enable": "false"}
        id_key = "consumerid"
    else:
        connector, partitions = ZookeeperConsumerConnector08, list(range(opts.partitions))
        props = {"zookeeper.connect": zk_connect, "group.id": ZK_GROUP, "auto.commit.enable": "false"}
        id_key = "consumer.id"

    def new_member():
        member = connector({**props, id_key: f"m{next(serial):03d}"})
        member.create_message_streams({TOPIC: 1})
        return member

    zk = start_zk_client(make_zk_client(zk_connect, handler=gevent_handler()))
    members = [new_member() for _ in range(opts.members)]
    is_settled = ZooKeeperSettled(zk, partitions)
    try:
        wait_until(lambda: is_settled(members, None), 60, message="the ZooKeeper group settled")
        return rounds(members, new_member, connector.shutdown, is_settled, opts)
    finally:
        for member in members:
            member.shutdown()
        zk.stop()
        zk.close()


def broker07_topic(work: str, zk_connect: str, partitions: int):
    """A 0.7 broker process under the chroot ``/v07`` with ``TOPIC`` on ``partitions`` partitions (one message
    each creates them): its process and the chroot's connect string."""
    chroot = zk_connect + "/v07"
    proc, port = start_broker(work, chroot, partitions)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for p in range(partitions):
            sock.sendall(encode_request(ProducerRequest(TOPIC, p, build_message_set([b"x"]))))
    zk = start_zk_client(make_zk_client(chroot))
    try:
        wait_until(lambda: get_children(zk, f"/brokers/topics/{TOPIC}"), 30, message="the 0.7 topic registered")
    finally:
        zk.stop()
        zk.close()
    return proc, chroot


def summary(values: list[float], scale: float = 1000, unit: str = " ms") -> str:
    ordered = sorted(v * scale for v in values)
    if not ordered:
        return "-"
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):5.0f}{unit}, p95 {p95:5.0f}{unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--heartbeat-ms", type=int, default=100)
    opts = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with broker08_cluster(opts.partitions, **{"offsets.topic.num.partitions": "1"}) as (zk_connect, port):
        opts.zk_connect = zk_connect
        probe = Connection(port, "probe")
        wait_until(lambda: probe.call(MetadataRequestV0([TOPIC])).topics[0].partitions, 30)
        wait_until(lambda: probe.call(GroupCoordinatorRequestV0("bench-group")).error == 0, 30)
        coordinator = coordinator_figures(port, opts)
        zookeeper = zookeeper_figures(zk_connect, opts)
        with tempfile.TemporaryDirectory() as work:
            proc, chroot = broker07_topic(work, zk_connect, opts.partitions)
            try:
                zookeeper07 = zookeeper_figures(chroot, opts, line07=True)
            finally:
                proc.terminate()
                proc.wait(30)
    print(
        f"{opts.members} members x {opts.partitions} partitions, {opts.rounds} rounds, heartbeat every "
        f"{opts.heartbeat_ms} ms (coordinator members)"
    )
    print(f"  {'settle after':32} {'coordinator (0.9)':32} {'ZooKeeper (0.8 connector)':32} ZooKeeper (0.7 connector)")
    for event, what in (("leave", "a member leaves"), ("join", "a member joins")):
        print(
            f"  {what:32} {summary(coordinator[event]):32} {summary(zookeeper[event]):32} "
            f"{summary(zookeeper07[event])}"
        )
        requests = [summary(figures[event + " zk"], 1, "") for figures in (zookeeper, zookeeper07)]
        print(f"  {'  ZooKeeper requests meanwhile':32} {'':32} {requests[0]:32} {requests[1]}")
    print(f"  {'the last member heard of it':32} {summary(coordinator['heard']):32} -")


if __name__ == "__main__":
    main()
