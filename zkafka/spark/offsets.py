"""Offsets of the zkafka source and the pure planning of offset ranges, for both lines.

On the 0.7 line an offset is a byte position in one broker-partition's log (``TopicPartition``, JSON name
``"<brokerId>-<partId>"``, the ZooKeeper partition name); on the 0.8 line it is a message number in one
partition (``TopicPartition08``, JSON name ``"<partition>"`` as in Spark's Kafka source). The JSON form, used
by the ``startingOffsets``/``endingOffsets`` options, by Spark's streaming checkpoint and by the loader's
offsets files, is ``{"topic": {"<name>": offset}}``; in option values -2 means earliest and -1 latest.
Everything else here serves both lines: the planner only compares, subtracts and cuts offsets. No I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from zkafka.errors import KafkaError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.records.entries import entry_size, spans
from zkafka.records.format07 import FORMAT07

# startingOffsets / endingOffsets JSON uses the offsets request's times, as Spark's Kafka source does.
EARLIEST = EARLIEST_TIME
LATEST = LATEST_TIME


class TopicPartition(NamedTuple):
    """One broker-partition of a topic: what a 0.7 offset belongs to."""

    topic: str
    broker: int
    partition: int

    @property
    def name(self) -> str:
        """The ZooKeeper name ``<brokerId>-<partId>``."""
        return f"{self.broker}-{self.partition}"

    def __str__(self) -> str:
        return f"{self.topic}:{self.name}"

    # What the JSON forms call a partition and an offset of this line.
    NAME_FORM = "<brokerId>-<partId>"
    OFFSET_KIND = "byte offset"

    @classmethod
    def from_name(cls, topic: str, name: str) -> TopicPartition:
        return cls(topic, *parse_partition_name(name))

    def range(self, start: int, end: int) -> OffsetRange:
        return OffsetRange(self.topic, self.broker, self.partition, start, end)


class TopicPartition08(NamedTuple):
    """One partition of a topic on the 0.8 line (read from its leader): what a logical offset belongs to."""

    topic: str
    partition: int

    @property
    def name(self) -> str:
        return str(self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    NAME_FORM = "<partition>"
    OFFSET_KIND = "offset"

    @classmethod
    def from_name(cls, topic: str, name: str) -> TopicPartition08:
        if not name.isdigit():
            raise ValueError(f"partition {name!r} of topic {topic!r} is not a partition number")
        return cls(topic, int(name))

    def range(self, start: int, end: int) -> OffsetRange08:
        return OffsetRange08(self.topic, self.partition, start, end)


Offsets = dict[Any, int]  # TopicPartition or TopicPartition08 -> offset


def parse_partition_name(name: str) -> tuple[int, int]:
    """``"0-3"`` -> ``(0, 3)``; anything else raises ValueError."""
    parts = name.split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"partition {name!r} is not of the form <brokerId>-<partId>")
    return int(parts[0]), int(parts[1])


def offsets_from_json(
    value: str | Mapping[str, Any], *, allow_special: bool = True, kind: type = TopicPartition
) -> Offsets:
    """Parse ``{"topic": {"<name>": offset}}`` (a JSON string or an already parsed mapping) into offsets
    keyed by ``kind`` (``TopicPartition`` for the 0.7 line, ``TopicPartition08`` for the 0.8 line)."""
    obj = json.loads(value) if isinstance(value, str) else value
    if not isinstance(obj, Mapping):
        raise ValueError(f"offsets must be a JSON object of topics, got {type(obj).__name__}")
    offsets: Offsets = {}
    for topic, partitions in obj.items():
        if not isinstance(partitions, Mapping):
            raise ValueError(f"offsets of topic {topic!r} must be an object of {kind.NAME_FORM}: offset")
        for name, offset in partitions.items():
            tp = kind.from_name(topic, name)
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise ValueError(f"offset of {topic}:{name} must be an integer, got {offset!r}")
            if offset < (EARLIEST if allow_special else 0):
                allowed = f"a {kind.OFFSET_KIND}"
                if allow_special:
                    allowed = "-2 (earliest), -1 (latest) or " + allowed
                raise ValueError(f"offset {offset} of {topic}:{name} is not {allowed}")
            offsets[tp] = offset
    return offsets


def partitions_from_json(value: str, kind: type = TopicPartition) -> list:
    """Parse the ``assign`` option, ``{"topic": [<name>, ...]}`` (Spark's form: ``{"t": [0, 1]}``)."""
    obj = json.loads(value)
    if not isinstance(obj, Mapping) or not obj:
        raise ValueError(f"must be a JSON object of topics to lists of {kind.NAME_FORM}")
    keys = []
    for topic, names in obj.items():
        if not isinstance(names, list) or not all(
            isinstance(n, int | str) and not isinstance(n, bool) for n in names
        ):
            raise ValueError(f"partitions of topic {topic!r} must be a list of {kind.NAME_FORM}")
        keys += [kind.from_name(topic, str(name)) for name in names]
    return sorted(set(keys))


def offsets_to_json_obj(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """The nested JSON object, topics and partitions in sorted order."""
    obj: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        obj.setdefault(tp.topic, {})[tp.name] = int(offsets[tp])
    return obj


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> str:
    return json.dumps(offsets_to_json_obj(offsets), separators=(",", ":"))


@dataclass(frozen=True, order=True)
class OffsetRange:
    """The entries of one broker-partition whose start offset lies in ``[start, end)``."""

    topic: str
    broker: int
    partition: int
    start: int
    end: int

    @property
    def key(self) -> TopicPartition:
        return TopicPartition(self.topic, self.broker, self.partition)

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)

    def __str__(self) -> str:
        return f"{self.key}[{self.start}, {self.end})"


@dataclass(frozen=True, order=True)
class OffsetRange08:
    """The messages of one 0.8 partition whose offset lies in ``[start, end)`` (any offset is a boundary)."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def key(self) -> TopicPartition08:
        return TopicPartition08(self.topic, self.partition)

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)

    def __str__(self) -> str:
        return f"{self.key}[{self.start}, {self.end})"


def split_counts(sizes: list[int], min_partitions: int | None) -> list[int]:
    """How many pieces each range is cut into so that there are at least ``min_partitions`` in all.

    Nothing is split when there are already enough ranges. Otherwise a range gets a number of pieces
    proportional to its share of the bytes; ranges at or below the ideal piece size stay whole.
    """
    if not min_partitions or len(sizes) >= min_partitions:
        return [1] * len(sizes)
    total = sum(sizes)
    if total <= 0:
        return [1] * len(sizes)
    ideal = total / min_partitions
    return [max(1, math.ceil(size / ideal)) if size > ideal else 1 for size in sizes]


def cut_targets(start: int, end: int, pieces: int) -> list[int]:
    """Evenly spaced cut offsets strictly inside ``(start, end)`` for ``pieces`` pieces (to be snapped)."""
    if pieces <= 1 or end - start < 2:
        return []
    step = (end - start) / pieces
    targets = sorted({start + round(step * i) for i in range(1, pieces)})
    return [t for t in targets if start < t < end]


def cut_range(rng: Any, boundaries: Iterable[int]) -> list:
    """Cut a range (either line's) at message boundaries (offsets outside the range or repeated are ignored)."""
    cuts = sorted({b for b in boundaries if rng.start < b < rng.end})
    edges = [rng.start, *cuts, rng.end]
    return [replace(rng, start=lo, end=hi) for lo, hi in zip(edges, edges[1:], strict=False)]


def cap_targets(backlogs: Mapping[Any, tuple[int, int]], max_bytes: int) -> dict[Any, int]:
    """Share a budget (bytes on the 0.7 line, messages on the 0.8 line) among partitions in proportion to
    their backlogs, as Spark's Kafka source shares ``maxOffsetsPerTrigger``.

    ``backlogs`` maps a partition to ``(start, latest)``. Returns the target end offset of each partition
    (to be snapped down to a message boundary): the latest offset when everything fits in the budget,
    else ``start`` plus the partition's share (at least 1 byte where there is a backlog, so each partition
    with data advances by at least one message).
    """
    total = sum(max(0, latest - start) for start, latest in backlogs.values())
    if total <= max_bytes:
        return {tp: latest for tp, (_, latest) in backlogs.items()}
    targets = {}
    for tp, (start, latest) in backlogs.items():
        backlog = max(0, latest - start)
        share = max(1, int(max_bytes * backlog / total)) if backlog else 0
        targets[tp] = start + min(backlog, share)
    return targets


def walk_entries(buf: bytes | memoryview, base: int, target: int) -> int:
    """The largest entry boundary at or before ``target`` that ``buf`` (fetched at ``base``) proves.

    ``base`` must be an entry boundary. Only the length prefixes are read; the walk stops at the first
    entry that ends past ``target`` or is not complete in the buffer (``base`` when none is taken).
    """
    pos = 0
    try:
        for start, size in spans(buf, FORMAT07, strict=True, base=base):
            if base + start + size > target:
                break
            pos = start + size
    except KafkaError as exc:
        raise ValueError(str(exc)) from exc
    return base + pos


def first_entry_size(buf: bytes | memoryview) -> int | None:
    """Bytes of the first entry (length prefix included) when ``buf`` holds its prefix, else None."""
    return entry_size(buf, FORMAT07)


def resolve_range(tp: Any, start: int, end: int, earliest: int, latest: int) -> tuple[Any, list[str]]:
    """The readable part of a wanted ``[start, end)`` (either may be EARLIEST/LATEST) and the losses found.

    ``earliest`` and ``latest`` are the broker's answers now. Returns the range clamped to them (what
    ``failOnDataLoss=false`` reads) and one message per problem: offsets deleted by retention, a log that
    ends before the wanted end, a start past the end.
    """
    s = earliest if start == EARLIEST else latest if start == LATEST else start
    e = earliest if end == EARLIEST else latest if end == LATEST else end
    problems = []
    if e > latest:
        problems.append(
            f"{tp}: the log ends at offset {latest}, before the wanted end {e} (the broker lost data, "
            "or its log was replaced)"
        )
        e = latest
    if s < earliest:
        problems.append(
            f"{tp}: offsets {s} to {min(earliest, e)} were deleted by retention (the log now starts at {earliest})"
        )
        s = earliest
    if s > e:
        if not problems:
            problems.append(
                f"{tp}: start offset {s} is past the end offset {e} (the log was truncated or replaced)"
            )
        s = e
    return tp.range(s, e), problems
