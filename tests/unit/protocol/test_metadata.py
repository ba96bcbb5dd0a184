"""Golden bytes of Metadata v1-v9, both ways through the v08 codec.

Hand-assembled from Kafka's MetadataRequest/MetadataResponse JSON field tables: v1 makes the request's topic
array nullable and adds the broker's rack, the controller id and ``is_internal``; v2 the cluster id; v3 the
throttle time first; v4 ``allow_auto_topic_creation``; v5 ``offline_replicas``; v7 the leader epoch after the
leader; v8 the authorized-operations flags and fields; v9 is flexible (request header v2, response header
v1, compact strings and arrays, a tag buffer after every struct; the request's topics are ``{name}`` structs).
Correlation id 7, client id "cli"; broker 0 at h:9092, topic "t" with partition 0 on replicas [0, 1].
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import hexbytes
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.errors import InvalidRequestError
from zkafka.protocol import metadata as m
from zkafka.protocol.v08 import decode_request

Request9Topic = m.MetadataRequestTopic.SCHEMA.flexible_version().record
Broker9 = m.MetadataBrokerV1.SCHEMA.flexible_version().record
Partition9 = m.PartitionMetadataV7.SCHEMA.flexible_version().record
Topic9 = m.topic_class(9).SCHEMA.flexible_version().record
P0 = m.PartitionMetadata(0, 0, 0, [0, 1], [0])
OMITTED = -(2**31)


def request(version: int, *fields):
    return m.METADATA_APIS[version][0](*fields)


def response(version: int, *fields):
    return m.METADATA_APIS[version][1](*fields)


def header(version: int) -> str:
    return f"0003 000{version} 00000007 0003 636c69"


REQUESTS = [
    *(
        pytest.param(
            request(v, ["t"]), f"00000014 | {header(v)} | 00000001 0001 74", id=f"MetadataRequestV{v}"
        )
        for v in (1, 2, 3)
    ),
    pytest.param(request(1, None), f"00000011 | {header(1)} | ffffffff  # null: every topic", id="V1-all"),
    pytest.param(request(1, []), f"00000011 | {header(1)} | 00000000  # []: no topic", id="V1-none"),
    *(
        pytest.param(
            request(v, ["t"], False),
            f"00000015 | {header(v)} | 00000001 0001 74 | 00  # allow_auto_topic_creation false",
            id=f"MetadataRequestV{v}",
        )
        for v in (4, 5, 6, 7)
    ),
    pytest.param(
        request(8, ["t"], True, False, True),
        f"00000017 | {header(8)} | 00000001 0001 74 | 01 | 00 | 01  # auto-create, cluster ops no, topic ops",
        id="MetadataRequestV8",
    ),
    pytest.param(
        request(9, [Request9Topic("t")], True, False, False),
        f"""00000016 | {header(9)} | 00      # header v2: a tag buffer after the client id
            02 | 02 74 00 | 01 | 00 | 00 | 00  # compact [{{"t", no tags}}], three flags, no tags""",
        id="MetadataRequestV9",
    ),
    pytest.param(
        request(9, None, False, False, False),
        f"00000013 | {header(9)} | 00 | 00 | 00 00 00 | 00  # null topics: every topic",
        id="MetadataRequestV9-all",
    ),
]

BROKER_R = "00000001 | 00000000 0001 68 00002384 0001 72  # [broker 0 h:9092 rack r]\n"
BROKER = "00000001 | 00000000 0001 68 00002384 ffff  # [broker 0 h:9092, no rack]\n"
TOPIC = "00000001 | 0000 0001 74 00   # [error 0, t, not internal,\n"
PARTITION = "00000001 | 0000 00000000 00000000   # [error 0, partition 0, leader 0,\n"
LISTS = "00000002 00000000 00000001 | 00000001 00000000  # replicas [0, 1], isr [0]\n"
OFFLINE = "00000001 00000001  # offline_replicas [1]\n"


def topics(version: int) -> list:
    if version < 5:
        return [m.topic_class(version)(0, "t", False, [P0])]
    if version < 7:
        return [m.topic_class(version)(0, "t", False, [m.PartitionMetadataV5(0, 0, 0, [0, 1], [0], [1])])]
    partition = m.PartitionMetadataV7(0, 0, 0, 3, [0, 1], [0], [1])
    if version < 8:
        return [m.topic_class(version)(0, "t", False, [partition])]
    return [m.topic_class(version)(0, "t", False, [partition], OMITTED)]


BROKERS = [m.MetadataBrokerV1(0, "h", 9092, None)]
RESPONSES = [
    pytest.param(
        response(1, [m.MetadataBrokerV1(0, "h", 9092, "r")], 0, topics(1)),
        f"00000046 | 00000007 | {BROKER_R} | 00000000  # controller 0\n{TOPIC}\n{PARTITION}\n{LISTS}",
        id="MetadataResponseV1",
    ),
    pytest.param(
        response(2, BROKERS, "c", 0, topics(2)),
        f"00000048 | 00000007 | {BROKER} | 0001 63  # cluster c\n 00000000 | {TOPIC}\n{PARTITION}\n{LISTS}",
        id="MetadataResponseV2",
    ),
    *(
        pytest.param(
            response(v, 5, BROKERS, "c", 0, topics(v)),
            f"0000004c | 00000007 | 00000005  # throttle\n {BROKER} | 0001 63 | 00000000 | {TOPIC}\n"
            f"{PARTITION}\n{LISTS}",
            id=f"MetadataResponseV{v}",
        )
        for v in (3, 4)
    ),
    *(
        pytest.param(
            response(v, 0, BROKERS, None, 0, topics(v)),
            f"00000053 | 00000007 | 00000000 | {BROKER} | ffff  # no cluster id\n 00000000 | {TOPIC}\n"
            f"{PARTITION}\n{LISTS}\n{OFFLINE}",
            id=f"MetadataResponseV{v}",
        )
        for v in (5, 6)
    ),
    pytest.param(
        response(7, 0, BROKERS, "c", 0, topics(7)),
        f"""00000058 | 00000007 | 00000000 | {BROKER} | 0001 63 | 00000000 | {TOPIC}
            00000001 | 0000 00000000 00000000 | 00000003  # [error 0, partition 0, leader 0, leader epoch 3,
            {LISTS}\n{OFFLINE}""",
        id="MetadataResponseV7",
    ),
    pytest.param(
        response(8, 0, BROKERS, "c", 0, topics(8), OMITTED),
        f"""00000060 | 00000007 | 00000000 | {BROKER} | 0001 63 | 00000000 | {TOPIC}
            00000001 | 0000 00000000 00000000 | 00000003 | {LISTS}\n{OFFLINE}
            80000000  # topic authorized operations: not asked for
            80000000  # cluster authorized operations: not asked for""",
        id="MetadataResponseV8",
    ),
    pytest.param(
        response(
            9,
            0,
            [Broker9(0, "h", 9092, None)],
            "c",
            0,
            [Topic9(0, "t", False, [Partition9(0, 0, 0, 3, [0, 1], [0], [1])], OMITTED)],
            OMITTED,
        ),
        """0000004f | 00000007 | 00         # header v1: a tag buffer after the correlation id
           00000000                         # throttle
           02 | 00000000 02 68 00002384 00 00  # compact [broker 0 "h" 9092, null rack, no tags]
           02 63 | 00000000                 # cluster "c", controller 0
           02 | 0000 02 74 00               # [error 0, "t", not internal,
           02 | 0000 00000000 00000000 00000003  # [error 0, partition 0, leader 0, epoch 3,
           03 00000000 00000001 | 02 00000000 | 02 00000001 | 00   # replicas, isr, offline, no tags]
           80000000 | 00                    # topic operations, no tags]
           80000000 | 00                    # cluster operations, no tags""",
        id="MetadataResponseV9",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_requested_topics_by_version():
    assert m.requested_topics(request(0, [])) is None  # v0: [] is every topic
    assert m.requested_topics(request(1, [])) == []  # v1+: [] is none, null every topic
    assert m.requested_topics(request(1, None)) is None
    assert m.requested_topics(request(4, ["a", "b", "a"], True)) == ["a", "b"]
    assert m.requested_topics(request(9, [Request9Topic("a")], True, False, False)) == ["a"]


def test_operation_bitfields_are_kafkas_supported_operations():
    # READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11
    assert m.TOPIC_OPERATIONS == 0b110111111000
    # CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12
    assert m.CLUSTER_OPERATIONS == 0b1111110100000


def test_librdkafkas_every_topic_v9_request_with_its_count_placeholder():
    # librdkafka 2.16's "every topic" Metadata v9 (its issue #5049): the array count's 4-byte placeholder
    # (00 00 00 00) where the null varint belongs, then allow_auto_topic_creation, the two operation flags
    # and an empty tag buffer
    frame = hexbytes("0003 0009 00000003 0007 72646b61666b61 00 | 00000000 | 01 00 00 | 00")
    decoded = decode_request(frame)
    assert (decoded.client_id, decoded.body) == ("rdkafka", request(9, None, True, False, False))
    with pytest.raises(InvalidRequestError, match="unexpected bytes"):  # any other shape stays an error
        decode_request(frame[:-1] + b"\x00\x00")
