"""Helpers for replication tests: a cluster's partition states from ZooKeeper, leaders from the brokers'
metadata, acks=-1 produce and fetch-everything over the raw 0.8 wire client (no client code under test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kazoo.client import KazooClient

from tests.support.server08 import Client08, fetch_request, produce_request
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.records import format08
from zkafka.zk.paths08 import PartitionState, partition_state_path


def zk_state(zk: KazooClient, topic: str, partition: int) -> PartitionState | None:
    stat = zk.exists(partition_state_path(topic, partition))
    if stat is None:
        return None
    data, stat = zk.get(partition_state_path(topic, partition))
    return PartitionState.parse(topic, partition, data, zk_version=stat.version)


def metadata(port: int, topics: list[str]) -> list:
    with Client08(port) as client:
        return client.call(MetadataRequestV0(topics)).topics


def produce(
    client: Client08, topic: str, partition: int, values: list[bytes], acks: int = -1, timeout_ms=10000
):
    """One acks=-1 produce; the partition's (error, base offset)."""
    message_set = format08.build_message_set([(None, v) for v in values])
    answer = client.call(produce_request(topic, partition, message_set, acks=acks, timeout_ms=timeout_ms))
    part = answer.topics[0].partitions[0]
    return part.error, part.offset


def leaders_seen(port: int, topic: str, source: str | None = None) -> dict[int, tuple[int, int | None]]:
    """partition -> (leader id, leader's port) in the metadata of the broker at ``port``."""
    with Client08(port, source=source) as client:
        answer = client.call(MetadataRequestV0([topic]))
    ports = {b.node_id: b.port for b in answer.brokers}
    return {p.partition: (p.leader, ports.get(p.leader)) for t in answer.topics for p in t.partitions}


def leader_port(
    ports: Callable[[], list[int]], topic: str, partition: int = 0, source: str | None = None
) -> int | None:
    """The port of ``topic-partition``'s leader as the first of ``ports()`` that answers names it."""
    for port in ports():
        try:
            leader, leader_at = leaders_seen(port, topic, source).get(partition, (-1, None))
        except OSError:
            continue
        if leader >= 0 and leader_at is not None:
            return leader_at
    return None


def read_all(
    port: int, topic: str, partition: int, replica_id: int = -1
) -> tuple[int, list[tuple[int, bytes]]]:
    """(high watermark, every (offset, value)) a consumer (or a replica id) reads from the broker at ``port``."""
    out: list[tuple[int, bytes]] = []
    offset, high_watermark = 0, -1
    with Client08(port) as client:
        while True:
            request = fetch_request(topic, partition, offset)
            request = request._replace(replica_id=replica_id)
            data = client.call(request).topics[0].partitions[0]
            assert data.error == 0, f"fetch of {topic}-{partition} at {offset}: error {data.error}"
            high_watermark = data.high_watermark
            messages = list(format08.iter_messages(bytes(data.message_set), offset))
            if not messages:
                return high_watermark, out
            for m in messages:
                out.append((m.offset, m.value))
            offset = messages[-1].offset + 1


# -- load through failures: a producer that records what was acknowledged, a consumer that records what it read


class AckedProducer(threading.Thread):
    """Produces numbered messages with acks=-1 to one partition, finding its leader through Metadata requests
    to the live brokers, retrying a message until acknowledged; ``acked`` maps offset -> value. ``source``:
    the local address its connections come from."""

    def __init__(
        self,
        ports: Callable[[], list[int]],
        topic: str,
        partition: int = 0,
        batch: int = 5,
        source: str | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.ports, self.topic, self.partition, self.batch = ports, topic, partition, batch
        self.source = source
        self.acked: dict[int, bytes] = {}
        self.errors: list[int] = []  # error codes seen (each answered by a retry)
        self.failed_sends = 0  # connections lost or refused (retried)
        self.sent = 0
        self._stopping = threading.Event()
        self.exception: BaseException | None = None

    def stop(self) -> None:
        self._stopping.set()
        self.join(60)
        if self.exception is not None:
            raise self.exception

    def leader_port(self) -> int | None:
        return leader_port(self.ports, self.topic, self.partition, self.source)

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.exception = exc

    def _run(self) -> None:
        client = None
        n = 0
        while not self._stopping.is_set():
            values = [b"%s-%d" % (self.topic.encode(), n + i) for i in range(self.batch)]
            try:
                if client is None:
                    port = self.leader_port()
                    if port is None:
                        time.sleep(0.05)
                        continue
                    client = Client08(port, source=self.source)
                error, offset = produce(client, self.topic, self.partition, values)
            except OSError:
                self.failed_sends += 1
                if client is not None:
                    client.close()
                client = None
                time.sleep(0.05)
                continue
            self.sent += 1
            if error:
                self.errors.append(error)
                client.close()
                client = None
                time.sleep(0.05)
                continue
            for i, value in enumerate(values):
                self.acked[offset + i] = value
            n += self.batch
        if client is not None:
            client.close()


class WatchingConsumer(threading.Thread):
    """Reads the partition from its leader (as found by ``leader_port()``) as an ordinary consumer, recording
    every (offset, value) it was given; ``source``: the local address its connections come from."""

    def __init__(
        self, leader_port: Callable[[], int | None], topic: str, partition: int = 0, source: str | None = None
    ) -> None:
        super().__init__(daemon=True)
        self.leader_port, self.topic, self.partition = leader_port, topic, partition
        self.source = source
        self.seen: dict[int, bytes] = {}
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()
        self.join(60)

    def run(self) -> None:
        offset, client = 0, None
        while not self._stopping.is_set():
            try:
                if client is None:
                    port = self.leader_port()
                    if port is None:
                        time.sleep(0.05)
                        continue
                    client = Client08(port, source=self.source)
                request = fetch_request(self.topic, self.partition, offset, max_wait_ms=100, min_bytes=1)
                data = client.call(request).topics[0].partitions[0]
            except OSError:
                client = None
                time.sleep(0.05)
                continue
            if data.error:
                client.close()
                client = None
                time.sleep(0.05)
                continue
            for m in format08.iter_messages(bytes(data.message_set), offset):
                self.seen[m.offset] = m.value
                offset = m.offset + 1
        if client is not None:
            client.close()
