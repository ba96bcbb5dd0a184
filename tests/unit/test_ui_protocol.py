"""The protocol panel from a real request log (requests encoded and decoded by the codec): an eager rebalance
as rows with the generation each member reached, heartbeats folded, and each member's lane with its pause."""

from __future__ import annotations

import gevent

from tests.unit.server.test_request_log import Clock, join_group, request, response
from zkafka.protocol.api_keys import HEARTBEAT, JOIN_GROUP, PRODUCE, SYNC_GROUP
from zkafka.protocol.group_membership import (
    ConsumerProtocolAssignment,
    TopicPartitions,
)
from zkafka.server.request_log import RequestLog
from zkafka.ui.protocol import build_protocol


def serve(
    log: RequestLog, clock: Clock, client: str, api_key: int, took: float, answer: dict, **body
) -> None:
    version = 1 if api_key == JOIN_GROUP else 0
    entry = log.begin(request(api_key, version, client_id=client, **body))
    clock.now += took
    log.handled(entry, response(api_key, version, **answer))


def join(log, clock, client, member, generation, took=0.0):
    entry = log.begin(join_group(member, client))
    clock.now += took
    answer = {"error": 0, "generation_id": generation, "group_protocol": "range", "leader_id": "m-a"}
    log.handled(entry, response(JOIN_GROUP, 1, **answer, member_id=member, members=[]))


def sync(log, clock, client, member, generation, partitions, took=0.0):
    assignment = ConsumerProtocolAssignment(
        version=0, partitions=[TopicPartitions("t", partitions)], user_data=b""
    )
    serve(
        log,
        clock,
        client,
        SYNC_GROUP,
        took,
        {"error": 0, "member_assignment": assignment.encode()},
        group_id="g",
        generation_id=generation,
        member_id=member,
        group_assignment=[],
    )


def heartbeat(log, clock, client, member, generation, error=0):
    serve(
        log,
        clock,
        client,
        HEARTBEAT,
        0.001,
        {"error": error},
        group_id="g",
        generation_id=generation,
        member_id=member,
    )


def test_an_eager_rebalance_as_rows_and_lanes():
    clock = Clock()
    log = RequestLog(0, clock=clock)
    join(log, clock, "a", "m-a", 1, took=0.01)
    sync(log, clock, "a", "m-a", 1, [0, 1, 2, 3], took=0.01)
    for _ in range(3):
        clock.now += 1
        heartbeat(log, clock, "a", "m-a", 1)
    clock.now += 1
    heartbeat(log, clock, "a", "m-a", 1, error=27)  # REBALANCE_IN_PROGRESS: b is joining
    start_pause = clock.now
    join(log, clock, "b", "m-b", 2)
    join(log, clock, "a", "m-a", 2, took=0.3)
    sync(log, clock, "a", "m-a", 2, [0, 1], took=0.05)
    sync(log, clock, "b", "m-b", 2, [2, 3])
    (group,) = build_protocol(log.snapshot(), clock.now + 1)["groups"]
    assert group["generation"] == 2 and group["lanes"] == ["a", "b"] and group["rebalance"] == "eager"
    rows = [(r["client"], r["api"], r["count"], r["answer"]) for r in group["rows"]]
    assert rows == [
        ("a", "JoinGroup", 1, "generation 1 (leader)"),
        ("a", "SyncGroup", 1, "t 0,1,2,3"),
        ("a", "Heartbeat", 3, ""),
        ("a", "Heartbeat", 1, "REBALANCE_IN_PROGRESS"),
        ("b", "JoinGroup", 1, "generation 2"),
        ("a", "JoinGroup", 1, "generation 2 (leader)"),
        ("a", "SyncGroup", 1, "t 0,1"),
        ("b", "SyncGroup", 1, "t 2,3"),
    ]
    assert (
        "join purgatory" in group["rows"][0]["note"]
        and "must send JoinGroup again" in group["rows"][3]["note"]
    )
    a, b = group["members"]
    assert [s["state"] for s in a["segments"]] == ["joining", "consuming", "paused", "consuming"]
    paused = a["segments"][2]
    assert paused["start"] == start_pause and a["longest_pause_ms"] == round(
        (paused["end"] - paused["start"]) * 1000
    )
    assert a["longest_pause_ms"] == 350
    assert [s["state"] for s in b["segments"]] == ["joining", "consuming"] and b["longest_pause_ms"] is None


def test_a_traced_produce_as_timed_steps_across_producer_leader_and_follower():
    from gevent.event import AsyncResult

    from tests.unit.server.test_request_log import fetch, produce

    clock, offsets = Clock(), {"leo": 5, "hw": 5}
    log = RequestLog(1, probe=lambda t, p: (offsets["leo"], offsets["hw"]), clock=clock)
    traced = log.begin(produce())
    offsets["leo"] = 8
    clock.now += 0.001
    pending = AsyncResult()
    log.handled(traced, pending)
    clock.now += 0.004
    follower = log.begin(fetch(2, 8))
    offsets["hw"] = 8
    log.handled(follower, AsyncResult())  # the follower's fetch waits for more data
    clock.now += 0.001
    pending.set(response(PRODUCE, 0, topics=[("clicks", [(0, 0, 5)])]))  # the parked produce answered
    gevent.sleep(0)
    trace = build_protocol(log.snapshot(), clock.now)["replication"]
    assert trace["partition"] == "clicks-0" and trace["acks"] == -1
    assert trace["lanes"] == ["alice", "leader (broker 1)", "follower (broker 2)"]
    steps = [(s["at_ms"], s["from"], s["title"]) for s in trace["steps"]]
    assert steps == [
        (0, "alice", "Produce v0 acks=-1"),
        (1.0, "leader (broker 1)", "appended to the leader's log"),
        (5.0, "follower (broker 2)", "Fetch from offset 8"),
        (6.0, "leader (broker 1)", "Produce answered: NONE"),
    ]
    assert "LEO 5 → 8; parked in the produce purgatory" in trace["steps"][1]["detail"]
    assert trace["steps"][2]["detail"].startswith("HW 8 after it")
