"""ExportZkOffsets, ImportZkOffsets and UpdateOffsetsInZK: a group's committed offsets as a file, and resets.

The file holds one line per offset node, ``/consumers/<group>/offsets/<topic>/<b>-<p>:<offset>``. Writing
offsets under a group whose consumers are running is refused unless forced: a live consumer commits its own
positions and would overwrite them at its next commit (or has already fetched past them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kazoo.client import KazooClient

from zkafka.errors import KafkaError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.tools.offset_checker07 import (
    ask_offsets,
    registered_brokers,
    registered_partitions,
    sort_partitions,
)
from zkafka.zk.client import get_children, get_data, update_persistent
from zkafka.zk.paths import CONSUMERS_PATH, ZKGroupDirs
from zkafka.zk.paths07 import BrokerPartition

Progress = Callable[[str], None] | None


class GroupActiveError(KafkaError):
    """Offsets of a group with live consumers would be overwritten by them."""


class OffsetsUnavailableError(KafkaError):
    """The brokers could not say where a topic's partitions start or end."""


class OffsetFileError(KafkaError, ValueError):
    """A line of an offsets file that is not ``/consumers/<g>/offsets/<t>/<b>-<p>:<offset>``."""


@dataclass(frozen=True, order=True)
class OffsetEntry:
    """One committed offset node."""

    group: str
    topic: str
    partition: str
    offset: int

    @property
    def path(self) -> str:
        return ZKGroupDirs(self.group).offset_path(self.topic, self.partition)

    def line(self) -> str:
        return f"{self.path}:{self.offset}"


# -- the file format (pure) --------------------------------------------------------------------------------


def parse_offset_path(path: str) -> tuple[str, str, str]:
    """``/consumers/<g>/offsets/<t>/<b>-<p>`` → (group, topic, ``<b>-<p>``); ValueError otherwise."""
    parts = path.split("/")
    if len(parts) != 6 or parts[0] != "" or parts[1] != CONSUMERS_PATH[1:] or parts[3] != "offsets":
        raise ValueError(f"not an offset node path: {path!r}")
    group, topic, name = parts[2], parts[4], parts[5]
    if not group or not topic:
        raise ValueError(f"not an offset node path: {path!r}")
    try:
        BrokerPartition.parse(name)
    except ValueError:
        raise ValueError(f"bad broker-partition {name!r} in {path!r}") from None
    return group, topic, name


def parse_offset_line(line: str) -> OffsetEntry:
    """Parse ``<path>:<offset>``; the value is taken after the last ``:``, so group names may hold one."""
    path, sep, value = line.strip().rpartition(":")
    if not sep:
        raise ValueError(f"expected <path>:<offset>, got {line.strip()!r}")
    group, topic, name = parse_offset_path(path)
    try:
        offset = int(value)
    except ValueError:
        raise ValueError(f"offset {value!r} is not a number") from None
    if offset < 0:
        raise ValueError(f"offset {offset} is negative")
    return OffsetEntry(group, topic, name, offset)


def parse_offset_file(lines: Iterable[str]) -> list[OffsetEntry]:
    """Every non-blank line of an offsets file; OffsetFileError names the first bad line."""
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entries.append(parse_offset_line(line))
        except ValueError as exc:
            raise OffsetFileError(f"line {number}: {exc}") from None
    return entries


def format_offset_file(entries: Iterable[OffsetEntry]) -> str:
    return "".join(f"{e.line()}\n" for e in entries)


def groups_of(entries: Iterable[OffsetEntry]) -> list[str]:
    return sorted({e.group for e in entries})


# -- ZooKeeper ---------------------------------------------------------------------------------------------


def live_members(client: KazooClient, group: str) -> list[str]:
    """The consumer ids registered (ephemeral) under ``/consumers/<group>/ids``."""
    return sorted(get_children(client, ZKGroupDirs(group).consumer_registry_dir))


def refuse_live_groups(client: KazooClient, groups: Iterable[str]) -> None:
    """Raise GroupActiveError naming every group that has live consumers."""
    active = {g: members for g in groups if (members := live_members(client, g))}
    if active:
        detail = "; ".join(f"{g}: {', '.join(m)}" for g, m in active.items())
        raise GroupActiveError(
            f"live consumers would overwrite the offsets ({detail}); stop them first or pass --force"
        )


def read_group_offsets(client: KazooClient, group: str) -> list[OffsetEntry]:
    """Every offset node of a group, by topic, partitions sorted as strings; unreadable values are skipped."""
    dirs = ZKGroupDirs(group)
    entries = []
    for topic in sorted(get_children(client, f"{dirs.consumer_dir}/offsets")):
        for name in sort_partitions(get_children(client, dirs.offsets_dir(topic))):
            value = get_data(client, dirs.offset_path(topic, name))
            try:
                entries.append(OffsetEntry(group, topic, name, int(value)))
            except (TypeError, ValueError):
                continue
    return entries


def export_offsets(
    client: KazooClient, groups: Iterable[str] = (), progress: Progress = None
) -> list[OffsetEntry]:
    """The offsets of the given groups (all children of ``/consumers`` when none are given)."""
    groups = list(groups) or sorted(get_children(client, CONSUMERS_PATH))
    entries = []
    for group in groups:
        found = read_group_offsets(client, group)
        if progress:
            progress(f"group {group}: {len(found)} offsets")
        entries.extend(found)
    return entries


def import_offsets(
    client: KazooClient, entries: list[OffsetEntry], force: bool = False, progress: Progress = None
) -> int:
    """Write every entry as a persistent node; refuses (before writing anything) if any group is live."""
    groups = groups_of(entries)
    if not force:
        refuse_live_groups(client, groups)
    for group in groups:
        mine = [e for e in entries if e.group == group]
        for entry in mine:
            update_persistent(client, entry.path, str(entry.offset))
        if progress:
            progress(f"group {group}: {len(mine)} offsets written")
    return len(entries)


def update_offsets(
    client: KazooClient,
    group: str,
    topic: str,
    earliest: bool,
    force: bool = False,
    socket_timeout_ms: int = 10000,
    progress: Progress = None,
) -> list[OffsetEntry]:
    """Set the group's offset of every registered partition of the topic to its broker's earliest or latest.

    Every broker is asked before anything is written, so an unreachable broker leaves the group untouched.
    """
    if not force:
        refuse_live_groups(client, [group])
    partitions = registered_partitions(client, topic)
    if not partitions:
        raise OffsetsUnavailableError(
            f"topic {topic} has no partitions under /brokers/topics/{topic} (no live broker has it)"
        )
    time = EARLIEST_TIME if earliest else LATEST_TIME
    answers, _ = ask_offsets(
        registered_brokers(client), ((topic, p) for p in partitions), time, socket_timeout_ms
    )
    failed = [f"{p}: {answers[(topic, p)]}" for p in partitions if isinstance(answers[(topic, p)], str)]
    if failed:
        raise OffsetsUnavailableError(f"nothing written; could not ask for offsets of {'; '.join(failed)}")
    entries = [OffsetEntry(group, topic, p, answers[(topic, p)]) for p in partitions]
    for entry in entries:
        update_persistent(client, entry.path, str(entry.offset))
        if progress:
            progress(f"updating partition {entry.partition} with new offset: {entry.offset}")
    return entries
