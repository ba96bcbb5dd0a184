"""The 0.7 line's znode layout: paths and znode values shared by brokers, producers and consumers.

The tree (all values UTF-8 strings)::

    /brokers/ids/<brokerId>                          ephemeral  <host>-<millis>:<host>:<port>
    /brokers/topics/<topic>/<brokerId>               ephemeral  partitions the broker hosts
    /consumers/<group>/ids/<consumerId>              ephemeral  topic count
    /consumers/<group>/owners/<topic>/<b>-<p>        ephemeral  owning thread id
    /consumers/<group>/offsets/<topic>/<b>-<p>       persistent next offset to consume
"""

from __future__ import annotations

from dataclasses import dataclass

BROKER_IDS_PATH = "/brokers/ids"
BROKER_TOPICS_PATH = "/brokers/topics"
CONSUMERS_PATH = "/consumers"


def broker_id_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def broker_topic_path(topic: str, broker_id: int | None = None) -> str:
    path = f"{BROKER_TOPICS_PATH}/{topic}"
    return path if broker_id is None else f"{path}/{broker_id}"


@dataclass(frozen=True)
class ZKGroupDirs:
    """The znode directories of one consumer group."""

    group: str

    @property
    def consumer_dir(self) -> str:
        return f"{CONSUMERS_PATH}/{self.group}"

    @property
    def consumer_registry_dir(self) -> str:
        return f"{self.consumer_dir}/ids"

    def consumer_path(self, consumer_id: str) -> str:
        return f"{self.consumer_registry_dir}/{consumer_id}"

    def owners_dir(self, topic: str) -> str:
        return f"{self.consumer_dir}/owners/{topic}"

    def offsets_dir(self, topic: str) -> str:
        return f"{self.consumer_dir}/offsets/{topic}"

    def owner_path(self, topic: str, partition: str | int) -> str:
        return f"{self.owners_dir(topic)}/{partition}"

    def offset_path(self, topic: str, partition: str | int) -> str:
        return f"{self.offsets_dir(topic)}/{partition}"


@dataclass(frozen=True, order=True)
class Broker:
    """A live broker as registered under ``/brokers/ids``."""

    id: int
    host: str
    port: int
    creator_id: str = ""

    def zk_value(self) -> str:
        return f"{self.creator_id}:{self.host}:{self.port}"

    @classmethod
    def from_zk(cls, broker_id: int | str, value: str) -> Broker:
        """Parse ``<creatorId>:<host>:<port>`` (split on ':' as 0.7 does)."""
        creator, host, port = value.split(":")
        return cls(int(broker_id), host, int(port), creator)


@dataclass(frozen=True, order=True)
class BrokerPartition:
    """A broker-partition, named ``<brokerId>-<partId>`` in ZooKeeper."""

    broker_id: int
    part_id: int

    @property
    def name(self) -> str:
        return f"{self.broker_id}-{self.part_id}"

    @classmethod
    def parse(cls, name: str) -> BrokerPartition:
        broker, part = name.split("-")
        return cls(int(broker), int(part))

    def __str__(self) -> str:
        return self.name
