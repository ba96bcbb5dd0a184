"""ZkOffsetStore: consumer offsets of OffsetCommit/OffsetFetch v0, kept in ZooKeeper as 0.8.2 keeps them.

Each committed offset is a persistent znode ``/consumers/<group>/offsets/<topic>/<partition>`` holding the
decimal offset (the high-level consumer reads and writes the same znodes). v0 keeps no metadata string.
"""

from __future__ import annotations

from kazoo.client import KazooClient

from zkafka.zk.client import get_data, update_persistent
from zkafka.zk.paths import ZKGroupDirs


class ZkOffsetStore:
    """Reads and writes a group's committed offsets in ZooKeeper."""

    def __init__(self, client: KazooClient) -> None:
        self.client = client

    def commit(self, group: str, topic: str, partition: int, offset: int) -> None:
        update_persistent(self.client, ZKGroupDirs(group).offset_path(topic, partition), str(offset))

    def fetch(self, group: str, topic: str, partition: int) -> int | None:
        """The committed offset, or None when there is none (ValueError if its znode is not a number)."""
        value = get_data(self.client, ZKGroupDirs(group).offset_path(topic, partition))
        return int(value) if value is not None else None
