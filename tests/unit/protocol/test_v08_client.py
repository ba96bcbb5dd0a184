"""Golden bytes of the client APIs of 0.8.2/0.9.0.1: every request and response version, both directions.

Each frame is written by hand from the layouts of the reference sheet (§1.1, §4): ``int32 size``, the header
(api key, version, correlation id 7, client id "cli"; responses: correlation id 7), then the body.
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import CLIENT_ID, CORRELATION_ID, HELLO_ENTRY, hexbytes
from zkafka.protocol.api_versions import ApiVersionRange, ApiVersionsRequestV0, ApiVersionsResponseV0
from zkafka.protocol.fetch import (
    FetchRequestPartition,
    FetchRequestTopic,
    FetchRequestV0,
    FetchRequestV1,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchResponseV0,
    FetchResponseV1,
)
from zkafka.protocol.metadata import (
    MetadataBroker,
    MetadataRequestV0,
    MetadataResponseV0,
    PartitionMetadata,
    TopicMetadata,
)
from zkafka.protocol.offset_commit import (
    GroupCoordinatorRequestV0,
    GroupCoordinatorResponseV0,
    OffsetCommitRequestPartitionV0,
    OffsetCommitRequestPartitionV1,
    OffsetCommitRequestTopicV0,
    OffsetCommitRequestTopicV1,
    OffsetCommitRequestV0,
    OffsetCommitRequestV1,
    OffsetCommitRequestV2,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetCommitResponseV0,
    OffsetCommitResponseV1,
    OffsetCommitResponseV2,
    OffsetFetchRequestTopic,
    OffsetFetchRequestV0,
    OffsetFetchRequestV1,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    OffsetFetchResponseV0,
    OffsetFetchResponseV1,
)
from zkafka.protocol.offsets import (
    ListOffsetsRequestPartition,
    ListOffsetsRequestTopic,
    ListOffsetsRequestV0,
    ListOffsetsResponsePartition,
    ListOffsetsResponseTopic,
    ListOffsetsResponseV0,
)
from zkafka.protocol.produce import (
    ProduceRequestPartition,
    ProduceRequestTopic,
    ProduceRequestV0,
    ProduceRequestV1,
    ProduceResponsePartition,
    ProduceResponseTopic,
    ProduceResponseV0,
    ProduceResponseV1,
)
from zkafka.protocol.v08 import decode_request, decode_response, encode_request, encode_response

ENTRY = HELLO_ENTRY.hex()
PRODUCE_TOPICS = [ProduceRequestTopic("t", [ProduceRequestPartition(0, HELLO_ENTRY)])]
FETCH_TOPICS = [FetchRequestTopic("t", [FetchRequestPartition(0, 0, 1048576)])]
OFFSET_FETCH_TOPICS = [OffsetFetchRequestTopic("t", [0, 1])]
COMMIT_RESPONSE_TOPICS = [OffsetCommitResponseTopic("t", [OffsetCommitResponsePartition(0, 12)])]
OFFSET_FETCH_RESPONSE_TOPICS = [OffsetFetchResponseTopic("t", [OffsetFetchResponsePartition(0, -1, "", 3)])]

REQUESTS = [
    pytest.param(
        ProduceRequestV0(1, 1000, PRODUCE_TOPICS),
        f"""00000045 | 0000 0000 00000007 0003 636c69   # size 69 | Produce v0, correlation 7, "cli"
            0001 | 000003e8                           # acks 1, timeout 1000
            00000001 0001 74 | 00000001 00000000     # ["t": [partition 0
            0000001f {ENTRY}                          #   message set of 31 bytes]]""",
        id="ProduceRequestV0",
    ),
    pytest.param(
        ProduceRequestV1(-1, 500, PRODUCE_TOPICS),
        f"""00000045 | 0000 0001 00000007 0003 636c69
            ffff | 000001f4                           # acks -1, timeout 500
            00000001 0001 74 | 00000001 00000000 0000001f {ENTRY}""",
        id="ProduceRequestV1",
    ),
    pytest.param(
        FetchRequestV0(-1, 100, 1, FETCH_TOPICS),
        """00000034 | 0001 0000 00000007 0003 636c69    # size 52 | Fetch v0
           ffffffff 00000064 00000001                 # replica -1, max wait 100, min bytes 1
           00000001 0001 74 | 00000001 00000000       # ["t": [partition 0,
           0000000000000000 00100000                  #   offset 0, max bytes 1 MiB]]""",
        id="FetchRequestV0",
    ),
    pytest.param(
        FetchRequestV1(2, 500, 1, FETCH_TOPICS),
        """00000034 | 0001 0001 00000007 0003 636c69
           00000002 000001f4 00000001                 # replica 2 (a follower)
           00000001 0001 74 00000001 00000000 0000000000000000 00100000""",
        id="FetchRequestV1",
    ),
    pytest.param(
        ListOffsetsRequestV0(-1, [ListOffsetsRequestTopic("t", [ListOffsetsRequestPartition(0, -1, 1)])]),
        """0000002c | 0002 0000 00000007 0003 636c69    # size 44 | ListOffsets v0
           ffffffff                                   # replica -1
           00000001 0001 74 00000001 00000000         # ["t": [partition 0,
           ffffffffffffffff 00000001                  #   time -1 (latest), max 1]]""",
        id="ListOffsetsRequestV0",
    ),
    pytest.param(
        MetadataRequestV0(["t"]),
        "00000014 | 0003 0000 00000007 0003 636c69 | 00000001 0001 74",
        id="MetadataRequestV0",
    ),
    pytest.param(
        MetadataRequestV0([]),
        "00000011 | 0003 0000 00000007 0003 636c69 | 00000000    # [] = all topics",
        id="MetadataRequestV0-all",
    ),
    pytest.param(
        OffsetCommitRequestV0(
            "g", [OffsetCommitRequestTopicV0("t", [OffsetCommitRequestPartitionV0(0, 10, "m")])]
        ),
        """0000002a | 0008 0000 00000007 0003 636c69    # size 42 | OffsetCommit v0
           0001 67                                    # group "g"
           00000001 0001 74 00000001 00000000         # ["t": [partition 0,
           000000000000000a 0001 6d                   #   offset 10, metadata "m"]]""",
        id="OffsetCommitRequestV0",
    ),
    pytest.param(
        OffsetCommitRequestV1(
            "g", 1, "c", [OffsetCommitRequestTopicV1("t", [OffsetCommitRequestPartitionV1(0, 10, -1, "")])]
        ),
        """00000038 | 0008 0001 00000007 0003 636c69    # size 56 | OffsetCommit v1
           0001 67 | 00000001 | 0001 63               # group "g", generation 1, member "c"
           00000001 0001 74 00000001 00000000         # ["t": [partition 0,
           000000000000000a ffffffffffffffff 0000     #   offset 10, timestamp -1, metadata ""]]""",
        id="OffsetCommitRequestV1",
    ),
    pytest.param(
        OffsetCommitRequestV2(
            "g", 1, "c", -1, [OffsetCommitRequestTopicV0("t", [OffsetCommitRequestPartitionV0(0, 10, None)])]
        ),
        """00000038 | 0008 0002 00000007 0003 636c69    # size 56 | OffsetCommit v2
           0001 67 | 00000001 | 0001 63               # group "g", generation 1, member "c"
           ffffffffffffffff                           # retention -1 (the broker's default)
           00000001 0001 74 00000001 00000000         # ["t": [partition 0,
           000000000000000a ffff                      #   offset 10, metadata null]]""",
        id="OffsetCommitRequestV2",
    ),
    pytest.param(
        OffsetFetchRequestV0("g", OFFSET_FETCH_TOPICS),
        "00000023 | 0009 0000 00000007 0003 636c69 | 0001 67 | 00000001 0001 74 00000002 00000000 00000001",
        id="OffsetFetchRequestV0",
    ),
    pytest.param(
        OffsetFetchRequestV1("g", OFFSET_FETCH_TOPICS),
        "00000023 | 0009 0001 00000007 0003 636c69 | 0001 67 | 00000001 0001 74 00000002 00000000 00000001",
        id="OffsetFetchRequestV1",
    ),
    pytest.param(
        GroupCoordinatorRequestV0("g"),
        "00000010 | 000a 0000 00000007 0003 636c69 | 0001 67",
        id="GroupCoordinatorRequestV0",
    ),
    pytest.param(
        ApiVersionsRequestV0(),
        "0000000d | 0012 0000 00000007 0003 636c69    # empty body",
        id="ApiVersionsRequestV0",
    ),
]

RESPONSES = [
    pytest.param(
        ProduceResponseV0([ProduceResponseTopic("t", [ProduceResponsePartition(0, 0, 5)])]),
        """0000001d | 00000007                          # size 29 | correlation 7
           00000001 0001 74 | 00000001 00000000       # ["t": [partition 0,
           0000 0000000000000005                      #   error 0, base offset 5]]""",
        id="ProduceResponseV0",
    ),
    pytest.param(
        ProduceResponseV1([ProduceResponseTopic("t", [ProduceResponsePartition(0, 6, -1)])], 100),
        """00000021 | 00000007
           00000001 0001 74 00000001 00000000 0006 ffffffffffffffff   # error 6, offset -1
           00000064                                   # throttle time 100, last""",
        id="ProduceResponseV1",
    ),
    pytest.param(
        FetchResponseV0([FetchResponseTopic("t", [FetchResponsePartition(0, 0, 1, HELLO_ENTRY)])]),
        f"""00000040 | 00000007                         # size 64
            00000001 0001 74 00000001 00000000        # ["t": [partition 0,
            0000 0000000000000001                     #   error 0, high watermark 1,
            0000001f {ENTRY}                          #   message set of 31 bytes]]""",
        id="FetchResponseV0",
    ),
    pytest.param(
        FetchResponseV1(100, [FetchResponseTopic("t", [FetchResponsePartition(0, 0, 1, HELLO_ENTRY)])]),
        f"""00000044 | 00000007 | 00000064              # throttle time 100, first
            00000001 0001 74 00000001 00000000 0000 0000000000000001 0000001f {ENTRY}""",
        id="FetchResponseV1",
    ),
    pytest.param(
        ListOffsetsResponseV0([ListOffsetsResponseTopic("t", [ListOffsetsResponsePartition(0, 0, [5, 0])])]),
        """00000029 | 00000007
           00000001 0001 74 00000001 00000000 0000    # ["t": [partition 0, error 0,
           00000002 0000000000000005 0000000000000000 #   offsets [5, 0] (descending)]]""",
        id="ListOffsetsResponseV0",
    ),
    pytest.param(
        MetadataResponseV0(
            [MetadataBroker(0, "h", 9092)], [TopicMetadata(0, "t", [PartitionMetadata(0, 0, 0, [0, 1], [0])])]
        ),
        """0000003e | 00000007                          # size 62
           00000001 00000000 0001 68 00002384         # brokers [0 h:9092]
           00000001 0000 0001 74                      # topics [error 0, "t",
           00000001 0000 00000000 00000000            #   [error 0, partition 0, leader 0,
           00000002 00000000 00000001                 #    replicas [0, 1],
           00000001 00000000                          #    isr [0]]]""",
        id="MetadataResponseV0",
    ),
    pytest.param(
        OffsetCommitResponseV0(COMMIT_RESPONSE_TOPICS),
        "00000015 | 00000007 | 00000001 0001 74 00000001 00000000 000c   # error 12",
        id="OffsetCommitResponseV0",
    ),
    pytest.param(
        OffsetCommitResponseV1(COMMIT_RESPONSE_TOPICS),
        "00000015 | 00000007 | 00000001 0001 74 00000001 00000000 000c",
        id="OffsetCommitResponseV1",
    ),
    pytest.param(
        OffsetCommitResponseV2(COMMIT_RESPONSE_TOPICS),
        "00000015 | 00000007 | 00000001 0001 74 00000001 00000000 000c",
        id="OffsetCommitResponseV2",
    ),
    pytest.param(
        OffsetFetchResponseV0(OFFSET_FETCH_RESPONSE_TOPICS),
        """0000001f | 00000007 | 00000001 0001 74 00000001 00000000
           ffffffffffffffff 0000 0003                 # offset -1, metadata "", error 3""",
        id="OffsetFetchResponseV0",
    ),
    pytest.param(
        OffsetFetchResponseV1(OFFSET_FETCH_RESPONSE_TOPICS),
        "0000001f | 00000007 | 00000001 0001 74 00000001 00000000 ffffffffffffffff 0000 0003",
        id="OffsetFetchResponseV1",
    ),
    pytest.param(
        GroupCoordinatorResponseV0(0, 1, "h", 9092),
        "00000011 | 00000007 | 0000 | 00000001 0001 68 00002384   # error 0, node 1 at h:9092",
        id="GroupCoordinatorResponseV0",
    ),
    pytest.param(
        ApiVersionsResponseV0(0, [ApiVersionRange(0, 0, 1), ApiVersionRange(1, 0, 1)]),
        "00000016 | 00000007 | 0000 | 00000002 0000 0000 0001 0001 0000 0001",
        id="ApiVersionsResponseV0",
    ),
]


def check_request(body, frame_hex: str, client_id: str | None = CLIENT_ID) -> None:
    """``body`` encodes to exactly the frame, and the frame decodes back to its header and ``body``."""
    frame = hexbytes(frame_hex)
    assert encode_request(body, CORRELATION_ID, client_id) == frame
    request = decode_request(memoryview(frame)[4:])
    assert (request.api_key, request.api_version) == (body.API_KEY, body.API_VERSION)
    assert (request.correlation_id, request.client_id) == (CORRELATION_ID, client_id)
    assert type(request.body) is type(body) and request.body == body


def check_response(body, frame_hex: str) -> None:
    frame = hexbytes(frame_hex)
    assert b"".join(encode_response(CORRELATION_ID, body)) == frame
    response = decode_response(body.API_KEY, body.API_VERSION, frame[4:])
    assert response.correlation_id == CORRELATION_ID
    assert type(response.body) is type(body) and response.body == body


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


class Region:
    """A file region as the broker passes one: only its length matters to the codec."""

    def __init__(self, length: int) -> None:
        self.length = length


def test_fetch_response_keeps_a_file_region_as_its_own_part():
    region = Region(31)
    body = FetchResponseV0(
        [
            FetchResponseTopic(
                "t", [FetchResponsePartition(0, 0, 1, region), FetchResponsePartition(1, 3, -1, b"")]
            )
        ]
    )
    parts = encode_response(CORRELATION_ID, body)
    assert len(parts) == 3 and parts[1] is region
    assert parts[0] == hexbytes(
        """00000052 | 00000007                           # size 82 = 4 + 4 + 3 + 4 + 2 * 22 + 31
           00000001 0001 74 00000002                   # ["t": [
           00000000 0000 0000000000000001 0000001f     #   partition 0, error 0, hw 1, 31 bytes: (region)"""
    )
    assert parts[2] == hexbytes(
        "00000001 0003 ffffffffffffffff 00000000   # partition 1, error 3, hw -1, empty"
    )


def test_decoded_message_set_is_a_view_into_the_frame():
    frame = bytearray(
        b"".join(
            encode_response(
                CORRELATION_ID,
                FetchResponseV0([FetchResponseTopic("t", [FetchResponsePartition(0, 0, 1, HELLO_ENTRY)])]),
            )
        )
    )
    message_set = decode_response(1, 0, memoryview(frame)[4:]).body.topics[0].partitions[0].message_set
    assert isinstance(message_set, memoryview) and message_set == HELLO_ENTRY
    frame[-1] ^= 0xFF
    assert message_set[-1] == frame[-1]  # no copy was made
