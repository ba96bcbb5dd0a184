"""An independent check: kafka-python's ``kafka.protocol`` classes encode the same values to the same bytes as
ours, for every golden request and response it declares (the inter-broker APIs it does not), and its request
header matches ours."""

from __future__ import annotations

import pytest

from tests.unit.protocol import (
    test_fetch_versions,
    test_group_membership,
    test_group_versions,
    test_v08_client,
)
from tests.unit.protocol.golden08 import ASSIGNMENT_T01, CLIENT_ID, CORRELATION_ID, METADATA_T
from zkafka.protocol.group_membership import ConsumerProtocolAssignment, ConsumerProtocolMetadata
from zkafka.protocol.v08 import encode_request

kafka_protocol = pytest.importorskip("kafka.protocol")
from kafka.coordinator import protocol as kp_consumer  # noqa: E402
from kafka.protocol import (  # noqa: E402
    admin,
    api,
    api_versions,
    commit,
    fetch,
    find_coordinator,
    group,
    list_offsets,
    metadata,
    produce,
)

# our API name -> kafka-python's version lists
KAFKA_PYTHON = {
    "Produce": produce.ProduceRequest,
    "Fetch": fetch.FetchRequest,
    "ListOffsets": list_offsets.ListOffsetsRequest,
    "Metadata": metadata.MetadataRequest,
    "OffsetCommit": commit.OffsetCommitRequest,
    "OffsetFetch": commit.OffsetFetchRequest,
    "FindCoordinator": find_coordinator.FindCoordinatorRequest,
    "JoinGroup": group.JoinGroupRequest,
    "SyncGroup": group.SyncGroupRequest,
    "Heartbeat": group.HeartbeatRequest,
    "LeaveGroup": group.LeaveGroupRequest,
    "DescribeGroups": admin.DescribeGroupsRequest,
    "ListGroups": admin.ListGroupsRequest,
    "DeleteGroups": admin.DeleteGroupsRequest,
    "ApiVersions": api_versions.ApiVersionsRequest,
}


def plain(value):
    """Our values as kafka-python takes them: tuples of tuples, bytes for views."""
    if isinstance(value, memoryview):
        return bytes(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


def kafka_python_class(body):
    """kafka-python's class for one of our request or response bodies (None for the inter-broker APIs, and
    for the versions kafka-python does not declare: the flexible ones of the group APIs)."""
    name = type(body).__name__
    kind = "Request" if "Request" in name else "Response"
    requests = KAFKA_PYTHON.get(name.partition(kind)[0])
    if requests is None or body.API_VERSION >= len(requests) or body.SCHEMA.flexible:
        return None
    if name == "DescribeGroupsResponseV3":  # kafka-python reads authorized_operations as a set of bits
        return None
    request = requests[body.API_VERSION]
    return request if kind == "Request" else request.RESPONSE_TYPE


PARAMS = [
    p
    for p in (
        *test_v08_client.REQUESTS,
        *test_v08_client.RESPONSES,
        *test_group_membership.REQUESTS,
        *test_group_membership.RESPONSES,
        *test_group_versions.REQUESTS,
        *test_group_versions.RESPONSES,
        *test_fetch_versions.REQUESTS,
        *test_fetch_versions.RESPONSES,
    )
    if kafka_python_class(p.values[0]) is not None
]


@pytest.mark.parametrize("body", [p.values[0] for p in PARAMS], ids=[p.id for p in PARAMS])
def test_kafka_python_encodes_the_same_bytes(body):
    cls = kafka_python_class(body)
    theirs = cls(*plain(tuple(body)))
    assert theirs.encode() == body.encode()
    decoded = cls.decode(body.encode())
    assert decoded.encode() == body.encode()


def test_every_client_and_group_api_is_cross_checked():
    group_apis = 12 + 8  # 0.9's six group APIs and the four static membership versions, both directions
    # Kafka 3.4's other versions that kafka-python declares (its classic ones): JoinGroup v1-v5, SyncGroup,
    # Heartbeat and LeaveGroup v1-v2, DescribeGroups v1-v3, ListGroups v1-v2, DeleteGroups v0-v1,
    # FindCoordinator v1-v2, OffsetCommit v3-v7, OffsetFetch v2-v5; both directions but DescribeGroups v3's answer
    later = 2 * (5 + 2 + 2 + 2 + 3 + 2 + 2 + 2 + 5 + 4) - 1
    fetch = 2 * (10 + 5) + 1  # Fetch v2-v11 and ListOffsets v1-v5 both ways, and a v4 answer with aborted ones
    clients = len(test_v08_client.REQUESTS) + len(test_v08_client.RESPONSES)
    assert len(PARAMS) == clients + group_apis + later + fetch


def test_kafka_python_request_header_matches():
    body = test_v08_client.REQUESTS[0].values[0]
    theirs = produce.ProduceRequest[0](*plain(tuple(body)))
    header = api.RequestHeader(theirs, correlation_id=CORRELATION_ID, client_id=CLIENT_ID)
    header = header.encode()  # (its encode holds only a weak reference to the header)
    frame = header + theirs.encode()
    assert encode_request(body, CORRELATION_ID, CLIENT_ID) == len(frame).to_bytes(4, "big") + frame


def test_kafka_python_consumer_protocol_matches():
    metadata = kp_consumer.ConsumerProtocolMemberMetadata_v0(0, ["t"], b"")
    assignment = kp_consumer.ConsumerProtocolMemberAssignment_v0(0, [("t", [0, 1])], b"")
    assert metadata.encode() == ConsumerProtocolMetadata(0, ["t"], b"").encode() == METADATA_T
    assert assignment.encode() == ASSIGNMENT_T01
    assert ConsumerProtocolAssignment.decode(assignment.encode()).partitions[0].partitions == [0, 1]
