"""ConsumerOffsetChecker (0.7): a group's committed offsets, the brokers' log sizes and the lag between them.

Partitions of a topic are every ``<b>-<p>`` registered under ``/brokers/topics/<topic>`` plus any that has a
committed offset (a stopped broker's partitions stay visible through those), sorted as strings as 0.7 does.
A broker that is not registered or does not answer leaves its log sizes unknown; the others are still shown.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable

from kazoo.client import KazooClient

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.errors import KafkaError
from zkafka.protocol import LATEST_TIME
from zkafka.tools.offset_checker import (
    BrokerInfo,
    OffsetReport,
    Progress,
    ask_each_broker,
    group_report,
    group_topics,
    parse_offset,
    read_registrations,
)
from zkafka.zk.client import get_children, get_data
from zkafka.zk.paths import BROKER_TOPICS_PATH, ZKGroupDirs
from zkafka.zk.paths07 import Broker, BrokerPartition

# -- pure helpers ------------------------------------------------------------------------------------------


def sort_partitions(names: Iterable[str]) -> list[str]:
    """Distinct ``<b>-<p>`` names sorted as strings, as 0.7 does (``1-10`` < ``1-2`` < ``10-0``)."""
    return sorted(set(names))


def partitions_from_counts(counts: dict[int, int]) -> list[str]:
    """The ``<b>-<p>`` names of brokers hosting ``counts[b]`` partitions each, sorted as strings."""
    return sort_partitions(BrokerPartition(b, p).name for b, n in counts.items() for p in range(n))


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
    return read_registrations(client, _registration)


def _registration(broker_id: str, value: str) -> Broker | str:
    try:
        return Broker.from_zk(broker_id, value)
    except ValueError:
        return f"unreadable registration {value!r}"


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
    return ask_each_broker(
        brokers,
        by_broker,
        lambda broker, parts: _ask_broker(broker, parts, time, socket_timeout_ms),
        _not_asked,
        progress,
    )


def _not_asked(broker_id: int, why: str | None) -> str:
    return f"broker {broker_id}: {why}" if why else f"broker {broker_id} is not registered (down?)"


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
    return group_report(client, group, partitions, log_sizes.__getitem__, asked, brokers)


def _is_partition(name: str) -> bool:
    try:
        BrokerPartition.parse(name)
    except ValueError:
        return False
    return True
