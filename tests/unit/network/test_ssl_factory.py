"""A TLS listener's stores (``network.ssl_factory``) as Kafka's DefaultSslEngineFactory checks them for PEM: each
store given one way, no store password; the broker refuses anything else at start, naming the key."""

from __future__ import annotations

import pytest

from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError
from zkafka.network.ssl_factory import check_pem_stores, server_context


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


def test_a_listener_with_a_truststore_password_is_refused(tmp_path):
    config = BrokerConfig08(
        {
            "broker.id": "0",
            "zookeeper.connect": "127.0.0.1:1",
            "log.dirs": str(tmp_path),
            "listeners": "SSL://127.0.0.1:0",
            "security.inter.broker.protocol": "SSL",
            "listener.name.ssl.ssl.truststore.password": "secret",
        }
    )
    with pytest.raises(InvalidConfigError, match="^ssl.truststore.password: a PEM truststore has none"):
        server_context(config, "SSL")
