"""How a client reaches a secured listener, from its properties (Kafka's client security configs):
``security.protocol`` PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; ``ssl.truststore.location`` (a PEM bundle:
``ssl.truststore.type`` PEM, other types are refused, as is a ``ssl.truststore.password``; host names checked unless
``ssl.endpoint.identification.algorithm`` is blank); ``sasl.mechanism`` PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
with the ``username`` and ``password`` of ``sasl.jaas.config``. A connection is secured as the brokers secure
theirs (``InterBrokerSecurity``). The tools' ``--command-config`` files and the group consumer's config both
say it so."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from zkafka.cluster.end_point import SECURITY_PROTOCOLS
from zkafka.config import str_key
from zkafka.errors import InvalidConfigError
from zkafka.network.channel_builders import InterBrokerSecurity
from zkafka.network.sasl_mechanisms import SCRAM_HASHES, PlainSaslClient, ScramSaslClient, parse_jaas
from zkafka.network.ssl_factory import PEM, check_pem_stores

# The keys, for a client's config table.
CLIENT_SECURITY_KEYS = (
    str_key("security.protocol", "PLAINTEXT"),
    str_key("ssl.truststore.type", PEM),
    str_key("ssl.truststore.location"),
    str_key("ssl.truststore.password"),
    str_key("ssl.endpoint.identification.algorithm", "https"),
    str_key("sasl.mechanism", "GSSAPI"),
    str_key("sasl.jaas.config", ""),
)


def security_of(props: Mapping[str, Any], where: str) -> InterBrokerSecurity:
    """How to secure a client's connections; InvalidConfigError naming ``where`` (a file, a config) and the
    key when a setting is unusable."""
    protocol = (props.get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InvalidConfigError(
            f"{where}: security.protocol: {protocol!r} is not one of {', '.join(SECURITY_PROTOCOLS)}"
        )
    context = _ssl_context(where, props) if protocol.endswith("SSL") else None
    sasl = _sasl_client(where, props) if protocol.startswith("SASL_") else None
    return InterBrokerSecurity("CLIENT", protocol, context, sasl)


def secure_of(props: Mapping[str, Any], where: str) -> Any:
    """What a client's channels take as ``secure`` (``broker_channel``): None for PLAINTEXT."""
    security = security_of(props, where)
    return None if security.plaintext else security.secure


def _ssl_context(where: str, props: Mapping[str, Any]) -> ssl.SSLContext:
    try:
        check_pem_stores(props.get)
    except InvalidConfigError as exc:
        raise InvalidConfigError(f"{where}: {exc}") from None
    truststore = props.get("ssl.truststore.location")
    try:
        context = ssl.create_default_context(cafile=truststore)
    except (OSError, ssl.SSLError) as exc:
        raise InvalidConfigError(f"{where}: ssl.truststore.location: {truststore}: {exc}") from None
    algorithm = props.get("ssl.endpoint.identification.algorithm")
    context.check_hostname = bool(("https" if algorithm is None else algorithm).strip())
    return context


def _sasl_client(where: str, props: Mapping[str, Any]):
    mechanism = (props.get("sasl.mechanism") or "GSSAPI").strip().upper()
    if mechanism != "PLAIN" and mechanism not in SCRAM_HASHES:
        raise InvalidConfigError(
            f"{where}: sasl.mechanism: {mechanism} is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"
        )
    _, options = parse_jaas(f"{where}: sasl.jaas.config", props.get("sasl.jaas.config") or "")
    username, password = options.get("username"), options.get("password")
    if not username or password is None:
        raise InvalidConfigError(f"{where}: sasl.jaas.config names no username and password")
    if mechanism == "PLAIN":
        return lambda: PlainSaslClient(username, password)
    return lambda: ScramSaslClient(mechanism, username, password)
