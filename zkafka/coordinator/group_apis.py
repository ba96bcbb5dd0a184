"""GroupApis: the 0.9 broker's handlers for the group coordinator's requests, one short method per API.

GroupCoordinator v0 (finding the coordinator, creating ``__consumer_offsets`` on first use), JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, DescribeGroups and ListGroups v0, OffsetCommit v1/v2 and OffsetFetch v1
(offsets in ``__consumer_offsets``); static membership's JoinGroup v5, SyncGroup v3, Heartbeat v3 and
LeaveGroup v3 (served, not advertised: ``group_membership.UNADVERTISED``; the versions between stay refused). ``handlers()`` gives KafkaApis the (API key, version) → handler entries;
a handler decodes nothing itself (the protocol did) and returns response parts, or a pending response for a
JoinGroup or SyncGroup that waits for the group, or an OffsetCommit that waits for its replicas.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.coordinator.coordinator import GroupCoordinator
from zkafka.coordinator.group import JoinResult
from zkafka.coordinator.offsets_schema import OffsetAndMetadata
from zkafka.network.server import client_address
from zkafka.protocol import group_membership, v08
from zkafka.protocol.api_keys import (
    DESCRIBE_GROUPS,
    GROUP_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SYNC_GROUP,
)
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.offset_commit import (
    GroupCoordinatorResponseV0,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    OffsetFetchResponseV1,
)
from zkafka.topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

DEFAULT_TIMESTAMP = -1  # OffsetCommit v1: "now"
DEFAULT_RETENTION = -1  # OffsetCommit v2: the broker's offsets.retention.minutes
NO_THROTTLE = 0  # the throttle_time_ms of the static membership responses: zkafka has no quotas
# Errors of the coordinator rather than of a member (LeaveGroup v3 answers them for the whole group).
COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR_FOR_GROUP,
        ErrorCode.GROUP_LOAD_IN_PROGRESS,
    }
)


def client_host() -> str:
    """The requesting client's address as 0.9 shows it (``InetAddress.toString``: ``/10.0.0.5``)."""
    address = client_address.get()
    return f"/{address[0]}" if address else ""


class GroupApis:
    """Requests served by the group coordinator; ``snapshot()`` is the broker's current cluster picture."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        snapshot: Callable[[], Any],
        create_offsets_topic: Callable[[], None],
    ) -> None:
        self.coordinator = coordinator
        self.snapshot = snapshot
        self.create_offsets_topic = create_offsets_topic

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {
            (GROUP_COORDINATOR, 0): self.handle_group_coordinator,
            (JOIN_GROUP, 0): self.handle_join_group,
            (JOIN_GROUP, 5): self.handle_join_group,
            (SYNC_GROUP, 0): self.handle_sync_group,
            (SYNC_GROUP, 3): self.handle_sync_group,
            (HEARTBEAT, 0): self.handle_heartbeat,
            (HEARTBEAT, 3): self.handle_heartbeat,
            (LEAVE_GROUP, 0): self.handle_leave_group,
            (LEAVE_GROUP, 3): self.handle_leave_group_members,
            (DESCRIBE_GROUPS, 0): self.handle_describe_groups,
            (LIST_GROUPS, 0): self.handle_list_groups,
            (OFFSET_COMMIT, 1): self.handle_offset_commit,
            (OFFSET_COMMIT, 2): self.handle_offset_commit,
            (OFFSET_FETCH, 1): self.handle_offset_fetch,
        }

    # -- GroupCoordinator ---------------------------------------------------------------------------------

    def handle_group_coordinator(self, request: v08.Request) -> list:
        partition = self.coordinator.partition_for(request.body.group_id)
        snapshot = self.snapshot()
        if not snapshot.topics.get(OFFSETS_TOPIC):
            try:
                self.create_offsets_topic()
            except Exception as exc:
                log.warning("could not create %s: %s", OFFSETS_TOPIC, exc)
        leader = snapshot.leader_of(OFFSETS_TOPIC, partition)
        if leader is None:
            body = GroupCoordinatorResponseV0(ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, -1, "", -1)
        else:
            body = GroupCoordinatorResponseV0(ErrorCode.NONE, leader.id, leader.host, leader.port)
        return v08.encode_response(request.correlation_id, body)

    # -- membership -----------------------------------------------------------------------------------------

    def handle_join_group(self, request: v08.Request) -> Any:
        body = request.body
        static = request.api_version >= 5

        def respond(result: JoinResult) -> list:
            fields = (result.error, result.generation_id, result.protocol, result.leader_id, result.member_id)
            if static:
                instance_ids = dict(result.instance_ids)
                members = [group_membership.JoinGroupMemberV5(m, instance_ids.get(m), d) for m, d in result.members]
                response = group_membership.JoinGroupResponseV5(NO_THROTTLE, *fields, members)
            else:
                members = [group_membership.JoinGroupMember(m, data) for m, data in result.members]
                response = group_membership.JoinGroupResponseV0(*fields, members)
            return v08.encode_response(request.correlation_id, response)

        return self.coordinator.join_group(
            body.group_id,
            body.member_id or "",
            request.client_id or "",
            client_host(),
            body.session_timeout,
            body.protocol_type or "",
            [(p.protocol_name, p.protocol_metadata) for p in body.group_protocols],
            respond,
            instance_id=getattr(body, "group_instance_id", None),
            rebalance_timeout_ms=max(getattr(body, "rebalance_timeout", 0), 0),
        )

    def handle_sync_group(self, request: v08.Request) -> Any:
        body = request.body

        static = request.api_version >= 3

        def respond(error: int, assignment: bytes) -> list:
            if static:
                response = group_membership.SyncGroupResponseV3(NO_THROTTLE, error, assignment)
            else:
                response = group_membership.SyncGroupResponseV0(error, assignment)
            return v08.encode_response(request.correlation_id, response)

        assignments = {a.member_id: a.member_assignment or b"" for a in body.group_assignment}
        instance_id = getattr(body, "group_instance_id", None)
        return self.coordinator.sync_group(
            body.group_id, body.generation_id, body.member_id or "", assignments, respond, instance_id
        )

    def handle_heartbeat(self, request: v08.Request) -> list:
        body = request.body
        instance_id = getattr(body, "group_instance_id", None)
        error = self.coordinator.heartbeat(
            body.group_id, body.generation_id, body.member_id or "", instance_id
        )
        if request.api_version >= 3:
            return v08.encode_response(
                request.correlation_id, group_membership.HeartbeatResponseV3(NO_THROTTLE, error)
            )
        return v08.encode_response(request.correlation_id, group_membership.HeartbeatResponseV0(error))

    def handle_leave_group(self, request: v08.Request) -> list:
        error = self.coordinator.leave_group(request.body.group_id, request.body.member_id or "")
        return v08.encode_response(request.correlation_id, group_membership.LeaveGroupResponseV0(error))

    def handle_leave_group_members(self, request: v08.Request) -> list:
        """LeaveGroup v3: each member by member id and/or instance id, each with its own error; an error
        of the coordinator (not available, not the coordinator, loading) is the group's, with no members."""
        body = request.body
        left = []
        for member in body.members:
            member_id, instance_id = member.member_id or "", member.group_instance_id
            error = self.coordinator.leave_group(body.group_id, member_id, instance_id)
            if error in COORDINATOR_ERRORS:
                response = group_membership.LeaveGroupResponseV3(NO_THROTTLE, error, [])
                return v08.encode_response(request.correlation_id, response)
            left.append(group_membership.LeftMember(member_id, instance_id, error))
        response = group_membership.LeaveGroupResponseV3(NO_THROTTLE, ErrorCode.NONE, left)
        return v08.encode_response(request.correlation_id, response)

    def handle_describe_groups(self, request: v08.Request) -> list:
        groups = [self.coordinator.describe_group(group_id) for group_id in request.body.group_ids]
        return v08.encode_response(request.correlation_id, group_membership.DescribeGroupsResponseV0(groups))

    def handle_list_groups(self, request: v08.Request) -> list:
        error, groups = self.coordinator.list_groups()
        listed = [group_membership.ListedGroup(group_id, protocol_type) for group_id, protocol_type in groups]
        return v08.encode_response(request.correlation_id, group_membership.ListGroupsResponseV0(error, listed))

    # -- offsets --------------------------------------------------------------------------------------------

    def handle_offset_commit(self, request: v08.Request) -> Any:
        body = request.body
        now = self.coordinator.now_ms()
        retention = self.coordinator.config.retention_ms
        if request.api_version >= 2 and body.retention_time_ms != DEFAULT_RETENTION:
            retention = body.retention_time_ms
        known = self.snapshot().topics
        offsets: dict[tuple[str, int], OffsetAndMetadata] = {}
        errors: dict[tuple[str, int], int] = {}
        for data in body.topics:
            for p in data.partitions:
                tp = (data.topic, p.partition)
                if not known.get(data.topic):
                    errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    continue
                timestamp = getattr(p, "timestamp", DEFAULT_TIMESTAMP)
                expire = (now if timestamp == DEFAULT_TIMESTAMP else timestamp) + retention
                offsets[tp] = OffsetAndMetadata(p.offset, p.metadata or "", now, expire)
        response_class = v08.SCHEMAS[(OFFSET_COMMIT, request.api_version)][1]

        def respond(stored: dict[tuple[str, int], int]) -> list:
            answers = errors | stored
            topics = [
                OffsetCommitResponseTopic(
                    data.topic,
                    [
                        OffsetCommitResponsePartition(p.partition, answers[(data.topic, p.partition)])
                        for p in data.partitions
                    ],
                )
                for data in body.topics
            ]
            return v08.encode_response(request.correlation_id, response_class(topics))

        if not offsets:
            return respond({})
        # answered once the commit is replicated (offsets.commit.required.acks), maybe later
        return self.coordinator.commit_offsets(
            body.group_id, body.generation_id, body.member_id or "", offsets, respond
        )

    def handle_offset_fetch(self, request: v08.Request) -> list:
        body = request.body
        wanted = [(data.topic, p) for data in body.topics for p in data.partitions]
        error, offsets = self.coordinator.fetch_offsets(body.group_id, wanted or None)
        by_topic: dict[str, list] = {}
        for (topic, partition), value in offsets.items():
            if value is None:
                answer = OffsetFetchResponsePartition(partition, -1, "", error)
            else:
                answer = OffsetFetchResponsePartition(
                    partition, value.offset, value.metadata, ErrorCode.NONE
                )
            by_topic.setdefault(topic, []).append(answer)
        topics = [OffsetFetchResponseTopic(topic, partitions) for topic, partitions in by_topic.items()]
        return v08.encode_response(request.correlation_id, OffsetFetchResponseV1(topics))
