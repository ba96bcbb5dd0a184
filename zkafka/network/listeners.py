"""A broker's acceptors: one ``SocketServer`` per listener of ``listeners``, with TLS on SSL and SASL_SSL
listeners and a SASL authenticator on SASL_PLAINTEXT and SASL_SSL ones (Kafka's SocketServer per EndPoint)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zkafka.cluster.end_point import BrokerListeners
from zkafka.network.connection_quotas import ConnectionQuotas
from zkafka.network.request_channel import RequestChannel
from zkafka.network.sasl_authenticator import listener_authenticator
from zkafka.network.sasl_mechanisms import ScramCredential
from zkafka.network.server import RequestCodec, RequestHandler, RequestObserver, SocketServer
from zkafka.network.ssl_factory import server_context


def listener_servers(
    config: Any,
    codec: RequestCodec,
    handler: RequestHandler,
    observer: RequestObserver | None,
    scram_credentials: Callable[[str, str], ScramCredential | None],
) -> dict[str, SocketServer]:
    """The (not yet started) acceptor of every listener, by listener name, sharing one ConnectionQuotas; config errors name the key."""
    servers = {}
    quotas = ConnectionQuotas.from_config(config)  # shared: Kafka counts an address across listeners
    request_channel = RequestChannel()  # shared: Kafka's one RequestChannel a broker
    for end_point in BrokerListeners.from_config(config).bound:
        name, protocol = end_point.listener_name, end_point.security_protocol
        sasl = protocol.startswith("SASL_")
        servers[name] = SocketServer(
            end_point.host or "0.0.0.0",
            end_point.port,
            codec,
            handler,
            max_request_size=config["socket.request.max.bytes"],
            send_buffer=config["socket.send.buffer.bytes"],
            receive_buffer=config["socket.receive.buffer.bytes"],
            observer=observer,
            quotas=quotas,
            request_channel=request_channel,
            listener=name,
            security_protocol=protocol,
            ssl_context=server_context(config, name) if protocol in ("SSL", "SASL_SSL") else None,
            authenticator=listener_authenticator(config, name, scram_credentials, handler) if sasl else None,
        )
    return servers
