"""ApiVersions (0.10's key 18) on the 0.8/0.9 broker: v0-v3 list exactly the versions served (v3, flexible,
still under a v0 response header: KIP-511); a newer version (kafka-python 2.3 opens with v4) gets a v0-shaped
UNSUPPORTED_VERSION answer with the same ranges, as later brokers answer it. Golden bytes both ways."""

from __future__ import annotations

import pytest

from tests.support.wire import wire_bytes
from tests.unit.protocol.golden08 import hexbytes
from tests.unit.server.test_apis08 import Broker
from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS, OFFSET_COMMIT
from zkafka.protocol.api_versions import (
    ApiVersionRange,
    ApiVersionsRequestV0,
    ApiVersionsRequestV1,
    ApiVersionsRequestV3,
)

# kafka-python 2.3.3's opening request: header v2 (client id "cli", no tagged fields), body v4
# (compact strings "kafka-python" and "2.3.3", no tagged fields)
KAFKA_PYTHON_V4 = hexbytes("0012 0004 00000007 0003 636c69 00 | 0d 6b61666b612d707974686f6e 06 322e332e33 00")
# what a broker without a coordinator serves: Produce, Fetch, ListOffsets, Metadata, OffsetCommit and
# OffsetFetch v0, ApiVersions v0-v3
RANGES_08 = "00000007 | 0000 0000 0000 | 0001 0000 0000 | 0002 0000 0000 | 0003 0000 0009 | 0008 0000 0000 | 0009 0000 0000 | 0012 0000 0003"
# the same, compact (count + 1, a tag buffer after each range)
RANGES_08_V3 = "08 | 0000 0000 0000 00 | 0001 0000 0000 00 | 0002 0000 0000 00 | 0003 0000 0009 00 | 0008 0000 0000 00 | 0009 0000 0000 00 | 0012 0000 0003 00"
# an ApiVersions v3 request shaped as librdkafka opens with: header v2 (client id "cli", no tags), body v3
# (compact strings "librdkafka" and "2.16.0", no tags)
LIBRDKAFKA_V3 = hexbytes("0012 0003 00000007 0003 636c69 00 | 0b 6c69627264 6b61666b61 07 322e31362e30 00")


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): 0})
    try:
        yield b
    finally:
        b.log_manager.close()


def test_a_newer_api_versions_request_is_read_as_v0_keeping_its_version():
    request = v08.decode_request(KAFKA_PYTHON_V4)
    assert (request.api_key, request.api_version, request.correlation_id) == (API_VERSIONS, 4, 7)
    assert request.body == ApiVersionsRequestV0()


def test_v0_answers_the_served_ranges(broker):
    frame = v08.encode_request(ApiVersionsRequestV0(), 7, "cli")
    answer = wire_bytes(broker.apis.handle(v08.decode_request(frame[4:])))
    assert answer == hexbytes(f"00000034 | 00000007 | 0000 | {RANGES_08}")


def test_a_newer_version_gets_unsupported_version_and_the_ranges_in_a_v0_response(broker):
    answer = wire_bytes(broker.apis.handle(v08.decode_request(KAFKA_PYTHON_V4)))
    assert answer == hexbytes(f"00000034 | 00000007 | 0023 | {RANGES_08}")


def test_the_ranges_follow_the_handlers_a_coordinator_adds(broker):
    broker.apis._handlers[(OFFSET_COMMIT, 2)] = broker.apis.handle_offset_commit
    ranges = broker.call(ApiVersionsRequestV0()).api_versions
    assert ApiVersionRange(8, 0, 2) in ranges


def test_v1_answers_the_served_ranges_with_a_throttle_time(broker):
    frame = v08.encode_request(ApiVersionsRequestV1(), 7, "cli")
    answer = wire_bytes(broker.apis.handle(v08.decode_request(frame[4:])))
    assert answer == hexbytes(f"00000038 | 00000007 | 0000 | {RANGES_08} | 00000000")


def test_v3_answers_the_served_ranges_flexibly_under_a_v0_response_header(broker):
    request = v08.decode_request(LIBRDKAFKA_V3)
    assert request.body == ApiVersionsRequestV3("librdkafka", "2.16.0")
    answer = wire_bytes(broker.apis.handle(request))
    # size | correlation id (no tag buffer) | error | ranges | throttle time | no tagged fields
    assert answer == hexbytes(f"0000003d | 00000007 | 0000 | {RANGES_08_V3} | 00000000 | 00")


def test_answers_encoded_once_carry_each_requests_correlation_id(broker):
    answers = []
    for correlation_id in (7, 8, 7):
        frame = v08.encode_request(ApiVersionsRequestV1(), correlation_id, "cli")
        answers.append(wire_bytes(broker.apis.handle(v08.decode_request(frame[4:]))))
    assert answers[0] == answers[2] == hexbytes(f"00000038 | 00000007 | 0000 | {RANGES_08} | 00000000")
    assert answers[1] == hexbytes(f"00000038 | 00000008 | 0000 | {RANGES_08} | 00000000")
