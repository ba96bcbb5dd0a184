"""ZookeeperConsumerConnector: the 0.7 high-level (ZooKeeper) consumer of a group.

The shared connector machinery (``connector.BaseConsumerConnector``) with the 0.7 rules: 0.7's
``consumer.properties`` keys, the 0.7 znode layout (owners and offsets by ``b-p`` broker partition), range
assignment over the sorted partition names, and fetchers that MULTIFETCH from the broker holding each
partition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zkafka.assignment.assignor import Assignor
from zkafka.assignment.range_assignor import assign
from zkafka.config07 import ConsumerConfig
from zkafka.consumer.connector import BaseConsumerConnector, ConnectorSettings, ConsumerIdConflictError
from zkafka.consumer.fetcher07 import Fetcher, latest_offsets
from zkafka.consumer.group_view07 import read_group_view
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.consumer.rebalancer import ViewReader
from zkafka.topic_count import TopicCount, TopicFilter
from zkafka.topic_count07 import StaticTopicCount07, WildcardTopicCount07

__all__ = ["ConsumerIdConflictError", "ZookeeperConsumerConnector", "create_consumer_connector"]


class ZookeeperConsumerConnector(BaseConsumerConnector):
    """The 0.7 high-level consumer: ``consumer.properties`` of 0.7, the 0.7 znode layout, range assignment
    over ``b-p`` partition names, and fetchers that MULTIFETCH from the broker holding each partition."""

    config_class = ConsumerConfig

    def _settings(self) -> ConnectorSettings:
        cfg = self.config
        return ConnectorSettings(
            group=cfg["groupid"],
            consumer_id=cfg["consumerid"],
            zk_connect=cfg["zk.connect"],
            zk_session_timeout_ms=cfg["zk.sessiontimeout.ms"],
            zk_connection_timeout_ms=cfg["zk.connectiontimeout.ms"],
            rebalance_retries=cfg["rebalance.retries.max"],
            rebalance_backoff_ms=cfg["rebalance.backoff.ms"],
            queued_chunks=cfg["queuedchunks.max"],
            consumer_timeout_ms=cfg["consumer.timeout.ms"],
            autocommit=cfg["autocommit.enable"],
            autocommit_interval_ms=cfg["autocommit.interval.ms"],
        )

    def _make_fetcher(self) -> Fetcher:
        cfg = self.config
        return Fetcher(
            fetch_size=cfg["fetch.size"],
            backoff_ms=cfg["fetcher.backoff.ms"],
            deep=not cfg["shallowiterator.enable"],
            socket_timeout_ms=cfg["socket.timeout.ms"],
            socket_buffersize=cfg["socket.buffersize"],
            autooffset_reset=cfg["autooffset.reset"],
        )

    def _rebalance_rules(self) -> tuple[ViewReader, Assignor]:
        return read_group_view, assign

    def _static_count(self, counts: dict[str, int]) -> TopicCount:
        return StaticTopicCount07(self.consumer_id, counts)

    def _wildcard_count(self, topic_filter: TopicFilter, num_streams: int) -> TopicCount:
        return WildcardTopicCount07(self.consumer_id, topic_filter, num_streams)

    def _partition_key(self, partition: Any) -> str:
        return partition.name


    def _log_ends(self, infos: list[PartitionTopicInfo]) -> dict[tuple[str, str], int]:
        """The brokers' latest offsets, asked now: 0.7 fetches say nothing about the log end."""
        return latest_offsets(infos)

def create_consumer_connector(config: ConsumerConfig | Mapping[str, str]) -> ZookeeperConsumerConnector:
    """The 0.7 ``Consumer.create(config)``."""
    return ZookeeperConsumerConnector(config)
