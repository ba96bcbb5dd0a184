"""A client's security configs (``network.client_security``): PLAINTEXT unless they say otherwise, and an
unusable setting refused in one line naming where it came from and the key, before anything connects."""

from __future__ import annotations

import pytest

from zkafka.consumer.group.consumer import GroupConsumer
from zkafka.errors import InvalidConfigError
from zkafka.network.client_security import secure_of

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";'
NO_USER = "org.apache.kafka.common.security.plain.PlainLoginModule required;"


def test_a_client_speaks_plaintext_unless_its_properties_say_otherwise():
    assert secure_of({}, "f") is None and secure_of({"security.protocol": "plaintext"}, "f") is None
    sasl = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": JAAS}
    assert callable(secure_of(sasl, "f"))


@pytest.mark.parametrize(
    "props, message",
    [
        ({"security.protocol": "TLS"}, "f: security.protocol: 'TLS' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT"),
        ({"security.protocol": "SASL_SSL", "sasl.jaas.config": JAAS}, "f: sasl.mechanism: GSSAPI is not PLAIN"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "f: sasl.jaas.config: not "),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": NO_USER},
         "f: sasl.jaas.config names no username and password"),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent.pem"},
         "f: ssl.truststore.location: /nonexistent.pem"),
        ({"security.protocol": "SSL", "ssl.truststore.type": "JKS", "ssl.truststore.location": "/ca.jks"},
         "f: ssl.truststore.type: JKS truststores are not read; convert it to PEM"),
        ({"security.protocol": "SSL", "ssl.truststore.location": "/ca.pem", "ssl.truststore.password": "x"},
         "f: ssl.truststore.password: a PEM truststore has none"),
    ],
)  # fmt: skip
def test_an_unusable_setting_names_where_it_came_from_and_the_key(props, message):
    with pytest.raises(InvalidConfigError) as raised:
        secure_of(props, "f")
    assert str(raised.value).startswith(message)


def test_the_group_consumer_refuses_an_unusable_setting_at_start():
    with pytest.raises(InvalidConfigError, match="^consumer config: security.protocol: 'SASL' is not one of"):
        GroupConsumer({"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL"})
