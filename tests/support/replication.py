"""Helpers for replication tests: a cluster's partition states from ZooKeeper, leaders from the brokers'
metadata, acks=-1 produce and fetch-everything over the raw 0.8 wire client (no client code under test)."""

from __future__ import annotations

from kazoo.client import KazooClient

from tests.support.server08 import Client08, fetch_request, produce_request
from zkafka.protocol import v08
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
        return client.call(v08.MetadataRequestV0(topics)).topics


def produce(
    client: Client08, topic: str, partition: int, values: list[bytes], acks: int = -1, timeout_ms=10000
):
    """One acks=-1 produce; the partition's (error, base offset)."""
    message_set = format08.build_message_set([(None, v) for v in values])
    answer = client.call(produce_request(topic, partition, message_set, acks=acks, timeout_ms=timeout_ms))
    part = answer.topics[0].partitions[0]
    return part.error, part.offset


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
