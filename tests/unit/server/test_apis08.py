"""KafkaApis (the 0.8 request handlers) on a LogManager08 in a temporary directory: no sockets, no ZooKeeper.

Requests go through the real 0.8 codec both ways (encoded, decoded by the broker's codec, answered, and the
answer's parts, file regions included, decoded as a client would).
"""

from __future__ import annotations

import os
import time

import gevent
import pytest
from gevent.event import AsyncResult

from tests.support.server08 import cluster_snapshot
from tests.support.wire import wire_bytes
from zkafka.errors import InvalidRequestError
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.protocol import v08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import FetchRequestPartition, FetchRequestTopic, FetchRequestV0, FetchRequestV1
from zkafka.protocol.metadata import MetadataBroker, MetadataRequestV0, PartitionMetadata, TopicMetadata
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.produce import (
    ProduceRequestPartition,
    ProduceRequestTopic,
    ProduceRequestV0,
    ProduceResponsePartition,
    ProduceResponseTopic,
)
from zkafka.records import format08
from zkafka.server.apis08 import KafkaApis, ProduceFailedError
from zkafka.server.metadata_cache import MetadataCache, partition_metadata
from zkafka.server.replica_manager import ReplicaManager

BROKER = 0


class Broker:
    """The request-handling half of a 0.8 broker: logs, replica manager, purgatory, metadata cache, KafkaApis."""

    def __init__(self, log_dir, leaders: dict, alive=(BROKER,), **log_config) -> None:
        self.log_manager = LogManager08([str(log_dir)], LogConfig(**log_config))
        self.replicas = ReplicaManager(BROKER, self.log_manager)
        self.purgatory = self.replicas.fetch_purgatory
        self.snapshot = cluster_snapshot(leaders, alive)
        self.replicas.update_leaders(leaders)
        self.created: list[str] = []
        self.metadata = MetadataCache(snapshot=self.snapshot, create_topic=self.created.append)
        self.apis = KafkaApis(self.replicas, self.metadata)
        self.correlation_id = 0

    def call(self, body, client_id: str = "test"):
        """Send ``body`` through the codec; the decoded response body (None when there is no response)."""
        self.correlation_id += 1
        correlation_id = self.correlation_id
        frame = v08.encode_request(body, correlation_id, client_id)
        answer = self.apis.handle(v08.decode_request(memoryview(frame)[4:]))
        if isinstance(answer, AsyncResult):
            answer = answer.get(timeout=10)
        if answer is None:
            return None
        response = v08.decode_response(body.API_KEY, body.API_VERSION, wire_bytes(answer)[4:])
        assert response.correlation_id == correlation_id
        return response.body

    def produce(self, topic, partition, values, acks=1, codec=0, keys=None):
        message_set = format08.build_message_set(
            list(zip(keys or [None] * len(values), values, strict=True)), codec
        )
        body = ProduceRequestV0(
            acks,
            1000,
            [ProduceRequestTopic(topic, [ProduceRequestPartition(partition, message_set)])],
        )
        return self.call(body)

    def fetch(self, topic, partition, offset, max_bytes=1 << 20, max_wait_ms=0, min_bytes=0, replica_id=-1):
        body = FetchRequestV0(
            replica_id,
            max_wait_ms,
            min_bytes,
            [FetchRequestTopic(topic, [FetchRequestPartition(partition, offset, max_bytes)])],
        )
        return self.call(body).topics[0].partitions[0]

    def offsets(self, topic, partition, when, max_offsets=10, replica_id=-1):
        body = ListOffsetsRequestV0(
            replica_id,
            [ListOffsetsRequestTopic(topic, [ListOffsetsRequestPartition(partition, when, max_offsets)])],
        )
        return self.call(body).topics[0].partitions[0]

    def close(self):
        self.log_manager.close()


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER, ("t", 1): BROKER, ("elsewhere", 0): 1}, alive=(0, 1))
    try:
        yield b
    finally:
        b.close()


def values_of(partition_data):
    return [m.value for m in format08.iter_messages(partition_data.message_set)]


# -- Produce --------------------------------------------------------------------------------------------


def test_produce_answers_the_base_offset_of_each_append(broker):
    first = broker.produce("t", 0, [b"a", b"b", b"c"])
    second = broker.produce("t", 0, [b"d"])
    assert first.topics == [ProduceResponseTopic("t", [ProduceResponsePartition(0, 0, 0)])]
    assert second.topics[0].partitions[0] == ProduceResponsePartition(0, 0, 3)


def test_produce_of_compressed_messages_gets_offsets_inside_one_wrapper(broker):
    broker.produce("t", 0, [b"x"])
    answer = broker.produce("t", 0, [b"a", b"b"], codec=1, keys=[b"k1", b"k2"])
    assert answer.topics[0].partitions[0].offset == 1
    fetched = broker.fetch("t", 0, 0)
    assert [(m.offset, m.key, m.value) for m in format08.iter_messages(fetched.message_set)] == [
        (0, None, b"x"),
        (1, b"k1", b"a"),
        (2, b"k2", b"b"),
    ]


def test_produce_errors_per_partition(broker, caplog):
    caplog.set_level("WARNING", logger="zkafka.server.delayed_produce")
    assert broker.produce("nope", 0, [b"a"]).topics[0].partitions[0] == ProduceResponsePartition(
        0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
    )
    assert broker.produce("elsewhere", 0, [b"a"]).topics[0].partitions[0].error == (
        ErrorCode.NOT_LEADER_FOR_PARTITION
    )
    corrupt = bytearray(format08.build_message_set([(None, b"hello")]))
    corrupt[-1] ^= 0xFF
    body = ProduceRequestV0(1, 1000, [ProduceRequestTopic("t", [ProduceRequestPartition(0, bytes(corrupt))])])
    assert broker.call(body).topics[0].partitions[0].error == ErrorCode.CORRUPT_MESSAGE
    # logged as 0.8.2's KafkaApis does: WARN when the client should look again, ERROR for what it sent
    logged = [(r.levelname, r.getMessage().split(" failed due to ")[1]) for r in caplog.records]
    assert logged == [
        ("WARNING", "UNKNOWN_TOPIC_OR_PARTITION"),
        ("WARNING", "NOT_LEADER_FOR_PARTITION"),
        ("ERROR", "CORRUPT_MESSAGE"),
    ]
    assert "on partition [t,0]" in caplog.records[-1].getMessage()


def test_a_message_over_message_max_bytes_is_refused(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER}, max_message_size=100)
    try:
        assert b.produce("t", 0, [b"x" * 200]).topics[0].partitions[0].error == ErrorCode.MESSAGE_TOO_LARGE
        assert b.produce("t", 0, [b"x" * 10]).topics[0].partitions[0] == ProduceResponsePartition(0, 0, 0)
    finally:
        b.close()


def test_acks_0_has_no_response_and_a_failure_closes_the_connection(broker):
    assert broker.produce("t", 0, [b"a"], acks=0) is None
    assert broker.fetch("t", 0, 0).high_watermark == 1
    with pytest.raises(ProduceFailedError):
        broker.produce("nope", 0, [b"a"], acks=0)


def test_acks_minus_1_behaves_as_1_with_one_replica(broker):
    assert broker.produce("t", 1, [b"a"], acks=-1).topics[0].partitions[0] == ProduceResponsePartition(
        1, 0, 0
    )


# -- Fetch ----------------------------------------------------------------------------------------------


def test_fetch_reads_from_the_offset_with_the_high_watermark(broker):
    broker.produce("t", 0, [b"a", b"b", b"c"])
    data = broker.fetch("t", 0, 1)
    assert (data.error, data.high_watermark) == (0, 3)
    assert values_of(data) == [b"b", b"c"]


def test_fetch_at_the_log_end_is_empty_and_past_it_out_of_range(broker):
    broker.produce("t", 0, [b"a"])
    at_end = broker.fetch("t", 0, 1)
    assert (at_end.error, at_end.high_watermark, bytes(at_end.message_set)) == (0, 1, b"")
    past = broker.fetch("t", 0, 2)
    assert (past.error, past.high_watermark) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)


def test_fetch_of_an_unknown_or_foreign_partition(broker):
    unknown = broker.fetch("nope", 0, 0)
    assert (unknown.error, unknown.high_watermark) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    assert broker.fetch("elsewhere", 0, 0).error == ErrorCode.NOT_LEADER_FOR_PARTITION


def test_fetch_cut_at_max_bytes_ends_in_a_partial_entry(broker):
    broker.produce("t", 0, [b"a" * 100, b"b" * 100])
    data = broker.fetch("t", 0, 0, max_bytes=150)
    assert len(data.message_set) == 150
    assert values_of(data) == [b"a" * 100]


def test_a_parked_fetch_is_completed_by_an_append(broker):
    def fetch():
        return broker.fetch("t", 0, 0, max_wait_ms=600_000, min_bytes=1)

    waiting = gevent.spawn(fetch)
    gevent.sleep(0.05)
    assert not waiting.ready() and broker.purgatory.delayed() == 1
    broker.produce("t", 0, [b"late"])
    data = waiting.get(timeout=30)  # answered by the append: its max wait is 10 minutes
    assert values_of(data) == [b"late"]
    assert broker.purgatory.delayed() == 0


def test_a_parked_fetch_waits_for_min_bytes_then_times_out_with_what_there_is(broker):
    started = time.monotonic()
    waiting = gevent.spawn(broker.fetch, "t", 0, 0, 1 << 20, 300, 10_000)
    gevent.sleep(0.05)
    broker.produce("t", 0, [b"small"])  # far fewer than min_bytes: still parked
    gevent.sleep(0.05)
    assert not waiting.ready()
    data = waiting.get(timeout=30)
    assert time.monotonic() - started >= 0.28  # it waited its max wait
    assert values_of(data) == [b"small"]


def test_a_cancelled_fetch_leaves_the_purgatory(broker):
    body = FetchRequestV0(-1, 5000, 1, [FetchRequestTopic("t", [FetchRequestPartition(0, 0, 1000)])])
    frame = v08.encode_request(body, 7, "c")
    pending = broker.apis.handle(v08.decode_request(memoryview(frame)[4:]))
    assert isinstance(pending, AsyncResult) and broker.purgatory.delayed() == 1
    pending.cancel()  # what the network layer does when the connection closes
    assert broker.purgatory.delayed() == 0
    broker.produce("t", 0, [b"a"])
    assert not pending.successful()


# -- ListOffsets ----------------------------------------------------------------------------------------


def test_list_offsets_latest_earliest_and_unknown(broker):
    assert broker.offsets("t", 0, -1).offsets == [0]
    broker.produce("t", 0, [b"a", b"b"])
    assert broker.offsets("t", 0, -1).offsets == [2, 0]
    assert broker.offsets("t", 0, -2).offsets == [0]
    assert broker.offsets("t", 0, -1, max_offsets=1).offsets == [2]
    assert broker.offsets("t", 0, 0).offsets == []  # nothing as old as the epoch
    assert broker.offsets("t", 0, int(time.time() * 1000) + 60_000).offsets == [2, 0]
    unknown = broker.offsets("nope", 0, -1)
    assert (unknown.error, unknown.offsets) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert broker.offsets("elsewhere", 0, -1).error == ErrorCode.NOT_LEADER_FOR_PARTITION


# -- Metadata -------------------------------------------------------------------------------------------


def test_metadata_of_all_topics_and_of_an_unknown_one(broker):
    everything = broker.call(MetadataRequestV0([]))
    assert everything.brokers == [
        MetadataBroker(0, "host-0", 9090),
        MetadataBroker(1, "host-1", 9091),
    ]
    assert [t.topic for t in everything.topics] == ["elsewhere", "t"]
    assert everything.topics[1].partitions == [
        PartitionMetadata(0, 0, 0, [0], [0]),
        PartitionMetadata(0, 1, 0, [0], [0]),
    ]
    assert broker.created == []
    fresh = broker.call(MetadataRequestV0(["new-topic"]))
    assert fresh.topics == [TopicMetadata(ErrorCode.LEADER_NOT_AVAILABLE, "new-topic", [])]
    assert broker.created == ["new-topic"]


def test_metadata_without_auto_creation_answers_unknown(broker):
    broker.metadata.auto_create_topics = False
    answer = broker.call(MetadataRequestV0(["new-topic"]))
    assert answer.topics == [TopicMetadata(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "new-topic", [])]


def test_partition_metadata_when_brokers_are_down():
    snapshot = cluster_snapshot({("t", 0): 1}, alive=(0, 1), replicas=(1, 2), isr=(1, 2))
    meta = snapshot.topics["t"][0]
    assert partition_metadata(0, meta, {0, 1}) == PartitionMetadata(
        ErrorCode.REPLICA_NOT_AVAILABLE, 0, 1, [1], [1]
    )
    assert partition_metadata(0, meta, {0, 2}) == PartitionMetadata(
        ErrorCode.LEADER_NOT_AVAILABLE, 0, -1, [2], []
    )
    assert partition_metadata(0, meta, {1, 2}) == PartitionMetadata(0, 0, 1, [1, 2], [1, 2])


# -- what a 0.8.2 broker does not serve -----------------------------------------------------------------


def test_an_api_version_0_8_2_does_not_serve_is_refused(broker):
    body = FetchRequestV1(-1, 0, 0, [])
    frame = v08.encode_request(body, 1, "c")
    with pytest.raises(InvalidRequestError, match="Fetch v1"):
        broker.apis.handle(v08.decode_request(memoryview(frame)[4:]))


def test_file_regions_are_closed_after_decoding(broker):
    broker.produce("t", 0, [b"a"])
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        broker.fetch("t", 0, 0)
    assert len(os.listdir("/proc/self/fd")) <= before


def test_a_fetch_a_whole_segment_behind_is_answered_at_once(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER}, segment_bytes=200)
    try:
        for i in range(6):
            b.produce("t", 0, [b"%d" % i * 50])
        assert len(b.log_manager.get_log("t", 0).segments) > 1
        # 0.8.2's case C: no waiting for min_bytes (its max wait is 10 minutes)
        data = gevent.spawn(b.fetch, "t", 0, 0, max_wait_ms=600_000, min_bytes=1 << 20).get(timeout=30)
        assert values_of(data)[0] == b"0" * 50
    finally:
        b.close()
