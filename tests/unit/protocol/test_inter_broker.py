"""Golden bytes of the inter-broker APIs (sheet §5): LeaderAndIsr, StopReplica, UpdateMetadata v0/v1,
ControlledShutdown v0 (no client id in its header) and v1. Hand-written frames, both directions."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.inter_broker import (
    Broker,
    BrokerEndPoints,
    ControlledShutdownRequestV0,
    ControlledShutdownRequestV1,
    ControlledShutdownResponseV0,
    ControlledShutdownResponseV1,
    EndPoint,
    LeaderAndIsrRequestV0,
    LeaderAndIsrResponseV0,
    ListenerBroker,
    ListenerEndPoint,
    PartitionState,
    PartitionStateEntry,
    RackedBroker,
    StopReplicaRequestV0,
    StopReplicaResponseV0,
    TopicPartition,
    TopicPartitionError,
    UpdateMetadataRequestV0,
    UpdateMetadataRequestV1,
    UpdateMetadataRequestV2,
    UpdateMetadataRequestV3,
    UpdateMetadataResponseV0,
    UpdateMetadataResponseV1,
    UpdateMetadataResponseV2,
    UpdateMetadataResponseV3,
)

STATES = [PartitionStateEntry("t", 0, PartitionState(2, 1, 3, [1, 2], 4, [1, 2]))]
STATE_HEX = """
    00000001 0001 74 00000000                  # [topic "t", partition 0,
    00000002 00000001 00000003                 #  controller epoch 2, leader 1, leader epoch 3,
    00000002 00000001 00000002                 #  isr [1, 2],
    00000004                                   #  zk version 4,
    00000002 00000001 00000002                 #  replicas [1, 2]]
"""

REQUESTS = [
    pytest.param(
        LeaderAndIsrRequestV0(1, 2, STATES, [Broker(1, "h", 9092)]),
        f"""00000057 | 0004 0000 00000007 0003 636c69  # size 87 | LeaderAndIsr v0
            00000001 00000002                         # controller 1, controller epoch 2
            {STATE_HEX}
            00000001 00000001 0001 68 00002384        # leaders [1 h:9092]""",
        id="LeaderAndIsrRequestV0",
    ),
    pytest.param(
        StopReplicaRequestV0(1, 2, 1, [TopicPartition("t", 0)]),
        """00000021 | 0005 0000 00000007 0003 636c69   # size 33 | StopReplica v0
           00000001 00000002 01                      # controller 1, epoch 2, delete partitions
           00000001 0001 74 00000000                 # [t-0]""",
        id="StopReplicaRequestV0",
    ),
    pytest.param(
        UpdateMetadataRequestV0(1, 2, STATES, [Broker(1, "h", 9092)]),
        f"""00000057 | 0006 0000 00000007 0003 636c69  # size 87 | UpdateMetadata v0
            00000001 00000002 {STATE_HEX}
            00000001 00000001 0001 68 00002384        # live brokers [1 h:9092]""",
        id="UpdateMetadataRequestV0",
    ),
    pytest.param(
        UpdateMetadataRequestV1(1, 2, STATES, [BrokerEndPoints(1, [EndPoint(9092, "h", 0)])]),
        f"""0000005d | 0006 0001 00000007 0003 636c69  # size 93 | UpdateMetadata v1
            00000001 00000002 {STATE_HEX}
            00000001 00000001                         # live brokers [1:
            00000001 00002384 0001 68 0000            #   [port 9092, host "h", PLAINTEXT]]""",
        id="UpdateMetadataRequestV1",
    ),
    pytest.param(
        UpdateMetadataRequestV2(1, 2, STATES, [RackedBroker(1, [EndPoint(9092, "h", 0)], "r1")]),
        f"""00000061 | 0006 0002 00000007 0003 636c69  # size 97 | UpdateMetadata v2 (0.10.0)
            00000001 00000002 {STATE_HEX}
            00000001 00000001                         # live brokers [1:
            00000001 00002384 0001 68 0000            #   [port 9092, host "h", PLAINTEXT],
            0002 7231                                 #   rack "r1"]""",
        id="UpdateMetadataRequestV2",
    ),
    pytest.param(
        UpdateMetadataRequestV3(
            1, 2, STATES, [ListenerBroker(1, [ListenerEndPoint(9093, "h", "IN", 3)], None)]
        ),
        f"""00000063 | 0006 0003 00000007 0003 636c69  # size 99 | UpdateMetadata v3 (0.10.2)
            00000001 00000002 {STATE_HEX}
            00000001 00000001                         # live brokers [1:
            00000001 00002385 0001 68 0002 494e 0003  #   [port 9093, host "h", listener "IN", SASL_SSL],
            ffff                                      #   no rack]""",
        id="UpdateMetadataRequestV3",
    ),
    pytest.param(
        ControlledShutdownRequestV1(1),
        "00000011 | 0007 0001 00000007 0003 636c69 | 00000001",
        id="ControlledShutdownRequestV1",
    ),
]

RESPONSES = [
    pytest.param(
        LeaderAndIsrResponseV0(0, [TopicPartitionError("t", 0, 13)]),
        "00000013 | 00000007 | 0000 | 00000001 0001 74 00000000 000d   # t-0: stale leader epoch",
        id="LeaderAndIsrResponseV0",
    ),
    pytest.param(
        StopReplicaResponseV0(0, [TopicPartitionError("t", 0, 0)]),
        "00000013 | 00000007 | 0000 | 00000001 0001 74 00000000 0000",
        id="StopReplicaResponseV0",
    ),
    pytest.param(UpdateMetadataResponseV0(11), "00000006 | 00000007 | 000b", id="UpdateMetadataResponseV0"),
    pytest.param(UpdateMetadataResponseV1(0), "00000006 | 00000007 | 0000", id="UpdateMetadataResponseV1"),
    pytest.param(UpdateMetadataResponseV2(0), "00000006 | 00000007 | 0000", id="UpdateMetadataResponseV2"),
    pytest.param(UpdateMetadataResponseV3(0), "00000006 | 00000007 | 0000", id="UpdateMetadataResponseV3"),
    pytest.param(
        ControlledShutdownResponseV0(0, [TopicPartition("t", 0)]),
        "00000011 | 00000007 | 0000 | 00000001 0001 74 00000000   # still leads t-0",
        id="ControlledShutdownResponseV0",
    ),
    pytest.param(
        ControlledShutdownResponseV1(8, []),
        "0000000a | 00000007 | 0008 | 00000000",
        id="ControlledShutdownResponseV1",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


def test_controlled_shutdown_v0_header_has_no_client_id():
    check_request(
        ControlledShutdownRequestV0(1),
        "0000000c | 0007 0000 00000007 | 00000001   # size 12 | key 7 v0, correlation 7, (no client id) broker 1",
        client_id=None,
    )


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)
