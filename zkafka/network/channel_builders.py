"""How a broker dials another (Kafka's ChannelBuilders and SaslClientAuthenticator): the listener named by
``inter.broker.listener.name`` / ``security.inter.broker.protocol``, with TLS on SSL and SASL_SSL (the
listener's ``ssl.*`` keys: its truststore to verify the other, its keystore as the client certificate, host
names checked unless ``ssl.endpoint.identification.algorithm`` is blank) and SASL on SASL_PLAINTEXT and
SASL_SSL (``sasl.mechanism.inter.broker.protocol``, the ``username``/``password`` of that mechanism's
``listener.name.<listener>.<mechanism>.sasl.jaas.config``, as Kafka's brokers log in).

The controller's channels, the replica fetchers and a controlled shutdown's request all dial this way.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zkafka.cluster.end_point import BrokerListeners, registered_end_point
from zkafka.errors import InvalidConfigError, SaslAuthenticationError
from zkafka.network.framing import FrameReader
from zkafka.network.sasl_mechanisms import SCRAM_HASHES, PlainSaslClient, ScramSaslClient, parse_jaas
from zkafka.network.send import send_bytes
from zkafka.network.ssl_factory import client_context, listener_setting
from zkafka.protocol import v08
from zkafka.protocol.errors import error_name
from zkafka.protocol.sasl import SASL_AUTHENTICATE_APIS, SASL_HANDSHAKE_APIS

MAX_SASL_RESPONSE = 1024 * 1024
_HANDSHAKE, _AUTHENTICATE = SASL_HANDSHAKE_APIS[1][0], SASL_AUTHENTICATE_APIS[1][0]


@dataclass(frozen=True)
class InterBrokerSecurity:
    """The listener brokers talk to each other on and how to secure a connection to it."""

    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    ssl_context: Any = None
    sasl_client: Callable[[], Any] | None = None  # a new mechanism client per connection

    @classmethod
    def from_config(cls, config: Any) -> InterBrokerSecurity:
        """From a broker's config; InvalidConfigError naming the key when a TLS or SASL setting is unusable."""
        listeners = BrokerListeners.from_config(config)
        name = listeners.inter_broker
        protocol = next(e.security_protocol for e in listeners.advertised if e.listener_name == name)
        context = client_context(config, name) if protocol in ("SSL", "SASL_SSL") else None
        sasl = _sasl_client(config, name) if protocol.startswith("SASL_") else None
        return cls(name, protocol, context, sasl)

    def address(self, registration: Any) -> tuple[str, int]:
        """Where to reach a registered broker: its end point of the inter-broker listener (its host and port
        when it has none, as a broker registered before listeners)."""
        end_point = registered_end_point(registration, self.listener)
        if end_point is None:
            return registration.host, registration.port
        return end_point.host, end_point.port

    def secure(self, sock: socket.socket, host: str) -> tuple[socket.socket, float | None]:
        """The TLS handshake and SASL authentication of a new connection to ``host``: the socket to use and
        the SASL session's lifetime in seconds (KIP-368; None: unlimited)."""
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(sock, server_hostname=host)
        lifetime_ms = 0
        if self.sasl_client is not None:
            lifetime_ms = authenticate(sock, self.sasl_client(), f"{host}:{sock.getpeername()[1]}")
        return sock, lifetime_ms / 1000.0 or None

    @property
    def plaintext(self) -> bool:
        return self.ssl_context is None and self.sasl_client is None


PLAINTEXT_INTER_BROKER = InterBrokerSecurity()


def _sasl_client(config: Any, listener: str) -> Callable[[], Any]:
    mechanism = config["sasl.mechanism.inter.broker.protocol"].upper()
    if mechanism != "PLAIN" and mechanism not in SCRAM_HASHES:
        raise InvalidConfigError(
            f"sasl.mechanism.inter.broker.protocol: {mechanism} is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"
        )
    if mechanism not in (m.upper() for m in listener_setting(config, listener, "sasl.enabled.mechanisms")):
        raise InvalidConfigError(
            f"sasl.mechanism.inter.broker.protocol: {mechanism} is not enabled on the {listener} listener"
        )
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    if key not in config.raw:
        raise InvalidConfigError(f"{key}: required for the brokers' {mechanism} login on {listener}")
    _, options = parse_jaas(key, config.raw[key])
    if not options.get("username") or "password" not in options:
        raise InvalidConfigError(f"{key}: names no username and password for the brokers' login")
    username, password = options["username"], options["password"]
    if mechanism == "PLAIN":
        return lambda: PlainSaslClient(username, password)
    return lambda: ScramSaslClient(mechanism, username, password)


def authenticate(sock: socket.socket, client: Any, peer: str) -> int:
    """SaslHandshake v1 then SaslAuthenticate v1 until the mechanism completes: the session lifetime the
    broker gave (ms, 0: unlimited); ConnectionError naming the peer and the server's message when refused
    (the caller's channel connects again later)."""
    reader = FrameReader(sock, MAX_SASL_RESPONSE)
    answer = _call(sock, reader, _HANDSHAKE(client.mechanism), 1)
    if answer.error:
        raise ConnectionError(
            f"SASL handshake with {peer}: {error_name(answer.error)} (the broker offers {answer.mechanisms})"
        )
    token, correlation_id = client.initial(), 2
    while True:
        answer = _call(sock, reader, _AUTHENTICATE(token), correlation_id)
        if answer.error:
            raise ConnectionError(f"SASL authentication to {peer} failed: {answer.error_message}")
        try:
            token = client.evaluate(bytes(answer.auth_bytes))
        except SaslAuthenticationError as exc:
            raise ConnectionError(f"SASL authentication to {peer} failed: {exc}") from None
        if client.complete:
            return answer.session_lifetime_ms
        correlation_id += 1


def _call(sock: socket.socket, reader: FrameReader, body: Any, correlation_id: int) -> Any:
    send_bytes(sock, v08.encode_request(body, correlation_id, "broker"))
    frame = reader.next_frame()
    if frame is None:
        raise ConnectionError("closed during SASL authentication")
    return v08.decode_response(body.API_KEY, body.API_VERSION, frame).body
