"""The web view of a 0.8 cluster with a group coordinator: the 0.8 partitions (leader, replicas, ISR, high
watermark), the coordinator-managed group (state, generation and leader from its ``__consumer_offsets``
record, members, assignment) and a member joining as a coordinator rebalance in the timeline. A real
ZooKeeper, a real 0.8 broker and kafka-python members."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("kafka")

from tests.integration.test_coordinator_kafka_python import (  # noqa: E402
    GROUP,
    TOPIC,
    group_consumer,
    start_with_topic,
)
from zkafka.ui.server import ClusterView  # noqa: E402

pytestmark = pytest.mark.integration


def poll_until_assigned(consumers, sizes, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while sorted(len(c.assignment()) for c in consumers) != sizes:
        assert time.monotonic() < deadline, [c.assignment() for c in consumers]
        for consumer in consumers:
            consumer.poll(timeout_ms=100)


def test_coordinator_group_and_its_rebalance(start_broker08, zk_connect):
    broker = start_with_topic(start_broker08)
    bootstrap = f"127.0.0.1:{broker.port}"
    first = group_consumer(bootstrap)
    second = None
    view = ClusterView(zk_connect, bootstrap)
    try:
        poll_until_assigned([first], [4])
        view.start()
        state = view.state
        assert state["line"] == "0.8" and state["controller"] == 0
        (topic,) = [t for t in state["topics"] if t["name"] == TOPIC]
        assert [(p["leader"], p["replicas"], p["isr"]) for p in topic["partitions"]] == [(0, [0], [0])] * 4
        assert all(p["high_watermark"] == 0 for p in topic["partitions"])
        (group,) = state["coordinator_groups"]
        assert (group["name"], group["state"], group["protocol"], group["coordinator"]) == (
            GROUP,
            "Stable",
            "range",
            0,
        )
        (member,) = group["members"]
        assert group["leader"] == member["id"] and group["generation"] >= 1
        assert member["subscription"] == [TOPIC] and member["assignment"] == {TOPIC: [0, 1, 2, 3]}
        generation = group["generation"]

        second = group_consumer(bootstrap)
        poll_until_assigned([first, second], [2, 2])
        view.refresh()
        (group,) = view.state["coordinator_groups"]
        assert group["generation"] > generation and len(group["members"]) == 2
        assert sorted(p for m in group["members"] for p in m["assignment"][TOPIC]) == [0, 1, 2, 3]
        entry = next(
            e for e in view.state["timeline"] if e["kind"] == "coordinator" and "joined" in e["title"]
        )
        assert entry["status"] == "settled"
        wheres = [s["where"] for s in entry["steps"]]
        assert wheres[0] == "zkafka.coordinator.offset_apis.OffsetApis.handle_find_coordinator"
        assert "zkafka.coordinator.group.GroupMetadata.heartbeat" in wheres
        assert "zkafka.coordinator.group.GroupMetadata.complete_join" in wheres
        assert "zkafka.consumer.group.assignors.RangeAssignor.assign" in wheres
        assert wheres[-1] == "zkafka.coordinator.group.GroupMetadata.sync"
        assert f"generation {group['generation']}" in entry["steps"][2]["title"]
    finally:
        for consumer in (first, second):
            if consumer is not None:
                consumer.close()
        view.close()
