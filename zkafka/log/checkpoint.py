"""Offset checkpoint files of a 0.8 log directory: one offset per partition, as text.

The format (``recovery-point-offset-checkpoint``, ``replication-offset-checkpoint``,
``cleaner-offset-checkpoint``): a line ``0`` (the
version), a line with the number of entries, then one ``<topic> <partition> <offset>`` line per partition.
A write goes to ``<file>.tmp``, is fsynced and renamed over the file, so a reader sees the old or the new
content, never a mix. Reading is strict: another version, a malformed line or a wrong count is an error (the broker refuses to start,
naming the file); an empty file, or one with the version line alone, reads as empty, as Kafka 0.8.2's does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from zkafka.utils import with_filename

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"  # Kafka 0.11 (KIP-107): DeleteRecords' log starts
CHECKPOINT_FILES = (
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
)
TMP_SUFFIX = ".tmp"  # a write in progress (or cut short by a crash)
VERSION = 0

_INT = re.compile(r"-?[0-9]+")


class CheckpointError(ValueError):
    """A checkpoint file that is not in the checkpoint format."""


class OffsetCheckpoint:
    """Reads and writes one checkpoint file of ``(topic, partition) -> offset``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def write(self, offsets: Mapping[tuple[str, int], int]) -> None:
        """Replace the file's content with ``offsets`` (sorted by topic and partition), durably."""
        lines = [str(VERSION), str(len(offsets))]
        for (topic, partition), offset in sorted(offsets.items()):
            if not topic or any(c.isspace() for c in topic):
                raise CheckpointError(f"topic {topic!r} cannot be written to checkpoint {self.path}")
            lines.append(f"{topic} {int(partition)} {int(offset)}")
        write_lines(self.path, lines)

    def read(self) -> dict[tuple[str, int], int]:
        """The offsets in the file; an empty mapping when there is no file yet."""
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            return {}
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            raise CheckpointError(f"checkpoint {self.path} is not UTF-8 text: {exc}") from None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not lines:
            return {}  # as Kafka 0.8.2: an empty file (or a version line alone) is an empty checkpoint
        if lines[0] != str(VERSION):
            raise CheckpointError(
                f"checkpoint {self.path}: unknown version {lines[0]!r} (expected {VERSION})"
            )
        if len(lines) == 1:
            return {}
        if not _INT.fullmatch(lines[1]) or int(lines[1]) < 0:
            count = repr(lines[1])
            raise CheckpointError(f"checkpoint {self.path}: line 2 should be the entry count, found {count}")
        expected = int(lines[1])
        offsets: dict[tuple[str, int], int] = {}
        for number, line in enumerate(lines[2:], start=3):
            fields = line.split(" ")
            if len(fields) != 3 or not fields[0] or not all(_INT.fullmatch(f) for f in fields[1:]):
                raise CheckpointError(
                    f"checkpoint {self.path}: malformed line {number} {line!r} (expected '<topic> <partition>"
                    " <offset>')"
                )
            offsets[(fields[0], int(fields[1]))] = int(fields[2])
        if len(lines) - 2 != expected or len(offsets) != expected:
            raise CheckpointError(
                f"checkpoint {self.path}: expected {expected} entries, found {len(lines) - 2} lines"
                f" naming {len(offsets)} partitions"
            )
        return offsets

    def __repr__(self) -> str:
        return f"OffsetCheckpoint({self.path!r})"


def write_lines(path: str, lines: list[str]) -> None:
    """Replace ``path``'s content with ``lines`` durably: written to ``<path>.tmp``, fsynced, renamed over."""
    data = ("\n".join(lines) + "\n").encode()
    tmp = path + TMP_SUFFIX
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        raise with_filename(exc, tmp) from None
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path) or ".")


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
