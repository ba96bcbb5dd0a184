"""The 0.8/0.9 header codec and registry: every schema has golden bytes, and hostile frames (unknown keys,
truncations, trailing bytes, huge counts, negative sizes) are InvalidRequestError without allocating."""

from __future__ import annotations

import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.protocol import (
    test_acls,
    test_api_versions,
    test_configs,
    test_fetch_versions,
    test_group_membership,
    test_group_versions,
    test_init_producer_id,
    test_inter_broker,
    test_leader_epoch,
    test_metadata,
    test_produce_versions,
    test_sasl,
    test_topic_admin,
    test_v08_client,
)
from tests.unit.protocol.golden08 import hexbytes
from zkafka.errors import InvalidRequestError
from zkafka.protocol.api_keys import API_VERSIONS, CONTROLLED_SHUTDOWN, FETCH, PRODUCE
from zkafka.protocol.api_versions import ApiVersionRange
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.produce import ProduceResponseV0
from zkafka.protocol.v08 import (
    CODEC,
    SCHEMAS,
    api_version_ranges,
    decode_request,
    decode_response,
    encode_request,
)

GOLDEN_REQUESTS = [
    *test_v08_client.REQUESTS,
    *test_api_versions.REQUESTS,
    *test_inter_broker.REQUESTS,
    *test_group_membership.REQUESTS,
    *test_group_versions.REQUESTS,
    *test_metadata.REQUESTS,
    *test_produce_versions.REQUESTS,
    *test_topic_admin.REQUESTS,
    *test_configs.REQUESTS,
    *test_fetch_versions.REQUESTS,
    *test_init_producer_id.REQUESTS,
    *test_leader_epoch.REQUESTS,
    *test_sasl.REQUESTS,
    *test_acls.REQUESTS,
]
GOLDEN_RESPONSES = [
    *test_v08_client.RESPONSES,
    *test_api_versions.RESPONSES,
    *test_inter_broker.RESPONSES,
    *test_group_membership.RESPONSES,
    *test_group_versions.RESPONSES,
    *test_metadata.RESPONSES,
    *test_produce_versions.RESPONSES,
    *test_topic_admin.RESPONSES,
    *test_configs.RESPONSES,
    *test_fetch_versions.RESPONSES,
    *test_init_producer_id.RESPONSES,
    *test_leader_epoch.RESPONSES,
    *test_sasl.RESPONSES,
    *test_acls.RESPONSES,
]
REQUEST_FRAMES = [hexbytes(p.values[1]) for p in GOLDEN_REQUESTS]


def test_every_registered_version_has_golden_request_and_response_bytes():
    requests = {(p.values[0].API_KEY, p.values[0].API_VERSION) for p in GOLDEN_REQUESTS}
    requests.add((CONTROLLED_SHUTDOWN, 0))  # its own test: the header without a client id
    responses = {(p.values[0].API_KEY, p.values[0].API_VERSION) for p in GOLDEN_RESPONSES}
    assert requests == set(SCHEMAS) == responses
    # 0.9.0.1's 25, ApiVersions v1-v3, and Kafka 3.4's other group and offset versions: FindCoordinator 4,
    # JoinGroup 9, SyncGroup 5, Heartbeat 4, LeaveGroup 5, OffsetCommit 6, OffsetFetch 7, DescribeGroups 5,
    # ListGroups 4, DeleteGroups 3, OffsetDelete 1; Metadata v1-v9 and UpdateMetadata v2-v3 (0.10.0, 0.10.2);
    # CreateTopics 6, DeleteTopics 5, CreatePartitions 3; Produce v2-v8 7; DescribeConfigs 5, AlterConfigs 3,
    # DeleteRecords 3; Fetch v2-v11 10, ListOffsets v1-v5 5; InitProducerId 5; OffsetForLeaderEpoch 5;
    # SaslHandshake 2, SaslAuthenticate 3; DescribeAcls, CreateAcls, DeleteAcls 4 each
    assert len(SCHEMAS) == 7 + 25 + 3 + 4 + 9 + 5 + 4 + 5 + 6 + 7 + 5 + 4 + 3 + 1 + 9 + 2 + 6 + 5 + 3 + 5 + 3 + 3 + 10 + 5 + 5 + 5 + 2 + 3 + 12


def test_registry_pairs_each_request_with_its_response():
    for (key, version), (request, response) in SCHEMAS.items():
        assert (
            (request.API_KEY, request.API_VERSION)
            == (response.API_KEY, response.API_VERSION)
            == (key, version)
        )
        assert request.RESPONSE is response
        assert request.__name__.endswith(f"RequestV{version}") and response.__name__.endswith(
            f"ResponseV{version}"
        )


def test_api_version_ranges_list_0_9_0_1_plus_api_versions_and_kafka_3_4_group_apis_and_metadata():
    ranges = {r.api_key: (r.min_version, r.max_version) for r in api_version_ranges()}
    assert ranges == {
        0: (0, 8), 1: (0, 11), 2: (0, 5), 3: (0, 9), 4: (0, 0), 5: (0, 0), 6: (0, 3), 7: (0, 1), 8: (0, 8),
        9: (0, 8), 10: (0, 4), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 4), 17: (0, 1), 18: (0, 3),
        19: (0, 5), 20: (0, 4), 21: (0, 2), 22: (0, 4), 23: (0, 4), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 33: (0, 2), 36: (0, 2), 37: (0, 2), 42: (0, 2),
        47: (0, 0),
    }  # fmt: skip
    assert all(isinstance(r, ApiVersionRange) for r in api_version_ranges())


def test_codec_object_serves_the_network_layer():
    frame = encode_request(MetadataRequestV0(["t"]), 42, None)
    request = CODEC.decode_request(memoryview(frame)[4:])
    assert request.name == "MetadataRequestV0" and request.client_id is None and request.correlation_id == 42
    assert b"".join(CODEC.encode_response(42, ProduceResponseV0([])))[4:8] == (42).to_bytes(4, "big")


@pytest.mark.parametrize(
    "frame, message",
    [
        (hexbytes("03e8 0000 00000001 0000"), "unknown API (key 1000)"),
        (hexbytes("0011 0002 00000001 0000"), "SaslHandshake (key 17) version 2 is not supported"),
        (hexbytes("0000 0009 00000001 0000"), "Produce (key 0) version 9 is not supported"),
        (hexbytes("0007 0002 00000001 0000"), "ControlledShutdown (key 7) version 2"),
        (hexbytes("ffff 0000 00000001 0000"), "key -1"),
    ],
)
def test_unknown_api_key_or_version(frame, message):
    with pytest.raises(InvalidRequestError, match=re.escape(message)):
        decode_request(frame)


@pytest.mark.parametrize("frame", REQUEST_FRAMES, ids=[p.id for p in GOLDEN_REQUESTS])
def test_every_truncation_of_a_request_is_invalid(frame):
    body = frame[4:]
    for cut in range(len(body)):
        with pytest.raises(InvalidRequestError):
            decode_request(body[:cut])


@pytest.mark.parametrize("frame", REQUEST_FRAMES, ids=[p.id for p in GOLDEN_REQUESTS])
def test_trailing_bytes_after_a_request_are_invalid(frame):
    with pytest.raises(InvalidRequestError, match="1 unexpected bytes"):
        decode_request(frame[4:] + b"\x00")


def test_malformed_body_error_names_the_request_and_correlation_id():
    with pytest.raises(InvalidRequestError, match=r"FetchRequestV0 \(correlation id 9\) is malformed"):
        decode_request(hexbytes("0001 0000 00000009 0000 | ffffffff 00000064"))


@pytest.mark.parametrize(
    "frame",
    [
        # Metadata: 2^31 - 1 topics in 4 bytes
        hexbytes("0003 0000 00000001 0000 | 7fffffff"),
        # Produce: one topic with 2^31 - 1 partitions
        hexbytes("0000 0000 00000001 0000 | 0001 000003e8 | 00000001 0001 74 | 7fffffff 00000000"),
        # Fetch: a topic count that only a 64 GiB frame could hold
        hexbytes("0001 0000 00000001 0000 | ffffffff 00000064 00000001 | 40000000"),
        # ListOffsets: a partition's offset list in a response-shaped count
        hexbytes("0002 0000 00000001 0000 | ffffffff 00000001 0001 74 7ffffff0"),
    ],
)
def test_huge_array_counts_fail_before_allocating(frame):
    tracemalloc.start()
    try:
        with pytest.raises(InvalidRequestError, match="longer than the"):
            decode_request(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


@pytest.mark.parametrize(
    "frame, message",
    [
        # Produce: message set size -1
        (hexbytes("0000 0000 00000001 0000 | 0001 000003e8 00000001 0001 74 00000001 00000000 ffffffff"), "negative message set size -1"),
        # Fetch v1: topic count -2
        (hexbytes("0001 0001 00000001 0000 | ffffffff 00000064 00000001 fffffffe"), "negative array count -2"),
        # Metadata: topic count -1 (arrays are not nullable here)
        (hexbytes("0003 0000 00000001 0000 | ffffffff"), "negative array count -1"),
        # OffsetCommit v0: string longer than the frame
        (hexbytes("0008 0000 00000001 0000 | 7fff 67"), "runs past the end"),
    ],
)  # fmt: skip
def test_negative_and_oversized_lengths(frame, message):
    with pytest.raises(InvalidRequestError, match=message):
        decode_request(frame)


def test_a_message_set_longer_than_the_frame_is_invalid():
    frame = hexbytes(
        "0000 0000 00000001 0000 | 0001 000003e8 00000001 0001 74 00000001 00000000 00000010 0000"
    )
    with pytest.raises(InvalidRequestError, match="runs past the end"):
        decode_request(frame)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(SCHEMAS)), st.binary(max_size=64))
def test_random_bodies_parse_or_raise_invalid_request(key_version, body):
    key, version = key_version
    frame = key.to_bytes(2, "big", signed=True) + version.to_bytes(2, "big") + b"\x00\x00\x00\x01" + body
    try:
        request = decode_request(frame)
    except InvalidRequestError:
        return
    assert (request.api_key, request.api_version) == key_version


def test_decode_response_checks_the_frame():
    with pytest.raises(InvalidRequestError, match="no response schema for API key 48"):
        decode_response(48, 0, b"\x00\x00\x00\x01")
    with pytest.raises(InvalidRequestError, match="ProduceResponseV0 is malformed"):
        decode_response(PRODUCE, 0, hexbytes("00000001 00000001 0001"))
    with pytest.raises(InvalidRequestError, match="unexpected bytes"):
        decode_response(FETCH, 0, hexbytes("00000001 00000000 00"))
    assert decode_response(API_VERSIONS, 0, hexbytes("00000003 0023 00000000")).body.error == 35
