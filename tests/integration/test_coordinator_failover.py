"""Coordinator failover: three 0.8 broker processes, ``__consumer_offsets`` replicated three times, a group of
zkafka and kafka-python members (pinned to 0.9 and unpinned) consuming and committing a six-partition topic under
acks=-1 load; kill -9 of the group's coordinator. The controller moves the offsets partition's leadership, the
new leader loads the group and its offsets and answers as coordinator, the members find it and go on.

Checked: every commit acknowledged before the kill is in the new coordinator's OffsetFetch; every acknowledged
message is consumed; duplicates stay within what was delivered and not yet acknowledged as committed; no
partition is read by two members of one generation. Also: a broker whose offsets partition is reassigned away
(alive, no longer its leader) answers its group's requests with NOT_COORDINATOR_FOR_GROUP, and the new leader
has the offsets. Figures go to the terminal summary ("drill figures").
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tests.support.drills import FIGURES, Producer08Load
from tests.support.group_drills import (
    MemberLog,
    acknowledged,
    answering,
    coordinator_of,
    fetch_offsets,
    missing_commits,
    one_generation,
    redeliveries,
    shared_partitions,
    uncommitted_tails,
)
from tests.support.replication import zk_state
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.reassignment import start_reassignment
from zkafka.coordinator.offsets_schema import partition_for
from zkafka.protocol import group_membership as g
from zkafka.protocol.errors import ErrorCode as E
from zkafka.protocol.offset_commit import (
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV2,
)
from zkafka.protocol.versioned import make
from zkafka.topic import OFFSETS_TOPIC
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

TOPIC = "fo"
PARTITIONS = 6
GROUP = "failover"
OFFSETS_PARTITIONS = 3
CLIENTS = ("zkafka", "kafka-python", "kafka-python-probe")


# -- members ------------------------------------------------------------------------------------------------


class Member(MemberLog):
    """A tests/support/tagged_member.py child process; what it printed, each line stamped on arrival."""

    def __init__(self, client: str, bootstrap: str) -> None:
        super().__init__()
        self.client = client
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.tagged_member", client, bootstrap, GROUP, TOPIC, "10000"],
            stdout=subprocess.PIPE,
            stderr=open(os.environ.get("MEMBER_STDERR", os.devnull), "a"),
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            kind, *words = line.split()
            now = time.monotonic()
            if kind == "assigned":
                partitions = {int(p) for p in words[2].split(",") if p != "-"}
                self.assigned.append((now, int(words[0]), words[1], partitions))
            elif kind == "record":
                self.records.append((now, int(words[0]), words[1], int(words[2]), int(words[3]), words[4]))
            elif kind == "committed":
                offsets = dict(map(int, pair.split(":")) for pair in words[2].split(",") if pair != "-")
                self.commits.append((now, int(words[0]), words[1], offsets))
            elif kind == "commit-failed":
                self.commit_failures.append(words[0])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)


@pytest.fixture
def members():
    started: list[Member] = []

    def start(bootstrap: str) -> list[Member]:
        started.extend(Member(client, bootstrap) for client in CLIENTS)
        return started

    yield start
    for member in started:
        member.stop()


def test_kill_9_of_the_group_coordinator_under_load(start_cluster, members):
    cluster = start_cluster(offsets_topic_num_partitions=str(OFFSETS_PARTITIONS), num_partitions="1")
    cluster.topic(TOPIC, PARTITIONS, seed=21)
    load = Producer08Load(cluster.ports, TOPIC, keyed=True, pause_s=0.05)
    load.start()
    group = members(",".join(f"127.0.0.1:{port}" for port in cluster.ports()))
    started = time.monotonic()
    wait_until(
        lambda: one_generation(group, PARTITIONS),
        90,
        message="one generation: every partition assigned once, every member committing in it",
    )
    joined_s = time.monotonic() - started
    assert all(m.partitions() for m in group), [m.partitions() for m in group]
    generation = group[0].generation()
    victim = coordinator_of(cluster.ports(), GROUP)
    assert victim is not None
    survivors = [b for b in (1, 2, 3) if b != victim]
    wait_until(lambda: sum(len(m.commits) for m in group) >= 3 * len(group), 30, message="commits flowing")

    cluster[victim].proc.kill()
    killed = time.monotonic()
    acked_before = acknowledged(group, before=killed)
    read_before = {p for m in group for _, _, _, p, _, _ in m.records}
    assert read_before == set(range(PARTITIONS))

    def new_coordinator():
        node = coordinator_of(cluster.ports(), GROUP)
        if node is None or node == victim:
            return None
        return (
            (node, offsets)
            if (offsets := answering(cluster.port_of(node), GROUP, TOPIC, PARTITIONS)) is not None
            else None
        )

    new, loaded = wait_until(new_coordinator, 60, interval=0.05, message="a new coordinator answering")
    coordinator_s = time.monotonic() - killed
    assert new in survivors
    behind = missing_commits(acked_before, loaded)
    assert not behind, f"acknowledged commits missing at the new coordinator (acked, found): {behind}"

    def resumed_at(p: int) -> float | None:
        times = [at for m in group for at, _, _, q, _, _ in m.records if q == p and at > killed]
        return min(times) if times else None

    wait_until(
        lambda: all(resumed_at(p) is not None for p in range(PARTITIONS)),
        60,
        message="every partition consumed again",
    )
    consumption_s = max(resumed_at(p) for p in range(PARTITIONS)) - killed
    after = killed + 0.1  # lines stamped sooner may be answers of the old coordinator still in the pipe
    wait_until(
        lambda: any(at > after for m in group for at, *_ in m.commits),
        60,
        message="a commit acknowledged again",
    )
    first_commit_s = min(at for m in group for at, *_ in m.commits if at > after) - killed
    at = len(load.acked)
    wait_until(lambda: len(load.acked) >= at + 100, 30, message="100 more messages acknowledged")
    load.stop()
    acked_values = {v.decode() for v in load.acked}
    wait_until(
        lambda: acked_values <= {r[5] for m in group for r in m.records},
        60,
        message="every acknowledged message consumed",
    )
    wait_until(lambda: all(m.records and m.commits[-1][0] > m.records[-1][0] for m in group), 30,
               message="each member's last records committed")  # fmt: skip
    for m in group:
        m.stop()

    consumed = sum(len(m.records) for m in group)
    duplicates, resent = redeliveries(group)
    tails = uncommitted_tails(group)
    assert duplicates <= tails, f"{duplicates} duplicates, only {tails} records delivered past a commit"
    shared = shared_partitions(group)
    assert not shared, f"partitions read by two members of one generation: {shared}"
    final = wait_until(
        lambda: answering(cluster.port_of(new), GROUP, TOPIC, PARTITIONS), 10, message="the final offsets"
    )
    behind = missing_commits(acknowledged(group), final)
    assert not behind, f"acknowledged commits missing at the end (acked, found): {behind}"
    rejoins = sum(1 for m in group for at, *_ in m.assigned if at > killed)

    figures = {
        "killed": victim,
        "new_coordinator": new,
        "coordinator_answering_after_s": round(coordinator_s, 2),
        "every_partition_consumed_again_after_s": round(consumption_s, 2),
        "first_commit_after_s": round(first_commit_s, 2),
        "acked": len(acked_values),
        "consumed": consumed,
        "duplicates": duplicates,
        "uncommitted_tails": tails,
        "producer_resends_in_log": resent,
        "generation_at_kill": generation,
        "assignments_after_kill": rejoins,
        "commit_failures": sum(len(m.commit_failures) for m in group),
        "group_formed_s": round(joined_s, 2),
    }
    FIGURES.append(("kill -9 group coordinator", figures))
    print("\nkill -9 group coordinator: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


# -- the old leader of an offsets partition -------------------------------------------------------------------


def commit(port: int, group: str, offsets: dict[int, int]) -> dict[int, int]:
    """OffsetCommit v2 without group management at ``port``: {partition: error}."""
    partitions = [OffsetCommitRequestPartitionV0(p, o, "") for p, o in offsets.items()]
    with Client08(port) as client:
        answer = client.call(
            OffsetCommitRequestV2(group, -1, "", -1, [OffsetCommitRequestTopicV0(TOPIC, partitions)])
        )
    return {p.partition: p.error for t in answer.topics for p in t.partitions}


def test_a_broker_whose_offsets_partition_is_reassigned_away_stops_coordinating_its_groups(
    start_broker08, zk_client
):
    props = {
        "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS),
        "replica_fetch_wait_max_ms": "100",
        "num_partitions": str(PARTITIONS),
    }
    brokers = {b: start_broker08(b, **props) for b in (1, 2, 3)}
    with Client08(brokers[1].port) as client:
        wait_for_leaders(client, [TOPIC])
    old = wait_until(lambda: coordinator_of([brokers[1].port], GROUP), 30, message="a coordinator")
    offsets_partition = partition_for(GROUP, OFFSETS_PARTITIONS)
    wait_until(
        lambda: len(zk_state(zk_client, OFFSETS_TOPIC, offsets_partition).isr) == 3, 20, message="a full ISR"
    )
    assert commit(brokers[old].port, GROUP, {0: 42, 5: 7}) == {0: E.NONE, 5: E.NONE}  # the ISR has it

    others = [b for b in brokers if b != old]
    start_reassignment(zk_client, {(OFFSETS_TOPIC, offsets_partition): others})
    wait_until(lambda: not zk_client.exists("/admin/reassign_partitions"), 30, message="the move done")
    port = brokers[old].port
    wait_until(
        lambda: fetch_offsets(port, GROUP, TOPIC, PARTITIONS)[0][1] == E.NOT_COORDINATOR_FOR_GROUP,
        20,
        message="old coordinator",
    )
    assert commit(port, GROUP, {0: 50}) == {0: E.NOT_COORDINATOR_FOR_GROUP}
    with Client08(port) as client:
        protocols = [g.GroupProtocol("range", b"")]
        joined = client.call(g.JoinGroupRequestV0(GROUP, 6000, "", "consumer", protocols))
        assert joined.error == E.NOT_COORDINATOR_FOR_GROUP
        assert client.call(g.HeartbeatRequestV0(GROUP, 1, "m")).error == E.NOT_COORDINATOR_FOR_GROUP
    new = wait_until(
        lambda: (node := coordinator_of([port], GROUP)) in others and node, 20, message="a new coordinator"
    )
    loaded = wait_until(
        lambda: answering(brokers[new].port, GROUP, TOPIC, PARTITIONS), 20, message="the new coordinator"
    )
    assert (loaded[0], loaded[5]) == (42, 7)


# -- a static member across a coordinator move ----------------------------------------------------------------


def static_join(port: int, instance: str, member_id: str = "") -> tuple:
    """JoinGroup v9 of the static member ``instance``, then SyncGroup v5 (the leader assigns itself every
    partition): (join answer, its assignment bytes)."""
    protocols = [{"protocol_name": "range", "protocol_metadata": b""}]
    with Client08(port, client_id="static") as client:
        joined = client.call(make(
            g.JOIN_GROUP_REQUEST[9], group_id=GROUP, session_timeout=30000, rebalance_timeout=30000, member_id=member_id,
            group_instance_id=instance, protocol_type="consumer", group_protocols=protocols, reason=None,
        ))  # fmt: skip
        assert joined.error == E.NONE, joined
        mine = b"assigned:" + instance.encode()
        given = [{"member_id": joined.member_id, "member_assignment": mine}] if joined.leader_id == joined.member_id else []
        synced = client.call(make(
            g.SYNC_GROUP_REQUEST[5], group_id=GROUP, generation_id=joined.generation_id, member_id=joined.member_id,
            group_instance_id=instance, protocol_type="consumer", protocol_name="range", group_assignment=given,
        ))  # fmt: skip
        assert synced.error == E.NONE, synced
    return joined, synced.member_assignment


def test_a_static_member_restarting_after_a_coordinator_move_gets_its_partitions_back_without_a_rebalance(
    start_broker08, zk_client
):
    """inter.broker.protocol.version 3.4: the group record is written at v3, with the member's
    group.instance.id; the new coordinator loads it, so the restarted member (a new member id, the same
    instance id) takes its old place: the same generation, its old assignment, no rebalance."""
    props = {"offsets.topic.num.partitions": "1", "num_partitions": "2", "inter.broker.protocol.version": "3.4"}
    brokers = {b: start_broker08(b, **props) for b in (1, 2)}
    with Client08(brokers[1].port) as client:
        wait_for_leaders(client, [TOPIC])
    old = wait_until(lambda: coordinator_of([brokers[1].port], GROUP), 30, message="a coordinator")
    wait_until(lambda: len(zk_state(zk_client, OFFSETS_TOPIC, 0).isr) == 2, 20, message="a full ISR")
    first, assignment = static_join(brokers[old].port, "static-1")
    assert (first.generation_id, assignment) == (1, b"assigned:static-1")

    new = next(b for b in brokers if b != old)
    start_reassignment(zk_client, {(OFFSETS_TOPIC, 0): [new]})
    wait_until(lambda: coordinator_of([brokers[new].port], GROUP) == new, 30, message="the coordinator moved")
    restarted, assignment = wait_until(
        lambda: _loaded_join(brokers[new].port), 20, message="the new coordinator loaded the group"
    )
    assert restarted.member_id != first.member_id
    assert (restarted.generation_id, assignment) == (1, b"assigned:static-1")  # no rebalance, same partitions
    with Client08(brokers[new].port) as client:
        (described,) = client.call(make(g.DESCRIBE_GROUPS_REQUEST[5], group_ids=[GROUP], include_authorized_operations=False)).groups
    assert (described.state, [(m.member_id, m.group_instance_id) for m in described.members]) == (
        "Stable",
        [(restarted.member_id, "static-1")],
    )


def _loaded_join(port: int):
    try:
        return static_join(port, "static-1")
    except AssertionError:  # GROUP_LOAD_IN_PROGRESS / NOT_COORDINATOR while the group loads
        return None
