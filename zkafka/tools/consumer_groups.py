"""ConsumerGroupCommand for coordinator-managed groups: Kafka 3.4's tables (``--describe`` offsets, ``--members``,
``--state``, ``--list --state``) from a ``ConsumerGroupService``, and zkafka's JSON description.

For the JSON (and ``offset-checker --bootstrap-server``) the group's members, state and assignment come from the
reader the web view uses (``CoordinatorGroups``: DescribeGroups, the group's latest ``__consumer_offsets`` record
for the generation); the committed offsets from the service's OffsetFetch; each partition's log end (high watermark) from ListOffsets(latest) to its leader. The offset
rows are an ``OffsetReport`` so that ``offset-checker --bootstrap-server`` prints 0.8.2's columns from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from zkafka.tools.consumer_group_service import ConsumerGroupDescription as Described
from zkafka.tools.consumer_group_service import ConsumerGroupService, GroupToolError
from zkafka.tools.offset_checker import OffsetReport, PartitionRow, broker_infos
from zkafka.tools.offset_checker08 import NO_LEADER, log_sizes
from zkafka.zk.paths08 import BrokerRegistration


@dataclass
class GroupDescription:
    """A coordinator group: what DescribeGroups says of it and the offsets of its partitions."""

    group: str
    state: str
    protocol: str
    generation: int | None
    leader: str | None
    coordinator: int | None
    members: list[dict[str, Any]] = field(default_factory=list)
    offsets: OffsetReport | None = None

    def to_json(self) -> dict[str, Any]:
        rows = self.offsets.rows if self.offsets else []
        return {
            "group": self.group,
            "state": self.state,
            "protocol": self.protocol,
            "generation": self.generation,
            "leader": self.leader,
            "coordinator": self.coordinator,
            "members": self.members,
            "partitions": [
                {
                    "topic": r.topic,
                    "partition": int(r.partition),
                    "offset": r.offset,
                    "log_end": r.log_size,
                    "lag": r.lag,
                    "owner": r.owner,
                    **({"error": r.error} if r.error else {}),
                }
                for r in rows
            ],
        }


def describe_group(
    bootstrap: str, group: str, topics: list[str] | None = None, timeout_ms: int = 10000, secure: Any = None
) -> GroupDescription:
    """Members, state, assignment and, for every partition of the topics the members subscribe to or are
    assigned (or of ``topics``), the committed offset, log end and lag (``secure``: TLS and SASL for each
    connection, ``command_config.client_secure``)."""
    service = ConsumerGroupService(bootstrap, timeout_ms, secure)
    reader, brokers, counts, leaders = service.reader, service.brokers, service.counts, service.leaders
    described = reader.describe(group, brokers, leaders, counts)
    if described is None:
        if group not in reader.group_names(brokers):
            raise GroupToolError(f"consumer group {group!r} does not exist")
        raise GroupToolError(f"consumer group {group!r}: its coordinator is not available")
    description = GroupDescription(
        group,
        described["state"],
        described["protocol"],
        described["generation"],
        described["leader"],
        described["coordinator"],
        described["members"],
    )
    owners = {  # 0.9's OWNER column: clientId_clientHost
        (t, p): f"{m['client_id']}_{m['client_host']}"
        for m in described["members"]
        for t, ps in m["assignment"].items()
        for p in ps
    }
    wanted = list(topics or ())
    for m in described["members"]:
        wanted += m["subscription"] + list(m["assignment"])
    partitions = [(t, p) for t in dict.fromkeys(wanted) for p in range(counts.get(t, 0))]
    committed = {tp: offset for tp, offset in service.committed(group).items() if tp in set(partitions)}
    if described["state"] == "Dead" and not described["members"] and not committed:
        raise GroupToolError(f"consumer group {group!r} does not exist")  # 0.9: no members, no offsets
    registrations = {i: BrokerRegistration(i, host, port) for i, (host, port) in brokers.items()}
    live = {tp: leaders[tp] for tp in partitions if leaders.get(tp, -1) in brokers}
    sizes, asked = log_sizes(registrations, live, timeout_ms, secure=secure)
    report = OffsetReport(group)
    for tp in partitions:
        size = sizes.get(tp, NO_LEADER)
        report.rows.append(
            PartitionRow(
                group,
                tp[0],
                str(tp[1]),
                committed.get(tp),
                size if isinstance(size, int) else None,
                owners.get(tp),
                size if isinstance(size, str) else None,
            )
        )
    report.brokers = broker_infos(asked, registrations)
    description.offsets = report
    return description


MISSING = "-"


def _width(values: list[str], least: int = 15) -> int:
    return max([least, *map(len, values)])


def _table(header: tuple, rows: list[tuple], widths: list[int]) -> list[str]:
    """Kafka's left-aligned columns (each ``%-Ns``), the last one unpadded."""
    fmt = " ".join(f"%-{w}s" for w in widths) + " %s"
    return [(fmt % tuple(row)).rstrip() for row in [header, *rows]]


def format_states(groups: list[tuple[str, str]]) -> list[str]:
    """``--list --state``: GROUP STATE."""
    return _table(("GROUP", "STATE"), groups, [_width([g for g, _ in groups])])


def describe_offsets(service: ConsumerGroupService, described: Described) -> list[tuple]:
    """The offsets view's rows: each assigned partition with its member, then each partition with a committed
    offset and no member (consumer columns "-"); CURRENT-OFFSET, LOG-END-OFFSET, LAG ("-" when unknown)."""
    committed = service.committed(described.group, described.coordinator)
    assigned = described.assigned()
    partitions = sorted(set(assigned) | set(committed))
    ends = service.log_offsets(partitions)
    rows = []
    for tp in partitions:
        member = assigned.get(tp)
        offset, end = committed.get(tp), ends.get(tp)
        lag = end - offset if offset is not None and end is not None else None
        who = (member.consumer_id, member.host, member.client_id) if member else (MISSING,) * 3
        rows.append((described.group, *tp, *(MISSING if v is None else v for v in (offset, end, lag)), *who))
    return rows


def format_offsets(rows: list[tuple]) -> list[str]:
    """GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID."""
    header = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
    column = lambda i: [str(r[i]) for r in rows]  # noqa: E731
    widths = [_width(column(0)), _width(column(1)), 10, 15, 15, 15, _width(column(6)), _width(column(7))]
    return ["", *_table(header, rows, widths)]


def format_members(described: Described, verbose: bool = False) -> list[str]:
    """GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS [ASSIGNMENT]."""
    members = described.members
    static = any(m.instance_id for m in members)
    rows = []
    for m in members:
        count = sum(map(len, m.assignment.values()))
        row = [described.group, m.consumer_id, *([m.instance_id or ""] if static else []), m.host, m.client_id, count]
        if verbose:
            parts = [f"{t}({','.join(map(str, sorted(ps)))})" for t, ps in sorted(m.assignment.items()) if ps]
            row.append(", ".join(parts) or MISSING)
        rows.append(tuple(row))
    header = ["GROUP", "CONSUMER-ID", *(["GROUP-INSTANCE-ID"] if static else []), "HOST", "CLIENT-ID", "#PARTITIONS"]
    widths = [_width([r[i] for r in rows], 17 if static and i == 2 else 15) for i in range(len(header) - 1)]
    if verbose:
        header.append("ASSIGNMENT")
        widths.append(15)
    return ["", *_table(tuple(header), rows, widths)]


def format_state(described: Described) -> list[str]:
    """GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS."""
    node, host, port = described.coordinator
    coordinator = f"{host}:{port} ({node})"
    row = (described.group, coordinator, described.protocol, described.state, len(described.members))
    widths = [max(25, len(coordinator)), 25, 20, 15]
    return ["", *_table(("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"), [row], widths)]


def state_notice(described: Described) -> str | None:
    """Kafka's line before a group's table: none while Stable; Dead is an error (raised)."""
    if described.state == "Dead":
        raise GroupToolError(f"Consumer group '{described.group}' does not exist.")
    if described.state == "Empty":
        return f"Consumer group '{described.group}' has no active members."
    if described.state in ("PreparingRebalance", "CompletingRebalance"):
        return f"Warning: Consumer group '{described.group}' is rebalancing."
    return None


def format_zk_description(report: OffsetReport) -> list[str]:
    """0.9's describe of a ZooKeeper group: comma-separated, "unknown" and "none" for what is not known."""
    lines = ["GROUP, TOPIC, PARTITION, CURRENT OFFSET, LOG END OFFSET, LAG, OWNER"]
    for r in report.rows:
        values = [r.group, r.topic, r.partition, *("unknown" if v is None else v for v in (r.offset, r.log_size, r.lag))]
        lines.append(", ".join(map(str, [*values, r.owner or "none"])))
    return lines


def format_json(value: Any) -> str:
    return json.dumps(value.to_json() if isinstance(value, GroupDescription) else value, indent=2)
