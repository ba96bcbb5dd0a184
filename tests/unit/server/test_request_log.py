"""The request log: group requests kept with their fields, answers and handler; produces traced at most once an
interval with the fetches of their partition until the high watermark reaches what they appended."""

from __future__ import annotations

import gevent
from gevent.event import AsyncResult

from zkafka.protocol import v08
from zkafka.protocol.api_keys import FETCH, JOIN_GROUP, PRODUCE, SYNC_GROUP
from zkafka.protocol.group_membership import (
    ConsumerProtocolAssignment,
    ConsumerProtocolMetadata,
    TopicPartitions,
)
from zkafka.server.request_log import RequestLog


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request(api_key: int, version: int, correlation_id: int = 7, client_id: str = "alice", **body):
    request_class, _ = v08.SCHEMAS[(api_key, version)]
    frame = v08.encode_request(request_class(**body), correlation_id, client_id)
    return v08.decode_request(memoryview(frame)[4:])


def response(api_key: int, version: int, correlation_id: int = 7, **body):
    _, response_class = v08.SCHEMAS[(api_key, version)]
    return v08.encode_response(correlation_id, response_class(**body))


def join_group(member_id: str = "", client_id: str = "alice"):
    metadata = ConsumerProtocolMetadata(version=0, subscription=["clicks"], user_data=b"").encode()
    return request(
        JOIN_GROUP,
        1,
        client_id=client_id,
        group_id="g",
        session_timeout=6000,
        rebalance_timeout=6000,
        member_id=member_id,
        protocol_type="consumer",
        group_protocols=[("range", metadata)],
    )


def test_a_join_group_is_kept_with_its_fields_its_answer_and_its_handler():
    clock = Clock()
    log = RequestLog(2, handler_of=lambda r: RequestLog.begin, clock=clock)
    entry = log.begin(join_group())
    pending = AsyncResult()
    log.handled(entry, pending)
    assert entry["parked"] and "took_ms" not in entry
    clock.now += 0.25
    pending.set(
        response(
            JOIN_GROUP,
            1,
            error=0,
            generation_id=3,
            group_protocol="range",
            leader_id="m-1",
            member_id="m-1",
            members=[],
        )
    )
    pending.get()
    gevent.sleep(0)  # rawlink callbacks run on the hub
    [kept] = log.snapshot()
    assert kept["api"] == "JoinGroup" and kept["version"] == 1 and kept["group"] == "g"
    assert kept["client_id"] == "alice" and kept["correlation_id"] == 7 and kept["broker"] == 2
    assert kept["request"]["group_protocols"][0]["protocol_metadata"] == {"subscription": ["clicks"]}
    assert kept["request"]["session_timeout"] == 6000
    assert kept["response"]["generation_id"] == 3 and kept["error"] == "NONE"
    assert kept["took_ms"] == 250.0
    assert kept["handler"] == "zkafka.server.request_log.RequestLog.begin"


def test_a_sync_group_answer_shows_the_assignment_decoded():
    log = RequestLog(0)
    entry = log.begin(
        request(SYNC_GROUP, 0, group_id="g", generation_id=3, member_id="m-1", group_assignment=[])
    )
    assignment = ConsumerProtocolAssignment(
        version=0, partitions=[TopicPartitions("clicks", [0, 2])], user_data=b""
    )
    log.handled(entry, response(SYNC_GROUP, 0, error=0, member_assignment=assignment.encode()))
    assert log.snapshot()[0]["response"]["member_assignment"] == {"partitions": {"clicks": [0, 2]}}


def produce(partition: int = 0):
    return request(PRODUCE, 0, acks=-1, timeout_ms=1000, topics=[("clicks", [(partition, b"")])])


def fetch(replica_id: int, offset: int, partition: int = 0):
    return request(
        FETCH,
        0,
        replica_id=replica_id,
        max_wait_ms=500,
        min_bytes=1,
        topics=[("clicks", [(partition, offset, 1 << 20)])],
    )


def test_one_produce_an_interval_is_traced_with_its_partition_s_fetches_until_the_high_watermark_reaches_it():
    clock, offsets = Clock(), {"leo": 5, "hw": 5}
    log = RequestLog(0, probe=lambda t, p: (offsets["leo"], offsets["hw"]), clock=clock)
    assert log.begin(fetch(1, 5)) is None  # no trace open: fetches are not kept
    traced = log.begin(produce())
    offsets["leo"] = 8
    pending = AsyncResult()
    log.handled(traced, pending)
    assert log.begin(produce()) is None  # one trace at a time, one an interval
    assert log.begin(fetch(1, 5, partition=1)) is None  # another partition
    follower = log.begin(fetch(1, 8))
    offsets["hw"] = 8
    log.handled(follower, None)
    pending.set(None)  # the parked produce completes
    gevent.sleep(0)
    kept = log.snapshot()
    assert [e["api"] for e in kept] == ["Produce", "Fetch"]
    assert kept[0]["before"] == {"log_end_offset": 5, "high_watermark": 5}
    assert kept[0]["after_handler"]["log_end_offset"] == 8 and kept[0]["parked"]
    assert kept[1]["request"]["replica_id"] == 1 and kept[1]["after"]["high_watermark"] == 8
    assert kept[0]["trace"] == kept[1]["trace"]
    assert log.begin(fetch(1, 8)) is None  # the trace closed: the high watermark reached the append
    clock.now += 0.5
    assert log.begin(produce()) is None  # within the interval
    clock.now += 1
    assert log.begin(produce()) is not None


def test_a_reader_asks_only_for_the_entries_after_an_id_and_a_new_log_gives_everything():
    clock = Clock()
    log = RequestLog(0, clock=clock)
    first = log.begin(join_group())
    waiting = AsyncResult()
    log.handled(first, waiting)
    done = log.begin(join_group("m-1"))
    log.handled(done, None)
    third = log.begin(join_group("m-1"))
    everything = log.snapshot()
    assert [e["id"] for e in everything] == [1, 2, 3] and {e["log"] for e in everything} == {log.started}
    newer = log.snapshot({"after": "2", "log": repr(log.started)})
    assert [e["id"] for e in newer] == [3]
    assert [e["id"] for e in log.snapshot({"after": "3", "log": "123.0"})] == [1, 2, 3]  # another log: all
    log.handled(third, None)
