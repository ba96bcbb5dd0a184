"""ConsumerOffsetChecker for 0.8 groups: committed offsets, the leaders' log sizes and the lag, by partition id.

As 0.8.2's tool: the partitions of a topic are the ids of ``/brokers/topics/<topic>``; the offset is the
group's ``/consumers/<g>/offsets/<t>/<p>`` (the next offset to consume); the log size is what the partition's
leader (``.../partitions/<p>/state``) answers to ListOffsets(latest) — the high watermark; the lines are
``Group Topic Pid Offset logSize Lag Owner`` in 0.8.2's column widths. Where 0.8.2 prints nothing for a
partition whose leader cannot be reached, zkafka prints its row with ``unknown`` sizes and says why in the
broker info; a partition without a leader gets 0.8.2's ``No broker for partition t - p`` line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from kazoo.client import KazooClient

from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.errors import KafkaError
from zkafka.protocol import LATEST_TIME
from zkafka.tools.offset_checker import (
    BrokerInfo,
    OffsetReport,
    Progress,
    ask_each_broker,
    group_report,
    group_topics,
    read_registrations,
)
from zkafka.zk.client import get_data
from zkafka.zk.paths08 import (
    BrokerRegistration,
    PartitionState,
    ZkDataError,
    parse_topic_assignment,
    partition_state_path,
    topic_path,
)

ROW = "%-15s %-30s %-3s %-15s %-15s %-15s %s"
NO_LEADER = "no leader"


def format_report08(report: OffsetReport, broker_info: bool = False) -> list[str]:
    """0.8.2's lines: the header, one line per partition (``unknown`` where a value is missing), then
    ``No broker for partition`` lines, and with ``broker_info`` the BROKER INFO section."""
    lines = [ROW % ("Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner")]
    leaderless = []
    for r in report.rows:
        if r.error == NO_LEADER:
            leaderless.append(f"No broker for partition {r.topic} - {r.partition}")
            continue
        offset = "unknown" if r.offset is None else r.offset
        size = "unknown" if r.log_size is None else r.log_size
        lag = "unknown" if r.lag is None else r.lag
        lines.append(ROW % (r.group, r.topic, r.partition, offset, size, lag, r.owner or "none"))
    lines += leaderless
    if broker_info:
        lines.append("BROKER INFO")
        lines += [b.describe() for b in report.brokers]
    return lines


def format_json08(report: OffsetReport) -> str:
    """The report as JSON, partitions named ``partition`` (their id)."""
    value = report.to_json()
    for topic in value["topics"]:
        for row in topic["partitions"]:
            row["partition"] = int(row.pop("broker_part"))
    return json.dumps(value, indent=2)


def topic_partitions(client: KazooClient, topic: str) -> list[int]:
    """The partition ids of a topic (empty when it does not exist)."""
    text = get_data(client, topic_path(topic))
    return sorted(parse_topic_assignment(topic, text)) if text else []


def partition_leader(client: KazooClient, topic: str, partition: int) -> int | None:
    text = get_data(client, partition_state_path(topic, partition))
    if not text:
        return None
    try:
        leader = PartitionState.parse(topic, partition, text).leader
    except ZkDataError:
        return None
    return leader if leader >= 0 else None


def registered_brokers08(client: KazooClient) -> dict[int, BrokerRegistration | str]:
    """Every ``/brokers/ids`` child: its registration, or why it could not be read."""
    return read_registrations(client, _registration08)


def _registration08(broker_id: str, value: str) -> BrokerRegistration | str:
    try:
        return BrokerRegistration.parse(broker_id, value)
    except ZkDataError as exc:
        return str(exc)


def log_sizes(
    brokers: dict[int, BrokerRegistration | str],
    leaders: dict[tuple[str, int], int],
    socket_timeout_ms: int = 10000,
    progress: Progress = None,
    secure: Any = None,
) -> tuple[dict[tuple[str, int], int | str], list[BrokerInfo]]:
    """Ask each leader for the latest offset of its partitions: ``(topic, p) -> size or the reason there is
    none``, and the brokers asked (``secure``: TLS and SASL for each connection)."""
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for tp, leader in leaders.items():
        by_leader[leader].append(tp)
    return ask_each_broker(
        brokers,
        by_leader,
        lambda broker, parts: _ask_leader(broker, parts, socket_timeout_ms, secure),
        lambda broker_id, _why: f"leader {broker_id} is not registered",
        progress,
    )


def _ask_leader(
    broker: BrokerRegistration, parts: list[tuple[str, int]], socket_timeout_ms: int, secure: Any = None
) -> tuple[dict[tuple[str, int], int | str], BrokerInfo]:
    """One connection to one leader; once it is unreachable, the rest of its partitions are too."""
    sizes: dict[tuple[str, int], int | str] = {}
    error = None
    with SimpleConsumer08(
        broker.host, broker.port, socket_timeout_ms, client_id="ConsumerOffsetChecker", secure=secure
    ) as c:
        for topic, partition in parts:
            if error is not None:
                sizes[(topic, partition)] = error
                continue
            try:
                offsets = c.get_offsets_before(topic, partition, LATEST_TIME, 1)
                sizes[(topic, partition)] = offsets[0] if offsets else 0
            except OSError as exc:  # unreachable: the rest of its partitions too
                error = f"broker {broker.id} unreachable: {exc}"
                sizes[(topic, partition)] = error
            except KafkaError as exc:
                sizes[(topic, partition)] = f"broker {broker.id}: {exc}"
    return sizes, BrokerInfo(broker.id, broker.host, broker.port, error=error)


def check_offsets08(
    client: KazooClient,
    group: str,
    topics: Iterable[str] | None = None,
    socket_timeout_ms: int = 10000,
    progress: Progress = None,
) -> OffsetReport:
    """Read a 0.8 group's offsets and owners from ZooKeeper and each partition's log size from its leader."""
    partitions = [
        (t, p)
        for t in (list(topics or ()) or group_topics(client, group))
        for p in topic_partitions(client, t)
    ]
    leaders = {tp: leader for tp in partitions if (leader := partition_leader(client, *tp)) is not None}
    brokers = registered_brokers08(client)
    sizes, asked = log_sizes(brokers, leaders, socket_timeout_ms, progress)
    return group_report(client, group, partitions, lambda tp: sizes.get(tp, NO_LEADER), asked, brokers)
