"""The server side of SASL on a SASL_PLAINTEXT or SASL_SSL connection (Kafka's SaslServerAuthenticator), run
before the connection's first other request.

The client may ask ApiVersions, then sends SaslHandshake naming a mechanism of ``sasl.enabled.mechanisms``.
After a v0 handshake the SASL tokens travel raw, each framed by an int32 length (0.10's way; a failure closes
the connection); after v1 they travel in SaslAuthenticate requests, and a failure is answered with
SASL_AUTHENTICATION_FAILED and its message before the connection closes. Any other request before the
exchange is complete closes the connection (ILLEGAL_SASL_STATE, as Kafka).

KIP-368: with ``connections.max.reauth.ms`` above 0 the final SaslAuthenticate (v1+) answer carries that
session lifetime; the client may re-authenticate on the same connection (SaslHandshake v1 again, the same
principal) before it ends, and a connection whose session ended is closed at its next other request.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Mapping
from typing import Any

from zkafka.config import csv_key, long_key, str_key
from zkafka.errors import InvalidConfigError
from zkafka.network.framing import FrameReader
from zkafka.network.sasl_mechanisms import (
    SCRAM_HASHES,
    PlainSaslServer,
    SaslAuthenticationError,
    ScramCredential,
    ScramSaslServer,
    plain_users,
)
from zkafka.network.send import send_bytes, write_parts
from zkafka.network.server import SessionExpired
from zkafka.network.ssl_factory import listener_setting
from zkafka.protocol import v08
from zkafka.protocol.api_keys import API_VERSIONS, SASL_AUTHENTICATE, SASL_HANDSHAKE
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.sasl import SASL_AUTHENTICATE_APIS, SASL_HANDSHAKE_APIS
from zkafka.protocol.types import Int32
from zkafka.protocol.versioned import make

log = logging.getLogger(__name__)

SASL_KEYS = (
    csv_key("sasl.enabled.mechanisms", ["GSSAPI"]),
    str_key("sasl.mechanism.inter.broker.protocol", "GSSAPI"),
    long_key("connections.max.reauth.ms", 0, 0),
)
MechanismFactory = Callable[[], Any]


class IllegalSaslState(Exception):
    """A request that is not part of the SASL exchange arrived before it completed: the connection closes."""


class SaslServerAuthenticator:
    """Authenticates one connection at a time with the listener's mechanisms; ``api_versions`` answers an
    ApiVersions request asked before the handshake; ``reauth_ms``: ``connections.max.reauth.ms``."""

    def __init__(
        self,
        mechanisms: Mapping[str, MechanismFactory],
        api_versions: Callable[[Any], Any],
        reauth_ms: int = 0,
    ) -> None:
        self.mechanisms = dict(mechanisms)
        self.api_versions = api_versions
        self.reauth_ms = reauth_ms

    def session_end(self) -> float | None:
        """When a session authenticated now ends (``time.monotonic``), None when it never does."""
        return time.monotonic() + self.reauth_ms / 1000.0 if self.reauth_ms else None

    def authenticate(self, sock: socket.socket, reader: FrameReader, handshake: Any = None) -> str:
        """The authenticated principal (``User:<name>``); SaslAuthenticationError or IllegalSaslState otherwise.
        ``handshake``: a SaslHandshake already read (a re-authentication)."""
        request = handshake
        while request is None:
            request = _next_request(reader)
            if request.api_key == API_VERSIONS:
                write_parts(sock, self.api_versions(request))
                request = None
            elif request.api_key != SASL_HANDSHAKE:
                raise IllegalSaslState(f"{request.name} before SASL authentication")
        mechanism = request.body.mechanism
        enabled = sorted(self.mechanisms)
        error = ErrorCode.NONE if mechanism in self.mechanisms else ErrorCode.UNSUPPORTED_SASL_MECHANISM
        response_class = SASL_HANDSHAKE_APIS[request.api_version][1]
        write_parts(sock, v08.encode_response(request.correlation_id, response_class(error, enabled)))
        if error:
            raise SaslAuthenticationError(f"unsupported SASL mechanism {mechanism}")
        server = self.mechanisms[mechanism]()
        if request.api_version == 0:
            _exchange_raw_tokens(sock, reader, server)
        else:
            _exchange_authenticate_requests(sock, reader, server, self.reauth_ms)
        return f"User:{server.authorization_id}"

    def check_session(
        self,
        sock: socket.socket,
        reader: FrameReader,
        request: Any,
        principal: str,
        end: float | None,
        drain: Callable[[], Any] | None = None,
    ) -> float | None:
        """Before serving ``request``: a SaslHandshake v1+ while re-authentication is on re-authenticates (the
        same principal; SaslAuthenticationError otherwise; ``drain`` first writes the answers still queued)
        and returns the new session end; any other request after the session's end raises SessionExpired;
        else None (serve it)."""
        if end is None:
            return None
        if request.api_key == SASL_HANDSHAKE and request.api_version >= 1:
            if drain is not None:
                drain()
            again = self.authenticate(sock, reader, handshake=request)
            if again != principal:
                raise SaslAuthenticationError(f"re-authenticated as {again}, not {principal}")
            log.debug("%s re-authenticated", principal)
            return self.session_end()
        if time.monotonic() >= end:
            raise SessionExpired(f"{request.name} after the session of {principal} expired")
        return None


def _next_request(reader: FrameReader) -> Any:
    frame = reader.next_frame()
    if frame is None:
        raise ConnectionError("closed during SASL authentication")
    return v08.decode_request(frame)


def _exchange_raw_tokens(sock: socket.socket, reader: FrameReader, server: Any) -> None:
    while not server.complete:
        frame = reader.next_frame()
        if frame is None:
            raise ConnectionError("closed during SASL authentication")
        challenge = server.evaluate(bytes(frame))
        send_bytes(sock, Int32.fmt.pack(len(challenge)) + challenge)


def _exchange_authenticate_requests(
    sock: socket.socket, reader: FrameReader, server: Any, reauth_ms: int
) -> None:
    while not server.complete:
        request = _next_request(reader)
        if request.api_key != SASL_AUTHENTICATE:
            raise IllegalSaslState(f"{request.name} during SASL authentication")
        response_class = SASL_AUTHENTICATE_APIS[request.api_version][1]
        try:
            challenge = server.evaluate(bytes(request.body.auth_bytes))
        except SaslAuthenticationError as exc:
            body = make(
                response_class,
                error=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=str(exc),
                auth_bytes=b"",
                session_lifetime_ms=0,
            )
            write_parts(sock, v08.encode_response(request.correlation_id, body))
            raise
        body = make(
            response_class,
            error=ErrorCode.NONE,
            error_message=None,
            auth_bytes=challenge,
            session_lifetime_ms=reauth_ms if server.complete else 0,
        )
        write_parts(sock, v08.encode_response(request.correlation_id, body))


def listener_authenticator(
    config: Any,
    listener: str,
    scram_credentials: Callable[[str, str], ScramCredential | None],
    api_versions: Callable[[Any], Any],
) -> SaslServerAuthenticator:
    """The authenticator of a SASL listener from ``sasl.enabled.mechanisms`` (or its ``listener.name.<l>.``
    form) and each mechanism's ``listener.name.<l>.<mechanism>.sasl.jaas.config``; errors name the key."""
    mechanisms: dict[str, MechanismFactory] = {}
    for name in listener_setting(config, listener, "sasl.enabled.mechanisms"):
        name = name.upper()
        if name == "PLAIN":
            key = f"listener.name.{listener.lower()}.plain.sasl.jaas.config"
            if key not in config.raw:
                raise InvalidConfigError(f"{key}: required by PLAIN on the {listener} listener")
            users = plain_users(key, config.raw[key])
            mechanisms[name] = lambda users=users: PlainSaslServer(users)
        elif name in SCRAM_HASHES:
            mechanisms[name] = lambda name=name: ScramSaslServer(
                name, lambda user: scram_credentials(name, user)
            )
        else:
            raise InvalidConfigError(
                f"sasl.enabled.mechanisms: {name} is not served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
            )
    reauth_ms = listener_setting(config, listener, "connections.max.reauth.ms")
    return SaslServerAuthenticator(mechanisms, api_versions, reauth_ms)


class SaslApis:
    """SaslHandshake and SaslAuthenticate as the request handler sees them: only after authentication (or on
    a listener without SASL), so answered ILLEGAL_SASL_STATE, as KafkaApis does."""

    def handlers(self) -> dict[tuple[int, int], Callable[[Any], Any]]:
        out: dict[tuple[int, int], Callable[[Any], Any]] = {}
        for request_class, _ in SASL_HANDSHAKE_APIS + SASL_AUTHENTICATE_APIS:
            out[(request_class.API_KEY, request_class.API_VERSION)] = self.handle_illegal_state
        return out

    def handle_illegal_state(self, request: Any) -> list:
        response_class = request.body.RESPONSE
        if request.api_key == SASL_HANDSHAKE:
            body = response_class(ErrorCode.ILLEGAL_SASL_STATE, [])
        else:
            message = "SaslAuthenticate request received after successful authentication"
            body = make(
                response_class,
                error=ErrorCode.ILLEGAL_SASL_STATE,
                error_message=message,
                auth_bytes=b"",
                session_lifetime_ms=0,
            )
        return v08.encode_response(request.correlation_id, body)
