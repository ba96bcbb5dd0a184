"""A blocking channel to one 0.8 broker: the network layer's BlockingChannel with the 0.8 request header.

Requests are the body classes of ``zkafka.protocol.v08`` (``FetchRequestV0(...)``); each goes out with a fresh
correlation id and the channel's client id, and the answer's correlation id must match (a mismatch means the
stream is out of step: the connection is dropped). Produce with ``acks=0`` has no answer. An answer throttled by
a client quota (its ``throttle_time_ms``) holds the channel's next request back as long, as Kafka's clients do
(KIP-219): the broker reads nothing more on the connection meanwhile, and a request sent into it would wait
there, its timeout running.
"""

from __future__ import annotations

import time
from typing import Any

from zkafka.errors import KafkaError, error_for_code
from zkafka.network.client import BlockingChannel
from zkafka.protocol.api_keys import API_VERSIONS, PRODUCE
from zkafka.protocol.errors import error_name
from zkafka.protocol.v08 import decode_response, encode_request


class CorrelationIdMismatchError(KafkaError, ConnectionError):
    """A response answered another request than the one waiting for it; the connection is dropped."""


class ClientCodec08:
    """The client side of the 0.8 framing, for ``BlockingChannel``."""

    def __init__(self, client_id: str = "", api_version_request: bool = True) -> None:
        self.client_id = client_id
        self.api_version_request = api_version_request  # False: speak 0.8.2's versions without asking
        self.api_versions: dict[int, int] | None = None  # api key -> version, once negotiated
        self.throttled_until = 0.0  # monotonic time until which the broker reads nothing more (KIP-219)

    def encode_request(self, request: Any, correlation_id: int) -> bytes:
        return encode_request(request, correlation_id, self.client_id)

    def expects_response(self, request: Any) -> bool:
        return not (request.API_KEY == PRODUCE and request.acks == 0)

    def decode_response(self, request: Any, correlation_id: int, frame: memoryview) -> Any:
        try:
            response = decode_response(request.API_KEY, request.API_VERSION, frame)
        except KafkaError:
            if request.API_KEY != API_VERSIONS or request.API_VERSION == 0:
                raise
            response = decode_response(API_VERSIONS, 0, frame)  # a version refused comes in a v0 answer
        if response.correlation_id != correlation_id:
            raise CorrelationIdMismatchError(
                f"response with correlation id {response.correlation_id} to {type(request).__name__} "
                f"sent with {correlation_id}"
            )
        throttle_ms = getattr(response.body, "throttle_time_ms", 0)
        if throttle_ms > 0:
            self.throttled_until = time.monotonic() + throttle_ms / 1000.0
        return response.body


def broker_channel(
    host: str,
    port: int,
    client_id: str = "",
    *,
    socket_timeout_ms: int = 30000,
    connect_timeout_ms: int | None = None,
    send_buffer: int | None = None,
    receive_buffer: int | None = None,
    api_version_request: bool = True,
    secure: Any = None,
) -> BlockingChannel:
    """A channel to ``host:port`` speaking 0.8 as ``client_id`` (opened on first use). A timeout of 0 or less
    waits as long as it takes. With ``api_version_request`` the versions it speaks are negotiated
    (``client08.api_versions``); without, they are 0.8.2's. ``secure``: TLS and SASL for each new connection
    (``InterBrokerSecurity.secure``)."""
    timeout = socket_timeout_ms / 1000.0 if socket_timeout_ms > 0 else None
    connect = timeout if connect_timeout_ms is None else max(connect_timeout_ms, 1) / 1000.0
    return BlockingChannel(
        host,
        port,
        ClientCodec08(client_id, api_version_request),
        socket_timeout=timeout,
        connect_timeout=connect,
        send_buffer=send_buffer,
        receive_buffer=receive_buffer,
        secure=secure,
    )


def check_error(code: int, what: str) -> None:
    """Raise the exception of a non-zero wire error code, its message naming ``what`` failed and the code."""
    if code:
        raise error_for_code(code)(f"{what}: {error_name(code)} (error code {code})")
