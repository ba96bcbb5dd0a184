"""The partitions a consumer owns in the current rebalance generation, their fetchers and streams' queues.

This is 0.7's ``topicRegistry`` with what is done to it (for both lines: a partition is written into its
znode paths as ``str(partition)``, ``b-p`` in 0.7 and the id in 0.8): a rebalance stops the fetchers, drops what is
queued, commits and releases the owner nodes (``stop``), then installs the new share (``install``); the
connector commits (``commit``) and pauses, resumes or revokes everything as the ZooKeeper session goes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from gevent.queue import Queue

from zkafka.consumer.membership import GroupMembership
from zkafka.consumer.partition_state import BrokerRef, PartitionRef, PartitionTopicInfo
from zkafka.consumer.stream import KafkaStream
from zkafka.zk.client import delete_owned, delete_versions, update_persistent, update_persistent_many

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)

PartitionKey = tuple[str, PartitionRef]  # (topic, partition): a 0.7 broker partition or a 0.8 id


class PartitionFetcher(Protocol):
    """What fetches the owned partitions: ``fetcher.Fetcher`` (0.7) or ``fetcher08.Fetcher08``."""

    on_offset_reset: Callable[[PartitionTopicInfo, int], None] | None

    def start(self, infos: Iterable[PartitionTopicInfo]) -> None: ...

    def stop(self) -> None: ...

    def initial_offset(self, topic: str, partition: PartitionRef, broker: BrokerRef | None) -> int:
        """The offset to start a partition without a committed offset from."""


class OwnedPartitions:
    """The owned ``PartitionTopicInfo``s of one consumer, the fetcher feeding them and the streams they feed."""

    def __init__(self, membership: GroupMembership, fetcher: PartitionFetcher) -> None:
        self.membership = membership
        self.fetcher = fetcher
        fetcher.on_offset_reset = self.write_reset_offset
        self.infos: dict[PartitionKey, PartitionTopicInfo] = {}
        self.epoch = -1  # the session epoch the infos were claimed in
        self.held = HeldNodes()
        self.last_committed: dict[PartitionKey, int] = {}  # what the last ``stop`` left committed
        self.streams: list[KafkaStream] = []
        self._queues: dict[Hashable, Queue] = {}

    def add_stream(self, key: Hashable, stream: KafkaStream) -> None:
        """A stream fed by the partitions of ``key``: ``(topic, thread id)``, or a thread id for every topic."""
        self._queues[key] = stream.queue
        self.streams.append(stream)

    def queue_for(self, topic: str, thread_id: str) -> Queue:
        queue = self._queues.get((topic, thread_id))
        return queue if queue is not None else self._queues[thread_id]

    def install(self, infos: dict[PartitionKey, PartitionTopicInfo], epoch: int) -> None:
        """Own ``infos`` (claimed in session ``epoch``) and start fetching them."""
        self.infos = infos
        self.epoch = epoch
        self.fetcher.start(infos.values())

    def matches(self, wanted: Mapping[PartitionKey, tuple[str, BrokerRef | None]], epoch: int) -> bool:
        """Whether exactly ``wanted`` (``key -> (thread id, broker)``) is owned, unrevoked, in session ``epoch``."""
        owned = self.infos
        if self.epoch != epoch or owned.keys() != wanted.keys():
            return False
        for key, (thread_id, broker) in wanted.items():
            info = owned[key]
            if info.revoked or info.thread_id != thread_id or info.broker != broker:
                return False
        return True

    def owner_paths(self) -> list[str]:
        dirs = self.membership.dirs
        return [dirs.owner_path(topic, str(partition)) for topic, partition in self.infos]

    def stop(self, commit: bool = True, release_owners: bool = True) -> list[str]:
        """Rebalance steps 2-3: stop the fetchers, drop what is queued, commit, release the owner nodes (or
        leave that to the caller: ``release_owners=False``). The owner nodes of what was owned."""
        self.fetcher.stop()
        paths = self.owner_paths()
        for info in list(self.infos.values()):
            info.revoke()
        for stream in self.streams:
            stream.clear()
        if commit:
            self.commit()
        self.last_committed = {
            key: info.committed_offset for key, info in self.infos.items() if info.committed_offset is not None
        }
        if release_owners:
            self.release(paths)
        self.infos = {}
        return paths

    def release(self, paths: list[str]) -> None:
        """Delete these owner nodes of ours: at the versions they were claimed at when each is still held
        (one transaction, nothing read first), else those this session owns (``release``)."""
        versions = self.held.versions(paths)
        self.held.forget(paths)
        if versions is None or not _delete_versions(self.membership.zk, versions):
            release(self.membership.zk, paths)

    def commit(self) -> None:
        """Write the consumed offset of every owned partition that moved since its last commit (the writes
        pipelined: one ZooKeeper round trip)."""
        m = self.membership
        if not m.connected.is_set():
            return  # no connection, so no knowing we still own anything: the next commit writes it
        moved = {}
        for info in list(self.infos.values()):
            offset = info.consumed_offset
            if offset != info.committed_offset and offset >= 0:  # < 0: a 0.8 fetcher has not reset it yet
                moved[m.dirs.offset_path(info.topic, str(info.partition))] = (info, offset)
        errors = update_persistent_many(m.zk, {path: str(offset) for path, (_, offset) in moved.items()})
        for path, (info, offset) in moved.items():
            if errors[path] is None:
                info.committed_offset = offset
                log.debug("%s: committed %s:%s at %d", m.consumer_id, info.topic, info.partition, offset)
            else:
                log.warning(
                    "%s: could not commit %s:%s: %r", m.consumer_id, info.topic, info.partition, errors[path]
                )

    def write_reset_offset(self, info: PartitionTopicInfo, offset: int) -> None:
        """After OffsetOutOfRange with smallest/largest: store the new offset at once, as 0.7 does."""
        if self.infos.get((info.topic, info.partition)) is not info:
            return
        m = self.membership
        update_persistent(m.zk, m.dirs.offset_path(info.topic, str(info.partition)), str(offset))
        info.committed_offset = offset

    def pause(self) -> None:
        """Ownership is in doubt (connection down): streams wait before handing out more."""
        for info in list(self.infos.values()):
            info.active = False

    def resume(self) -> None:
        for info in list(self.infos.values()):
            if not info.revoked:
                info.active = True

    def revoke_all(self) -> None:
        """The session is gone and the owner nodes with it: nothing is ours any more."""
        for info in list(self.infos.values()):
            info.revoke()
        self.infos = {}
        self.held.clear()


class HeldNodes:
    """The owner nodes this session created, at their versions, each watched since its claim: one that changes
    or goes (an operator deleted it; a lost connection took the watch) no longer counts as held. A node
    held is known to be ours without reading it: the rebalance that keeps its share reads nothing, a
    release deletes at the known versions."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[int, object]] = {}

    def watch(self, path: str, then: Callable[[], object] | None = None) -> tuple[object, Callable]:
        """A token and the watch to arm on ``path`` before ``hold``: it ends this holding only (and calls
        ``then``)."""
        token = object()

        def fired(_event) -> None:
            if self._held.get(path, (0, None))[1] is token:
                del self._held[path]
            if then is not None:
                then()

        return token, fired

    def hold(self, path: str, version: int, token: object) -> None:
        self._held[path] = (version, token)

    def versions(self, paths: Iterable[str]) -> dict[str, int] | None:
        """``path -> version`` if every one of ``paths`` is held, else None."""
        held = self._held
        if not all(path in held for path in paths):
            return None
        return {path: held[path][0] for path in paths}

    def forget(self, paths: Iterable[str]) -> None:
        for path in paths:
            self._held.pop(path, None)

    def clear(self) -> None:
        self._held.clear()


def _delete_versions(zk: KazooClient, versions: dict[str, int]) -> bool:
    try:
        return not versions or delete_versions(zk, versions)
    except Exception as exc:  # the session is gone, and the nodes with it
        log.debug("could not delete %s: %r", list(versions), exc)
        return False


def release(zk: KazooClient, paths: Iterable[str]) -> None:
    """Delete the owner nodes this session holds among ``paths`` (the others are not ours any more), in one
    transaction."""
    paths = list(paths)
    try:
        delete_owned(zk, paths)
    except Exception as exc:  # the session is gone, and the nodes with it
        log.debug("could not delete %s: %r", paths, exc)
