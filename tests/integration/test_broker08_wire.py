"""The 0.8 broker on the wire: golden response bytes for each API, pipelined requests answered in order, and
malformed frames closing only their own connection. A real ZooKeeper and a real in-process broker.
"""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from tests.support.wire import is_closed_by_peer
from zkafka.protocol import v08
from zkafka.protocol.metadata import MetadataRequestV0, TopicMetadata
from zkafka.protocol.offset_commit import (
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestV0,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV0,
)
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.produce import ProduceRequestV0
from zkafka.records import format08

pytestmark = pytest.mark.integration


@pytest.fixture
def broker(start_broker08):
    return start_broker08(0)


@pytest.fixture
def client(broker):
    with Client08(broker.port) as c:
        wait_for_leaders(c, ["t"])
        yield c


def test_golden_response_bytes_of_every_api(broker, client):
    hello = format08.build_message_set([(None, b"hello")])
    client.send(produce_request("t", 0, hello), correlation_id=1)
    assert client.read_frame() == bytes.fromhex(
        "0000001d 00000001 00000001 000174 00000001 00000000 0000 0000000000000000"
    )
    client.send(fetch_request("t", 0, 0), correlation_id=2)
    assert client.read_frame() == bytes.fromhex(
        "00000040 00000002 00000001 000174 00000001 00000000 0000 0000000000000001 0000001f"
        # the 0.8 worked example: offset 0, null key, value "hello"
        "0000000000000000 00000013 87a77ab2 00 00 ffffffff 00000005 68656c6c6f"
    )
    offsets = ListOffsetsRequestV0(
        -1, [ListOffsetsRequestTopic("t", [ListOffsetsRequestPartition(0, -1, 10)])]
    )
    client.send(offsets, correlation_id=3)
    assert client.read_frame() == bytes.fromhex(
        "00000029 00000003 00000001 000174 00000001 00000000 0000 00000002 0000000000000001 0000000000000000"
    )
    client.send(MetadataRequestV0(["t"]), correlation_id=4)
    port = struct.pack(">i", broker.port).hex()
    assert client.read_frame() == bytes.fromhex(
        "00000042 00000004 00000001 00000000 0009 3132372e302e302e31" + port + "00000001 0000 000174"
        " 00000001 0000 00000000 00000000 00000001 00000000 00000001 00000000"
    )
    commit = OffsetCommitRequestV0(
        "g", [OffsetCommitRequestTopicV0("t", [OffsetCommitRequestPartitionV0(0, 5, "")])]
    )
    client.send(commit, correlation_id=5)
    assert client.read_frame() == bytes.fromhex("00000015 00000005 00000001 000174 00000001 00000000 0000")
    client.send(OffsetFetchRequestV0("g", [OffsetFetchRequestTopic("t", [0])]), correlation_id=6)
    assert client.read_frame() == bytes.fromhex(
        "0000001f 00000006 00000001 000174 00000001 00000000 0000000000000005 0000 0000"
    )


def test_fifty_pipelined_requests_are_answered_in_request_order(client):
    client.call(produce_request("t", 0, format08.build_message_set([(None, b"x")])))
    bodies = []
    for i in range(50):
        if i % 10 == 3:  # a fetch that waits 200 ms for bytes that never come: later answers must wait too
            bodies.append(fetch_request("t", 0, 1, max_wait_ms=200, min_bytes=1))
        elif i % 2:
            bodies.append(fetch_request("t", 0, 0))
        else:
            bodies.append(MetadataRequestV0(["t"]))
    frames = b"".join(v08.encode_request(body, 1000 + i, "pipeline") for i, body in enumerate(bodies))
    client.sock.sendall(frames)
    answers = [client.receive(body) for body in bodies]
    assert [a.correlation_id for a in answers] == list(range(1000, 1050))
    assert all(a.body.topics[0].topic == "t" for a in answers)


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(struct.pack(">ihhih", 8, 99, 0, 1, -1), id="unknown-api-key"),
        pytest.param(struct.pack(">ihhih", 8, 1, 7, 1, -1), id="unknown-version"),
        pytest.param(struct.pack(">ihhihi", 12, 3, 0, 1, -1, 5), id="truncated-body"),
        pytest.param(struct.pack(">ihhihii", 16, 3, 0, 1, -1, 0, 9), id="trailing-bytes"),
        pytest.param(struct.pack(">i", -4), id="negative-size"),
        pytest.param(struct.pack(">i", 2**31 - 1), id="oversized"),
        pytest.param(struct.pack(">ihhihi", 12, 3, 0, 1, -1, 2**30), id="huge-array-count"),
    ],
)
def test_a_malformed_frame_closes_only_its_connection(broker, client, frame):
    with Client08(broker.port) as bad:
        bad.sock.sendall(frame)
        assert is_closed_by_peer(bad.sock)
    assert client.call(MetadataRequestV0(["t"])).topics[0].error == 0


def test_a_client_gone_mid_frame_does_not_disturb_the_others(broker, client):
    raw = socket.create_connection(("127.0.0.1", broker.port))
    raw.sendall(v08.encode_request(MetadataRequestV0(["t"]), 1, "c")[:9])
    raw.close()
    assert client.call(MetadataRequestV0(["t"])).topics[0].error == 0


def test_metadata_for_an_illegal_topic_name_answers_invalid_topic_and_no_brokers(client):
    # 0.8.2: a failed auto-creation answers every requested topic with its error, and no brokers
    answer = client.call(MetadataRequestV0(["bad/name", "t"]))
    assert answer.brokers == []
    assert answer.topics == [TopicMetadata(17, "bad/name", []), TopicMetadata(17, "t", [])]


BURST = 1000


def test_a_pipelined_burst_does_not_keep_another_connections_request_waiting(broker, client):
    """1000 big produces pipelined on one connection, and once the first is answered a ListOffsets on another:
    that one is answered while the burst is still being appended (its latest offset counts the produces
    handled before it), and the burst's answers come back in request order, one base offset after another."""
    batch = format08.build_message_set([(None, bytes(1000))] * 64)  # 64 messages: 67 KB, a big request
    # the rest of the burst takes the broker ~0.3 s here, far more than the moment the ListOffsets takes to go
    burst = [v08.encode_request(produce_request("t", 0, batch), n, "burst") for n in range(BURST)]
    latest = ListOffsetsRequestV0(-1, [ListOffsetsRequestTopic("t", [ListOffsetsRequestPartition(0, -1, 1)])])
    with Client08(broker.port) as bursting:
        sender = threading.Thread(target=lambda: bursting.sock.sendall(b"".join(burst)), daemon=True)
        sender.start()
        first = bursting.receive(ProduceRequestV0)
        end_offset = client.call(latest).topics[0].partitions[0].offsets[0]
        answers = [first] + [bursting.receive(ProduceRequestV0) for _ in burst[1:]]
        sender.join(10)
    assert 64 <= end_offset < BURST * 64, "the single request waited for the whole burst"
    assert [a.correlation_id for a in answers] == list(range(BURST))
    assert [a.body.topics[0].partitions[0].offset for a in answers] == [64 * n for n in range(BURST)]
