"""Golden bytes of the 0.9.0.1 group APIs (sheet §4.8), of the static membership versions (KIP-345: JoinGroup
v5, SyncGroup v3 and Heartbeat v3 as Kafka 2.3's message JSON, LeaveGroup v3 as 2.4's) and of the embedded
"consumer" protocol (§4.9, the sheet's worked examples). Hand-written frames, both directions."""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import ASSIGNMENT_T01, METADATA_T, hexbytes
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.errors import InvalidRequestError
from zkafka.protocol.group_membership import (
    ConsumerProtocolAssignment,
    ConsumerProtocolMetadata,
    DescribedGroup,
    DescribedMember,
    DescribeGroupsRequestV0,
    DescribeGroupsResponseV0,
    GroupProtocol,
    HeartbeatRequestV0,
    HeartbeatRequestV3,
    HeartbeatResponseV0,
    HeartbeatResponseV3,
    JoinGroupMember,
    JoinGroupMemberV5,
    JoinGroupRequestV0,
    JoinGroupRequestV5,
    JoinGroupResponseV0,
    JoinGroupResponseV5,
    LeaveGroupRequestV0,
    LeaveGroupRequestV3,
    LeaveGroupResponseV0,
    LeaveGroupResponseV3,
    LeavingMember,
    LeftMember,
    ListedGroup,
    ListGroupsRequestV0,
    ListGroupsResponseV0,
    SyncGroupAssignment,
    SyncGroupRequestV0,
    SyncGroupRequestV3,
    SyncGroupResponseV0,
    SyncGroupResponseV3,
    TopicPartitions,
)

META = METADATA_T.hex()  # 13 bytes
I1 = "0003 692d31"  # group instance id "i-1"
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
    pytest.param(
        JoinGroupRequestV5("g", 30000, 60000, "", "i-1", "consumer", [GroupProtocol("range", METADATA_T)]),
        f"""00000045 | 000b 0005 00000007 0003 636c69  # size 69 | JoinGroup v5
            0001 67 | 00007530 | 0000ea60 | 0000      # group "g", session 30000, rebalance 60000, member ""
            {I1} {CONSUMER}                           # instance "i-1", protocol type
            00000001 {RANGE} 0000000d {META}          # [range: 13 bytes of metadata]""",
        id="JoinGroupRequestV5",
    ),
    pytest.param(
        HeartbeatRequestV3("g", 1, "m", "i-1"),
        f"0000001c | 000c 0003 00000007 0003 636c69 | 0001 67 00000001 0001 6d {I1}",
        id="HeartbeatRequestV3",
    ),
    pytest.param(
        LeaveGroupRequestV3("g", [LeavingMember("m", "i-1"), LeavingMember("", None)]),
        f"""00000020 | 000d 0003 00000007 0003 636c69  # size 32 | LeaveGroup v3
            0001 67 00000002 0001 6d {I1} 0000 ffff   # group "g", [m as i-1, "" with a null instance]""",
        id="LeaveGroupRequestV3",
    ),
    pytest.param(
        SyncGroupRequestV3("g", 1, "m", "i-1", [SyncGroupAssignment("m", ASSIGNMENT_T01)]),
        f"""00000040 | 000e 0003 00000007 0003 636c69  # size 64 | SyncGroup v3
            0001 67 00000001 0001 6d {I1}             # group "g", generation 1, member "m", instance "i-1"
            00000001 0001 6d 00000019 {ASSIGN}        # [m: 25 bytes of assignment]""",
        id="SyncGroupRequestV3",
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
    pytest.param(
        JoinGroupResponseV5(
            0,
            0,
            1,
            "range",
            "m",
            "m",
            [JoinGroupMemberV5("m", "i-1", METADATA_T), JoinGroupMemberV5("d", None, b"")],
        ),
        f"""00000041 | 00000007                          # size 65
            00000000 0000 00000001 {RANGE}            # throttle 0, error 0, generation 1, protocol range
            0001 6d 0001 6d                           # leader "m", member "m"
            00000002 0001 6d {I1} 0000000d {META}     # members [m (static i-1): metadata,
            0001 64 ffff 00000000                     #          d (dynamic: null instance): no metadata]""",
        id="JoinGroupResponseV5",
    ),
    pytest.param(HeartbeatResponseV3(0, 82), "0000000a | 00000007 | 00000000 0052", id="HeartbeatResponseV3"),
    pytest.param(
        LeaveGroupResponseV3(0, 0, [LeftMember("m", "i-1", 0), LeftMember("", "i-2", 82)]),
        f"""00000021 | 00000007 | 00000000 0000        # size 33 | throttle 0, error 0
            00000002 0001 6d {I1} 0000                # [m (i-1): 0,
            0000 0003 692d32 0052                     #  "" (i-2): FENCED_INSTANCE_ID]""",
        id="LeaveGroupResponseV3",
    ),
    pytest.param(
        SyncGroupResponseV3(0, 0, ASSIGNMENT_T01),
        f"00000027 | 00000007 | 00000000 0000 00000019 {ASSIGN}",
        id="SyncGroupResponseV3",
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
