"""ZookeeperConsumerConnector08: the 0.8.2 high-level (ZooKeeper) consumer of a group.

The 0.7 connector's machinery (``connector.BaseConsumerConnector``: membership, rebalancer, owned partitions,
streams, autocommit, shutdown) with the 0.8 rules:

- ``consumer.properties`` of 0.8 (``group.id``, ``zookeeper.connect``, ``fetch.message.max.bytes`` ...);
- the member registers JSON under ``/consumers/<g>/ids``; owners and offsets are keyed by partition id;
- ``partition.assignment.strategy``: ``range`` (per topic, partition ids in order) or ``roundrobin``
  (identical subscriptions; partitions dealt by the hash of ``[topic,partition]``);
- fetchers long-poll each partition's leader, found from the brokers' metadata (``fetcher08``);
- offsets (the next offset to consume) are committed to ZooKeeper; ``offsets.storage=kafka`` is not
  supported by this consumer (it needs the offset manager of a 0.8.2 broker) and is refused.

The 0.7 guarantees hold: a stream never hands out a message of a partition its consumer gave up, and only
owned partitions are committed. Messages are ``MessageAndMetadata08`` (key, message, topic, partition, offset).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial

from zkafka.assignment.assignor import ASSIGNORS, Assignor
from zkafka.config08 import ConsumerConfig08
from zkafka.consumer.connector import BaseConsumerConnector, ConnectorSettings
from zkafka.consumer.fetcher08 import Fetcher08
from zkafka.consumer.group_view08 import read_group_view08
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.consumer.rebalancer import ViewReader
from zkafka.errors import InvalidConfigError
from zkafka.topic_count import TopicCount, TopicFilter
from zkafka.topic_count08 import StaticTopicCount08, WildcardTopicCount08
from zkafka.zk.paths import BROKER_IDS_PATH
from zkafka.zk.paths08 import BrokerRegistration, ZkDataError
from zkafka.zk.watched import WatchedZNodes

__all__ = ["ZookeeperConsumerConnector08", "create_consumer_connector08", "registered_brokers"]

log = logging.getLogger(__name__)


class ZookeeperConsumerConnector08(BaseConsumerConnector):
    """A member of a 0.8 consumer group (``kafka.consumer.Consumer.create`` of 0.8.2)."""

    config_class = ConsumerConfig08

    def _settings(self) -> ConnectorSettings:
        cfg = self.config
        if cfg["offsets.storage"] != "zookeeper":
            raise InvalidConfigError(
                "offsets.storage: only 'zookeeper' is supported by the 0.8 ZooKeeper consumer"
            )
        return ConnectorSettings(
            group=cfg["group.id"],
            consumer_id=cfg["consumer.id"],
            zk_connect=cfg["zookeeper.connect"],
            zk_session_timeout_ms=cfg["zookeeper.session.timeout.ms"],
            zk_connection_timeout_ms=cfg["zookeeper.connection.timeout.ms"],
            rebalance_retries=cfg["rebalance.max.retries"],
            rebalance_backoff_ms=cfg["rebalance.backoff.ms"],
            queued_chunks=cfg["queued.max.message.chunks"],
            consumer_timeout_ms=cfg["consumer.timeout.ms"],
            autocommit=cfg["auto.commit.enable"],
            autocommit_interval_ms=cfg["auto.commit.interval.ms"],
        )

    def _make_fetcher(self) -> Fetcher08:
        cfg = self.config
        return Fetcher08(
            brokers=lambda: registered_brokers(self.membership.nodes),
            fetch_size=cfg["fetch.message.max.bytes"],
            min_bytes=cfg["fetch.min.bytes"],
            max_wait_ms=cfg["fetch.wait.max.ms"],
            socket_timeout_ms=cfg["socket.timeout.ms"],
            socket_buffersize=cfg["socket.receive.buffer.bytes"],
            auto_offset_reset=cfg["auto.offset.reset"],
            refresh_leader_backoff_ms=cfg["refresh.leader.backoff.ms"],
            num_fetchers=cfg["num.consumer.fetchers"],
            client_id=cfg["client.id"],
        )

    def _rebalance_rules(self) -> tuple[ViewReader, Assignor]:
        exclude = self.config["exclude.internal.topics"]
        read_view = partial(read_group_view08, exclude_internal_topics=exclude)
        return read_view, ASSIGNORS[self.config["partition.assignment.strategy"]]

    def _static_count(self, counts: dict[str, int]) -> TopicCount:
        return StaticTopicCount08(self.consumer_id, counts)

    def _wildcard_count(self, topic_filter: TopicFilter, num_streams: int) -> TopicCount:
        exclude = self.config["exclude.internal.topics"]
        return WildcardTopicCount08(self.consumer_id, topic_filter, num_streams, exclude)

    def _partition_key(self, partition: int) -> int:
        return partition

    def _log_ends(self, infos: list[PartitionTopicInfo]) -> dict[tuple[str, str], int]:
        """The high watermark each partition's last fetch returned."""
        return {(i.topic, str(i.partition)): i.log_end for i in infos if i.log_end is not None}

    @property
    def leaders(self) -> dict[tuple[str, int], int]:
        """``(topic, partition) -> broker id`` of the leader each owned partition is fetched from now."""
        return self.owned.fetcher.leaders()


def registered_brokers(nodes: WatchedZNodes) -> list[tuple[str, int]]:
    """``(host, port)`` of every 0.8 broker registered under ``/brokers/ids`` (unreadable ones skipped), read
    through the member's watched znodes (asked again only after a change)."""
    ids = nodes.read({BROKER_IDS_PATH: False}).children[BROKER_IDS_PATH]
    values = nodes.read(values={f"{BROKER_IDS_PATH}/{b}": False for b in ids}).values
    brokers = []
    for broker_id in ids:
        value = values[f"{BROKER_IDS_PATH}/{broker_id}"]
        if value is None:
            continue
        try:
            registration = BrokerRegistration.parse(broker_id, value)
        except (ZkDataError, ValueError) as exc:
            log.warning("ignoring broker %s: %s", broker_id, exc)
            continue
        brokers.append((registration.host, registration.port))
    return brokers


def create_consumer_connector08(config: ConsumerConfig08 | Mapping[str, str]) -> ZookeeperConsumerConnector08:
    """0.8's ``Consumer.create(config)``."""
    return ZookeeperConsumerConnector08(config)
