"""The 0.7 cluster as the Spark driver sees it when planning a read: ZooKeeper's registry and the brokers'
offsets.

Uses kazoo's default threading handler (Spark drivers are threaded) and one SimpleConsumer per broker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.protocol import LATEST_TIME
from zkafka.records.message07 import LOG_OVERHEAD
from zkafka.spark.cluster import ClusterView
from zkafka.spark.errors import BrokerGoneError
from zkafka.spark.offsets import TopicPartition, first_entry_size, walk_entries
from zkafka.spark.options import SourceOptions
from zkafka.zk.client import get_children, get_data, make_zk_client, start_zk_client
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, broker_id_path
from zkafka.zk.paths07 import Broker, broker_topic_path

log = logging.getLogger(__name__)

# Offsets requests ask for this many segment starts when looking for message boundaries.
MAX_SEGMENT_STARTS = 100_000


class Cluster(ClusterView):
    """Brokers, topics and broker-partitions from ZooKeeper, and offsets asked of the brokers."""

    def __init__(
        self, zookeeper_connect: str, session_timeout_ms: int = 6000, socket_timeout_ms: int = 30000
    ):
        self.zookeeper_connect = zookeeper_connect
        self.socket_timeout_ms = socket_timeout_ms
        self._zk = make_zk_client(zookeeper_connect, session_timeout_ms)
        self._consumers: dict[int, SimpleConsumer] = {}
        self._brokers: dict[int, Broker] | None = None

    @classmethod
    def for_options(cls, options: SourceOptions) -> Cluster:
        return cls(options.zookeeper_connect, options.zk_session_timeout_ms, options.socket_timeout_ms)

    def __enter__(self) -> Cluster:
        try:
            start_zk_client(self._zk)
        except BaseException:
            self._zk.close()
            raise
        return self

    def close(self) -> None:
        for consumer in self._consumers.values():
            consumer.close()
        self._consumers.clear()
        self._zk.stop()
        self._zk.close()

    # -- ZooKeeper ------------------------------------------------------------------------------------------

    def brokers(self) -> dict[int, Broker]:
        """The live brokers under /brokers/ids (read once per Cluster: one consistent view per plan)."""
        if self._brokers is None:
            brokers = {}
            for child in get_children(self._zk, BROKER_IDS_PATH):
                value = get_data(self._zk, broker_id_path(int(child)))
                if value is not None:
                    brokers[int(child)] = Broker.from_zk(child, value)
            self._brokers = brokers
        return self._brokers

    def topics(self) -> list[str]:
        return sorted(get_children(self._zk, BROKER_TOPICS_PATH))

    def partitions(self, topics: Iterable[str]) -> list[TopicPartition]:
        """Every broker-partition of the topics: ``/brokers/topics/<t>/<brokerId>`` holds the count."""
        result = []
        for topic in topics:
            for child in get_children(self._zk, broker_topic_path(topic)):
                value = get_data(self._zk, broker_topic_path(topic, int(child)))
                if value is None:  # the broker left between the two reads
                    continue
                result.extend(TopicPartition(topic, int(child), p) for p in range(int(value)))
        return sorted(result)

    def address(self, tp: TopicPartition) -> tuple[str, int] | None:
        """Where the broker-partition is read: its broker, if registered."""
        broker = self.brokers().get(tp.broker)
        return (broker.host, broker.port) if broker else None

    def unavailable(self, tp: TopicPartition) -> str:
        return f"broker {tp.broker} is not registered in ZooKeeper"

    # -- brokers --------------------------------------------------------------------------------------------

    def consumer(self, broker_id: int) -> SimpleConsumer:
        consumer = self._consumers.get(broker_id)
        if consumer is None:
            broker = self.brokers().get(broker_id)
            if broker is None:
                raise BrokerGoneError(f"broker {broker_id} is not registered in ZooKeeper")
            consumer = SimpleConsumer(broker.host, broker.port, socket_timeout_ms=self.socket_timeout_ms)
            self._consumers[broker_id] = consumer
        return consumer

    def offset(self, tp: TopicPartition, time: int) -> int:
        """The earliest (-2) or latest (-1) offset of a broker-partition (0 for a log that does not exist)."""
        answer = self.consumer(tp.broker).get_offsets_before(tp.topic, tp.partition, time, 1)
        return answer[0] if answer else 0

    def segment_starts(self, tp: TopicPartition) -> list[int]:
        """Start offsets of the partition's segments and its end, ascending: all known message boundaries."""
        answer = self.consumer(tp.broker).get_offsets_before(
            tp.topic, tp.partition, LATEST_TIME, MAX_SEGMENT_STARTS
        )
        return sorted(answer)

    def boundary_at_or_before(
        self, tp: TopicPartition, start: int, target: int, fetch_size: int, known: Iterable[int] = ()
    ) -> int:
        """The largest message boundary in ``[start, target]``; ``start`` must be a boundary.

        Walks entry headers forward from the nearest known boundary (``start`` or a segment start in
        ``known``), fetching ``fetch_size`` bytes at a time: this reads the bytes it walks over once.
        """
        pos = max([start, *(b for b in known if start <= b <= target)])
        consumer = self.consumer(tp.broker)
        size = fetch_size
        while pos < target:
            want = min(size, target - pos + LOG_OVERHEAD)
            data = consumer.fetch(tp.topic, tp.partition, pos, want).buffer
            boundary = walk_entries(data, pos, target)
            if boundary > pos:
                pos, size = boundary, fetch_size
                continue
            needed = first_entry_size(data)
            if needed is None or pos + needed > target:
                break  # the next entry ends past the target, or the log ends here
            size = needed  # an entry that ends before the target but is bigger than the fetch size
        return pos

    def first_boundary_after(self, tp: TopicPartition, start: int) -> int:
        """The end of the entry that starts at ``start`` (``start`` when the log ends there)."""
        data = self.consumer(tp.broker).fetch(tp.topic, tp.partition, start, LOG_OVERHEAD).buffer
        needed = first_entry_size(data)
        return start if needed is None else start + needed
