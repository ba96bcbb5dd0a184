"""DelayedFetch: a fetch that waits in the purgatory until its partitions hold ``min_bytes`` or ``max_wait_ms`` ends.

It is watched under each requested ``(topic, partition)``; every append to one of them re-checks it
(``try_complete``). It completes, and then re-reads every partition for the response, when (0.8.2's cases):
a partition is no longer led here or unknown (A, B); the fetch offset lies in an older segment than the end
(C: the consumer is a whole segment behind); or the bytes readable past the fetch offsets add up to
``min_bytes`` (D; each partition counted up to its ``max_bytes``, as 0.9 does); or a partition's leader
epoch is not the one the request names (Fetch v9+). Otherwise it completes at ``max_wait_ms`` with whatever
there is then. Its answer is read with the request's ``max_bytes`` (v3+) and goes through ``respond``, which
for a fetch session picks the partitions that changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zkafka.server.log_read import NO_EPOCH, Fetch, PartitionRead, read_from_local_log, read_partition
from zkafka.server.purgatory import DelayedOperation
from zkafka.server.replica_manager import ReplicaManager


class DelayedFetch(DelayedOperation):
    """A parked fetch. Its ``result`` is what the connection waits on: the response parts once it completes;
    if the connection closes first the network layer cancels the result, which drops the fetch."""

    def __init__(
        self,
        max_wait_ms: int,
        min_bytes: int,
        replica_id: int,
        fetches: list[Fetch],
        replica_manager: ReplicaManager,
        respond: Callable[[list[PartitionRead]], Any],
        max_bytes: int | None = None,
        leader_epochs: list[int] | None = None,
        hard_limit: int | None = None,
    ) -> None:
        super().__init__(max_wait_ms)
        self.min_bytes = min_bytes
        self.replica_id = replica_id
        self.fetches = fetches
        self.replica_manager = replica_manager
        self.respond = respond
        self.max_bytes = max_bytes
        self.hard_limit = hard_limit  # before v3, a consumer's fetch quota's cap on the answer
        self.leader_epochs = leader_epochs or [NO_EPOCH] * len(fetches)
        self._reads: list[PartitionRead] | None = None

    def watch_keys(self) -> list[tuple[str, int]]:
        return list(dict.fromkeys((topic, partition) for topic, partition, _, _ in self.fetches))

    def is_satisfied(self) -> bool:
        """Whether the fetch can be answered now (cases A-D above)."""
        return self._satisfied_reads() is not None

    def _satisfied_reads(self) -> list[PartitionRead] | None:
        """None while the fetch must wait; else the reads that satisfy it when they are its answer's too
        (before v3 every partition is read alone, as here), or an empty list."""
        reads = []
        accumulated = 0
        for (topic, partition, offset, max_bytes), epoch in zip(
            self.fetches, self.leader_epochs, strict=True
        ):
            read = read_partition(
                self.replica_manager,
                topic,
                partition,
                offset,
                max_bytes,
                self.replica_id,
                current_leader_epoch=epoch,
            )
            if read.error or read.behind:
                return []
            accumulated += read.size
            reads.append(read)
        if accumulated < self.min_bytes:
            return None
        return reads if self.max_bytes is None and self.hard_limit is None else []

    def try_complete(self) -> bool:
        reads = self._satisfied_reads()
        if reads is None:
            return False
        self._reads = reads or None  # answered from these reads: the log is read once per wake
        try:
            return self.force_complete()
        finally:
            self._reads = None

    def on_complete(self) -> Any:
        reads = self._reads or read_from_local_log(
            self.replica_manager, self.fetches, self.replica_id, self.max_bytes, self.leader_epochs, self.hard_limit
        )
        return self.respond(reads)

    def on_expiration(self) -> None:
        """Nothing to count: ``on_complete`` answers with what there is."""
