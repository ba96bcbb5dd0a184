"""ConsumerGroupCommand for coordinator-managed groups (0.9's ``kafka-consumer-groups --new-consumer``).

The group's members, state and assignment come from the reader the web view uses
(``zkafka.consumer.group.coordinator_groups.CoordinatorGroups``: ListGroups, DescribeGroups, the group's latest
``__consumer_offsets`` record for the generation); the committed offsets from OffsetFetch v1 at the group's
coordinator; each partition's log end (high watermark) from ListOffsets(latest) to its leader. The offset
rows are an ``OffsetReport`` so that ``offset-checker --bootstrap-server`` prints 0.8.2's columns from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from zkafka.client08.channel import check_error
from zkafka.consumer.group.coordinator_groups import CoordinatorGroups
from zkafka.errors import KafkaError
from zkafka.protocol.offset_commit import OffsetFetchRequestTopic, OffsetFetchRequestV1
from zkafka.tools.offset_checker import OffsetReport, PartitionRow, broker_infos
from zkafka.tools.offset_checker08 import NO_LEADER, log_sizes
from zkafka.zk.paths08 import BrokerRegistration

CLIENT_ID = "ConsumerGroupCommand"


class GroupToolError(KafkaError):
    """A consumer-groups request could not be answered."""


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


def list_groups(bootstrap: str, timeout_ms: int = 10000) -> list[str]:
    """The names of every consumer group the brokers' coordinators hold (ListGroups on each broker)."""
    reader = CoordinatorGroups(bootstrap, timeout_ms, CLIENT_ID)
    brokers, _, _ = reader.cluster()
    try:
        return sorted(reader.group_names(brokers))
    except OSError as exc:
        raise GroupToolError(f"ListGroups failed (do the brokers run a group coordinator?): {exc}") from None


def describe_group(
    bootstrap: str, group: str, topics: list[str] | None = None, timeout_ms: int = 10000
) -> GroupDescription:
    """Members, state, assignment and, for every partition of the topics the members subscribe to or are
    assigned (or of ``topics``), the committed offset, log end and lag."""
    reader = CoordinatorGroups(bootstrap, timeout_ms, CLIENT_ID)
    brokers, counts, leaders = reader.cluster()
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
    owners = {
        (t, p): f"{m['client_id']}-{m['id']} ({m['client_host']})"
        for m in described["members"]
        for t, ps in m["assignment"].items()
        for p in ps
    }
    wanted = list(topics or ())
    for m in described["members"]:
        wanted += m["subscription"] + list(m["assignment"])
    partitions = [(t, p) for t in dict.fromkeys(wanted) for p in range(counts.get(t, 0))]
    committed = fetch_committed(reader, brokers[described["coordinator"]], group, partitions)
    if described["state"] == "Dead" and not described["members"] and not committed:
        raise GroupToolError(f"consumer group {group!r} does not exist")  # 0.9: no members, no offsets
    registrations = {i: BrokerRegistration(i, host, port) for i, (host, port) in brokers.items()}
    live = {tp: leaders[tp] for tp in partitions if leaders.get(tp, -1) in brokers}
    sizes, asked = log_sizes(registrations, live, timeout_ms)
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


def fetch_committed(
    reader: CoordinatorGroups, coordinator: tuple[str, int], group: str, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """OffsetFetch v1 at the coordinator: (topic, partition) -> committed offset (absent: none committed)."""
    if not partitions:
        return {}
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    request = OffsetFetchRequestV1(group, [OffsetFetchRequestTopic(t, ps) for t, ps in by_topic.items()])
    response = reader.call(*coordinator, request)
    out = {}
    for t in response.topics:
        for p in t.partitions:
            check_error(p.error, f"group {group!r}: committed offset of {t.topic}-{p.partition}")
            if p.offset >= 0:
                out[(t.topic, p.partition)] = p.offset
    return out


MEMBER_ROW = "%-50s %-25s %-20s %s"
OFFSET_ROW = "%-30s %-9s %-15s %-15s %-10s %s"


def format_description(d: GroupDescription) -> list[str]:
    """The group line, one line per member with its assignment, then the offset table."""

    def unknown(value: object) -> object:
        return "unknown" if value is None else value

    lines = [
        f"GROUP {d.group} STATE {d.state} PROTOCOL {d.protocol or '-'} GENERATION {unknown(d.generation)} "
        f"COORDINATOR {unknown(d.coordinator)}",
        MEMBER_ROW % ("MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"),
    ]
    for m in d.members:
        assignment = ",".join(f"{t}-{p}" for t, ps in sorted(m["assignment"].items()) for p in ps)
        lines.append(MEMBER_ROW % (m["id"], m["client_id"], m["client_host"], assignment or "-"))
    lines.append(OFFSET_ROW % ("TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "OWNER"))
    for r in d.offsets.rows if d.offsets else []:
        owner = r.owner or "-"
        if r.error:
            owner += f" ({r.error})"
        lines.append(
            OFFSET_ROW % (r.topic, r.partition, unknown(r.offset), unknown(r.log_size), unknown(r.lag), owner)
        )
    return lines


def format_json(value: Any) -> str:
    return json.dumps(value.to_json() if isinstance(value, GroupDescription) else value, indent=2)
