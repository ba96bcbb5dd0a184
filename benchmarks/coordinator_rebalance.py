"""Coordinator rebalance time and offset commits per second, against one 0.8 broker process.

Starts its own ZooKeeper and a broker, then ``--members`` group members (gevent greenlets speaking the group
protocol over their own connections: join, the leader assigns with range, sync, heartbeat every
``--heartbeat-ms``, rejoin on REBALANCE_IN_PROGRESS) share a topic of ``--partitions`` partitions. Each round
one member leaves (LeaveGroup) and the time is measured until every remaining member has synced the new
generation with partitions covering the topic exactly once; then a new member joins. Last, one connection
commits one offset per OffsetCommit v2 for ``--seconds`` (and 40 per request).

    python benchmarks/coordinator_rebalance.py [--members 10] [--partitions 40] [--rounds 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

import gevent
import gevent.socket

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.broker_process import broker08_cluster  # noqa: E402
from zkafka.consumer.group.assignors import (  # noqa: E402
    RangeAssignor,
    assign_group,
    decode_assignment,
    subscription_metadata,
)
from zkafka.protocol import group_membership as g  # noqa: E402
from zkafka.protocol import v08  # noqa: E402
from zkafka.protocol.metadata import MetadataRequestV0  # noqa: E402
from zkafka.protocol.offset_commit import (  # noqa: E402
    GroupCoordinatorRequestV0,
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV2,
)
from zkafka.utils import wait_until  # noqa: E402

TOPIC, GROUP = "bench", "bench-group"
REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID = 27, 22, 25


class Connection:
    """One gevent socket speaking the 0.8/0.9 protocol, a request at a time."""

    _ids = itertools.count(1)

    def __init__(self, port: int, client_id: str) -> None:
        self.sock = gevent.socket.create_connection(("127.0.0.1", port))
        self.client_id = client_id

    def call(self, body):
        correlation_id = next(self._ids)
        self.sock.sendall(v08.encode_request(body, correlation_id, self.client_id))
        size = int.from_bytes(self._read(4), "big")
        return v08.decode_response(body.API_KEY, body.API_VERSION, self._read(size)).body

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return data


class Member:
    """A group member: the JoinGroup/SyncGroup/Heartbeat loop of a 0.9 consumer, without fetching."""

    def __init__(self, port: int, name: str, partitions: int, heartbeat_s: float) -> None:
        self.conn = Connection(port, name)
        self.partitions_per_topic = {TOPIC: partitions}
        self.heartbeat_s = heartbeat_s
        self.member_id = ""
        self.generation = -1
        self.assignment: list[int] = []
        self.stopped = False
        self.greenlet = gevent.spawn(self._run)

    def _run(self) -> None:
        metadata = subscription_metadata(RangeAssignor(), [TOPIC])
        while not self.stopped:
            joined = self.conn.call(
                g.JoinGroupRequestV0(
                    GROUP, 10000, self.member_id, "consumer", [g.GroupProtocol("range", metadata)]
                )
            )
            if joined.error:
                if joined.error == UNKNOWN_MEMBER_ID:
                    self.member_id = ""
                continue
            self.member_id = joined.member_id
            assignments = []
            if joined.leader_id == joined.member_id:
                members = {m.member_id: m.member_metadata for m in joined.members}
                result = assign_group(RangeAssignor(), self.partitions_per_topic, members)
                assignments = [g.SyncGroupAssignment(m, data) for m, data in result.items()]
            synced = self.conn.call(
                g.SyncGroupRequestV0(GROUP, joined.generation_id, self.member_id, assignments)
            )
            if synced.error:
                continue
            self.generation = joined.generation_id
            self.assignment = decode_assignment(synced.member_assignment).get(TOPIC, [])
            while not self.stopped:
                gevent.sleep(self.heartbeat_s)
                if self.conn.call(g.HeartbeatRequestV0(GROUP, self.generation, self.member_id)).error:
                    break

    def leave(self) -> None:
        self.stopped = True
        self.greenlet.join()
        self.conn.call(g.LeaveGroupRequestV0(GROUP, self.member_id))


def settled(members: list[Member], partitions: int, after_generation: int) -> bool:
    generations = {m.generation for m in members}
    if len(generations) != 1 or generations.pop() <= after_generation:
        return False
    owned = sorted(p for m in members for p in m.assignment)
    return owned == list(range(partitions))


def measure_rebalances(port: int, opts) -> tuple[list[float], list[float]]:
    heartbeat_s = opts.heartbeat_ms / 1000
    names = (f"member-{i}" for i in itertools.count())
    members = [Member(port, next(names), opts.partitions, heartbeat_s) for _ in range(opts.members)]
    wait_until(lambda: settled(members, opts.partitions, 0), 60, message="the group settled")
    leaves, joins = [], []
    for _ in range(opts.rounds):
        generation = members[0].generation
        leaver = members.pop(0)
        started = time.perf_counter()
        leaver.leave()
        wait_until(
            lambda g=generation: settled(members, opts.partitions, g), 60, 0.001, "settled after a leave"
        )
        leaves.append(time.perf_counter() - started)
        generation = members[0].generation
        started = time.perf_counter()
        members.append(Member(port, next(names), opts.partitions, heartbeat_s))
        wait_until(
            lambda g=generation: settled(members, opts.partitions, g), 60, 0.001, "settled after a join"
        )
        joins.append(time.perf_counter() - started)
    for member in members:
        member.leave()
    return leaves, joins


def measure_commits(port: int, seconds: float, per_request: int) -> float:
    conn = Connection(port, "committer")
    count = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        partitions = [OffsetCommitRequestPartitionV0(p, count, "") for p in range(per_request)]
        answer = conn.call(
            OffsetCommitRequestV2("committer", -1, "", -1, [OffsetCommitRequestTopicV0(TOPIC, partitions)])
        )
        assert all(p.error == 0 for t in answer.topics for p in t.partitions), answer
        count += per_request
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--heartbeat-ms", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    opts = parser.parse_args()
    with broker08_cluster(opts.partitions, **{"offsets.topic.num.partitions": "1"}) as (_, port):
        probe = Connection(port, "probe")
        wait_until(lambda: probe.call(MetadataRequestV0([TOPIC])).topics[0].partitions, 30)
        wait_until(lambda: probe.call(GroupCoordinatorRequestV0(GROUP)).error == 0, 30)
        leaves, joins = measure_rebalances(port, opts)
        print(
            f"{opts.members} members x {opts.partitions} partitions, heartbeat every {opts.heartbeat_ms} ms"
        )
        for what, times in (("a member leaves", leaves), ("a member joins", joins)):
            ms = [t * 1000 for t in times]
            print(f"  rebalance when {what}: median {statistics.median(ms):.0f} ms, max {max(ms):.0f} ms")
        wait_until(lambda: probe.call(GroupCoordinatorRequestV0("committer")).error == 0, 30)
        for per_request in (1, opts.partitions):
            rate = measure_commits(port, opts.seconds, per_request)
            print(f"  offset commits ({per_request} per OffsetCommit v2): {rate:,.0f} offsets/s")


if __name__ == "__main__":
    main()
