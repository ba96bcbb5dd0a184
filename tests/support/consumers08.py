"""Helpers for the 0.8 consumer tests: a cluster of 0.8 brokers with a topic, producing, group state in ZooKeeper."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.consumers import committed, owners, with_overrides
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.topics import create_topic
from zkafka.consumer.fetcher08 import Fetcher08
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.records.format08 import assign_offsets, build_message_set
from zkafka.utils import wait_until

# Small timeouts: the test ZooKeeper has tickTime 200, so sessions of 2-4 s are allowed.
FAST_CONSUMER08 = {
    "zookeeper.session.timeout.ms": "3000",
    "zookeeper.connection.timeout.ms": "10000",
    "rebalance.backoff.ms": "200",
    "rebalance.max.retries": "10",
    "refresh.leader.backoff.ms": "50",
    "auto.commit.interval.ms": "100",
    "auto.offset.reset": "smallest",
    "socket.timeout.ms": "10000",
}


def log_bytes(pairs, base: int, codec: int = 0) -> bytes:
    """A message set as the leader stored it from ``base`` on."""
    return assign_offsets(build_message_set(pairs, codec), base).data


def entry_each(messages, base: int) -> bytes:
    """A log of one entry per ``(key, value, codec)`` (a plain message, or a wrapper of one), from ``base`` on."""
    return b"".join(
        log_bytes([(key, value)], base + i, codec) for i, (key, value, codec) in enumerate(messages)
    )


def fetcher08(brokers: Callable[[], list[tuple[str, int]]], fetch_size: int = 1 << 20) -> Fetcher08:
    """A Fetcher08 with the tests' short waits and backoffs, finding leaders through ``brokers()``."""
    return Fetcher08(
        brokers=brokers,
        fetch_size=fetch_size,
        min_bytes=1,
        max_wait_ms=100,
        socket_timeout_ms=5000,
        socket_buffersize=1 << 16,
        auto_offset_reset="smallest",
        refresh_leader_backoff_ms=50,
    )


def offline_fetcher08() -> Fetcher08:
    """A Fetcher08 that knows no broker: for feeding fetched bytes to its ``_enqueue`` in unit tests."""
    return fetcher08(lambda: [])


def consumer08_config(zk_connect: str, group: str, **overrides: Any) -> dict[str, str]:
    return with_overrides({"zookeeper.connect": zk_connect, "group.id": group, **FAST_CONSUMER08}, overrides)


def start_cluster08(
    start_broker08, zk_client, brokers: int = 2, topics: dict[str, int] | None = None, **props: str
) -> list:
    """0.8 brokers 0..n-1 (with ``props``) and ``topics`` (name -> partitions, default ``{"t": 8}``) with a
    leader each."""
    started = [start_broker08(i, **props) for i in range(brokers)]
    wait_until(lambda: len(zk_client.get_children("/brokers/ids")) == brokers, message="brokers registered")
    topics = topics if topics is not None else {"t": 8}
    for topic, partitions in topics.items():
        create_topic(zk_client, topic, partitions, 1)
    with Client08(started[0].port) as client:
        wait_for_leaders(client, list(topics))
    return started


def broker_list(brokers) -> str:
    return ",".join(f"127.0.0.1:{b.port}" for b in brokers)


def produce08(brokers, topic: str, count: int, prefix: str = "m", keyed: bool = True) -> set[bytes]:
    """``count`` distinct values (keys ``k<i>`` spread them over the partitions) sent with acks=1."""
    values = [f"{prefix}-{topic}-{i}".encode() for i in range(count)]
    config = {"metadata.broker.list": broker_list(brokers), "request.required.acks": "1"}
    with Producer08({**config, "producer.type": "async", "queue.buffering.max.ms": "20"}) as producer:
        producer.send(
            *(KeyedMessage(topic, f"k{i}".encode() if keyed else None, v) for i, v in enumerate(values))
        )
    return set(values)


def owners08(zk_client, group: str) -> dict[tuple[str, int], str]:
    """``(topic, partition id) -> owning thread id`` as stored under /consumers/<group>/owners."""
    return owners(zk_client, group, int)


def committed08(zk_client, group: str, topic: str) -> dict[int, int]:
    """``partition id -> committed offset`` under /consumers/<group>/offsets/<topic>."""
    return committed(zk_client, group, topic, int)
