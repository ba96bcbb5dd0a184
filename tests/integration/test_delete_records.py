"""DeleteRecords against a real broker and ZooKeeper: the leader's log start moves, whole segments below it
go, a fetch below it is OFFSET_OUT_OF_RANGE, ListOffsets' earliest answers it, and it survives a restart
(log-start-offset-checkpoint)."""

from __future__ import annotations

import pytest

from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from zkafka.protocol.delete_records import DELETE_RECORDS_APIS
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.versioned import make
from zkafka.records import format08

pytestmark = pytest.mark.integration


def delete_records(client, version, offsets):
    topics = [{"name": "t", "partitions": [{"partition": 0, "offset": offsets}]}]
    answer = client.call(make(DELETE_RECORDS_APIS[version][0], topics=topics, timeout_ms=5000))
    (partition,) = answer.topics[0].partitions
    return partition.error, partition.low_watermark


def earliest(client) -> int:
    request = ListOffsetsRequestV0(
        -1, [ListOffsetsRequestTopic("t", [ListOffsetsRequestPartition(0, -2, 1)])]
    )
    (partition,) = client.call(request).topics[0].partitions
    return partition.offsets[0]


def test_delete_records_moves_the_log_start(start_broker08):
    broker = start_broker08(0, **{"log.segment.bytes": "200"})
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        for i in range(10):
            client.call(produce_request("t", 0, format08.build_message_set([(None, b"message-%d" % i)])))
        segments_before = len(broker.server.log_manager.get_log("t", 0).segments)
        assert delete_records(client, 0, 11)[0] == ErrorCode.OFFSET_OUT_OF_RANGE  # past the high watermark
        assert delete_records(client, 1, 5) == (0, 5)
        assert delete_records(client, 2, 3) == (0, 5)  # never moves back
        log = broker.server.log_manager.get_log("t", 0)
        assert len(log.segments) < segments_before and log.segments[0].start <= 5
        assert (
            client.call(fetch_request("t", 0, 4)).topics[0].partitions[0].error
            == ErrorCode.OFFSET_OUT_OF_RANGE
        )
        assert client.call(fetch_request("t", 0, 5)).topics[0].partitions[0].error == 0
        assert earliest(client) == 5
    broker.stop()
    broker = start_broker08(0, **{"log.segment.bytes": "200"})
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        assert earliest(client) == 5
        assert delete_records(client, 0, -1) == (0, 10)  # -1: the high watermark
