"""The client properties of a tool's ``--command-config`` file (Kafka's AdminClient configs): how the tool
reaches a secured listener. ``security.protocol`` PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL;
``ssl.truststore.location`` (a PEM bundle; host names checked unless ``ssl.endpoint.identification.algorithm``
is blank); ``sasl.mechanism`` PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with the ``username`` and ``password`` of
``sasl.jaas.config``. The connection is secured as the brokers secure theirs (``InterBrokerSecurity``)."""

from __future__ import annotations

import ssl
from typing import Any

from zkafka.config import load_properties
from zkafka.errors import InvalidConfigError
from zkafka.network.channel_builders import InterBrokerSecurity
from zkafka.network.sasl_mechanisms import SCRAM_HASHES, PlainSaslClient, ScramSaslClient, parse_jaas

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def client_security(path: str | None) -> InterBrokerSecurity:
    """How to secure the tool's connections, from the ``--command-config`` file (none: PLAINTEXT);
    InvalidConfigError naming the file and key when a setting is unusable."""
    if path is None:
        return InterBrokerSecurity()
    try:
        props = load_properties(path)
    except OSError as exc:
        raise InvalidConfigError(f"--command-config: {path}: {exc.strerror}") from None
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise InvalidConfigError(
            f"{path}: security.protocol: {protocol!r} is not one of {', '.join(PROTOCOLS)}"
        )
    context = _ssl_context(path, props) if protocol.endswith("SSL") else None
    sasl = _sasl_client(path, props) if protocol.startswith("SASL_") else None
    return InterBrokerSecurity("CLIENT", protocol, context, sasl)


def client_secure(path: str | None) -> Any:
    """What a tool's channels take as ``secure`` (``broker_channel``) for the ``--command-config`` file: None
    for PLAINTEXT."""
    security = client_security(path)
    return None if security.plaintext else security.secure


def admin_client(bootstrap: str, path: str | None) -> Any:
    """An AdminClient to ``bootstrap`` secured by the ``--command-config`` file (none: PLAINTEXT)."""
    from zkafka.tools.admin_client import AdminClient

    return AdminClient(bootstrap, secure=client_secure(path))


def _ssl_context(path: str, props: dict[str, str]) -> ssl.SSLContext:
    truststore = props.get("ssl.truststore.location")
    try:
        context = ssl.create_default_context(cafile=truststore)
    except (OSError, ssl.SSLError) as exc:
        raise InvalidConfigError(f"{path}: ssl.truststore.location: {truststore}: {exc}") from None
    context.check_hostname = bool(props.get("ssl.endpoint.identification.algorithm", "https").strip())
    return context


def _sasl_client(path: str, props: dict[str, str]):
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()
    if mechanism != "PLAIN" and mechanism not in SCRAM_HASHES:
        raise InvalidConfigError(
            f"{path}: sasl.mechanism: {mechanism} is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"
        )
    _, options = parse_jaas(f"{path}: sasl.jaas.config", props.get("sasl.jaas.config", ""))
    username, password = options.get("username"), options.get("password")
    if not username or password is None:
        raise InvalidConfigError(f"{path}: sasl.jaas.config names no username and password")
    if mechanism == "PLAIN":
        return lambda: PlainSaslClient(username, password)
    return lambda: ScramSaslClient(mechanism, username, password)
