"""SASL with real clients: kafka-python and librdkafka over SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256 (the
credential written by ``zkafka configs --entity-type users``), librdkafka over SASL_SSL; a wrong password
answered SASL_AUTHENTICATION_FAILED with its message and the connection closed; a request before the
handshake closes the connection."""

from __future__ import annotations

import logging
import socket
import time

import pytest
from click.testing import CliRunner

from tests.support.certs import make_certs
from tests.support.node import run_node
from tests.support.server08 import Client08, broker08_props
from zkafka.admin.users import alter_user_scram
from zkafka.cli.command import main
from zkafka.config08 import BrokerConfig08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.sasl import SASL_AUTHENTICATE_APIS, SASL_HANDSHAKE_APIS
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration
confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)


@pytest.fixture
def sasl_broker(tmp_path, zk_connect):
    certs = make_certs(tmp_path / "certs")
    props = broker08_props(0, tmp_path / "broker08-0", zk_connect)
    props.update(
        {
            "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
            "ssl.keystore.location": str(certs.broker),
            "ssl.truststore.location": str(certs.ca),
        }
    )
    broker = BrokerThread(BrokerConfig08(props)).start()
    try:
        yield broker, certs
    finally:
        broker.stop()


def kafka_python_round_trip(port, topic, **auth):
    common = {"bootstrap_servers": f"127.0.0.1:{port}", "security_protocol": "SASL_PLAINTEXT", **auth}
    producer = kafka.KafkaProducer(acks=1, **common)
    try:
        for i in range(3):
            producer.send(topic, b"m%d" % i).get(timeout=30)
    finally:
        producer.close()
    consumer = kafka.KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **common)
    try:
        return [m.value for m in consumer]
    finally:
        consumer.close()


def librdkafka_round_trip(config, topic):
    producer = confluent_kafka.Producer({**config, "acks": 1})
    failed = []
    for i in range(3):
        producer.produce(topic, b"r%d" % i, on_delivery=lambda e, m: e and failed.append(e))
    assert producer.flush(30) == 0 and not failed
    consumer = confluent_kafka.Consumer(
        {**config, "group.id": topic, "auto.offset.reset": "earliest", "session.timeout.ms": 6000}
    )
    got: list[bytes] = []
    try:
        consumer.subscribe([topic])

        def read():
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
            return len(got) >= 3

        wait_until(read, 30, message=f"librdkafka read {topic} back")
    finally:
        consumer.close()
    return got


def test_plain_and_scram_with_kafka_python_and_librdkafka(sasl_broker, zk_connect):
    broker, certs = sasl_broker
    port = broker.listener_port("SASL_PLAINTEXT")
    plain = {"sasl_mechanism": "PLAIN", "sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
    assert kafka_python_round_trip(port, "plain", **plain) == [b"m0", b"m1", b"m2"]
    result = CliRunner().invoke(
        main,
        ["configs", "--zookeeper", zk_connect, "--alter", "--add-config", "SCRAM-SHA-256=[password=bob-secret]",
         "--entity-type", "users", "--entity-name", "bob"],
    )  # fmt: skip
    assert result.exit_code == 0 and "Completed updating config for user bob." in result.output
    scram = {"sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": "bob", "sasl_plain_password": "bob-secret"}
    assert kafka_python_round_trip(port, "scram", **scram) == [b"m0", b"m1", b"m2"]
    rd = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "sasl_plaintext"}
    rd_scram = {**rd, "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "bob", "sasl.password": "bob-secret"}
    assert librdkafka_round_trip(rd_scram, "rd-scram") == [b"r0", b"r1", b"r2"]
    rd_ssl = {
        "bootstrap.servers": f"127.0.0.1:{broker.listener_port('SASL_SSL')}",
        "security.protocol": "sasl_ssl",
        "ssl.ca.location": str(certs.ca),
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }
    assert librdkafka_round_trip(rd_ssl, "rd-sasl-ssl") == [b"r0", b"r1", b"r2"]


def test_a_wrong_password_is_refused_with_the_error_and_the_connection_closed(sasl_broker):
    broker, _ = sasl_broker
    port = broker.listener_port("SASL_PLAINTEXT")
    handshake, authenticate = SASL_HANDSHAKE_APIS[1][0], SASL_AUTHENTICATE_APIS[2][0]
    with Client08(port) as client:
        answer = client.call(handshake("PLAIN"))
        assert answer.error == 0 and answer.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        refused = client.call(authenticate(b"\0alice\0wrong"))
        assert refused.error == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert refused.error_message == "Authentication failed: Invalid username or password"
        assert client.sock.recv(1) == b""
    with Client08(port) as client:  # a request before the handshake: closed (ILLEGAL_SASL_STATE)
        client.send(MetadataRequestV0([]))
        assert client.sock.recv(1) == b""
    with pytest.raises(kafka.errors.KafkaError):  # kafka-python told the refusal
        kafka.KafkaProducer(
            bootstrap_servers=f"127.0.0.1:{port}", security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
            sasl_plain_username="alice", sasl_plain_password="nope", max_block_ms=5000,
        ).send("t", b"x").get(timeout=10)  # fmt: skip
    with socket.create_connection(("127.0.0.1", broker.listener_port("PLAINTEXT"))):
        pass  # the PLAINTEXT listener still serves


def test_kafkajs_over_sasl_plain(sasl_broker):
    broker, _ = sasl_broker
    args = {
        "brokers": [f"127.0.0.1:{broker.listener_port('SASL_PLAINTEXT')}"],
        "topic": "js-sasl",
        "username": "alice",
        "password": "alice-secret",
    }
    result = run_node("kafkajs_sasl.js", "kafkajs", args)
    assert "fatal" not in result, result
    assert sorted(result["read"]) == ["a", "b"]
    assert result["wrong"]["ok"] is False and "Invalid username or password" in result["wrong"]["message"]


def test_sessions_reauthenticate_or_end_per_connections_max_reauth_ms(tmp_path, zk_connect, zk_client, caplog):
    """KIP-368: the session lifetime is told in SaslAuthenticate v1; re-authenticating on the connection renews
    it; a request after it ends closes the connection; librdkafka re-authenticates across several lifetimes.
    The controller reaches its own broker with SCRAM-SHA-512 (its UpdateMetadata lets librdkafka find the
    leader), renewing its sessions too."""
    props = broker08_props(0, tmp_path / "broker08-0", zk_connect)
    props.update(
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "security.inter.broker.protocol": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": (
                'org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" '
                'password="broker-secret";'
            ),
            "connections.max.reauth.ms": "1500",
        }
    )
    alter_user_scram(zk_client, "broker", {"SCRAM-SHA-512": "password=broker-secret"}, ())
    broker = BrokerThread(BrokerConfig08(props)).start()
    handshake, authenticate = SASL_HANDSHAKE_APIS[1][0], SASL_AUTHENTICATE_APIS[1][0]
    port = broker.listener_port("SASL_PLAINTEXT")
    try:
        with Client08(port) as client:
            assert client.call(handshake("PLAIN")).error == 0
            assert client.call(authenticate(b"\0alice\0alice-secret")).session_lifetime_ms == 1500
            assert client.call(MetadataRequestV0([])).topics == []  # served
            assert client.call(handshake("PLAIN")).error == 0  # re-authentication, same connection
            renewed = time.monotonic()
            assert client.call(authenticate(b"\0alice\0alice-secret")).session_lifetime_ms == 1500
            assert client.call(MetadataRequestV0([])).topics == []  # served
            wait_until(lambda: time.monotonic() > renewed + 1.6, 5, message="the session's end")
            client.send(MetadataRequestV0([]))
            assert client.sock.recv(1) == b""  # closed: its session ended
        caplog.set_level(logging.DEBUG, logger="zkafka.network")
        caplog.clear()
        rd = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "sasl_plaintext",
              "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}  # fmt: skip
        producer = confluent_kafka.Producer({**rd, "acks": 1, "linger.ms": 0})
        failed, started = [], time.monotonic()
        sent = 0

        def sent_across_three_lifetimes():
            nonlocal sent
            producer.produce("reauth", b"r%d" % sent, on_delivery=lambda e, m: e and failed.append(e))
            sent += 1
            producer.poll(0.1)
            return time.monotonic() > started + 4.5

        wait_until(sent_across_three_lifetimes, 30, interval=0.1, message="4.5 s of produce")
        assert producer.flush(30) == 0 and not failed, failed[:3]
        messages = [r.getMessage() for r in caplog.records]
        assert sum("User:alice re-authenticated" in m for m in messages) >= 2
        assert not [m for m in messages if "expired" in m]  # librdkafka renewed in time, never cut off
    finally:
        broker.stop()
