"""GroupApis: the broker's handlers for the group coordinator's requests, one short method per API, each
serving every version Kafka 3.4 serves in ZooKeeper mode: JoinGroup v0-v9, SyncGroup v0-v5, Heartbeat v0-v4,
LeaveGroup v0-v5, DescribeGroups v0-v5, ListGroups v0-v4, DeleteGroups v0-v2; and through ``OffsetApis``
(offset_apis.py) FindCoordinator, OffsetCommit, OffsetFetch and OffsetDelete.

What the versions carry, as Kafka does: ``rebalance_timeout`` (JoinGroup v1+, KIP-62: how long a rebalance
waits for the member, apart from its session timeout; v0: the session timeout); MEMBER_ID_REQUIRED for a
dynamic member's first JoinGroup from v4 (KIP-394); ``group_instance_id`` (KIP-345: JoinGroup v5, SyncGroup
and Heartbeat v3, LeaveGroup v3 by members, OffsetCommit v7); ``reason`` (KIP-800: JoinGroup v8, LeaveGroup v5)
logged; ``skip_assignment`` (KIP-814: JoinGroup v9) for a restarted static leader; the protocol type and name
(JoinGroup v7, SyncGroup v5, checked against the group's); ListGroups v4's state filter; DescribeGroups v3's
authorized operations. A handler decodes nothing itself (the protocol did) and returns response parts, or a
pending response for a JoinGroup or SyncGroup that waits for the group, or an OffsetCommit that waits for its
replicas; the answer's values are computed once and ``versioned.make`` keeps what the version has.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.coordinator.coordinator import GroupCoordinator
from zkafka.coordinator.group import JoinResult
from zkafka.coordinator.offset_apis import OffsetApis, answer
from zkafka.network.server import client_address
from zkafka.protocol import v08
from zkafka.protocol.api_keys import (
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    SYNC_GROUP,
)
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.group_membership import NO_AUTHORIZED_OPERATIONS, DescribedGroup
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, GROUP, AuthHelper

log = logging.getLogger(__name__)

# Errors of the coordinator rather than of a member (LeaveGroup v3 answers them for the whole group).
COORDINATOR_ERRORS = frozenset(
    {
        ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR_FOR_GROUP,
        ErrorCode.GROUP_LOAD_IN_PROGRESS,
    }
)
FIRST_MEMBER_ID_REQUIRED = 4  # JoinGroup v4 (KIP-394)
FIRST_SKIP_ASSIGNMENT = 9  # JoinGroup v9 (KIP-814)
FIRST_PROTOCOL_TYPE = 7  # JoinGroup v7 names the protocol type and may answer a null protocol name


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
        auth: AuthHelper = ALLOW_ALL,
    ) -> None:
        self.coordinator = coordinator
        self.auth = auth
        self.offsets = OffsetApis(coordinator, snapshot, create_offsets_topic, auth)

    def _may_read(self, group_id: str) -> bool:
        """Read on the group: what JoinGroup, SyncGroup, Heartbeat and LeaveGroup need."""
        return self.auth.authorize(Operation.READ, GROUP, group_id)

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        entries = {(JOIN_GROUP, v): self.handle_join_group for v in range(10)}
        entries |= {(SYNC_GROUP, v): self.handle_sync_group for v in range(6)}
        entries |= {(HEARTBEAT, v): self.handle_heartbeat for v in range(5)}
        entries |= {(LEAVE_GROUP, v): self.handle_leave_group for v in range(6)}
        entries |= {(DESCRIBE_GROUPS, v): self.handle_describe_groups for v in range(6)}
        entries |= {(LIST_GROUPS, v): self.handle_list_groups for v in range(5)}
        entries |= {(DELETE_GROUPS, v): self.handle_delete_groups for v in range(3)}
        return entries | self.offsets.handlers()

    # -- membership -----------------------------------------------------------------------------------------

    def handle_join_group(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        if getattr(body, "reason", None):
            log.info("group %s: member %r (re)joins: %s", body.group_id, body.member_id, body.reason)
        if not self._may_read(body.group_id):
            return answer(
                request, error=ErrorCode.GROUP_AUTHORIZATION_FAILED, generation_id=-1, protocol_type=None,
                group_protocol=None if version >= FIRST_PROTOCOL_TYPE else "", leader_id="",
                skip_assignment=False, member_id=body.member_id or "", members=[],
            )  # fmt: skip

        def respond(result: JoinResult) -> list:
            instance_ids = dict(result.instance_ids)
            members = [
                {"member_id": m, "group_instance_id": instance_ids.get(m), "member_metadata": data}
                for m, data in result.members
            ]
            failed = result.error != ErrorCode.NONE and version >= FIRST_PROTOCOL_TYPE
            return answer(
                request,
                error=result.error,
                generation_id=result.generation_id,
                protocol_type=None if failed else body.protocol_type,
                group_protocol=None if failed else result.protocol,
                leader_id=result.leader_id,
                skip_assignment=result.skip_assignment,
                member_id=result.member_id,
                members=members,
            )

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
            require_member_id=version >= FIRST_MEMBER_ID_REQUIRED,
            skip_assignment=version >= FIRST_SKIP_ASSIGNMENT,
        )

    def handle_sync_group(self, request: v08.Request) -> Any:
        body = request.body
        group = self.coordinator.groups.get(body.group_id)

        def respond(error: int, assignment: bytes) -> list:
            known = group is not None and error == ErrorCode.NONE
            return answer(
                request,
                error=error,
                protocol_type=group.protocol_type if known else None,
                protocol_name=group.protocol if known else None,
                member_assignment=assignment,
            )

        if not self._may_read(body.group_id):
            return respond(ErrorCode.GROUP_AUTHORIZATION_FAILED, b"")
        if group is not None and not _same_protocol(body, group):
            return respond(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, b"")
        assignments = {a.member_id: a.member_assignment or b"" for a in body.group_assignment}
        instance_id = getattr(body, "group_instance_id", None)
        return self.coordinator.sync_group(
            body.group_id, body.generation_id, body.member_id or "", assignments, respond, instance_id
        )

    def handle_heartbeat(self, request: v08.Request) -> list:
        body = request.body
        if not self._may_read(body.group_id):
            return answer(request, error=ErrorCode.GROUP_AUTHORIZATION_FAILED)
        instance_id = getattr(body, "group_instance_id", None)
        error = self.coordinator.heartbeat(body.group_id, body.generation_id, body.member_id or "", instance_id)
        return answer(request, error=error)

    def handle_leave_group(self, request: v08.Request) -> list:
        """v0-v2: one member; v3+: each member by member id and/or instance id, each with its own error (an
        error of the coordinator is the group's, with no members); v5's reasons logged."""
        body = request.body
        if not self._may_read(body.group_id):
            return answer(request, error=ErrorCode.GROUP_AUTHORIZATION_FAILED, members=[])
        if request.api_version < 3:
            error = self.coordinator.leave_group(body.group_id, body.member_id or "")
            return answer(request, error=error, members=[])
        left = []
        for member in body.members:
            member_id, instance_id = member.member_id or "", member.group_instance_id
            if getattr(member, "reason", None):
                log.info("group %s: member %r (%s) leaves: %s", body.group_id, member_id, instance_id, member.reason)
            error = self.coordinator.leave_group(body.group_id, member_id, instance_id)
            if error in COORDINATOR_ERRORS:
                return answer(request, error=error, members=[])
            left.append({"member_id": member_id, "group_instance_id": instance_id, "error": error})
        return answer(request, error=ErrorCode.NONE, members=left)

    # -- describing, listing, deleting ------------------------------------------------------------------------

    def handle_describe_groups(self, request: v08.Request) -> list:
        """v3+ answers the operations the principal may do on each group when asked (KIP-430)."""
        asked = getattr(request.body, "include_authorized_operations", False)
        operations = self.auth.authorized_operations if asked else lambda *_: NO_AUTHORIZED_OPERATIONS
        groups = [self._described(g, operations(GROUP, g)) for g in request.body.group_ids]
        return answer(request, groups=groups)

    def _described(self, group_id: str, operations: int) -> dict:
        """One group's description; GROUP_AUTHORIZATION_FAILED without Describe on it."""
        if not self.auth.authorize(Operation.DESCRIBE, GROUP, group_id):
            denied = DescribedGroup(ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id, "", "", "", [])
            return dict(denied._asdict(), authorized_operations=operations)
        described = self.coordinator.describe_group(group_id)
        group = self.coordinator.groups.get(group_id)
        members = [
            dict(m._asdict(), group_instance_id=group.members[m.member_id].instance_id if group else None)
            for m in described.members
        ]
        return dict(described._asdict(), members=members, authorized_operations=operations)

    def handle_list_groups(self, request: v08.Request) -> list:
        """Every group with Describe on the cluster, else those the principal may Describe."""
        error, groups = self.coordinator.list_groups()
        if not self.auth.authorize_cluster(Operation.DESCRIBE):
            described = self.auth.filter_authorized(Operation.DESCRIBE, GROUP, (g for g, _ in groups))
            groups = [(g, kind) for g, kind in groups if g in described]
        states = self.coordinator.group_states()
        wanted = set(getattr(request.body, "states_filter", None) or ())
        listed = [
            {"group_id": group_id, "protocol_type": protocol_type, "group_state": states.get(group_id, "Dead")}
            for group_id, protocol_type in groups
            if not wanted or states.get(group_id) in wanted
        ]
        return answer(request, error=error, groups=listed)

    def handle_delete_groups(self, request: v08.Request) -> list:
        deletable = self.auth.filter_authorized(Operation.DELETE, GROUP, request.body.group_ids)
        results = [
            {
                "group_id": group_id,
                "error": self.coordinator.delete_group(group_id)
                if group_id in deletable
                else ErrorCode.GROUP_AUTHORIZATION_FAILED,
            }
            for group_id in request.body.group_ids
        ]
        return answer(request, results=results)


def _same_protocol(body: Any, group: Any) -> bool:
    """SyncGroup v5: a protocol type or name given must be the group's (else INCONSISTENT_GROUP_PROTOCOL)."""
    protocol_type = getattr(body, "protocol_type", None)
    protocol_name = getattr(body, "protocol_name", None)
    return protocol_type in (None, group.protocol_type) and protocol_name in (None, group.protocol)
