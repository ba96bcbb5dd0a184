"""The 0.7 line's znode layout: paths and znode values shared by brokers, producers and consumers.

The tree (all values UTF-8 strings; the roots and the group directories are ``zk/paths.py``'s)::

    /brokers/ids/<brokerId>                          ephemeral  <host>-<millis>:<host>:<port>
    /brokers/topics/<topic>/<brokerId>               ephemeral  partitions the broker hosts
    /consumers/<group>/ids/<consumerId>              ephemeral  topic count
    /consumers/<group>/owners/<topic>/<b>-<p>        ephemeral  owning thread id
    /consumers/<group>/offsets/<topic>/<b>-<p>       persistent next offset to consume
"""

from __future__ import annotations

from dataclasses import dataclass

from zkafka.zk.paths import BROKER_TOPICS_PATH


def broker_topic_path(topic: str, broker_id: int | None = None) -> str:
    path = f"{BROKER_TOPICS_PATH}/{topic}"
    return path if broker_id is None else f"{path}/{broker_id}"


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
