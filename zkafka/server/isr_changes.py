"""How a leader changes a partition's ISR (0.8-line only): 0.8.2's ``Partition.maybeExpandIsr`` /
``maybeShrinkIsr`` with ``updateIsr``, the state znode written conditional on its version
(``ReplicationUtils.updateLeaderAndIsr``).

An expand happens in memory first (the high watermark stays where the smaller ISR had it), then in ZooKeeper
on its own greenlet; a failed write takes it back. A shrink is written to ZooKeeper first and only then
applied. A write that finds the znode changed (the controller acted; its LeaderAndIsr will follow) changes
nothing. The replica manager decides when (a follower fetch, the periodic shrink) and completes the parked
requests the change allows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import gevent

from zkafka.cluster.partition import Partition
from zkafka.zk.paths08 import PartitionState

log = logging.getLogger(__name__)

# Writes a leader's new ISR into the partition's state znode (conditional on its version): the new version,
# or None when the znode changed meanwhile (the controller acted; its LeaderAndIsr will follow).
IsrWriter = Callable[[Partition, tuple[int, ...]], "int | None"]


def expand_isr(hosted: Partition, isr: tuple[int, ...], writer: IsrWriter | None) -> None:
    """Grow the ISR to ``isr``: in memory now, in ZooKeeper on a greenlet (taken back if that write fails)."""
    log.info("%s-%d: ISR expands from %s to %s", hosted.topic, hosted.partition, list(hosted.isr), list(isr))
    old, hosted.isr = hosted.isr, isr
    if writer is None:
        return
    hosted.isr_updating = True
    epoch = hosted.leader_epoch

    def write() -> None:
        try:
            version = writer(hosted, isr)
        finally:
            hosted.isr_updating = False
        if hosted.leader_epoch != epoch:
            return
        if version is None:
            if hosted.isr == isr:
                hosted.isr = old
        else:
            hosted.zk_version = version

    gevent.spawn(write)


def shrink_isr(hosted: Partition, isr: tuple[int, ...], writer: IsrWriter | None) -> bool:
    """Shrink the ISR to ``isr``, ZooKeeper first; False when the write failed or leadership went meanwhile."""
    log.info("%s-%d: ISR shrinks from %s to %s", hosted.topic, hosted.partition, list(hosted.isr), list(isr))
    version = hosted.zk_version
    if writer is not None:
        hosted.isr_updating = True
        try:
            version = writer(hosted, isr)
        finally:
            hosted.isr_updating = False
        if version is None or not hosted.is_leader:
            return False
    hosted.isr_written(isr, version)
    return True


def zk_isr_writer(client: Any) -> IsrWriter:
    """An IsrWriter on a kazoo client: a version-checked write; after a conflict, success only if the znode
    holds exactly what was written (a retried write that had gone through)."""
    from kazoo.exceptions import BadVersionError, KazooException, NoNodeError

    from zkafka.zk.paths08 import partition_state_path

    def write(hosted: Partition, isr: tuple[int, ...]) -> int | None:
        path = partition_state_path(hosted.topic, hosted.partition)
        wanted = hosted.state_with_isr(isr)
        try:
            return client.set(path, wanted.to_json().encode(), version=hosted.zk_version).version
        except BadVersionError:
            try:
                data, stat = client.get(path)
            except NoNodeError:
                return None
            found = PartitionState.parse(hosted.topic, hosted.partition, data)
            if found == wanted:
                return stat.version
            log.info("%s-%d: ISR not written, the state changed to %s", hosted.topic, hosted.partition, found)
            return None
        except NoNodeError:
            return None
        except KazooException as exc:
            log.warning("%s-%d: ISR write failed: %r", hosted.topic, hosted.partition, exc)
            return None

    return write
