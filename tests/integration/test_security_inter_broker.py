"""Inter-broker traffic on a secured listener: three broker processes whose ``INTERNAL`` listener is SASL_SSL
(PLAIN, the brokers' login from its JAAS line, host names checked against the certificate, sessions of 2 s by
``connections.max.reauth.ms``) and ``inter.broker.listener.name=INTERNAL``. The controller's requests and the
replica fetchers go over it (read from the brokers' own sockets in /proc: no broker dials another's PLAINTEXT
port; their channels renew their sessions in time), UpdateMetadata v3 carries both listeners so librdkafka on
INTERNAL is answered INTERNAL addresses, and kill -9 of the leader under acks=-1 load loses nothing
acknowledged, every replica's log read back equal to the leader's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.certs import make_certs
from tests.support.drills import FIGURES, Producer08Load, check_no_loss, settle
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]
confluent_kafka = pytest.importorskip("confluent_kafka")
pytest.importorskip("confluent_kafka.admin")

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
    'password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";'
)


def secured_props(certs) -> dict[str, str]:
    return {
        "listeners": "PLAINTEXT://127.0.0.1:{port},INTERNAL://127.0.0.1:0",
        "listener_security_protocol_map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
        "inter_broker_listener_name": "INTERNAL",
        "sasl_enabled_mechanisms": "PLAIN",
        "sasl_mechanism_inter_broker_protocol": "PLAIN",
        "connections_max_reauth_ms": "2000",  # KIP-368: the brokers' channels renew their sessions
        "listener.name.internal.plain.sasl.jaas.config": JAAS,
        "ssl_keystore_location": str(certs.broker),
        "ssl_truststore_location": str(certs.ca),
    }


def internal_ports(zk) -> dict[int, int]:
    """Each registered broker's INTERNAL port."""
    ports = {}
    for child in zk.get_children("/brokers/ids"):
        endpoints = json.loads(zk.get(f"/brokers/ids/{child}")[0])["endpoints"]
        ports[int(child)] = next(int(e.rsplit(":", 1)[1]) for e in endpoints if e.startswith("INTERNAL://"))
    return ports


def peer_ports(pid: int) -> set[int]:
    """The remote ports of a process's established TCP connections (its socket inodes in /proc/net/tcp)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "01" and fields[9] in inodes:  # ESTABLISHED
            ports.add(int(fields[2].rsplit(":", 1)[1], 16))
    return ports


def test_kill_9_of_the_leader_with_sasl_ssl_between_brokers(tmp_path, start_cluster):
    certs = make_certs(tmp_path / "certs")
    cluster = start_cluster(**secured_props(certs))
    (first,) = cluster.topic("secured", seed=7)
    load = Producer08Load(cluster.ports, "secured")
    load.start()
    wait_until(lambda: len(load.acked) >= 100 or not load.is_alive(), 30, message="acks flowing")
    assert load.is_alive(), f"the load stopped: {load.exception!r}"

    internal, plaintext = internal_ports(cluster.zk), set(cluster.ports())
    dialled = set().union(*(peer_ports(cluster[b].proc.pid) for b in (1, 2, 3)))
    assert internal[first.leader] in dialled, "the followers fetch from the leader's INTERNAL listener"
    assert not dialled & plaintext, "no broker dials another's PLAINTEXT listener"
    brokers = rdkafka_brokers(internal[1], certs.ca)
    assert brokers == {b: ("127.0.0.1", port) for b, port in internal.items()}

    at = len(load.acked)
    cluster[first.leader].proc.kill()
    wait_until(lambda: len(load.acked) >= at + 100, 45, message="100 acks after the leader's kill")
    cluster[first.leader].start()  # rejoins as a follower over INTERNAL and catches up
    settle(cluster.zk, cluster.ports, "secured")
    load.stop()
    assert not load.failures, f"sends failed beyond their retries: {load.failures[:3]}"
    state, log_length = check_no_loss(cluster.zk, cluster.ports, "secured", load.acked, {}, cluster.port_of)
    assert state.leader != first.leader or state.leader_epoch > first.leader_epoch
    assert cluster.logs_agree("secured", state) == log_length
    expired = [line for b in (1, 2, 3) for line in cluster[b].log_text().splitlines() if "expired" in line]
    assert not expired, f"a broker's channel outlived its SASL session: {expired[:2]}"
    FIGURES.append(("kill -9 leader, SASL_SSL between brokers", {"acked": len(load.acked), "log": log_length}))


def rdkafka_brokers(port: int, ca: Path) -> dict[int, tuple[str, int]]:
    """The brokers librdkafka is told over SASL_SSL on the INTERNAL listener at ``port``."""
    config = {
        "bootstrap.servers": f"127.0.0.1:{port}",
        "security.protocol": "sasl_ssl",
        "ssl.ca.location": str(ca),
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }
    metadata = confluent_kafka.admin.AdminClient(config).list_topics(timeout=20)
    return {b.id: (b.host, b.port) for b in metadata.brokers.values()}
