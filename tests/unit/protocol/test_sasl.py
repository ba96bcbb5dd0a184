"""Golden bytes of SaslHandshake v0/v1 and SaslAuthenticate v0-v2, both ways through the v08 codec.
Hand-assembled from Kafka 3.4's SaslHandshake/SaslAuthenticate JSON field tables: v1 of SaslAuthenticate adds
``session_lifetime_ms`` to the response, v2 is flexible. Correlation id 7, client id "cli"."""

from __future__ import annotations

import pytest

from tests.unit.protocol.test_v08_client import check_request, check_response
from zkafka.protocol.sasl import SASL_AUTHENTICATE_APIS, SASL_HANDSHAKE_APIS
from zkafka.protocol.versioned import make

HANDSHAKE = SASL_HANDSHAKE_APIS
AUTHENTICATE = SASL_AUTHENTICATE_APIS


def answered(version, error, message, auth_bytes):
    return make(
        AUTHENTICATE[version][1],
        error=error,
        error_message=message,
        auth_bytes=auth_bytes,
        session_lifetime_ms=0,
    )


REQUESTS = [
    pytest.param(
        HANDSHAKE[0][0]("PLAIN"),
        "00000014 | 0011 0000 00000007 0003 636c69 | 0005 504c41494e",
        id="SaslHandshakeRequestV0",
    ),
    pytest.param(
        HANDSHAKE[1][0]("PLAIN"),
        "00000014 | 0011 0001 00000007 0003 636c69 | 0005 504c41494e",
        id="SaslHandshakeRequestV1",
    ),
    pytest.param(
        AUTHENTICATE[0][0](b"\0a\0b"),
        "00000015 | 0024 0000 00000007 0003 636c69 | 00000004 00610062  # authzid '', user a, password b",
        id="SaslAuthenticateRequestV0",
    ),
    pytest.param(
        AUTHENTICATE[1][0](b"\0a\0b"),
        "00000015 | 0024 0001 00000007 0003 636c69 | 00000004 00610062",
        id="SaslAuthenticateRequestV1",
    ),
    pytest.param(
        AUTHENTICATE[2][0](b"\0a\0b"),
        "00000014 | 0024 0002 00000007 0003 636c69 00 | 05 00610062 00  # compact bytes (length + 1), no tags",
        id="SaslAuthenticateRequestV2",
    ),
]
RESPONSES = [
    pytest.param(
        HANDSHAKE[0][1](0, ["PLAIN"]),
        "00000011 | 00000007 | 0000 00000001 0005 504c41494e",
        id="SaslHandshakeResponseV0",
    ),
    pytest.param(
        HANDSHAKE[1][1](0, ["PLAIN"]),
        "00000011 | 00000007 | 0000 00000001 0005 504c41494e",
        id="SaslHandshakeResponseV1",
    ),
    pytest.param(
        answered(0, 58, "bad", b""),
        "0000000f | 00000007 | 003a 0003 626164 00000000  # SASL_AUTHENTICATION_FAILED, 'bad', no bytes",
        id="SaslAuthenticateResponseV0",
    ),
    pytest.param(
        answered(1, 0, None, b"v"),
        "00000015 | 00000007 | 0000 ffff 00000001 76 0000000000000000  # null message, lifetime 0",
        id="SaslAuthenticateResponseV1",
    ),
    pytest.param(
        answered(2, 0, None, b"v"),
        "00000013 | 00000007 00 | 0000 00 02 76 0000000000000000 00",
        id="SaslAuthenticateResponseV2",
    ),
]


@pytest.mark.parametrize("body, frame_hex", REQUESTS)
def test_request_golden_bytes(body, frame_hex):
    check_request(body, frame_hex)


@pytest.mark.parametrize("body, frame_hex", RESPONSES)
def test_response_golden_bytes(body, frame_hex):
    check_response(body, frame_hex)
