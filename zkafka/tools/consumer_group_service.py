"""ConsumerGroupService: the requests kafka-consumer-groups.sh makes of a cluster (Kafka's ConsumerGroupService
over its AdminClient), for ``zkafka consumer-groups --bootstrap-server``.

Metadata from the bootstrap broker; ListGroups v4 (with the state filter) on every broker; FindCoordinator and
then DescribeGroups v5 (instance ids), OffsetFetch v7 (every committed partition), OffsetCommit v2 (generation
-1, no member: the way an admin client commits for an inactive group), DeleteGroups and OffsetDelete at the
group's coordinator; ListOffsets at each partition's leader (earliest and latest by v0, a time by v1 where the
broker serves it). Every failure is a ``GroupToolError`` with one line naming the broker or the group.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from zkafka.consumer.group.assignors import decode_assignment
from zkafka.consumer.group.coordinator_groups import CoordinatorGroups
from zkafka.errors import KafkaError
from zkafka.protocol import LATEST_TIME
from zkafka.protocol import group_membership as g
from zkafka.protocol import offset_commit as oc
from zkafka.protocol.api_keys import LIST_OFFSETS
from zkafka.protocol.api_versions import ApiVersionsRequestV0
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.offsets import (
    LIST_OFFSETS_REQUEST,
    ListOffsetsRequestPartition,
    ListOffsetsRequestTopic,
    ListOffsetsRequestV0,
)
from zkafka.protocol.versioned import make

CLIENT_ID = "ConsumerGroupCommand"
CONSUMER_TYPES = ("consumer", "")
_NO_TIMESTAMPS = " (the topic's messages have no timestamps: message.format.version before 0.10.0)"
TopicPartition = tuple[str, int]


class GroupToolError(KafkaError):
    """A consumer-groups request could not be answered (one line: what failed and where)."""


@dataclass
class MemberDescription:
    """One member as DescribeGroups v5 tells it, its assignment decoded."""

    consumer_id: str
    instance_id: str | None
    host: str
    client_id: str
    assignment: dict[str, list[int]]


@dataclass
class ConsumerGroupDescription:
    """A group as DescribeGroups tells it, with its coordinator."""

    group: str
    state: str
    protocol_type: str
    protocol: str
    coordinator: tuple[int, str, int]  # node id, host, port
    members: list[MemberDescription] = field(default_factory=list)

    def assigned(self) -> dict[TopicPartition, MemberDescription]:
        return {(t, p): m for m in self.members for t, ps in m.assignment.items() for p in ps}


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


class ConsumerGroupService:
    """The cluster that ``bootstrap`` (``host:port``) belongs to, asked the way kafka-consumer-groups.sh does."""

    def __init__(self, bootstrap: str, timeout_ms: int = 10000, secure: Any = None) -> None:
        """``secure``: TLS and SASL for each connection (``command_config.client_secure``)."""
        try:
            self.reader = CoordinatorGroups(bootstrap, timeout_ms, CLIENT_ID, secure)
            self.brokers, self.counts, self.leaders = self.reader.cluster()
        except (OSError, KafkaError) as exc:  # first: a failed certificate check is a ValueError too
            raise GroupToolError(f"cannot reach the broker {bootstrap}: {exc}") from None
        except ValueError as exc:
            raise GroupToolError(f"--bootstrap-server: {exc}") from None
        self.bootstrap = bootstrap

    def call(self, address: tuple[str, int], request: Any) -> Any:
        try:
            return self.reader.call(*address, request)
        except (OSError, KafkaError) as exc:
            raise GroupToolError(f"{type(request).__name__} to {address[0]}:{address[1]} failed: {exc}") from None

    # -- groups -----------------------------------------------------------------------------------------------

    def list_groups(self, states: list[str] | None = None) -> list[tuple[str, str]]:
        """``(group, state)`` of every consumer group the brokers' coordinators hold (ListGroups v4: protocol
        type "consumer", or "" for a group with only offsets), those in ``states`` only when given."""
        request = make(g.LIST_GROUPS_REQUEST[4], states_filter=states or [])
        listed: dict[str, str] = {}
        for address in self.brokers.values():
            answer = self.call(address, request)
            if answer.error:
                raise GroupToolError(f"ListGroups at {address[0]}:{address[1]}: {_name(answer.error)}")
            listed.update((x.group_id, x.group_state) for x in answer.groups if x.protocol_type in CONSUMER_TYPES)
        return sorted(listed.items())

    def coordinator(self, group: str) -> tuple[int, str, int]:
        """FindCoordinator, retried while the coordinator is not yet available (``__consumer_offsets`` being
        created) until the timeout, as Kafka's admin client retries."""
        deadline = time.monotonic() + self.reader.timeout_ms / 1000
        while True:
            answer = self.call(self.reader.bootstrap, make(oc.FIND_COORDINATOR_REQUEST[0], group_id=group))
            if not answer.error:
                return answer.node_id, answer.host, answer.port
            if answer.error != ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
                raise GroupToolError(f"no coordinator for group {group!r}: {_name(answer.error)}")
            time.sleep(0.1)

    def describe(self, group: str) -> ConsumerGroupDescription:
        """The group (state "Dead" when the coordinator does not know it)."""
        _, host, port = coordinator = self.coordinator(group)
        request = make(g.DESCRIBE_GROUPS_REQUEST[5], group_ids=[group], include_authorized_operations=False)
        (described,) = self.call((host, port), request).groups
        if described.error:
            raise GroupToolError(f"DescribeGroups of {group!r} at {host}:{port}: {_name(described.error)}")
        members = [
            MemberDescription(
                m.member_id, m.group_instance_id, m.client_host, m.client_id, _assignment(m.member_assignment)
            )
            for m in described.members
        ]
        members.sort(key=lambda m: m.consumer_id)
        return ConsumerGroupDescription(
            group, described.state, described.protocol_type, described.protocol, coordinator, members
        )

    def delete_groups(self, groups: list[str]) -> dict[str, int]:
        """DeleteGroups at each group's coordinator: group -> error code (0: deleted)."""
        results = {}
        for group in groups:
            _, host, port = self.coordinator(group)
            answer = self.call((host, port), make(g.DELETE_GROUPS_REQUEST[1], group_ids=[group]))
            results.update((r.group_id, r.error) for r in answer.results)
        return results

    # -- offsets ----------------------------------------------------------------------------------------------

    def committed(self, group: str, coordinator: tuple[int, str, int] | None = None) -> dict[TopicPartition, int]:
        """Every committed offset of the group (OffsetFetch v7, all partitions)."""
        _, host, port = coordinator or self.coordinator(group)
        request = make(oc.OFFSET_FETCH_REQUEST[7], group_id=group, topics=None, require_stable=False)
        answer = self.call((host, port), request)
        if answer.error:
            raise GroupToolError(f"OffsetFetch of {group!r} at {host}:{port}: {_name(answer.error)}")
        return {(t.topic, p.partition): p.offset for t in answer.topics for p in t.partitions if p.offset >= 0}

    def commit(self, group: str, offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """OffsetCommit v2 with generation -1 and no member (an inactive group's): partition -> error."""
        _, host, port = self.coordinator(group)
        by_topic: dict[str, list[dict]] = {}
        for (topic, partition), offset in sorted(offsets.items()):
            by_topic.setdefault(topic, []).append({"partition": partition, "offset": offset, "metadata": ""})
        request = make(
            oc.OFFSET_COMMIT_REQUEST[2],
            group_id=group,
            generation_id=-1,
            member_id="",
            retention_time_ms=-1,
            topics=[{"topic": t, "partitions": ps} for t, ps in by_topic.items()],
        )
        answer = self.call((host, port), request)
        return {(t.topic, p.partition): p.error for t in answer.topics for p in t.partitions}

    def delete_offsets(self, group: str, partitions: list[TopicPartition]) -> tuple[int, dict[TopicPartition, int]]:
        """OffsetDelete: the group's error and each partition's."""
        _, host, port = self.coordinator(group)
        by_topic: dict[str, list[dict]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append({"partition": partition})
        topics = [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]
        answer = self.call((host, port), make(oc.OFFSET_DELETE_REQUEST[0], group_id=group, topics=topics))
        return answer.error, {(t.topic, p.partition): p.error for t in answer.topics for p in t.partitions}

    def partitions(self, topic: str) -> list[TopicPartition]:
        if topic not in self.counts:
            raise GroupToolError(f"topic {topic!r} does not exist (metadata of {self.bootstrap})")
        return [(topic, p) for p in range(self.counts[topic])]

    def log_offsets(self, partitions: list[TopicPartition], time: int = LATEST_TIME) -> dict[TopicPartition, int]:
        """Each partition's log end (``LATEST_TIME``) or log start (``EARLIEST_TIME``) at its leader
        (ListOffsets v0); a partition without a leader is left out."""
        out = {}
        for leader, tps in self._by_leader(partitions).items():
            by_topic: dict[str, list] = {}
            for topic, partition in tps:
                by_topic.setdefault(topic, []).append(ListOffsetsRequestPartition(partition, time, 1))
            request = ListOffsetsRequestV0(-1, [ListOffsetsRequestTopic(t, ps) for t, ps in by_topic.items()])
            for t in self.call(self.brokers[leader], request).topics:
                out.update(((t.topic, p.partition), p.offsets[0]) for p in t.partitions if not p.error and p.offsets)
        return out

    def offsets_for_time(self, partitions: list[TopicPartition], timestamp_ms: int) -> dict[TopicPartition, int]:
        """The first offset at or after ``timestamp_ms`` of each partition (ListOffsets v1 at its leader; the
        log end where no message is that late)."""
        out = {}
        for leader, tps in self._by_leader(partitions).items():
            request = self._offsets_by_time_request(leader, tps, timestamp_ms)
            host, port = self.brokers[leader]
            for t in self.call((host, port), request).topics:
                for p in t.partitions:
                    if p.error:
                        hint = _NO_TIMESTAMPS if p.error == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT else ""
                        raise GroupToolError(f"ListOffsets of {t.topic}-{p.partition} by time at {host}:{port}:"
                                             f" {_name(p.error)}{hint}")  # fmt: skip
                    if p.offset >= 0:
                        out[(t.topic, p.partition)] = p.offset
        missing = [tp for tp in partitions if tp not in out]
        return out | self.log_offsets(missing) if missing else out

    def _offsets_by_time_request(self, leader: int, tps: list[TopicPartition], timestamp_ms: int) -> Any:
        host, port = self.brokers[leader]
        versions = {r.api_key: r.max_version for r in self.call((host, port), ApiVersionsRequestV0()).api_versions}
        if versions.get(LIST_OFFSETS, 0) < 1:
            raise GroupToolError(
                f"--to-datetime/--by-duration need ListOffsets v1 (offsets by timestamp), which the broker"
                f" {host}:{port} does not serve (it answers ListOffsets v{versions.get(LIST_OFFSETS, 0)} only)"
            )
        by_topic: dict[str, list[dict]] = {}
        for topic, partition in tps:
            by_topic.setdefault(topic, []).append({"partition": partition, "time": timestamp_ms})
        topics = [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]
        return make(LIST_OFFSETS_REQUEST[1], replica_id=-1, topics=topics)

    def _by_leader(self, partitions: list[TopicPartition]) -> dict[int, list[TopicPartition]]:
        grouped: dict[int, list[TopicPartition]] = {}
        for tp in partitions:
            leader = self.leaders.get(tp, -1)
            if leader in self.brokers:
                grouped.setdefault(leader, []).append(tp)
        return grouped


def _assignment(data: bytes | None) -> dict[str, list[int]]:
    try:
        return decode_assignment(data) if data else {}
    except Exception:  # not the consumer protocol: no partitions to show
        return {}

