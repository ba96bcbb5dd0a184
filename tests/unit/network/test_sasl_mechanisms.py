"""The SASL mechanisms without sockets: SCRAM-SHA-256 on RFC 7677's worked exchange (user "user", password
"pencil"), PLAIN's token, the JAAS option syntax, and listeners' config errors naming the key."""

from __future__ import annotations

import base64

import pytest

from zkafka.cluster.end_point import BrokerListeners
from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError, SaslAuthenticationError
from zkafka.network.sasl_mechanisms import (
    PlainSaslServer,
    ScramCredential,
    ScramSaslServer,
    parse_jaas,
    plain_users,
    scram_credential,
)

CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc7677_credential() -> ScramCredential:
    """The stored credential for "pencil" with RFC 7677's salt (as kafka-configs would store it)."""
    import hashlib
    import hmac

    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", salt, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    return ScramCredential(salt, hashlib.sha256(client_key).digest(), server_key, 4096)


def test_scram_sha_256_follows_rfc_7677s_exchange():
    credential = rfc7677_credential()
    server = ScramSaslServer("SCRAM-SHA-256", {"user": credential}.get, server_nonce=lambda: SERVER_NONCE)
    assert server.evaluate(CLIENT_FIRST) == SERVER_FIRST
    assert server.evaluate(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.authorization_id == "user"
    assert ScramCredential.from_config(credential.to_config()) == credential


def test_scram_refuses_a_wrong_proof_and_an_unknown_user():
    server = ScramSaslServer(
        "SCRAM-SHA-256", {"user": rfc7677_credential()}.get, server_nonce=lambda: SERVER_NONCE
    )
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(SaslAuthenticationError, match="Invalid user credentials"):
        server.evaluate(CLIENT_FINAL.replace(b"p=dHzb", b"p=dHzc"))
    with pytest.raises(SaslAuthenticationError, match="Invalid user credentials"):
        ScramSaslServer("SCRAM-SHA-256", {}.get).evaluate(CLIENT_FIRST)
    made = scram_credential("SCRAM-SHA-512", "secret")
    assert made.iterations == 4096 and len(made.stored_key) == len(made.server_key) == 64


def test_plain_checks_the_user_and_password():
    assert PlainSaslServer({"alice": "alice-secret"}).evaluate(b"\0alice\0alice-secret") == b""
    for token, message in [
        (b"\0alice\0wrong", "Invalid username or password"),
        (b"\0bob\0alice-secret", "Invalid username or password"),
        (b"admin\0alice\0alice-secret", "authorization id that is different"),
        (b"alice", "expected 3 tokens"),
    ]:
        with pytest.raises(SaslAuthenticationError, match=message):
            PlainSaslServer({"alice": "alice-secret"}).evaluate(token)


def test_jaas_config_syntax():
    text = (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="a\\"b";'
    )
    module, options = parse_jaas("k", text)
    assert (
        module == "org.apache.kafka.common.security.plain.PlainLoginModule" and options["username"] == "admin"
    )
    assert plain_users("k", text) == {"admin": "admin-secret", "alice": 'a"b'}
    with pytest.raises(InvalidConfigError, match="^k: "):
        parse_jaas("k", "PlainLoginModule username=x")


@pytest.mark.parametrize(
    "props, key",
    [
        ({"listeners": "FOO://:1"}, "listeners"),
        ({"listeners": "PLAINTEXT://:1,PLAINTEXT://:2"}, "listeners"),
        ({"listeners": "PLAINTEXT://:1", "inter.broker.listener.name": "SSL"}, "inter.broker.listener.name"),
        ({"listener.security.protocol.map": "A:B"}, "listener.security.protocol.map"),
        ({"listeners": "PLAINTEXT://:1", "advertised.listeners": "SSL://h:2"}, "advertised.listeners"),
    ],
)
def test_listener_errors_name_the_key(props, key):
    with pytest.raises(InvalidConfigError, match=f"^{key}: "):
        BrokerConfig08({"broker.id": "0", "zookeeper.connect": "z", **props})


def test_listeners_default_to_host_name_and_port():
    config = BrokerConfig08({"broker.id": "0", "zookeeper.connect": "z", "host.name": "h", "port": "9"})
    listeners = BrokerListeners.from_config(config)
    assert [e.connection_string for e in listeners.bound] == ["PLAINTEXT://h:9"]
    assert listeners.inter_broker == "PLAINTEXT"
