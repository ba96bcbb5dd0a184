"""ConsumerOffsetChecker: a group's committed offsets, the brokers' log sizes and the lag between them.

Partitions of a topic are every ``<b>-<p>`` registered under ``/brokers/topics/<topic>`` plus any that has a
committed offset (a stopped broker's partitions stay visible through those), sorted as strings as 0.7 does.
A broker that is not registered or does not answer leaves its log sizes unknown; the others are still shown.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.errors import KafkaError
from zkafka.protocol import LATEST_TIME
from zkafka.zk.client import get_children, get_data
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, ZKGroupDirs
from zkafka.zk.paths07 import Broker, BrokerPartition

Progress = Callable[[str], None] | None


# -- pure helpers ------------------------------------------------------------------------------------------


def sort_partitions(names: Iterable[str]) -> list[str]:
    """Distinct ``<b>-<p>`` names sorted as strings, as 0.7 does (``1-10`` < ``1-2`` < ``10-0``)."""
    return sorted(set(names))


def partitions_from_counts(counts: dict[int, int]) -> list[str]:
    """The ``<b>-<p>`` names of brokers hosting ``counts[b]`` partitions each, sorted as strings."""
    return sort_partitions(BrokerPartition(b, p).name for b, n in counts.items() for p in range(n))


def parse_offset(value: str | None) -> int | None:
    """A committed offset node's value, or None when absent or not a number."""
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def split_topics(values: Iterable[str]) -> list[str]:
    """``--topic a,b --topic c`` → ``[a, b, c]`` (0.7 takes a comma-separated list)."""
    topics: list[str] = []
    for value in values:
        topics.extend(t.strip() for t in value.split(",") if t.strip())
    return list(dict.fromkeys(topics))


@dataclass(frozen=True)
class PartitionRow:
    """One broker-partition of one topic as the group sees it."""

    group: str
    topic: str
    partition: str
    offset: int | None
    log_size: int | None
    owner: str | None
    error: str | None = None

    @property
    def lag(self) -> int | None:
        if self.offset is None or self.log_size is None:
            return None
        return self.log_size - self.offset

    def to_json(self) -> dict:
        return {
            "group": self.group,
            "topic": self.topic,
            "broker_part": self.partition,
            "offset": self.offset,
            "log_size": self.log_size,
            "lag": self.lag,
            "owner": self.owner,
            "error": self.error,
        }


@dataclass(frozen=True)
class TopicTotals:
    """Sums over the partitions of one topic whose values are known."""

    offset: int
    log_size: int
    lag: int
    unknown: int  # partitions whose lag is unknown

    @classmethod
    def of(cls, rows: Iterable[PartitionRow]) -> TopicTotals:
        rows = list(rows)
        return cls(
            offset=sum(r.offset for r in rows if r.offset is not None),
            log_size=sum(r.log_size for r in rows if r.log_size is not None),
            lag=sum(r.lag for r in rows if r.lag is not None),
            unknown=sum(1 for r in rows if r.lag is None),
        )


@dataclass(frozen=True)
class BrokerInfo:
    """A broker the report refers to: where it is, or why it could not be asked."""

    id: int
    host: str | None = None
    port: int | None = None
    error: str | None = None

    def describe(self) -> str:
        if self.host is None:
            return f"{self.id} -> {self.error or 'not registered (down?)'}"
        return f"{self.id} -> {self.host}:{self.port}" + (f" ({self.error})" if self.error else "")


@dataclass
class OffsetReport:
    """What ConsumerOffsetChecker prints for one group."""

    group: str
    rows: list[PartitionRow] = field(default_factory=list)
    brokers: list[BrokerInfo] = field(default_factory=list)

    def topics(self) -> list[str]:
        return list(dict.fromkeys(r.topic for r in self.rows))

    def totals(self, topic: str) -> TopicTotals:
        return TopicTotals.of(r for r in self.rows if r.topic == topic)

    def to_json(self) -> dict:
        return {
            "group": self.group,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [r.to_json() for r in self.rows if r.topic == topic],
                    "totals": vars(self.totals(topic)),
                }
                for topic in self.topics()
            ],
            "brokers": [vars(b) for b in self.brokers],
        }


def _cell(value: int | None, missing: str = "unknown") -> str:
    return missing if value is None else str(value)


def format_report(report: OffsetReport) -> list[str]:
    """The readable table, one total row per topic, then BROKER INFO.

    Offsets, log sizes and lag are byte offsets; an offset never committed shows as ``none``.
    """
    header = ("Group", "Topic", "Broker-Part", "Offset", "Log size", "Lag", "Owner")
    table: list[tuple[str, ...]] = [header]
    for topic in report.topics():
        for r in (r for r in report.rows if r.topic == topic):
            table.append(
                (
                    r.group,
                    r.topic,
                    r.partition,
                    _cell(r.offset, "none"),
                    _cell(r.log_size),
                    _cell(r.lag),
                    r.owner or "none",
                )
            )
        t = report.totals(topic)
        note = f"({t.unknown} partition{'s' if t.unknown != 1 else ''} unknown)" if t.unknown else ""
        table.append(("", topic, "total", str(t.offset), str(t.log_size), str(t.lag), note))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    numeric = {3, 4, 5}
    lines = []
    for row in table:
        cells = [
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    if not report.rows:
        lines.append(f"(no partitions: group {report.group} has no offsets or owners for these topics)")
    lines.append("BROKER INFO")
    lines.extend(b.describe() for b in report.brokers)
    return lines


def format_json(report: OffsetReport) -> str:
    return json.dumps(report.to_json(), indent=2)


# -- ZooKeeper and broker reads ----------------------------------------------------------------------------


def registered_brokers(client: KazooClient) -> dict[int, Broker | str]:
    """Every ``/brokers/ids`` child: its Broker, or why its value could not be parsed."""
    brokers: dict[int, Broker | str] = {}
    for child in get_children(client, BROKER_IDS_PATH):
        value = get_data(client, f"{BROKER_IDS_PATH}/{child}")
        if value is None or not child.isdigit():
            continue
        try:
            brokers[int(child)] = Broker.from_zk(child, value)
        except ValueError:
            brokers[int(child)] = f"unreadable registration {value!r}"
    return brokers


def registered_partitions(client: KazooClient, topic: str) -> list[str]:
    """The ``<b>-<p>`` names of ``/brokers/topics/<topic>``, sorted as strings (empty when no broker has it)."""
    counts: dict[int, int] = {}
    for child in get_children(client, f"{BROKER_TOPICS_PATH}/{topic}"):
        count = parse_offset(get_data(client, f"{BROKER_TOPICS_PATH}/{topic}/{child}"))
        if child.isdigit() and count is not None:
            counts[int(child)] = count
    return partitions_from_counts(counts)


def ask_offsets(
    brokers: dict[int, Broker | str],
    wanted: Iterable[tuple[str, str]],
    time: int,
    socket_timeout_ms: int = 10000,
    progress: Progress = None,
) -> tuple[dict[tuple[str, str], int | str], list[BrokerInfo]]:
    """Ask each partition's broker for Offsets(time, 1).

    Returns (topic, ``<b>-<p>``) → the offset or the reason there is none, and the brokers asked.
    """
    by_broker: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for topic, name in wanted:
        by_broker[BrokerPartition.parse(name).broker_id].append((topic, name))
    answers: dict[tuple[str, str], int | str] = {}
    infos: list[BrokerInfo] = []
    for broker_id in sorted(by_broker):
        parts = by_broker[broker_id]
        broker = brokers.get(broker_id)
        if not isinstance(broker, Broker):
            reason = (
                f"broker {broker_id}: {broker}" if broker else f"broker {broker_id} is not registered (down?)"
            )
            infos.append(BrokerInfo(broker_id, error=broker))
            answers.update((tp, reason) for tp in parts)
            continue
        if progress:
            progress(f"asking broker {broker_id} ({broker.host}:{broker.port}) about {len(parts)} partitions")
        found, info = _ask_broker(broker, parts, time, socket_timeout_ms)
        answers.update(found)
        infos.append(info)
    return answers, infos


def _ask_broker(
    broker: Broker, parts: list[tuple[str, str]], time: int, socket_timeout_ms: int
) -> tuple[dict[tuple[str, str], int | str], BrokerInfo]:
    """One connection to one broker; a refused connect or a timeout gives up on the rest of its partitions."""
    answers: dict[tuple[str, str], int | str] = {}
    with SimpleConsumer(broker.host, broker.port, socket_timeout_ms=socket_timeout_ms) as consumer:
        try:
            consumer.connect()
        except OSError as exc:
            answers.update((tp, f"broker {broker.id} unreachable: {exc}") for tp in parts)
            return answers, BrokerInfo(broker.id, broker.host, broker.port, error=f"unreachable: {exc}")
        for i, (topic, name) in enumerate(parts):
            try:
                offsets = consumer.get_offsets_before(topic, BrokerPartition.parse(name).part_id, time, 1)
            except TimeoutError:
                reason = f"broker {broker.id} did not answer within {socket_timeout_ms} ms"
                answers.update((tp, reason) for tp in parts[i:])
                return answers, BrokerInfo(broker.id, broker.host, broker.port, error="not answering")
            except (OSError, KafkaError) as exc:  # e.g. a partition number the broker does not have
                answers[(topic, name)] = f"broker {broker.id}: {type(exc).__name__}: {exc}"
            else:
                answers[(topic, name)] = offsets[0] if offsets else 0
    return answers, BrokerInfo(broker.id, broker.host, broker.port)


def group_topics(client: KazooClient, group: str) -> list[str]:
    """Topics the group has committed offsets or owners for (0.7 looks at offsets only)."""
    dirs = ZKGroupDirs(group)
    topics = set(get_children(client, f"{dirs.consumer_dir}/offsets"))
    topics.update(get_children(client, f"{dirs.consumer_dir}/owners"))
    return sorted(topics)


def check_offsets(
    client: KazooClient,
    group: str,
    topics: list[str] | None = None,
    socket_timeout_ms: int = 10000,
    progress: Progress = None,
) -> OffsetReport:
    """Read the group's offsets and owners from ZooKeeper and each partition's log size from its broker."""
    dirs = ZKGroupDirs(group)
    topics = topics or group_topics(client, group)
    partitions: list[tuple[str, str]] = []
    for topic in topics:
        names = registered_partitions(client, topic) + get_children(client, dirs.offsets_dir(topic))
        partitions.extend((topic, name) for name in sort_partitions(n for n in names if _is_partition(n)))
    brokers = registered_brokers(client)
    log_sizes, asked = ask_offsets(brokers, partitions, LATEST_TIME, socket_timeout_ms, progress)
    report = OffsetReport(group)
    for topic, name in partitions:
        raw_offset = get_data(client, dirs.offset_path(topic, name))
        offset = parse_offset(raw_offset)
        size = log_sizes[(topic, name)]
        error = size if isinstance(size, str) else None
        if raw_offset is not None and offset is None:
            error = f"offset node holds {raw_offset!r}"
        report.rows.append(
            PartitionRow(
                group,
                topic,
                name,
                offset,
                size if isinstance(size, int) else None,
                get_data(client, dirs.owner_path(topic, name)),
                error,
            )
        )
    report.brokers = broker_infos(asked, brokers)
    return report


def broker_infos(asked: Iterable[BrokerInfo], registered: Mapping[int, Any]) -> list[BrokerInfo]:
    """The brokers asked, then every other registered one (its host and port, or why it was unreadable:
    a registration is anything with ``host`` and ``port``, a str the reason), by id."""
    infos = {b.id: b for b in asked}
    for broker_id, broker in registered.items():
        if broker_id not in infos:
            infos[broker_id] = (
                BrokerInfo(broker_id, error=broker)
                if isinstance(broker, str)
                else BrokerInfo(broker_id, broker.host, broker.port)
            )
    return [infos[i] for i in sorted(infos)]


def _is_partition(name: str) -> bool:
    try:
        BrokerPartition.parse(name)
    except ValueError:
        return False
    return True
