"""Commits and group records wait for ``offsets.commit.required.acks``: the coordinator on a real offsets log led
with a follower (replicas 0 and 1), the follower's fetches recorded by hand. No sockets, no ZooKeeper.

A commit is answered (and visible to OffsetFetch) only once the follower holds it, times out with 0.9's
REQUEST_TIMED_OUT, fails with NOT_ENOUGH_REPLICAS below ``min.insync.replicas``, and with
NOT_COORDINATOR_FOR_GROUP when leadership moves while it waits; the leader's SyncGroup waits the same way for
the group record; a new leader loads what its log holds past its high watermark."""

from __future__ import annotations

import pytest
from gevent.event import AsyncResult

from zkafka.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from zkafka.coordinator.offsets_log import OffsetsLog
from zkafka.coordinator.offsets_schema import OffsetAndMetadata
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.protocol.errors import ErrorCode as E
from zkafka.protocol.inter_broker import LeaderAndIsrRequestV0, PartitionState, PartitionStateEntry
from zkafka.server.delayed_join import JoinPurgatory
from zkafka.server.replica_manager import ReplicaManager
from zkafka.topic import OFFSETS_TOPIC
from zkafka.utils import wait_until

GROUP = "g"  # offsets partition 1 of 2
PARTITION = 1
FOLLOWER = 1
OFFSETS = {("t", 0): OffsetAndMetadata(7, "", 0, 10**13)}


class Cluster:
    """Broker 0's replica manager leading both offsets partitions, follower 1 in the ISR unless told."""

    def __init__(self, tmp_path, min_isr: int = 1) -> None:
        self.log_manager = LogManager08([str(tmp_path)], LogConfig(compact=True))
        self.replicas = ReplicaManager(0, self.log_manager, min_insync_replicas=lambda topic: min_isr)
        self.epoch = 0

    def lead(self, isr=(0, FOLLOWER), leader: int = 0) -> None:
        self.epoch += 1
        states = [
            PartitionStateEntry(
                OFFSETS_TOPIC, p, PartitionState(1, leader, self.epoch, list(isr), 0, [0, FOLLOWER])
            )
            for p in range(2)
        ]
        error, results = self.replicas.become_leader_or_follower(LeaderAndIsrRequestV0(0, 1, states, []))
        assert error == 0 and all(code == 0 for *_, code in results)

    def follower_fetches(self, partition: int = PARTITION) -> None:
        """The follower fetched everything the leader has (it is then at the leader's log end)."""
        end = self.replicas.leader_log(OFFSETS_TOPIC, partition).log_end_offset
        self.replicas.record_follower_fetch(FOLLOWER, [(OFFSETS_TOPIC, partition, end, 1 << 20)])

    def coordinator(self, timeout_ms: int = 5000) -> GroupCoordinator:
        offsets_log = OffsetsLog(self.replicas, timeout_ms=timeout_ms)
        coordinator = GroupCoordinator(
            CoordinatorConfig(num_partitions=2, min_session_timeout_ms=100),
            append=offsets_log.append,
            read_partition=offsets_log.read,
            join_purgatory=JoinPurgatory(),
        )
        coordinator.on_leadership([0, 1])
        wait_until(lambda: coordinator.owned == {0, 1}, 5)
        return coordinator


@pytest.fixture
def cluster(tmp_path):
    cluster = Cluster(tmp_path)
    cluster.lead()
    yield cluster
    cluster.log_manager.close()


def test_a_commit_is_answered_once_the_follower_holds_it(cluster) -> None:
    coordinator = cluster.coordinator()
    answer = coordinator.commit_offsets(GROUP, -1, "", OFFSETS)
    assert isinstance(answer, AsyncResult) and not answer.ready()
    assert coordinator.fetch_offsets(GROUP, None) == (0, {})  # not acknowledged, not visible
    cluster.follower_fetches()
    assert answer.get(timeout=5) == {("t", 0): E.NONE}
    assert coordinator.fetch_offsets(GROUP, None) == (0, OFFSETS)


def test_one_replica_in_sync_answers_at_once(cluster) -> None:
    cluster.lead(isr=(0,))
    coordinator = cluster.coordinator()
    assert coordinator.commit_offsets(GROUP, -1, "", OFFSETS) == {("t", 0): E.NONE}


def test_a_commit_the_follower_never_fetches_times_out(cluster) -> None:
    coordinator = cluster.coordinator(timeout_ms=100)
    answer = coordinator.commit_offsets(GROUP, -1, "", OFFSETS)
    assert answer.get(timeout=5) == {("t", 0): E.REQUEST_TIMED_OUT}  # 0.9 passes the code through
    assert coordinator.fetch_offsets(GROUP, None) == (0, {})


def test_fewer_in_sync_replicas_than_min_insync_replicas(tmp_path) -> None:
    cluster = Cluster(tmp_path, min_isr=2)
    try:
        cluster.lead(isr=(0,))
        coordinator = cluster.coordinator()
        assert coordinator.commit_offsets(GROUP, -1, "", OFFSETS) == {("t", 0): E.NOT_ENOUGH_REPLICAS}
    finally:
        cluster.log_manager.close()


def test_leadership_moving_while_a_commit_waits_answers_not_coordinator(cluster) -> None:
    coordinator = cluster.coordinator()
    answer = coordinator.commit_offsets(GROUP, -1, "", OFFSETS)
    cluster.lead(leader=FOLLOWER)  # this broker follows now (no fetcher: the leader's address is not given)
    assert answer.get(timeout=5) == {("t", 0): E.NOT_COORDINATOR_FOR_GROUP}
    assert coordinator.manager.cache.fetch(GROUP, None) == {}


def sync_leader(coordinator: GroupCoordinator):
    join = coordinator.join_group(GROUP, "", "c", "/h", 6000, "consumer", [("range", b"R")], lambda r: r)
    join = join.get(timeout=5) if isinstance(join, AsyncResult) else join
    assert (join.error, join.generation_id) == (0, 1)
    member = join.member_id
    answer = coordinator.sync_group(GROUP, 1, member, {member: b"A"}, lambda e, a: (e, a))
    return member, answer


def test_the_leaders_sync_waits_for_the_group_record_on_the_follower(cluster) -> None:
    coordinator = cluster.coordinator()
    member, answer = sync_leader(coordinator)
    assert isinstance(answer, AsyncResult) and not answer.ready()
    assert coordinator.heartbeat(GROUP, 1, member) == E.NONE  # CompletingRebalance: heartbeats pass (2.x+)
    cluster.follower_fetches()
    assert answer.get(timeout=5) == (E.NONE, b"A")
    assert coordinator.heartbeat(GROUP, 1, member) == E.NONE
    assert coordinator.manager.cache.group(GROUP).generation == 1


def test_a_group_record_that_times_out_answers_rebalance_in_progress(cluster) -> None:
    coordinator = cluster.coordinator(timeout_ms=100)
    member, answer = sync_leader(coordinator)
    assert answer.get(timeout=5) == (E.REBALANCE_IN_PROGRESS, b"")
    assert coordinator.manager.cache.group(GROUP) is None


def test_a_new_leader_loads_records_past_its_high_watermark(cluster) -> None:
    waiting = cluster.coordinator().commit_offsets(GROUP, -1, "", OFFSETS)
    assert not waiting.ready()
    hosted = cluster.replicas.partition(OFFSETS_TOPIC, PARTITION)
    assert hosted.high_watermark < hosted.log_end_offset  # as a new leader whose followers have not fetched
    assert cluster.coordinator().fetch_offsets(GROUP, None) == (0, OFFSETS)
