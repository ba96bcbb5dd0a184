"""Golden bytes of the 0.9.0.1 group APIs (sheet §4.8) and of the embedded "consumer" protocol (§4.9, the
sheet's worked examples). Hand-written frames, both directions."""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import ASSIGNMENT_T01, METADATA_T, hexbytes
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.errors import InvalidRequestError
from zkafka.protocol.v09_group import (
    ConsumerProtocolAssignment,
    ConsumerProtocolMetadata,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsRequestV0,
    DescribeGroupsResponseV0,
    GroupProtocol,
    HeartbeatRequestV0,
    HeartbeatResponseV0,
    JoinGroupMember,
    JoinGroupRequestV0,
    JoinGroupResponseV0,
    LeaveGroupRequestV0,
    LeaveGroupResponseV0,
    ListedGroup,
    ListGroupsRequestV0,
    ListGroupsResponseV0,
    SyncGroupAssignment,
    SyncGroupRequestV0,
    SyncGroupResponseV0,
    TopicPartitions,
)

META = METADATA_T.hex()  # 13 bytes
ASSIGN = ASSIGNMENT_T01.hex()  # 25 bytes
CONSUMER = "0008 636f6e73756d6572"  # "consumer"
RANGE = "0005 72616e6765"  # "range"

REQUESTS = [
    pytest.param(
        JoinGroupRequestV0("g", 30000, "", "consumer", [GroupProtocol("range", METADATA_T)]),
        f"""0000003c | 000b 0000 00000007 0003 636c69  # size 60 | JoinGroup v0
            0001 67 | 00007530 | 0000                 # group "g", session timeout 30000, member ""
            {CONSUMER}                                # protocol type
            00000001 {RANGE} 0000000d {META}          # [range: 13 bytes of metadata]""",
        id="JoinGroupRequestV0",
    ),
    pytest.param(
        HeartbeatRequestV0("g", 1, "m"),
        "00000017 | 000c 0000 00000007 0003 636c69 | 0001 67 00000001 0001 6d",
        id="HeartbeatRequestV0",
    ),
    pytest.param(
        LeaveGroupRequestV0("g", "m"),
        "00000013 | 000d 0000 00000007 0003 636c69 | 0001 67 0001 6d",
        id="LeaveGroupRequestV0",
    ),
    pytest.param(
        SyncGroupRequestV0("g", 1, "m", [SyncGroupAssignment("m", ASSIGNMENT_T01)]),
        f"""0000003b | 000e 0000 00000007 0003 636c69  # size 59 | SyncGroup v0
            0001 67 00000001 0001 6d                  # group "g", generation 1, member "m"
            00000001 0001 6d 00000019 {ASSIGN}        # [m: 25 bytes of assignment]""",
        id="SyncGroupRequestV0",
    ),
    pytest.param(
        DescribeGroupsRequestV0(["g"]),
        "00000014 | 000f 0000 00000007 0003 636c69 | 00000001 0001 67",
        id="DescribeGroupsRequestV0",
    ),
    pytest.param(
        ListGroupsRequestV0(),
        "0000000d | 0010 0000 00000007 0003 636c69",
        id="ListGroupsRequestV0",
    ),
]

RESPONSES = [
    pytest.param(
        JoinGroupResponseV0(0, 1, "range", "m", "m", [JoinGroupMember("m", METADATA_T)]),
        f"""0000002f | 00000007                          # size 47
            0000 00000001 {RANGE}                     # error 0, generation 1, protocol range
            0001 6d 0001 6d                           # leader "m", member "m"
            00000001 0001 6d 0000000d {META}          # members [m: metadata]""",
        id="JoinGroupResponseV0",
    ),
    pytest.param(HeartbeatResponseV0(27), "00000006 | 00000007 | 001b", id="HeartbeatResponseV0"),
    pytest.param(LeaveGroupResponseV0(25), "00000006 | 00000007 | 0019", id="LeaveGroupResponseV0"),
    pytest.param(
        SyncGroupResponseV0(0, ASSIGNMENT_T01),
        f"00000023 | 00000007 | 0000 00000019 {ASSIGN}",
        id="SyncGroupResponseV0",
    ),
    pytest.param(
        DescribeGroupsResponseV0(
            [
                DescribedGroup(
                    0,
                    "g",
                    "Stable",
                    "consumer",
                    "range",
                    [DescribedMember("m", "c", "/h", METADATA_T, ASSIGNMENT_T01)],
                )
            ]
        ),
        f"""00000062 | 00000007                          # size 98
            00000001 0000 0001 67                     # [error 0, group "g",
            0006 537461626c65 {CONSUMER} {RANGE}      #  Stable, consumer, range,
            00000001 0001 6d 0001 63 0002 2f68        #  [member "m", client "c", host "/h",
            0000000d {META} 00000019 {ASSIGN}         #   metadata, assignment]]""",
        id="DescribeGroupsResponseV0",
    ),
    pytest.param(
        ListGroupsResponseV0(0, [ListedGroup("g", "consumer")]),
        f"00000017 | 00000007 | 0000 00000001 0001 67 {CONSUMER}",
        id="ListGroupsResponseV0",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_consumer_protocol_worked_examples():
    metadata = ConsumerProtocolMetadata(0, ["t"], b"")
    assignment = ConsumerProtocolAssignment(0, [TopicPartitions("t", [0, 1])], b"")
    assert metadata.encode() == METADATA_T
    assert assignment.encode() == ASSIGNMENT_T01
    assert ConsumerProtocolMetadata.decode(METADATA_T) == metadata
    assert ConsumerProtocolAssignment.decode(ASSIGNMENT_T01) == assignment


def test_consumer_protocol_reads_a_later_version_as_v0():
    later = hexbytes("0001 | 00000001 0001 74 | 00000002 7564 | 00000005 0000 0000 00   # v1 + extra fields")
    decoded = ConsumerProtocolMetadata.decode(later)
    assert decoded == ConsumerProtocolMetadata(1, ["t"], b"ud")
    with pytest.raises(InvalidRequestError):
        ConsumerProtocolMetadata.decode(later, exact=True)


@pytest.mark.parametrize(
    "data",
    [
        hexbytes("ffff 00000001 0001 74 00000000"),  # negative version
        METADATA_T[:-1],  # truncated user data
        hexbytes("0000 7fffffff"),  # a subscription count the bytes cannot hold
    ],
)
def test_consumer_protocol_rejects_bad_metadata(data):
    with pytest.raises(InvalidRequestError):
        ConsumerProtocolMetadata.decode(data)
