"""The 0.8 cluster as Spark sees it when planning or reading: partitions, leaders and offsets asked of the
brokers (Metadata and ListOffsets requests), the brokers found through ``kafka.bootstrap.servers`` or the
registrations under ``/brokers/ids``.

Offsets are logical, so every offset is a message boundary: the boundary helpers the planner shares with
the 0.7 line (``Cluster``) are trivial here. Leaders are followed as 0.8 clients follow them: a partition
without a known leader, or whose leader answers NOT_LEADER_FOR_PARTITION or cannot be reached, is looked up
again (the metadata refreshed with a backoff) until ``kafka.default.api.timeout.ms`` has passed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from zkafka.client08.topic_metadata import TopicMetadataCache
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.errors import (
    BrokerNotAvailableError,
    InvalidPartitionError,
    KafkaError,
    LeaderNotAvailableError,
    NotLeaderForPartitionError,
)
from zkafka.spark.cluster import ClusterView
from zkafka.spark.errors import BrokerGoneError
from zkafka.spark.offsets import TopicPartition08
from zkafka.spark.options import SourceOptions
from zkafka.zk.client import get_children, get_data, make_zk_client, start_zk_client
from zkafka.zk.paths import broker_id_path
from zkafka.zk.paths08 import BrokerRegistration

log = logging.getLogger(__name__)

CLIENT_ID = "zkafka-spark"
# What a leader change looks like to a client: the partition moved, has no leader yet, or its broker is gone.
LEADER_ERRORS = (
    NotLeaderForPartitionError,
    LeaderNotAvailableError,
    InvalidPartitionError,  # UNKNOWN_TOPIC_OR_PARTITION from a broker that does not host it (yet)
    BrokerNotAvailableError,
    OSError,  # connection refused, reset or timed out
)
MAX_BACKOFF_S = 1.0

T = TypeVar("T")


def registered_brokers(zookeeper_connect: str, session_timeout_ms: int = 6000) -> list[tuple[str, int]]:
    """``(host, port)`` of the 0.8 brokers registered under ``/brokers/ids``."""
    zk = make_zk_client(zookeeper_connect, session_timeout_ms)
    try:
        start_zk_client(zk)
        brokers = []
        for child in get_children(zk, "/brokers/ids"):
            value = get_data(zk, broker_id_path(int(child)))
            if value is not None:
                registration = BrokerRegistration.parse(child, value)
                brokers.append((registration.host, registration.port))
        return sorted(brokers)
    finally:
        zk.stop()
        zk.close()


class Cluster08(ClusterView):
    """Partitions, leaders and offsets of a 0.8 cluster, asked of its brokers; one connection per broker."""

    def __init__(
        self,
        bootstrap: Sequence[tuple[str, int]] = (),
        zookeeper_connect: str | None = None,
        *,
        zk_session_timeout_ms: int = 6000,
        socket_timeout_ms: int = 30000,
        api_timeout_ms: int = 60000,
    ) -> None:
        self.zookeeper_connect = zookeeper_connect
        self.zk_session_timeout_ms = zk_session_timeout_ms
        self.socket_timeout_ms = socket_timeout_ms
        self.api_timeout_ms = api_timeout_ms
        self._bootstrap = list(bootstrap)
        self._metadata: TopicMetadataCache | None = None
        self._consumers: dict[tuple[str, int], SimpleConsumer08] = {}
        self._leaders: dict[TopicPartition08, tuple[str, int]] = {}  # leaders that answered last time

    @classmethod
    def for_options(cls, options: SourceOptions) -> Cluster08:
        return cls(
            options.bootstrap_servers,
            options.zookeeper_connect,
            zk_session_timeout_ms=options.zk_session_timeout_ms,
            socket_timeout_ms=options.socket_timeout_ms,
            api_timeout_ms=options.api_timeout_ms,
        )

    def close(self) -> None:
        for consumer in self._consumers.values():
            consumer.close()
        self._consumers.clear()

    # -- metadata -------------------------------------------------------------------------------------------

    @property
    def metadata(self) -> TopicMetadataCache:
        """Every topic's partitions and leaders, asked once per Cluster08 (one consistent view per plan)."""
        if self._metadata is None:
            self.refresh()
        assert self._metadata is not None
        return self._metadata

    def refresh(self) -> None:
        """Ask the cluster again about every topic (never names one: that would create it)."""
        if not self._bootstrap and self.zookeeper_connect:
            self._bootstrap = registered_brokers(self.zookeeper_connect, self.zk_session_timeout_ms)
            if not self._bootstrap:
                raise BrokerNotAvailableError(f"no 0.8 broker is registered in {self.zookeeper_connect}")
        cache = TopicMetadataCache(self.bootstrap, CLIENT_ID, self.socket_timeout_ms)
        cache.update([])
        self._metadata = cache

    @property
    def bootstrap(self) -> tuple[tuple[str, int], ...]:  # type: ignore[override]
        """Where to ask for metadata: the given brokers and those the last answer named (for read tasks)."""
        known = self._metadata.brokers.values() if self._metadata is not None else ()
        return tuple(dict.fromkeys([*self._bootstrap, *sorted((b.host, b.port) for b in known)]))

    def topics(self) -> list[str]:
        return sorted(self.metadata.topics)

    def partitions(self, topics: Iterable[str]) -> list[TopicPartition08]:
        """Every partition of the topics the cluster knows (a topic it does not know has none)."""
        result = []
        for topic in topics:
            metadata = self.metadata.topics.get(topic)
            for p in metadata.partitions if metadata is not None else ():
                result.append(TopicPartition08(topic, p.partition))
        return sorted(result)

    def address(self, tp: TopicPartition08) -> tuple[str, int] | None:
        """The leader's ``(host, port)``, waiting for one up to the API timeout; None when there is none."""
        try:
            return self.with_leader(tp, lambda consumer: (consumer.host, consumer.port))
        except BrokerGoneError:
            return None

    def unavailable(self, tp: TopicPartition08) -> str:
        return f"partition {tp} has no reachable leader (waited {self.api_timeout_ms} ms)"

    # -- leaders --------------------------------------------------------------------------------------------

    def assume_leader(self, tp: TopicPartition08, host: str, port: int) -> None:
        """Try ``host:port`` first for ``tp`` (the leader a plan found), before asking for metadata."""
        self._leaders[tp] = (host, port)

    def with_leader(self, tp: TopicPartition08, action: Callable[[SimpleConsumer08], T]) -> T:
        """``action`` on a connection to the partition's leader, looked up again after leader errors until
        the API timeout; then BrokerGoneError naming the last failure."""
        deadline = time.monotonic() + self.api_timeout_ms / 1000.0
        backoff, last = 0.05, "no leader"
        while True:
            address = self._leaders.get(tp)
            if address is None:
                leader = self.metadata.leader(tp.topic, tp.partition)
                address = (leader.host, leader.port) if leader is not None else None
            if address is not None:
                try:
                    result = action(self._consumer(address))
                except LEADER_ERRORS as exc:
                    last = f"{type(exc).__name__}: {exc}"
                    log.info("%s: the leader at %s:%d failed (%s); looking again", tp, *address, last)
                    self._leaders.pop(tp, None)
                    self._drop(address)
                else:
                    self._leaders[tp] = address
                    return result
            if time.monotonic() >= deadline:
                raise BrokerGoneError(
                    f"{tp}: no leader could be reached in {self.api_timeout_ms} ms ({last})"
                )
            time.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            try:
                self.refresh()
            except (KafkaError, OSError) as exc:
                last = f"metadata: {exc}"

    def _consumer(self, address: tuple[str, int]) -> SimpleConsumer08:
        consumer = self._consumers.get(address)
        if consumer is None:
            # the newest Fetch both know: the log's entries as stored (message sets or record batches)
            consumer = SimpleConsumer08(*address, self.socket_timeout_ms, client_id=CLIENT_ID)
            self._consumers[address] = consumer
        return consumer

    def _drop(self, address: tuple[str, int]) -> None:
        consumer = self._consumers.pop(address, None)
        if consumer is not None:
            consumer.close()

    # -- offsets --------------------------------------------------------------------------------------------

    def offset(self, tp: TopicPartition08, time_ms: int) -> int:
        """The earliest (-2) or latest (-1: the high watermark) offset of a partition, from its leader."""
        answer = self.with_leader(tp, lambda c: c.get_offsets_before(tp.topic, tp.partition, time_ms, 1))
        return answer[0] if answer else 0

    # Every logical offset is a message boundary: what the 0.7 line finds by walking the log is given here.

    def segment_starts(self, tp: TopicPartition08) -> list[int]:
        return []

    def boundary_at_or_before(
        self, tp: TopicPartition08, start: int, target: int, fetch_size: int, known: Iterable[int] = ()
    ) -> int:
        return target

    def first_boundary_after(self, tp: TopicPartition08, start: int) -> int:
        return start + 1
