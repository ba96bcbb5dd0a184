"""Produce v2-v8 on the 0.8 broker: record batches are converted to the log's message format v0 (each record a
v0 message, compressed again with the batch's codec) and read back by a v0 fetch; the answer carries
``log_append_time_ms`` -1 (CreateTime) from v2 and ``log_start_offset`` from v5; what magic 0 cannot hold, or
the version does not allow, gets Kafka's error code and nothing is appended."""

from __future__ import annotations

import pytest

from tests.support.bombs import compressed_zeros
from tests.unit.records.test_record_batch_damage import seal
from tests.unit.server.test_apis08 import BROKER, Broker
from zkafka.protocol.api_keys import PRODUCE
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.produce import PRODUCE_APIS, ProduceRequestPartition, ProduceRequestTopic
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.record_batch import build_batch

TS = 1_700_000_000_000


class NoGroups:
    """A coordinator's handlers, none: what makes KafkaApis serve the 0.9+ produce versions."""

    def handlers(self) -> dict:
        return {}


@pytest.fixture
def broker(tmp_path):
    b = make_broker(tmp_path)
    try:
        yield b
    finally:
        b.close()


def make_broker(tmp_path, **log_config) -> Broker:
    b = Broker(tmp_path / "logs", {("t", 0): BROKER}, **log_config)
    b.apis = type(b.apis)(b.replicas, b.metadata, group_apis=NoGroups())
    return b


def records(*values: bytes, headers=()) -> list[Record]:
    return [Record(i, TS + i, b"k%d" % i, value, headers) for i, value in enumerate(values)]


def produce(broker: Broker, version: int, message_set: bytes, transactional_id=None):
    topics = [ProduceRequestTopic("t", [ProduceRequestPartition(0, message_set)])]
    fields = (1, 1000, topics) if version < 3 else (transactional_id, 1, 1000, topics)
    (topic,) = broker.call(PRODUCE_APIS[version][0](*fields)).topics
    (partition,) = topic.partitions
    return partition


def stored(broker: Broker) -> list[tuple[int, bytes | None, bytes | None]]:
    data = broker.fetch("t", 0, 0).message_set
    return [(m.offset, m.key, m.value) for m in format08.iter_messages(data)]


def test_the_broker_serves_produce_v0_to_v8(broker):
    assert {v for key, v in broker.apis._handlers if key == PRODUCE} == set(range(9))


@pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4], ids=["none", "gzip", "snappy", "lz4"])
@pytest.mark.parametrize("version", range(2, 9))
def test_a_batch_is_stored_as_v0_messages_and_answered_by_version(broker, version, codec):
    first = produce(broker, version, build_batch(records(b"a", b"b"), compression=codec))
    second = produce(broker, version, build_batch(records(b"c"), compression=codec))
    assert (first.error, first.offset, second.error, second.offset) == (0, 0, 0, 2)
    assert first.log_append_time_ms == -1
    if version >= 5:
        assert first.log_start_offset == 0
    if version >= 8:
        assert (first.record_errors, first.error_message) == ([], None)
    assert stored(broker) == [(0, b"k0", b"a"), (1, b"k1", b"b"), (2, b"k0", b"c")]
    tops = format08.iter_messages(broker.fetch("t", 0, 0).message_set, deep=False)
    assert {m.codec for m in tops} == {codec}


def test_magic_0_sets_are_still_taken_at_v3_and_later_as_librdkafka_sends_them(broker):
    set_v0 = format08.build_message_set([(None, b"a")])
    assert produce(broker, 8, set_v0).error == 0 and produce(broker, 1, set_v0).offset == 1
    assert stored(broker) == [(0, None, b"a"), (1, None, b"a")]


@pytest.mark.parametrize(
    "version, message_set, code",
    [
        (8, build_batch(records(b"a", headers=(Header("h", b"1"),))), ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
        (8, build_batch(records(b"a"), producer_id=1, producer_epoch=0, base_sequence=0),
         ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
        (8, build_batch(records(b"a"), transactional=True, producer_id=1, producer_epoch=0, base_sequence=0),
         ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
        (8, build_batch(records(b"a"), control=True), ErrorCode.INVALID_RECORD),
        (6, build_batch(records(b"a"), compression=ZSTD), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        (7, build_batch(records(b"a"), compression=ZSTD), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        (3, build_batch(records(b"a")) * 2, ErrorCode.INVALID_RECORD),
        (3, build_batch(records(b"a"))[:-1], ErrorCode.INVALID_RECORD),
    ],
    ids=["headers", "idempotent", "transactional", "control", "zstd-v6", "zstd-v7", "two-batches", "partial"],
)  # fmt: skip
def test_what_the_version_or_magic_0_cannot_take_is_refused_and_nothing_appended(broker, version, message_set, code):
    answer = produce(broker, version, message_set, transactional_id="tx" if version == 8 else None)
    assert (answer.error, answer.offset, answer.log_start_offset if version >= 5 else -1) == (code, -1, -1)
    assert stored(broker) == []


def test_a_batch_bomb_is_refused_at_message_max_bytes(tmp_path):
    b = make_broker(tmp_path, max_message_size=100_000)
    try:
        bomb = seal(compressed_zeros(GZIP, b"", 20_000_000), 1, GZIP)
        assert produce(b, 8, bomb).error == ErrorCode.MESSAGE_TOO_LARGE
        assert stored(b) == []
    finally:
        b.close()
