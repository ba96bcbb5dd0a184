"""Listeners and TLS with real clients: kafka-python and librdkafka over an SSL listener beside a PLAINTEXT one
(Metadata answers each with its own listener's end points), ``ssl.client.auth=required`` refusing a client
without a certificate, the registration (version 4), consumer-groups and get-offsets over SSL with a
``--command-config`` (refused in one line by a truststore that does not sign the broker), and
``socket.request.max.bytes`` holding no memory for what a header announces."""

from __future__ import annotations

import json
import logging
import socket
import ssl
import struct

import pytest
from click.testing import CliRunner

from tests.support.certs import make_certs
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.cli.command import main
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration
confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")

LISTENERS = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def ssl_broker(start_broker08, certs, **props):
    return start_broker08(
        0,
        listeners=LISTENERS,
        ssl_keystore_location=str(certs.broker),
        ssl_truststore_location=str(certs.ca),
        **props,
    )


def kafka_python_round_trip(port, certs, with_cert):
    extra = (
        {"ssl_certfile": str(certs.client_cert), "ssl_keyfile": str(certs.client_key)} if with_cert else {}
    )
    common = {
        "bootstrap_servers": f"127.0.0.1:{port}",
        "security_protocol": "SSL",
        "ssl_cafile": str(certs.ca),
    }
    producer = kafka.KafkaProducer(acks=1, **common, **extra)
    try:
        for i in range(5):
            producer.send("tls", b"m%d" % i).get(timeout=30)
    finally:
        producer.close()
    consumer = kafka.KafkaConsumer(
        "tls", auto_offset_reset="earliest", consumer_timeout_ms=10000, **common, **extra
    )
    try:
        return [m.value for m in consumer]
    finally:
        consumer.close()


def test_kafka_python_over_ssl_with_and_without_a_client_certificate(
    start_broker08, certs, zk_client, tmp_path
):
    broker = ssl_broker(start_broker08, certs, ssl_client_auth="requested")
    ssl_port, plain_port = broker.listener_port("SSL"), broker.listener_port("PLAINTEXT")
    assert kafka_python_round_trip(ssl_port, certs, with_cert=False) == [b"m%d" % i for i in range(5)]
    assert kafka_python_round_trip(ssl_port, certs, with_cert=True)[:5] == [b"m%d" % i for i in range(5)]
    # the registration names both listeners (version 4); Metadata on PLAINTEXT answers the PLAINTEXT end point
    registration = json.loads(zk_client.get("/brokers/ids/0")[0])
    assert registration["version"] == 4 and registration["port"] == plain_port
    assert registration["endpoints"] == [f"PLAINTEXT://127.0.0.1:{plain_port}", f"SSL://127.0.0.1:{ssl_port}"]
    assert registration["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"}
    with Client08(plain_port) as client:
        brokers = client.call(MetadataRequestV0(["tls"])).brokers
    assert [(b.node_id, b.port) for b in brokers] == [(0, plain_port)]
    tools_over_ssl(ssl_port, certs, tmp_path)


def tools_over_ssl(ssl_port, certs, tmp_path):
    """consumer-groups and get-offsets through the SSL listener with a --command-config file (console-consumer
    with it as its --consumer.config makes the group); a truststore not holding the broker's CA: one line."""
    bootstrap = f"127.0.0.1:{ssl_port}"
    trusting, untrusting = tmp_path / "ssl.properties", tmp_path / "untrusting.properties"
    for path, truststore in ((trusting, certs.ca), (untrusting, certs.client_cert)):
        path.write_text(
            f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={truststore}\n"
        )
    read = CliRunner().invoke(main, ["console-consumer", "--bootstrap-server", bootstrap, "--consumer.config",
                                     str(trusting), "--topic", "tls", "--group", "g-tls", "--from-beginning",
                                     "--max-messages", "7"])  # fmt: skip
    assert read.output.splitlines()[:7] == [f"m{i % 5}" for i in range(7)] and read.exit_code == 0, (
        read.output
    )
    groups = ["consumer-groups", "--bootstrap-server", bootstrap, "--command-config", str(trusting)]
    listed = CliRunner().invoke(main, [*groups, "--list"])
    assert listed.exit_code == 0 and "g-tls" in listed.output.split(), listed.output
    described = CliRunner().invoke(main, [*groups, "--describe", "--group", "g-tls"])
    assert described.exit_code == 0 and ["g-tls", "tls", "0", "7", "10", "3"] in [
        line.split()[:6] for line in described.output.splitlines()
    ], described.output
    ends = CliRunner().invoke(main, ["get-offsets", "--bootstrap-server", bootstrap, "--command-config",
                                     str(trusting), "--topic", "tls"])  # fmt: skip
    assert ends.exit_code == 0 and ends.output.split() == ["tls:0:10"], ends.output
    for command in (["consumer-groups", "--list"], ["get-offsets", "--topic", "tls"]):
        refused = CliRunner().invoke(main, [*command, "--bootstrap-server", bootstrap, "--command-config",
                                            str(untrusting)])  # fmt: skip
        lines = refused.output.strip().splitlines()
        assert refused.exit_code != 0 and len(lines) == 1 and bootstrap in lines[0], refused.output


def test_librdkafka_over_ssl_and_a_client_without_a_certificate_refused_when_required(start_broker08, certs):
    broker = ssl_broker(start_broker08, certs, ssl_client_auth="required")
    ssl_port = broker.listener_port("SSL")
    config = {
        "bootstrap.servers": f"127.0.0.1:{ssl_port}",
        "security.protocol": "ssl",
        "ssl.ca.location": str(certs.ca),
        "ssl.certificate.location": str(certs.client_cert),
        "ssl.key.location": str(certs.client_key),
    }
    producer = confluent_kafka.Producer({**config, "acks": 1})
    failed = []
    for i in range(5):
        producer.produce("rd-tls", b"r%d" % i, on_delivery=lambda e, m: e and failed.append(e))
    assert producer.flush(30) == 0 and not failed
    consumer = confluent_kafka.Consumer(
        {**config, "group.id": "g", "auto.offset.reset": "earliest", "session.timeout.ms": 6000}
    )
    try:
        consumer.subscribe(["rd-tls"])
        got: list[bytes] = []

        def read_all():
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
            return len(got) == 5

        wait_until(read_all, 30, message="librdkafka read back over TLS")
    finally:
        consumer.close()
    assert got == [b"r%d" % i for i in range(5)]
    # without a client certificate the handshake fails (the server asks for one and refuses none)
    context = ssl.create_default_context(cafile=str(certs.ca))
    with socket.create_connection(("127.0.0.1", ssl_port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(struct.pack(">i", 4) + b"xxxx")
                assert tls.recv(1) == b""  # TLS 1.3: the refusal arrives after the handshake
                raise ConnectionError("closed")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_a_header_announcing_100_mb_holds_no_memory_and_a_larger_one_is_refused(broker08_process):
    broker = broker08_process(0)
    client = wait_until(lambda: _connect(broker.port), 30, message="0.8 broker process listening")
    with client:
        wait_for_leaders(client, ["t"])
        before = rss_kb(broker.proc.pid)
        announced = [socket.create_connection(("127.0.0.1", broker.port)) for _ in range(3)]
        try:
            for sock in announced:  # 100 MB announced (socket.request.max.bytes), 4 bytes sent
                sock.sendall(struct.pack(">i", 104857600) + b"abcd")
            oversized = socket.create_connection(("127.0.0.1", broker.port), timeout=10)
            with oversized:
                oversized.sendall(struct.pack(">i", 104857601) + b"abcd")
                assert oversized.recv(1) == b""  # closed before its body is read
            assert client.call(MetadataRequestV0(["t"])).topics[0].error == 0  # the others still served
            assert rss_kb(broker.proc.pid) - before < 50 * 1024
        finally:
            for sock in announced:
                sock.close()


def _connect(port):
    try:
        return Client08(port)
    except OSError:
        return None


def _served(port, source):
    """A client from ``source`` whose Metadata is answered, or None when the broker closed it at accept."""
    try:
        client = Client08(port, source=source)
    except OSError:
        return None
    try:
        client.call(MetadataRequestV0([]))
        return client
    except OSError:
        client.close()
        return None


def test_max_connections_per_ip_closes_the_connection_beyond_it_and_an_override_wins(start_broker08, caplog):
    # the limit holds for 127.0.0.2; the override lets 127.0.0.1 (the broker's own controller channel too) past it
    caplog.set_level(logging.INFO, logger="zkafka.network.connection_quotas")
    broker = start_broker08(0, max_connections_per_ip=2, max_connections_per_ip_overrides="127.0.0.1:100")
    first, second = _served(broker.port, "127.0.0.2"), _served(broker.port, "127.0.0.2")
    assert first is not None and second is not None
    try:
        with socket.create_connection(
            ("127.0.0.1", broker.port), timeout=10, source_address=("127.0.0.2", 0)
        ) as third:
            assert third.recv(1) == b""  # closed at accept
        assert (
            "Rejected connection from /127.0.0.2, address already has the configured maximum of 2"
            in caplog.text
        )
        first.close()  # its count is released when the broker sees it close
        replacement = wait_until(
            lambda: _served(broker.port, "127.0.0.2"), 30, message="a connection after one closed"
        )
        replacement.close()
        local = [_served(broker.port, "127.0.0.1") for _ in range(4)]
        assert all(local)
        for client in local:
            client.close()
    finally:
        second.close()
