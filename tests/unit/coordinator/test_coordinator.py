"""GroupCoordinator on a real offsets log in a temporary directory: no sockets, no ZooKeeper.

The checks before the group in 0.9's order, loading and unloading offsets partitions, parked JoinGroups
answered when a rebalance completes or its timeout fires, commit errors as 0.9 maps them, offsets expiry, and
what a restart loads back."""

from __future__ import annotations

import gevent
import pytest
from gevent.event import AsyncResult

from zkafka.consumer.group.assignors import RangeAssignor, subscription_metadata
from zkafka.coordinator.coordinator import CoordinatorConfig, GroupCoordinator
from zkafka.coordinator.group_state import GroupState
from zkafka.coordinator.offsets_log import OffsetsLog
from zkafka.coordinator.offsets_schema import OffsetAndMetadata, partition_for
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.protocol.errors import ErrorCode as E
from zkafka.server.delayed_join import JoinPurgatory
from zkafka.server.replica_manager import ReplicaManager
from zkafka.topic import OFFSETS_TOPIC
from zkafka.utils import wait_until

PARTITIONS = 2
GROUP = "g"  # offsets partition 1 of 2 (hash 103)
OTHER = "my-group"  # partition 0 of 2


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def replicas(tmp_path):
    log_manager = LogManager08([str(tmp_path)], LogConfig(compact=True))
    manager = ReplicaManager(0, log_manager)
    manager.update_leaders({(OFFSETS_TOPIC, p): 0 for p in range(PARTITIONS)} | {("t", 0): 0})
    yield manager
    log_manager.close()


def make_coordinator(replicas, clock=None, **config) -> GroupCoordinator:
    offsets_log = OffsetsLog(replicas)
    settings = {"num_partitions": PARTITIONS, "min_session_timeout_ms": 100} | config
    return GroupCoordinator(
        CoordinatorConfig(**settings),
        append=offsets_log.append,
        read_partition=offsets_log.read,
        join_purgatory=JoinPurgatory(),
        time_ms=clock or Clock(),
    )


def loaded(coordinator: GroupCoordinator, partitions=range(PARTITIONS)) -> GroupCoordinator:
    coordinator.on_leadership(partitions)
    wait_until(lambda: coordinator.owned == set(partitions) and not coordinator.loading, 5)
    return coordinator


def join(coordinator, member="", group=GROUP, session=6000, protocols=(("range", b"R"),)):
    answer = coordinator.join_group(
        group, member, "c", "/h", session, "consumer", list(protocols), lambda r: r
    )
    return answer.get(timeout=5) if isinstance(answer, AsyncResult) else answer


def test_partitions_as_expected() -> None:
    assert partition_for(GROUP, PARTITIONS) == 1 and partition_for(OTHER, PARTITIONS) == 0


def test_checks_before_the_group_in_order(replicas) -> None:
    coordinator = make_coordinator(replicas)
    assert join(coordinator).error == E.NOT_COORDINATOR_FOR_GROUP  # leads nothing yet
    loaded(coordinator, [1])
    assert join(coordinator, group="").error == E.INVALID_GROUP_ID
    assert join(coordinator, session=50).error == E.INVALID_SESSION_TIMEOUT
    assert join(coordinator, session=1_800_001).error == E.INVALID_SESSION_TIMEOUT  # Kafka 2.x max (0.9: 30000)
    assert join(coordinator, member="m").error == E.UNKNOWN_MEMBER_ID
    assert join(coordinator, group=OTHER).error == E.NOT_COORDINATOR_FOR_GROUP
    coordinator.loading.add(0)
    assert join(coordinator, group=OTHER).error == E.GROUP_LOAD_IN_PROGRESS
    assert coordinator.heartbeat(OTHER, 1, "m") == E.NONE  # 0.9 answers heartbeats blindly while loading
    assert coordinator.list_groups() == (E.GROUP_LOAD_IN_PROGRESS, [])
    coordinator.shutdown()
    assert join(coordinator, group="").error == E.GROUP_COORDINATOR_NOT_AVAILABLE  # inactive comes first
    assert coordinator.leave_group(GROUP, "m") == E.GROUP_COORDINATOR_NOT_AVAILABLE


def test_a_rebalance_waits_for_every_member_then_its_timeout_drops_the_silent_one(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas))
    first = join(coordinator, session=300)
    assert (first.error, first.generation_id) == (0, 1)
    coordinator.sync_group(GROUP, 1, first.member_id, {first.member_id: b"A"}, lambda e, a: (e, a))
    pending = coordinator.join_group(GROUP, "", "c", "/h", 300, "consumer", [("range", b"R")], lambda r: r)
    assert isinstance(pending, AsyncResult) and not pending.ready()  # waits for the first member to rejoin
    second = pending.get(timeout=5)  # ... which never does: the rebalance timeout (300 ms) completes it
    assert (second.error, second.generation_id, second.leader_id) == (0, 2, second.member_id)
    assert list(coordinator.groups[GROUP].members) == [second.member_id]
    assert coordinator.heartbeat(GROUP, 1, first.member_id) == E.UNKNOWN_MEMBER_ID  # dropped (CompletingRebalance)


def test_losing_the_partition_answers_parked_joins_with_not_coordinator(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas))
    first = join(coordinator)
    answer = coordinator.join_group(
        GROUP, first.member_id, "c", "/h", 6000, "consumer", [("rr", b"")], lambda r: r
    )
    assert answer.error == E.INCONSISTENT_GROUP_PROTOCOL  # an immediate answer is the value itself
    pending = coordinator.join_group(GROUP, "", "c", "/h", 6000, "consumer", [("range", b"R")], lambda r: r)
    coordinator.on_leadership([0])
    assert pending.get(timeout=5).error == E.NOT_COORDINATOR_FOR_GROUP
    assert coordinator.heartbeat(GROUP, 1, first.member_id) == E.NOT_COORDINATOR_FOR_GROUP


def test_commits_are_stored_in_the_log_and_loaded_back(replicas) -> None:
    clock = Clock()
    coordinator = loaded(make_coordinator(replicas, clock))
    member = join(coordinator)
    coordinator.sync_group(GROUP, 1, member.member_id, {member.member_id: b"A"}, lambda e, a: (e, a))
    offsets = {("t", 0): OffsetAndMetadata(7, "md", clock.now, clock.now + 1000)}
    assert coordinator.commit_offsets(GROUP, 1, member.member_id, offsets) == {("t", 0): 0}
    big = {("t", 1): OffsetAndMetadata(1, "x" * 5000, 0, 1)}
    assert coordinator.commit_offsets(GROUP, 1, member.member_id, big) == {
        ("t", 1): E.OFFSET_METADATA_TOO_LARGE
    }
    assert coordinator.commit_offsets(OTHER, -1, "", offsets) == {("t", 0): 0}
    restarted = loaded(make_coordinator(replicas, clock))
    assert restarted.fetch_offsets(GROUP, None) == (0, offsets)
    assert restarted.fetch_offsets(OTHER, [("t", 0), ("t", 9)]) == (
        0,
        {("t", 0): offsets[("t", 0)], ("t", 9): None},
    )
    assert restarted.groups[GROUP].members[member.member_id].assignment == b"A"
    clock.now += 2000
    assert restarted.expire_offsets() == 2
    again = loaded(make_coordinator(replicas, clock))
    assert again.fetch_offsets(GROUP, None) == (0, {})  # the tombstones were appended


def test_commit_append_errors_as_0_9_maps_them(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas))
    replicas.update_leaders({(OFFSETS_TOPIC, p): 1 for p in range(PARTITIONS)})  # leadership moved away
    offsets = {("t", 0): OffsetAndMetadata(1, "", 0, 1)}
    assert coordinator.commit_offsets(GROUP, -1, "", offsets) == {("t", 0): E.NOT_COORDINATOR_FOR_GROUP}
    replicas.update_leaders({})
    assert coordinator.commit_offsets(GROUP, -1, "", offsets) == {("t", 0): E.GROUP_COORDINATOR_NOT_AVAILABLE}


def test_a_member_that_stops_heartbeating_expires(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas, clock=lambda: int(gevent.get_hub().loop.now() * 1000)))
    member = join(coordinator, session=200)
    coordinator.sync_group(GROUP, 1, member.member_id, {}, lambda e, a: (e, a))
    group = coordinator.groups[GROUP]
    wait_until(lambda: group.is_(GroupState.EMPTY), 5, message="the group Empty")
    assert coordinator.heartbeat(GROUP, 1, member.member_id) == E.UNKNOWN_MEMBER_ID
    assert (group.generation, group.members) == (2, {})  # Kafka 2.x+: an Empty generation, kept


def test_group_max_size_counts_members_when_stable_and_joins_while_rebalancing(replicas) -> None:
    """KIP-389 as Kafka 2.2: a member already in the group always fits; a newcomer fits while the group has
    fewer than group.max.size members (awaiting joins, while a rebalance is prepared)."""
    coordinator = make_coordinator(replicas, max_size=1)
    loaded(coordinator, [1])
    solo = join(coordinator)
    assert solo.error == E.NONE
    refused = join(coordinator)
    assert (refused.error, refused.member_id) == (E.GROUP_MAX_SIZE_REACHED, "")
    group = coordinator.groups[GROUP]
    assert group.accepts(solo.member_id, 1) and not group.accepts("", 1)
    coordinator.shutdown()


def test_the_last_member_leaving_keeps_the_group_empty_with_its_offsets_until_deleted(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas))
    member = join(coordinator)
    coordinator.sync_group(GROUP, 1, member.member_id, {}, lambda e, a: (e, a))
    commit = {("t", 0): OffsetAndMetadata(7, "", 0, 2**40)}
    assert coordinator.commit_offsets(GROUP, 1, member.member_id, commit) == {("t", 0): E.NONE}
    assert coordinator.delete_group(GROUP) == E.NON_EMPTY_GROUP
    assert coordinator.leave_group(GROUP, member.member_id) == E.NONE
    group = coordinator.groups[GROUP]
    assert group.state is GroupState.EMPTY and coordinator.describe_group(GROUP).state == "Empty"
    assert coordinator.list_groups() == (E.NONE, [(GROUP, "consumer")])
    assert coordinator.fetch_offsets(GROUP, [("t", 0)])[1][("t", 0)].offset == 7
    assert coordinator.delete_group(GROUP) == E.NONE
    assert group.state is GroupState.DEAD and GROUP not in coordinator.groups
    assert coordinator.describe_group(GROUP).state == "Dead"
    assert coordinator.delete_group(GROUP) == E.GROUP_ID_NOT_FOUND


def test_a_simple_consumers_commit_makes_an_empty_group_that_expiry_removes(replicas) -> None:
    coordinator = loaded(make_coordinator(replicas))
    expired = {("t", 0): OffsetAndMetadata(3, "", 0, 1)}
    assert coordinator.commit_offsets(OTHER, -1, "", expired) == {("t", 0): E.NONE}
    assert coordinator.groups[OTHER].state is GroupState.EMPTY
    assert dict(coordinator.list_groups()[1]) == {OTHER: ""}
    assert coordinator.expire_offsets() == 1
    assert OTHER not in coordinator.groups and coordinator.list_groups() == (E.NONE, [])


def test_kip_211_a_groups_offsets_expire_only_a_retention_after_it_became_empty(replicas) -> None:
    """Kafka 2.1+: a Stable group keeps the offsets of the topics its members subscribe to however old; once
    Empty, its offsets expire ``offsets.retention.minutes`` after that, and the group goes with them."""
    clock = Clock()
    coordinator = loaded(make_coordinator(replicas, clock, retention_ms=1000))
    member = join(coordinator, protocols=[("range", subscription_metadata(RangeAssignor(), ["t"]))])
    coordinator.sync_group(GROUP, 1, member.member_id, {member.member_id: b""}, lambda e, a: (e, a))
    committed = {tp: OffsetAndMetadata(7, "", clock.now, clock.now + 1000) for tp in [("t", 0), ("u", 0)]}
    assert coordinator.commit_offsets(GROUP, 1, member.member_id, committed) == dict.fromkeys(committed, E.NONE)
    clock.now += 5000
    assert coordinator.heartbeat(GROUP, 1, member.member_id) == E.NONE
    assert coordinator.expire_offsets() == 1  # "u": no member subscribes to it
    assert coordinator.leave_group(GROUP, member.member_id) == E.NONE
    emptied = clock.now
    clock.now = emptied + 999
    assert coordinator.expire_offsets() == 0 and coordinator.groups[GROUP].state is GroupState.EMPTY
    clock.now = emptied + 1000
    assert coordinator.expire_offsets() == 1 and GROUP not in coordinator.groups
