"""What the web view shows of a cluster at one moment, read from ZooKeeper and the brokers, as JSON-ready dicts.

Brokers with their znodes and sessions, the controller (0.8); topics with, per partition, where it lives and
its log end (0.7: broker-partition and the flushed end; 0.8: leader, replicas, ISR and the high watermark
the leader answers); ZooKeeper-managed groups with their members, owners, committed offsets and lag (the
offset checkers' reads, ``zkafka.tools.offset_checker07``/``offset_checker08``); one level of the raw
ZooKeeper tree with ephemeral owners. Reads only: nothing here writes to ZooKeeper.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kazoo.exceptions import NoNodeError

from zkafka.config import LINE_08
from zkafka.protocol import LATEST_TIME
from zkafka.tools.offset_checker07 import (
    ask_offsets,
    check_offsets,
    registered_brokers,
    registered_partitions,
)
from zkafka.tools.offset_checker08 import check_offsets08, log_sizes, registered_brokers08, topic_partitions
from zkafka.tools.zk_tree import describe
from zkafka.ui.zk_groups import ZkGroup, read_zk_group, zk_group_names
from zkafka.zk.client import get_children, get_data
from zkafka.zk.paths08 import (
    CONTROLLER_PATH,
    PartitionState,
    ZkDataError,
    parse_controller,
    partition_state_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

SOCKET_TIMEOUT_MS = 1500  # a broker that does not answer within this leaves its numbers unknown


def session_hex(session: int) -> str | None:
    return f"0x{session:x}" if session else None


def read_brokers(zk: KazooClient, line: str) -> list[dict[str, Any]]:
    """Every ``/brokers/ids/<id>``: its address, its raw value and the session that owns the znode."""
    readable = registered_brokers08(zk) if line == LINE_08 else registered_brokers(zk)
    out = []
    for child in sorted(get_children(zk, "/brokers/ids"), key=lambda c: (len(c), c)):
        try:
            data, stat = zk.get(f"/brokers/ids/{child}")
        except NoNodeError:
            continue
        broker = readable.get(int(child)) if child.isdigit() else None
        out.append(
            {
                "id": int(child) if child.isdigit() else child,
                "host": getattr(broker, "host", None),
                "port": getattr(broker, "port", None),
                "znode": f"/brokers/ids/{child}",
                "value": data.decode("utf-8", "replace"),
                "session": session_hex(stat.ephemeralOwner),
            }
        )
    return out


def read_controller(zk: KazooClient) -> int | None:
    """The broker id in ``/controller`` (0.8), None when there is none."""
    text = get_data(zk, CONTROLLER_PATH)
    try:
        return parse_controller(text) if text else None
    except (ZkDataError, ValueError):
        return None


def read_topics(zk: KazooClient, line: str) -> list[dict[str, Any]]:
    """Every topic with its partitions: 0.7 ``{partition: "b-p", broker, log_end}``; 0.8 ``{partition, leader,
    replicas, isr, high_watermark}`` (log ends unknown, None, when a broker does not answer)."""
    topics = sorted(get_children(zk, "/brokers/topics"))
    if line == LINE_08:
        return _topics08(zk, topics)
    wanted = [(t, name) for t in topics for name in registered_partitions(zk, t)]
    ends, _ = ask_offsets(registered_brokers(zk), wanted, LATEST_TIME, SOCKET_TIMEOUT_MS)
    return [
        {
            "name": topic,
            "partitions": [
                {
                    "partition": name,
                    "broker": int(name.split("-")[0]),
                    "log_end": end if isinstance(end := ends.get((topic, name)), int) else None,
                }
                for t, name in wanted
                if t == topic
            ],
        }
        for topic in topics
    ]


def _topics08(zk: KazooClient, topics: list[str]) -> list[dict[str, Any]]:
    out = []
    leaders: dict[tuple[str, int], int] = {}
    for topic in topics:
        text = get_data(zk, f"/brokers/topics/{topic}")
        replicas = json.loads(text).get("partitions", {}) if text else {}
        partitions = []
        for partition in topic_partitions(zk, topic):
            state_text = get_data(zk, partition_state_path(topic, partition))
            state = None
            if state_text:
                try:
                    state = PartitionState.parse(topic, partition, state_text)
                except ZkDataError:
                    state = None
            leader = state.leader if state else -1
            if leader >= 0:
                leaders[(topic, partition)] = leader
            partitions.append(
                {
                    "partition": partition,
                    "leader": leader,
                    "replicas": list(replicas.get(str(partition), [])),
                    "isr": list(state.isr) if state else [],
                    "leader_epoch": state.leader_epoch if state else None,
                }
            )
        out.append({"name": topic, "partitions": partitions})
    marks, _ = log_sizes(registered_brokers08(zk), leaders, SOCKET_TIMEOUT_MS)
    for topic in out:
        for p in topic["partitions"]:
            mark = marks.get((topic["name"], p["partition"]))
            p["high_watermark"] = mark if isinstance(mark, int) else None
    return out


def read_zk_groups(zk: KazooClient, line: str) -> list[tuple[ZkGroup, dict[str, Any]]]:
    """Every ZooKeeper-managed group: what the rebalance sees (``ZkGroup``) and the view's dict of it."""
    out = []
    for name in zk_group_names(zk):
        group = read_zk_group(zk, name, line)
        topics = group.topics() or None
        if line == LINE_08:
            report = check_offsets08(zk, name, topics, SOCKET_TIMEOUT_MS)
        else:
            report = check_offsets(zk, name, topics, SOCKET_TIMEOUT_MS)
        rows = [
            {
                "topic": r.topic,
                "partition": r.partition,
                "owner": r.owner,
                "committed": r.offset,
                "log_end": r.log_size,
                "lag": r.lag,
            }
            for r in report.rows
        ]
        lags = [r["lag"] for r in rows]
        out.append(
            (
                group,
                {
                    "name": name,
                    "line": group.line,
                    "members": [
                        {
                            "id": member,
                            "subscription": {t: len(ids) for t, ids in sorted(per.items())},
                            "session": session_hex(group.sessions.get(member, 0)),
                        }
                        for member, per in sorted(group.members.items())
                    ],
                    "partitions": rows,
                    "total_lag": None if any(lag is None for lag in lags) else sum(lags),
                },
            )
        )
    return out


def read_znode(zk: KazooClient, path: str) -> dict[str, Any]:
    """One znode for the tree browser: its value, its ephemeral owner, what it is for, its children's names."""
    path = "/" + path.strip("/")
    data, stat = zk.get(path)
    children = sorted(zk.get_children(path))
    return {
        "path": path,
        "value": data.decode("utf-8", "replace") if data else "",
        "ephemeral_owner": session_hex(stat.ephemeralOwner),
        "role": describe(path),
        "children": [
            {"name": c, "path": f"{path.rstrip('/')}/{c}", "role": describe(f"{path.rstrip('/')}/{c}")}
            for c in children
        ],
    }
