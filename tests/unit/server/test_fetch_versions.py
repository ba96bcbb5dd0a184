"""Fetch v2-v11 and ListOffsets v1-v5 on the 0.8 broker (KafkaApis on real logs, no sockets): the answer's
fields by version, the response-wide ``max_bytes`` (KIP-74), fetch sessions (KIP-227) full, incremental and
parked, leader epochs (KIP-320), and ListOffsets' single offsets."""

from __future__ import annotations

import gevent
import pytest

from tests.unit.server.test_apis08 import BROKER, Broker, values_of
from tests.unit.server.test_produce_versions import TS, NoGroups, produce, records
from zkafka.protocol.api_keys import FETCH, LIST_OFFSETS
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import FETCH_REQUEST, fetch_request
from zkafka.protocol.offsets import LIST_OFFSETS_REQUEST
from zkafka.protocol.versioned import make
from zkafka.records.convert import set_records
from zkafka.records.down_convert import first_magic
from zkafka.records.record_batch import build_batch, read_batches


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER, ("t", 1): BROKER})
    b.apis = type(b.apis)(b.replicas, b.metadata, group_apis=NoGroups())
    try:
        yield b
    finally:
        b.close()


def fetch(broker, version, partitions, *, session=(0, -1), forget=(), max_bytes=1 << 20, wait=0, **fields):
    """A Fetch of ``partitions`` ``{(topic, partition): offset or (offset, max bytes, leader epoch)}``."""
    specs = [
        (tp, spec if isinstance(spec, tuple) else (spec, 1 << 20, -1)) for tp, spec in partitions.items()
    ]
    body = fetch_request(
        version,
        [
            (topic, partition, offset, partition_max)
            for (topic, partition), (offset, partition_max, _) in specs
        ],
        forgotten=forget,
        leader_epochs=[epoch for _, (_, _, epoch) in specs],
        max_wait_ms=wait,
        min_bytes=1 if wait else 0,
        max_bytes=max_bytes,
        session_id=session[0],
        session_epoch=session[1],
        **fields,
    )
    return broker.call(body)


def answered(response):
    return {(t.topic, p.partition): p for t in response.topics for p in t.partitions}


def test_fetch_v0_to_v11_and_list_offsets_v0_to_v5_are_served_with_a_coordinator(broker, tmp_path):
    served = broker.apis._handlers
    assert {v for key, v in served if key == FETCH} == set(range(12))
    assert {v for key, v in served if key == LIST_OFFSETS} == set(range(6))
    plain = Broker(tmp_path / "plain", {("t", 0): BROKER})
    try:
        assert {(k, v) for k, v in plain.apis._handlers if k in (FETCH, LIST_OFFSETS)} == {
            (FETCH, 0),
            (LIST_OFFSETS, 0),
        }
    finally:
        plain.close()


@pytest.mark.parametrize("version", range(2, 12))
def test_each_version_answers_the_records_and_its_fields(broker, version):
    broker.produce("t", 0, [b"a", b"b"])
    response = fetch(broker, version, {("t", 0): 0})
    p = answered(response)[("t", 0)]
    assert (p.error, p.high_watermark, values_of(p)) == (0, 2, [b"a", b"b"])
    if version >= 4:
        assert (p.last_stable_offset, p.aborted_transactions) == (2, None)
    if version >= 5:
        assert p.log_start_offset == 0
    if version >= 7:
        assert (response.error, response.session_id) == (0, 0)  # epoch -1: no session
    if version >= 11:
        assert p.preferred_read_replica == -1


def test_read_committed_reads_the_same_with_an_empty_aborted_list(broker):
    broker.produce("t", 0, [b"a"])
    p = answered(fetch(broker, 4, {("t", 0): 0}, isolation_level=1))[("t", 0)]
    assert (values_of(p), p.last_stable_offset, p.aborted_transactions) == ([b"a"], 1, [])


def test_v3_max_bytes_returns_the_first_message_whole_and_stops_there(broker):
    broker.produce("t", 0, [b"x" * 100])
    broker.produce("t", 1, [b"y" * 100])
    parts = answered(fetch(broker, 3, {("t", 0): (0, 10, -1), ("t", 1): 0}, max_bytes=10))
    assert values_of(parts[("t", 0)]) == [b"x" * 100]  # KIP-74: larger than both limits, still whole
    assert len(parts[("t", 1)].message_set) == 0  # the answer's limit is used up
    cut = answered(fetch(broker, 2, {("t", 0): (0, 10, -1)}))[("t", 0)]
    assert len(cut.message_set) == 10  # before v3: cut at the partition's max bytes


def test_a_fetch_session_answers_only_what_changed(broker):
    broker.produce("t", 0, [b"a"])
    full = fetch(broker, 7, {("t", 0): 0, ("t", 1): 0}, session=(0, 0))
    session_id = full.session_id
    assert session_id > 0 and set(answered(full)) == {("t", 0), ("t", 1)}
    quiet = fetch(broker, 7, {("t", 0): 1}, session=(session_id, 1))  # t-0 moved on, t-1 kept
    assert (quiet.error, quiet.session_id, answered(quiet)) == (0, session_id, {})
    broker.produce("t", 1, [b"b"])
    changed = fetch(broker, 7, {}, session=(session_id, 2))
    assert list(answered(changed)) == [("t", 1)] and values_of(answered(changed)[("t", 1)]) == [b"b"]
    assert fetch(broker, 7, {}, session=(session_id, 2)).error == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert fetch(broker, 7, {}, session=(session_id + 1, 1)).error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    broker.produce("t", 0, [b"c"])
    forgot = fetch(broker, 7, {("t", 1): 1}, session=(session_id, 3), forget=[("t", 0)])
    assert answered(forgot) == {}  # t-0 has new data but left the session; t-1 read up to its end
    closed = fetch(broker, 7, {("t", 0): 1}, session=(session_id, -1))
    assert closed.session_id == 0 and values_of(answered(closed)[("t", 0)]) == [b"c"]
    assert fetch(broker, 7, {}, session=(session_id, 4)).error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_a_parked_incremental_fetch_answers_with_the_changed_partition(broker):
    broker.produce("t", 0, [b"a"])
    broker.produce("t", 1, [b"b"])
    session_id = fetch(broker, 11, {("t", 0): 1, ("t", 1): 1}, session=(0, 0)).session_id
    waiting = gevent.spawn(fetch, broker, 11, {}, session=(session_id, 1), wait=10_000)
    gevent.sleep(0)
    assert not waiting.ready()
    broker.produce("t", 1, [b"c"])
    response = waiting.get(timeout=10)
    assert list(answered(response)) == [("t", 1)] and values_of(answered(response)[("t", 1)]) == [b"c"]


def test_the_leader_epoch_a_v9_fetch_names_is_checked(broker):
    epoch = broker.replicas.partition("t", 0).leader_epoch = 5
    parts = lambda e: answered(fetch(broker, 9, {("t", 0): (0, 1 << 20, e)}))[("t", 0)].error  # noqa: E731
    assert (parts(epoch), parts(-1)) == (0, 0)
    assert parts(epoch - 1) == ErrorCode.FENCED_LEADER_EPOCH
    assert parts(epoch + 1) == ErrorCode.UNKNOWN_LEADER_EPOCH


def list_offsets(broker, version, times, replica_id=-1, leader_epoch=-1):
    partitions = [{"partition": p, "current_leader_epoch": leader_epoch, "time": t} for p, t in times]
    body = make(
        LIST_OFFSETS_REQUEST[version],
        replica_id=replica_id,
        isolation_level=0,
        topics=[{"topic": "t", "partitions": partitions}],
    )
    return broker.call(body).topics[0].partitions


@pytest.mark.parametrize("version", range(1, 6))
def test_list_offsets_v1_and_later_answer_one_offset(broker, version):
    broker.produce("t", 0, [b"a", b"b", b"c"])
    latest, earliest = list_offsets(broker, version, [(0, -1), (1, -2)])
    (by_time,) = list_offsets(broker, version, [(0, 1_700_000_000_000)])
    assert (latest.error, latest.timestamp, latest.offset) == (0, -1, 3)
    assert (earliest.error, earliest.timestamp, earliest.offset) == (0, -1, 0)  # t-1, empty
    assert (by_time.error, by_time.offset) == (ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, -1)  # a v0 log
    if version >= 4:
        assert latest.leader_epoch == broker.replicas.partition("t", 0).leader_epoch


def test_list_offsets_refuses_a_partition_named_twice_and_checks_the_epoch(broker):
    twice = list_offsets(broker, 1, [(0, -1), (0, -2)])
    assert [p.error for p in twice] == [ErrorCode.INVALID_REQUEST] * 2
    epoch = broker.replicas.partition("t", 0).leader_epoch = 5
    (fenced,) = list_offsets(broker, 4, [(0, -1)], leader_epoch=epoch - 1)
    assert fenced.error == ErrorCode.FENCED_LEADER_EPOCH


def test_a_v0_fetch_still_reads_a_partition_named_twice_twice(broker):
    broker.produce("t", 0, [b"a"])
    body = broker.call(
        make(
            FETCH_REQUEST[0],
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=0,
            topics=[
                {"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0, "max_bytes": 1024}] * 2}
            ],
        )
    )
    assert [values_of(p) for p in body.topics[0].partitions] == [[b"a"], [b"a"]]


@pytest.mark.parametrize("version, magic", [(1, 0), (2, 1), (3, 1), (4, 2), (11, 2)])
def test_a_newer_logs_records_reach_each_version_in_a_format_it_reads(tmp_path, version, magic):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER}, message_format_magic=2)
    b.apis = type(b.apis)(b.replicas, b.metadata, group_apis=NoGroups())
    try:
        b.produce("t", 0, [b"a", b"b"])
        p = answered(fetch(b, version, {("t", 0): 0}))[("t", 0)]
        assert (p.error, first_magic(p.message_set)) == (0, magic)
        data = bytes(p.message_set)
        records = (
            [r for batch in read_batches(data) for r in batch.records] if magic == 2 else set_records(data)[0]
        )
        assert [r.value for r in records] == [b"a", b"b"]
    finally:
        b.close()


def test_list_offsets_finds_a_timestamp_in_a_newer_log(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER}, message_format_magic=2)
    b.apis = type(b.apis)(b.replicas, b.metadata, group_apis=NoGroups())
    try:
        produce(b, 3, build_batch(records(b"a", b"b", b"c")))  # stamped TS, TS + 1, TS + 2
        (found,) = list_offsets(b, 1, [(0, TS + 1)])
        assert (found.error, found.timestamp, found.offset) == (0, TS + 1, 1)
        (none,) = list_offsets(b, 5, [(0, TS + 10)])
        assert (none.error, none.timestamp, none.offset, none.leader_epoch) == (0, -1, -1, -1)
    finally:
        b.close()
