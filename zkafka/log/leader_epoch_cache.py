"""Leader epochs of one partition (KIP-101): which leader epoch began at which offset, kept in the partition
directory's ``leader-epoch-checkpoint``.

The file: a line ``0`` (the version), a line with the number of entries, then one ``<epoch> <start offset>``
line per epoch, oldest first (written as the offset checkpoints are: to ``.tmp``, fsynced, renamed over).
A leader assigns its epoch (from LeaderAndIsr) at its log end offset when it starts to lead; a follower
assigns its leader's epoch at the first offset it appends from that leader. The cache follows the log: a
truncation removes the epochs that began at or after the new end. ``end_offset_for`` answers
OffsetForLeaderEpoch: the start of the next higher epoch, the log end for the latest, UNDEFINED (-1) for an
epoch before the first known or after the latest. Pure apart from the file.
"""

from __future__ import annotations

import logging
import os
from typing import NamedTuple

from zkafka.log.checkpoint import VERSION, CheckpointError, write_lines

logger = logging.getLogger(__name__)

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EpochEntry(NamedTuple):
    """Leader epoch ``epoch`` began at ``start_offset``."""

    epoch: int
    start_offset: int


class LeaderEpochCache:
    """The epoch history of one replica's log; ``path`` None keeps it in memory only."""

    def __init__(self, path: str | None, entries: list[EpochEntry] | None = None) -> None:
        self.path = path
        self.entries: list[EpochEntry] = list(entries or [])

    @classmethod
    def load(cls, dir_path: str | os.PathLike[str]) -> LeaderEpochCache:
        """The cache of the partition directory ``dir_path`` (empty when it has no checkpoint yet)."""
        path = os.path.join(os.fspath(dir_path), LEADER_EPOCH_CHECKPOINT)
        return cls(path, read_epochs(path))

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1].epoch if self.entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> None:
        """Epoch ``epoch`` begins at ``start_offset``; entries of this epoch or later, or starting at or after
        it, give way (a new leader's history replaces what it contradicts)."""
        if epoch < 0:
            return
        if self.entries and self.entries[-1].epoch == epoch and self.entries[-1].start_offset <= start_offset:
            return
        kept = [e for e in self.entries if e.epoch < epoch and e.start_offset < start_offset]
        if len(kept) < len(self.entries):
            logger.info(
                "%s: epoch %d at %d replaces %s", self.path, epoch, start_offset, self.entries[len(kept) :]
            )
        self.entries = [*kept, EpochEntry(epoch, start_offset)]
        self.flush()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(the largest known epoch <= ``epoch``, where it ends): the next epoch's start, the log end for the
        latest; (UNDEFINED, UNDEFINED) for an epoch before the first known or after the latest (Kafka 2.2's
        answer), or when none is known."""
        if not self.entries or not self.entries[0].epoch <= epoch <= self.entries[-1].epoch:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if epoch == self.entries[-1].epoch:
            return epoch, log_end_offset
        floor = max(e for e in self.entries if e.epoch <= epoch)
        after = min(e for e in self.entries if e.epoch > epoch)
        return floor.epoch, after.start_offset

    def truncate_from_end(self, end_offset: int) -> None:
        """The log now ends at ``end_offset``: forget the epochs that began at or after it."""
        kept = [e for e in self.entries if e.start_offset < end_offset]
        if len(kept) < len(self.entries):
            self.entries = kept
            self.flush()

    def clear(self) -> None:
        """The log was emptied."""
        if self.entries:
            self.entries = []
            self.flush()

    def flush(self) -> None:
        if self.path is not None:
            lines = [str(VERSION), str(len(self.entries))]
            write_lines(self.path, lines + [f"{e.epoch} {e.start_offset}" for e in self.entries])

    def __repr__(self) -> str:
        return f"LeaderEpochCache({[tuple(e) for e in self.entries]})"


def read_epochs(path: str) -> list[EpochEntry]:
    """The entries of a ``leader-epoch-checkpoint`` (none when there is no file); a malformed file is a
    CheckpointError naming it."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"checkpoint {path} is not UTF-8 text: {exc}") from None
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2:
        return []
    try:
        if int(lines[0]) != VERSION:
            raise CheckpointError(f"checkpoint {path}: unknown version {lines[0]!r} (expected {VERSION})")
        entries = [EpochEntry(*map(int, line.split(" "))) for line in lines[2:]]
        if int(lines[1]) != len(entries):
            raise ValueError(f"{lines[1]} entries announced, {len(entries)} found")
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path}: expected '<epoch> <start offset>' lines: {exc}") from None
    return entries
