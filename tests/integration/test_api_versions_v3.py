"""ApiVersions v3 (KIP-511, the first flexible version) over a real socket: the broker answers it with the
same ranges as v0 (ApiVersions itself now 0-3), under a v0 response header, and kafka-python's own v3
request and response classes agree with it byte for byte. A real ZooKeeper and an in-process broker."""

from __future__ import annotations

import pytest

from tests.integration.test_coordinator_kafka_python import start_with_topic
from tests.support.server08 import Client08
from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS
from zkafka.protocol.api_versions import (
    ApiVersionRange,
    ApiVersionsRequestV0,
    ApiVersionsRequestV3,
    ApiVersionsResponseV3,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def client(start_broker08):
    client = Client08(start_with_topic(start_broker08).port)
    try:
        yield client
    finally:
        client.sock.close()


def test_v3_is_answered_with_the_v0_ranges_under_a_v0_response_header(client):
    v0 = client.call(ApiVersionsRequestV0())
    correlation_id = client.send(ApiVersionsRequestV3("zkafka-test", "0"))
    frame = client.read_frame()
    assert frame[4:8] == correlation_id.to_bytes(4, "big")  # then the body at once: no header tag buffer
    v3 = ApiVersionsResponseV3.decode(frame[8:])
    assert (v3.error, v3.throttle_time_ms, v3.unknown_tagged_fields) == (0, 0, ())
    assert [tuple(r[:3]) for r in v3.api_versions] == [tuple(r) for r in v0.api_versions]
    assert ApiVersionRange(API_VERSIONS, 0, 3) in v0.api_versions
    assert b"".join(v08.encode_response(correlation_id, v3)) == frame


def test_kafka_python_v3_request_and_response_classes_agree_with_the_broker(client):
    api_versions = pytest.importorskip("kafka.protocol.api_versions")
    request = api_versions.ApiVersionsRequest_v3("kafka-python", "2.3.3", {})
    header = request.build_header(99, "kp")  # header v2: the request is flexible
    body = header.encode() + request.encode()
    client.sock.sendall(len(body).to_bytes(4, "big") + body)
    frame = client.read_frame()
    assert frame[4:8] == (99).to_bytes(4, "big")
    theirs = api_versions.ApiVersionsResponse_v3.decode(frame[8:])
    assert theirs.error_code == 0
    ranges = {r[0]: (r[1], r[2]) for r in theirs.api_versions}
    assert ranges[API_VERSIONS] == (0, 3)
    v0 = client.call(ApiVersionsRequestV0()).api_versions
    assert ranges == {r.api_key: (r.min_version, r.max_version) for r in v0}


def test_a_version_past_v3_still_gets_unsupported_version_and_the_ranges_in_a_v0_response(client):
    header = bytes.fromhex("0012 0004 00000005 0003 636c69 00".replace(" ", ""))
    body = header + bytes.fromhex("01 01 00")  # two empty compact strings, no tags
    client.sock.sendall(len(body).to_bytes(4, "big") + body)
    answer = v08.decode_response(API_VERSIONS, 0, client.read_frame()[4:])
    assert answer.correlation_id == 5 and answer.body.error == 35
    assert ApiVersionRange(API_VERSIONS, 0, 3) in answer.body.api_versions
