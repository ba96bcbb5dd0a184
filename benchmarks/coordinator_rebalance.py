"""Offset commits per second against one 0.8 broker process, and the group members benchmarks/rebalance.py
times rebalances with.

``Member`` is a gevent greenlet speaking the group protocol over its own connection (join, the leader assigns
with range, sync, heartbeat every ``heartbeat_s``, rejoin on REBALANCE_IN_PROGRESS, LeaveGroup at once when
leaving). The benchmark starts its own ZooKeeper and broker; one connection commits one offset per
OffsetCommit v2 for ``--seconds`` (and ``--partitions`` per request).

    python benchmarks/coordinator_rebalance.py [--partitions 40] [--seconds 5]
"""

from __future__ import annotations

import argparse
import itertools
import os
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
        self.heard_at = 0.0  # when a Heartbeat last answered REBALANCE_IN_PROGRESS (perf_counter)
        self.stopped = self.calling = False
        self.greenlet = gevent.spawn(self._run)

    def call(self, request):
        self.calling = True
        try:
            return self.conn.call(request)
        finally:
            self.calling = False

    def _run(self) -> None:
        metadata = subscription_metadata(RangeAssignor(), [TOPIC])
        while not self.stopped:
            joined = self.call(
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
            synced = self.call(g.SyncGroupRequestV0(GROUP, joined.generation_id, self.member_id, assignments))
            if synced.error:
                continue
            self.generation = joined.generation_id
            self.assignment = decode_assignment(synced.member_assignment).get(TOPIC, [])
            while not self.stopped:
                gevent.sleep(self.heartbeat_s)
                error = self.call(g.HeartbeatRequestV0(GROUP, self.generation, self.member_id)).error
                if error:
                    self.heard_at = time.perf_counter() if error == REBALANCE_IN_PROGRESS else self.heard_at
                    break

    def leave(self) -> None:
        """LeaveGroup now (a consumer's close), not after the heartbeat sleep."""
        self.stopped = True
        if self.calling:
            self.greenlet.join()
        else:
            self.greenlet.kill()
        self.conn.call(g.LeaveGroupRequestV0(GROUP, self.member_id))


def settled(members: list[Member], partitions: int, after_generation: int) -> bool:
    generations = {m.generation for m in members}
    if len(generations) != 1 or generations.pop() <= after_generation:
        return False
    owned = sorted(p for m in members for p in m.assignment)
    return owned == list(range(partitions))


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
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=5.0)
    opts = parser.parse_args()
    with broker08_cluster(opts.partitions, **{"offsets.topic.num.partitions": "1"}) as (_, port):
        probe = Connection(port, "probe")
        wait_until(lambda: probe.call(MetadataRequestV0([TOPIC])).topics[0].partitions, 30)
        wait_until(lambda: probe.call(GroupCoordinatorRequestV0(GROUP)).error == 0, 30)
        wait_until(lambda: probe.call(GroupCoordinatorRequestV0("committer")).error == 0, 30)
        for per_request in (1, opts.partitions):
            rate = measure_commits(port, opts.seconds, per_request)
            print(f"  offset commits ({per_request} per OffsetCommit v2): {rate:,.0f} offsets/s")


if __name__ == "__main__":
    main()
