"""Golden bytes of ApiVersions v1-v3 and of the flexible headers (request header v2, response header v1),
both ways through the v08 codec, and cross-checked with kafka-python's classes.

Hand-assembled from Kafka's message JSON field tables (ApiVersionsRequest/Response, RequestHeader,
ResponseHeader): v1/v2 requests are empty; v3's names the client software in compact strings and ends with a
tag buffer, after a v2 header (the client id keeps its ``int16`` length, then a tag buffer). The responses
add ``throttle_time_ms``; v3's array is compact, each element and the body end with a tag buffer, and the
features travel as tagged fields 0-3. Every ApiVersions response keeps the v0 header (KIP-511).
Correlation id 7, client id "cli".
"""

from __future__ import annotations

import pytest

from tests.unit.protocol.golden08 import CLIENT_ID, CORRELATION_ID, hexbytes
from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol import v08
from zkafka.protocol.api_keys import METADATA, api_struct
from zkafka.protocol.api_versions import (
    ApiVersionRange,
    ApiVersionsRequestV1,
    ApiVersionsRequestV2,
    ApiVersionsRequestV3,
    ApiVersionsResponseV1,
    ApiVersionsResponseV2,
    ApiVersionsResponseV3,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)
from zkafka.protocol.types import Int16, String

Range3 = ApiVersionsResponseV3.SCHEMA.fields[1][1].item.record  # ApiVersionRange the flexible way
Supported = SupportedFeatureKey.SCHEMA.flexible_version().record
Finalized = FinalizedFeatureKey.SCHEMA.flexible_version().record

REQUESTS = [
    pytest.param(
        ApiVersionsRequestV1(),
        "0000000d | 0012 0001 00000007 0003 636c69    # empty body",
        id="ApiVersionsRequestV1",
    ),
    pytest.param(
        ApiVersionsRequestV2(),
        "0000000d | 0012 0002 00000007 0003 636c69    # empty body",
        id="ApiVersionsRequestV2",
    ),
    pytest.param(
        ApiVersionsRequestV3("zkafka", "1.0"),
        """0000001a | 0012 0003 00000007 0003 636c69 | 00  # header v2: int16-length client id, no tags
           07 7a6b61666b61 | 04 312e30 | 00                # "zkafka", "1.0" (length + 1), no tags""",
        id="ApiVersionsRequestV3",
    ),
]

RESPONSES = [
    pytest.param(
        ApiVersionsResponseV1(0, [ApiVersionRange(18, 0, 3)], 0),
        "00000014 | 00000007 | 0000 | 00000001 0012 0000 0003 | 00000000",
        id="ApiVersionsResponseV1",
    ),
    pytest.param(
        ApiVersionsResponseV2(0, [ApiVersionRange(18, 0, 3)], 100),
        "00000014 | 00000007 | 0000 | 00000001 0012 0000 0003 | 00000064",
        id="ApiVersionsResponseV2",
    ),
    pytest.param(
        ApiVersionsResponseV3(0, [Range3(0, 0, 1), Range3(18, 0, 3)], 0),
        """0000001a | 00000007                       # header v0: no tag buffer (KIP-511)
           0000 | 03 0000 0000 0001 00 | 0012 0000 0003 00   # two ranges, each with its tag buffer
           00000000 | 00                           # throttle time, no tagged fields""",
        id="ApiVersionsResponseV3",
    ),
    pytest.param(
        ApiVersionsResponseV3(
            0, [Range3(18, 0, 3)], 0, [Supported("x", 0, 1)], 5, [Finalized("x", 1, 1)], True
        ),
        """00000034 | 00000007 | 0000 | 02 0012 0000 0003 00 | 00000000
           04                                      # four tagged fields, in tag order
           00 08 | 02 0278 0000 0001 00            # 0 supported_features [("x", 0, 1)]
           01 08 | 0000000000000005                # 1 finalized_features_epoch 5
           02 08 | 02 0278 0001 0001 00            # 2 finalized_features [("x", max 1, min 1)]
           03 01 | 01                              # 3 zk_migration_ready""",
        id="ApiVersionsResponseV3 features",
    ),
]


@pytest.mark.parametrize(("body", "frame_hex"), REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize(("body", "frame_hex"), RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)


def test_a_flexible_request_header_skips_the_tags_it_does_not_know():
    frame = hexbytes("0012 0003 00000007 0003 636c69 | 01 05 02 abcd | 07 7a6b61666b61 04 312e30 00")
    request = v08.decode_request(frame)
    assert (request.client_id, request.body) == ("cli", ApiVersionsRequestV3("zkafka", "1.0"))


def test_kafka_python_reads_and_writes_the_same_v3_bytes():
    api_versions = pytest.importorskip("kafka.protocol.api_versions")
    theirs = api_versions.ApiVersionsRequest_v3("zkafka", "1.0", {})
    header = theirs.build_header(CORRELATION_ID, CLIENT_ID)  # its v2 header: FLEXIBLE_VERSION
    frame = header.encode() + theirs.encode()
    assert v08.encode_request(ApiVersionsRequestV3("zkafka", "1.0"), CORRELATION_ID, CLIENT_ID) == (
        len(frame).to_bytes(4, "big") + frame
    )
    body = ApiVersionsResponseV3(0, [Range3(0, 0, 1), Range3(18, 0, 3)], 0).encode()
    decoded = api_versions.ApiVersionsResponse_v3.decode(body)
    assert [tuple(r[:3]) for r in decoded.api_versions] == [(0, 0, 1), (18, 0, 3)]
    assert decoded.encode() == body


def test_a_v3_response_is_written_from_the_classic_ranges_too():
    body = ApiVersionsResponseV3(0, [ApiVersionRange(18, 0, 3)], 0)
    assert body.encode() == hexbytes("0000 | 02 0012 0000 0003 00 | 00000000 | 00")


def test_a_v3_response_keeps_the_tagged_fields_it_does_not_know():
    body = hexbytes("0000 | 01 | 00000000 | 02 | 01 08 0000000000000005 | 07 02 beef")
    response = ApiVersionsResponseV3.decode(body)
    assert response.finalized_features_epoch == 5 and response.supported_features == ()
    assert response.unknown_tagged_fields == ((7, b"\xbe\xef"),)
    assert response.encode() == body


def test_header_versions_follow_the_body_declarations():
    assert [v08.request_header_version(c) for c in (ApiVersionsRequestV1, ApiVersionsRequestV3)] == [1, 2]
    assert v08.response_header_version(ApiVersionsResponseV3) == 0  # KIP-511
    assert v08.request_header_version(v08.SCHEMAS[(7, 0)][0]) == 0  # ControlledShutdown v0: no client id


FlexibleRequest = api_struct("MetadataRequestV9", METADATA, 9, ("topic", String), flexible=True)
FlexibleResponse = api_struct("MetadataResponseV9", METADATA, 9, ("error", Int16), flexible=True)


def test_a_flexible_response_other_than_api_versions_has_a_tag_buffer_in_its_header():
    assert v08.response_header_version(FlexibleResponse) == 1
    frame = b"".join(v08.encode_response(CORRELATION_ID, FlexibleResponse(0)))
    assert frame == hexbytes("00000008 | 00000007 | 00 | 0000 | 00")


def test_a_flexible_request_has_the_old_client_id_and_a_tag_buffer_in_its_header():
    frame = v08.encode_request(FlexibleRequest("t"), CORRELATION_ID, None)
    assert frame == hexbytes("0000000e | 0003 0009 00000007 | ffff | 00 | 02 74 | 00")
