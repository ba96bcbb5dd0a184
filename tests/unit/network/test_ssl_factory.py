"""A TLS listener's stores (``network.ssl_factory``) as Kafka's DefaultSslEngineFactory checks them for PEM: each
store given one way, no store password; the broker refuses anything else at start, naming the key."""

from __future__ import annotations

import ssl

import pytest

from tests.support.certs import encrypted_keystore, make_certs
from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError
from zkafka.network.ssl_factory import check_pem_stores, keystore_kafka_refuses, server_context


@pytest.mark.parametrize(
    "props, message",
    [
        ({"ssl.truststore.type": "JKS"}, "ssl.truststore.type: JKS truststores are not read; convert it to PEM"),
        ({"ssl.keystore.type": "PKCS12"}, "ssl.keystore.type: PKCS12 keystores are not read; convert it to PEM"),
        ({"ssl.truststore.password": "secret"}, "ssl.truststore.password: a PEM truststore has none"),
        ({"ssl.keystore.password": "secret"}, "ssl.keystore.password: a PEM keystore has none; its key takes"),
        ({"ssl.keystore.location": "/k.pem", "ssl.keystore.key": "KEY"},
         "ssl.keystore.key: given with ssl.keystore.location; give one of them"),
        ({"ssl.truststore.location": "/ca.pem", "ssl.truststore.certificates": "CERTS"},
         "ssl.truststore.certificates: given with ssl.truststore.location; give one of them"),
    ],
)  # fmt: skip
def test_a_store_given_as_kafka_refuses_it_is_named(props, message):
    with pytest.raises(InvalidConfigError, match=f"^{message}"):
        check_pem_stores(props.get)


def test_pem_stores_given_one_way_pass():
    check_pem_stores({"ssl.keystore.location": "/k.pem", "ssl.key.password": "p", "ssl.truststore.type": "pem"}.get)
    check_pem_stores({"ssl.keystore.certificate.chain": "C", "ssl.keystore.key": "K"}.get)


def _listener_config(tmp_path, **ssl_props) -> BrokerConfig08:
    props = {"broker.id": "0", "zookeeper.connect": "127.0.0.1:1", "log.dirs": str(tmp_path / "logs")}
    props.update({"listeners": "SSL://127.0.0.1:0", "security.inter.broker.protocol": "SSL", **ssl_props})
    return BrokerConfig08(props)


def test_a_listener_with_a_truststore_password_is_refused(tmp_path):
    config = _listener_config(tmp_path, **{"listener.name.ssl.ssl.truststore.password": "secret"})
    with pytest.raises(InvalidConfigError, match="^ssl.truststore.password: a PEM truststore has none"):
        server_context(config, "SSL")


def test_a_pem_keystore_file_without_a_key_password_is_read_with_kafkas_refusal_told():
    warning = keystore_kafka_refuses({"ssl.keystore.location": "/k.pem"}.get)
    assert warning.startswith("ssl.keystore.location: /k.pem is read without ssl.key.password; Kafka refuses")
    assert keystore_kafka_refuses({"ssl.keystore.location": "/k.pem", "ssl.key.password": "p"}.get) is None
    assert keystore_kafka_refuses({"ssl.keystore.certificate.chain": "C", "ssl.keystore.key": "K"}.get) is None


def _served_certificate_subject(server: ssl.SSLContext, ca) -> tuple:
    """The subject of the certificate ``server`` presents in a TLS handshake (in memory) with a client trusting
    ``ca``: proof that its keystore's key was read."""
    client = ssl.create_default_context(cafile=str(ca))
    client_in, client_out, server_in, server_out = (ssl.MemoryBIO() for _ in range(4))
    tls_client = client.wrap_bio(client_in, client_out, server_hostname="localhost")
    tls_server = server.wrap_bio(server_in, server_out, server_side=True)
    for _ in range(10):
        done = 0
        for tls, out, peer_in in ((tls_client, client_out, server_in), (tls_server, server_out, client_in)):
            try:
                tls.do_handshake()
                done += 1
            except ssl.SSLWantReadError:
                pass
            peer_in.write(out.read())
        if done == 2:
            return tls_client.getpeercert()["subject"]
    raise AssertionError("the handshake did not complete")


def test_an_encrypted_pem_keystore_is_read_with_its_key_password(tmp_path, caplog):
    certs = make_certs(tmp_path / "certs")
    keystore = encrypted_keystore(certs, "key-secret")
    assert "ENCRYPTED PRIVATE KEY" in keystore.read_text()
    stores = {"ssl.keystore.location": str(keystore), "ssl.truststore.location": str(certs.ca)}
    context = server_context(_listener_config(tmp_path, **stores, **{"ssl.key.password": "key-secret"}), "SSL")
    subject = _served_certificate_subject(context, certs.ca)
    assert subject == ((("commonName", "localhost"),), (("organizationName", "zkafka"),))
    assert "Kafka refuses" not in caplog.text
    with pytest.raises(InvalidConfigError, match=f"^ssl.keystore.location: cannot load {keystore}"):
        server_context(_listener_config(tmp_path, **stores, **{"ssl.key.password": "wrong"}), "SSL")
