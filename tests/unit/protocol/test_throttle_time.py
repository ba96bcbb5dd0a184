"""Where ``throttle_time_ms`` sits in each encoded response (from the schemas), and its write into an answer
already encoded: a request quota's throttle time, unless a byte quota put a longer one there."""

from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS, FETCH, HEARTBEAT, METADATA, OFFSET_DELETE, PRODUCE
from zkafka.protocol.api_versions import api_versions_response
from zkafka.protocol.throttle_time import set_throttle_time, throttle_time_position


def test_positions_follow_the_schemas():
    assert throttle_time_position(PRODUCE, 0) is None and throttle_time_position(METADATA, 2) is None
    assert throttle_time_position(FETCH, 1) == 8  # first, after size and correlation id
    assert throttle_time_position(HEARTBEAT, 4) == 9  # a flexible response header's tag buffer before it
    assert throttle_time_position(OFFSET_DELETE, 0) == 10  # after the int16 error code
    assert throttle_time_position(PRODUCE, 8) == -4  # last
    assert throttle_time_position(API_VERSIONS, 3) == -5  # last but the (empty) tag buffer
    assert throttle_time_position(PRODUCE, 99) is None


def decoded(api_key: int, version: int, parts: list):
    return v08.decode_response(api_key, version, b"".join(parts)[4:]).body


def test_written_into_leading_and_trailing_fields_keeping_a_longer_one():
    for version in (1, 4):  # v4: a flexible response header
        parts = v08.encode_response(5, v08.SCHEMAS[(HEARTBEAT, version)][1](0, 27))
        assert set_throttle_time(parts, throttle_time_position(HEARTBEAT, version), 300) == 300
        assert decoded(HEARTBEAT, version, parts)[:2] == (300, 27)
    for version in (1, 3):
        parts = v08.encode_response(5, api_versions_response(version, 0, v08.api_version_ranges()))
        assert set_throttle_time(parts, throttle_time_position(API_VERSIONS, version), 300) == 300
        answer = decoded(API_VERSIONS, version, parts)
        assert answer.throttle_time_ms == 300 and len(answer.api_versions) == len(v08.api_version_ranges())
        assert set_throttle_time(parts, throttle_time_position(API_VERSIONS, version), 200) == 300  # the longer kept
        assert decoded(API_VERSIONS, version, parts).throttle_time_ms == 300
