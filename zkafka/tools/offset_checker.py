"""What both lines' ConsumerOffsetChecker share: the report of a group (a row per partition with its committed
offset, log size, lag and owner; totals per topic; the brokers), the list of brokers it names, reading
offsets and ``--topic`` values, and the reads both make: the group's topics, the registered brokers, a
partition's row, each broker asked in turn. What a line reads and how it prints is in its own module
(``offset_checker07``, ``offset_checker08``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kazoo.client import KazooClient

from zkafka.zk.client import get_children, get_data
from zkafka.zk.paths import BROKER_IDS_PATH, ZKGroupDirs

Progress = Callable[[str], None] | None
B = TypeVar("B")  # a line's broker registration (anything with ``host`` and ``port``)
P = TypeVar("P")  # a line's partition key: (topic, ``<b>-<p>``) or (topic, partition id)


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


# -- ZooKeeper and broker reads both lines make --------------------------------------------------------------


def group_topics(client: KazooClient, group: str) -> list[str]:
    """Topics the group has committed offsets or owners for."""
    dirs = ZKGroupDirs(group)
    topics = set(get_children(client, f"{dirs.consumer_dir}/offsets"))
    topics.update(get_children(client, f"{dirs.consumer_dir}/owners"))
    return sorted(topics)


def read_registrations(client: KazooClient, parse: Callable[[str, str], B | str]) -> dict[int, B | str]:
    """Every numeric ``/brokers/ids`` child: ``parse(id, value)``, its registration or why it is unreadable."""
    brokers: dict[int, B | str] = {}
    for child in get_children(client, BROKER_IDS_PATH):
        value = get_data(client, f"{BROKER_IDS_PATH}/{child}")
        if value is not None and child.isdigit():
            brokers[int(child)] = parse(child, value)
    return brokers


def ask_each_broker(
    brokers: Mapping[int, B | str],
    by_broker: Mapping[int, list[P]],
    ask: Callable[[B, list[P]], tuple[dict[P, int | str], BrokerInfo]],
    missing: Callable[[int, str | None], str],
    progress: Progress = None,
) -> tuple[dict[P, int | str], list[BrokerInfo]]:
    """``ask`` each registered broker, by id, about its partitions; those of a broker that is not registered
    (or unreadable) get ``missing(id, why)``. Returns partition -> offset or reason, and the brokers asked."""
    answers: dict[P, int | str] = {}
    infos: list[BrokerInfo] = []
    for broker_id in sorted(by_broker):
        parts = by_broker[broker_id]
        broker = brokers.get(broker_id)
        if broker is None or isinstance(broker, str):
            infos.append(BrokerInfo(broker_id, error=broker))
            answers.update((tp, missing(broker_id, broker)) for tp in parts)
            continue
        if progress:
            progress(f"asking broker {broker_id} ({broker.host}:{broker.port}) about {len(parts)} partitions")
        found, info = ask(broker, parts)
        answers.update(found)
        infos.append(info)
    return answers, infos


def group_report(
    client: KazooClient,
    group: str,
    partitions: Iterable[tuple[str, Any]],
    size_of: Callable[[tuple[str, Any]], int | str],
    asked: Iterable[BrokerInfo],
    registered: Mapping[int, Any],
) -> OffsetReport:
    """The report of ``group``: a row per ``(topic, partition)`` with its log size ``size_of((topic, partition))``
    (or why there is none), then the brokers asked and the other registered ones."""
    report = OffsetReport(group)
    report.rows = [partition_row(client, group, t, p, size_of((t, p))) for t, p in partitions]
    report.brokers = broker_infos(asked, registered)
    return report


def partition_row(
    client: KazooClient, group: str, topic: str, partition: str | int, size: int | str
) -> PartitionRow:
    """A partition's row: its committed offset and owner from ZooKeeper, and its log size (or why not)."""
    dirs = ZKGroupDirs(group)
    raw_offset = get_data(client, dirs.offset_path(topic, partition))
    offset = parse_offset(raw_offset)
    error = size if isinstance(size, str) else None
    if raw_offset is not None and offset is None:
        error = f"offset node holds {raw_offset!r}"
    return PartitionRow(
        group,
        topic,
        str(partition),
        offset,
        size if isinstance(size, int) else None,
        get_data(client, dirs.owner_path(topic, partition)),
        error,
    )
