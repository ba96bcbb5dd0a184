"""SaslHandshake (key 17) v0-v1 and SaslAuthenticate (key 36) v0-v2 (Kafka 0.10 and 1.0, KIP-43 and KIP-152).

SaslHandshake names the mechanism; after v0 the client sends raw SASL tokens, each framed by an int32 length
(0.10's way), after v1 it sends them in SaslAuthenticate requests. SaslAuthenticate v1 adds the session
lifetime (KIP-368), v2 is flexible. Declared once (``versioned``); pure.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import SASL_AUTHENTICATE, SASL_HANDSHAKE
from zkafka.protocol.types import Array, Bytes, Int16, Int64, String
from zkafka.protocol.versioned import Field, declare, pairs

SASL_HANDSHAKE_APIS = pairs(
    declare("SaslHandshakeRequest", SASL_HANDSHAKE, range(2), (Field("mechanism", String),)),
    declare(
        "SaslHandshakeResponse",
        SASL_HANDSHAKE,
        range(2),
        (Field("error", Int16), Field("mechanisms", Array(String))),
    ),
)
SASL_AUTHENTICATE_APIS = pairs(
    declare(
        "SaslAuthenticateRequest",
        SASL_AUTHENTICATE,
        range(3),
        (Field("auth_bytes", Bytes),),
        flexible_since=2,
    ),
    declare(
        "SaslAuthenticateResponse",
        SASL_AUTHENTICATE,
        range(3),
        (
            Field("error", Int16),
            Field("error_message", String, nullable_since=0),
            Field("auth_bytes", Bytes),
            Field("session_lifetime_ms", Int64, since=1),
        ),
        flexible_since=2,
    ),
)
SASL_APIS = (*SASL_HANDSHAKE_APIS, *SASL_AUTHENTICATE_APIS)
