"""A broker's side as a SASL client, without sockets: SCRAM-SHA-256 on RFC 7677's worked exchange, SCRAM-SHA-512
and PLAIN against zkafka's own servers, and the inter-broker security settings (errors name the key)."""

from __future__ import annotations

import pytest

from tests.unit.network.test_sasl_mechanisms import (
    CLIENT_FINAL,
    CLIENT_FIRST,
    SERVER_FINAL,
    SERVER_FIRST,
)
from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError, SaslAuthenticationError
from zkafka.network.channel_builders import InterBrokerSecurity
from zkafka.network.sasl_mechanisms import (
    PlainSaslClient,
    PlainSaslServer,
    ScramSaslClient,
    ScramSaslServer,
    scram_credential,
)

JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="b-secret";'
)


def test_scram_client_follows_rfc_7677s_exchange():
    client = ScramSaslClient("SCRAM-SHA-256", "user", "pencil", nonce=lambda: "rOprNGfwEbeRWgbNEkqO")
    assert client.initial() == CLIENT_FIRST
    assert client.evaluate(SERVER_FIRST) == CLIENT_FINAL
    assert not client.complete
    forged = ScramSaslClient("SCRAM-SHA-256", "user", "pencil", nonce=lambda: "rOprNGfwEbeRWgbNEkqO")
    forged.evaluate(SERVER_FIRST)
    with pytest.raises(SaslAuthenticationError, match="server signature"):
        forged.evaluate(SERVER_FINAL.replace(b"v=6", b"v=7"))
    assert client.evaluate(SERVER_FINAL) == b"" and client.complete


def exchange(client, server) -> None:
    token = client.initial()
    while not client.complete:
        token = client.evaluate(server.evaluate(token))


def test_clients_against_zkafkas_servers():
    credentials = {"broker": scram_credential("SCRAM-SHA-512", "b-secret")}.get
    server = ScramSaslServer("SCRAM-SHA-512", credentials)
    exchange(ScramSaslClient("SCRAM-SHA-512", "broker", "b-secret"), server)
    assert server.complete and server.authorization_id == "broker"
    with pytest.raises(SaslAuthenticationError, match="Invalid user credentials"):
        exchange(
            ScramSaslClient("SCRAM-SHA-512", "broker", "wrong"), ScramSaslServer("SCRAM-SHA-512", credentials)
        )
    server = PlainSaslServer({"broker": "b-secret"})
    exchange(PlainSaslClient("broker", "b-secret"), server)
    assert server.authorization_id == "broker"


def config(**props: str) -> BrokerConfig08:
    base = {
        "broker.id": "0",
        "zookeeper.connect": "z",
        "listeners": "PLAINTEXT://:1,INTERNAL://:2",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
        "listener.name.internal.scram-sha-256.sasl.jaas.config": JAAS,
    }
    return BrokerConfig08({**base, **props})


def test_inter_broker_security_from_the_listener_and_its_jaas_login():
    security = InterBrokerSecurity.from_config(config())
    assert (security.listener, security.security_protocol, security.ssl_context) == (
        "INTERNAL",
        "SASL_PLAINTEXT",
        None,
    )
    client = security.sasl_client()
    assert client.initial().startswith(b"n,,n=broker,r=") and not security.plaintext
    assert InterBrokerSecurity.from_config(config(**{"inter.broker.listener.name": "PLAINTEXT"})).plaintext


@pytest.mark.parametrize(
    "props, key",
    [
        ({"sasl.mechanism.inter.broker.protocol": "GSSAPI"}, "sasl.mechanism.inter.broker.protocol"),
        ({"sasl.mechanism.inter.broker.protocol": "PLAIN"}, "sasl.mechanism.inter.broker.protocol"),
        (
            {"listener.name.internal.scram-sha-256.sasl.jaas.config": 'x required user_a="b";'},
            "listener.name.internal.scram-sha-256.sasl.jaas.config",
        ),
    ],
)
def test_inter_broker_security_errors_name_the_key(props, key):
    with pytest.raises(InvalidConfigError, match=f"^{key}: "):
        InterBrokerSecurity.from_config(config(**props))


def test_tls_between_brokers_checks_host_names_unless_the_algorithm_is_blank():
    tls = {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL"}
    checked = InterBrokerSecurity.from_config(config(**tls))
    assert checked.security_protocol == "SSL" and checked.sasl_client is None
    assert checked.ssl_context.check_hostname is True
    blank = {**tls, "listener.name.internal.ssl.endpoint.identification.algorithm": ""}
    assert InterBrokerSecurity.from_config(config(**blank)).ssl_context.check_hostname is False
