"""0.8-line broker test support: in-process and child-process brokers, a raw 0.8 wire client, cluster snapshots.

Registered as a plugin by tests/conftest.py: ``start_broker08`` and ``broker08_process`` are in every test's
scope. ``Client08`` encodes requests with the protocol's own codec and reads whole response frames back; it
uses nothing of the broker, so tests of the broker do not depend on client code under test.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.brokers import broker_processes
from tests.support.wire import recv_exact
from zkafka.cluster.snapshot import ClusterSnapshot, PartitionMetadata
from zkafka.config08 import BrokerConfig08
from zkafka.protocol import v08
from zkafka.protocol.fetch import FetchRequestPartition, FetchRequestTopic, FetchRequestV0
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.produce import ProduceRequestPartition, ProduceRequestTopic, ProduceRequestV0
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until
from zkafka.zk.paths08 import BrokerRegistration, PartitionState

# Short ZooKeeper session (the test server's tick is 200 ms), one partition per auto-created topic.
TEST_BROKER08_PROPS = {
    "host.name": "127.0.0.1",
    "advertised.host.name": "127.0.0.1",
    "port": "0",
    "num.partitions": "1",
    "zookeeper.session.timeout.ms": "4000",
    "log.flush.offset.checkpoint.interval.ms": "1000",
}


def broker08_props(broker_id: int, log_dir: Path, zk_connect: str, **overrides: str) -> dict[str, str]:
    props = {**TEST_BROKER08_PROPS, "broker.id": str(broker_id), "log.dirs": str(log_dir)}
    props["zookeeper.connect"] = zk_connect
    props.update({k.replace("_", "."): str(v) for k, v in overrides.items()})
    return props


@pytest.fixture
def start_broker08(tmp_path: Path, zk_connect: str) -> Iterator:
    """Factory: ``start_broker08(id, **props)`` runs an in-process 0.8 broker, stopped at the end of the test."""
    started: list[BrokerThread] = []

    def start(broker_id: int = 0, **overrides: str) -> BrokerThread:
        props = broker08_props(broker_id, tmp_path / f"broker08-{broker_id}", zk_connect, **overrides)
        broker = BrokerThread(BrokerConfig08(props)).start()
        started.append(broker)
        return broker

    try:
        yield start
    finally:
        for broker in reversed(started):
            broker.stop()


@pytest.fixture
def broker08_process(tmp_path: Path, zk_connect: str) -> Iterator:
    """Factory: ``broker08_process(id, **props)`` writes a 0.8 server.properties and starts a child broker."""

    def props(broker_id: int, port: int) -> dict[str, str]:
        return broker08_props(broker_id, tmp_path / f"broker08-{broker_id}", zk_connect, port=str(port))

    yield from broker_processes(tmp_path / "server08", props)


@pytest.fixture
def served(caplog):
    """The names of the requests the broker served (``JoinGroupRequestV5``...), from its debug log (any test)."""
    caplog.set_level(logging.DEBUG, logger="zkafka.server.apis08")

    def names() -> set[str]:
        return {r.args[0] for r in caplog.records if r.name == "zkafka.server.apis08" and r.msg.startswith("%s from")}

    return names


# -- a raw 0.8 wire client --------------------------------------------------------------------------------


class Client08:
    """One socket speaking the 0.8 protocol: requests encoded by protocol.v08, responses decoded by it."""

    def __init__(
        self, port: int, host: str = "127.0.0.1", client_id: str = "test-client", source: str | None = None
    ) -> None:
        """``source``: the local address to connect from (a loopback alias a network cut can tell apart)."""
        self.sock = socket.create_connection((host, port), timeout=15, source_address=source and (source, 0))
        self.client_id = client_id
        self.correlation_id = 0

    def send(self, body, correlation_id: int | None = None) -> int:
        if correlation_id is None:
            self.correlation_id += 1
            correlation_id = self.correlation_id
        self.sock.sendall(v08.encode_request(body, correlation_id, self.client_id))
        return correlation_id

    def read_frame(self) -> bytes:
        """One whole response frame, its int32 size included."""
        head = recv_exact(self.sock, 4)
        (size,) = struct.unpack(">i", head)
        return head + recv_exact(self.sock, size)

    def receive(self, body) -> v08.Response:
        return v08.decode_response(body.API_KEY, body.API_VERSION, self.read_frame()[4:])

    def call(self, body):
        """Send and read the answer; the response body (its correlation id checked)."""
        correlation_id = self.send(body)
        response = self.receive(body)
        assert response.correlation_id == correlation_id
        return response.body

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Client08:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def produce_request(topic: str, partition: int, message_set: bytes, acks: int = 1, timeout_ms: int = 5000):
    return ProduceRequestV0(
        acks,
        timeout_ms,
        [ProduceRequestTopic(topic, [ProduceRequestPartition(partition, message_set)])],
    )


def fetch_request(
    topic: str,
    partition: int,
    offset: int,
    max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
):
    return FetchRequestV0(
        -1,
        max_wait_ms,
        min_bytes,
        [FetchRequestTopic(topic, [FetchRequestPartition(partition, offset, max_bytes)])],
    )


# -- cluster pictures and response parts ------------------------------------------------------------------


def cluster_snapshot(
    leaders: Mapping[tuple[str, int], int],
    alive: Iterable[int] = (0,),
    replicas: tuple[int, ...] | None = None,
    isr: tuple[int, ...] | None = None,
) -> ClusterSnapshot:
    """A metadata snapshot: the given partitions with their leaders (replicas and ISR = the leader unless
    told), and live brokers ``host-<id>:909<id>``."""
    topics: dict[str, dict[int, PartitionMetadata]] = {}
    for (topic, partition), leader in leaders.items():
        state = PartitionState(leader, 0, isr or (leader,), 1)
        topics.setdefault(topic, {})[partition] = PartitionMetadata(replicas or (leader,), state)
    brokers = {b: BrokerRegistration(b, f"host-{b}", 9090 + b) for b in alive}
    return ClusterSnapshot(brokers, topics)


def wait_for_leaders(client: Client08, topics: list[str], timeout: float = 20.0) -> list:
    """Ask for the topics' metadata (auto-creating them) until each has a leader for every partition."""

    def ready():
        answer = client.call(MetadataRequestV0(topics))
        ok = all(
            t.error == 0 and t.partitions and all(p.leader >= 0 for p in t.partitions) for t in answer.topics
        )
        return answer.topics if ok else None

    return wait_until(ready, timeout, interval=0.05, message=f"leaders for {topics}")
