"""The znode layout both lines share: the roots of the broker registry and of the topics, and a consumer
group's directories (each line's values and the rest of its tree: ``paths07``, ``paths08``)::

    /brokers/ids/<brokerId>                          ephemeral  a live broker
    /brokers/topics/<topic>                          the topic (what lies below is each line's)
    /consumers/<group>/ids/<consumerId>              ephemeral  the consumer's topic count
    /consumers/<group>/owners/<topic>/<partition>    ephemeral  owning thread id
    /consumers/<group>/offsets/<topic>/<partition>   persistent next offset to consume

A partition is named ``<brokerId>-<partId>`` on the 0.7 line, by its id alone on the 0.8 line.
"""

from __future__ import annotations

from dataclasses import dataclass

BROKER_IDS_PATH = "/brokers/ids"
BROKER_TOPICS_PATH = "/brokers/topics"
CONSUMERS_PATH = "/consumers"


def broker_id_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


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
