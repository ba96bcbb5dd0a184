"""The group membership requests a consumer sends, by the version its kind of member needs: a dynamic member
JoinGroup v1 (KIP-62's rebalance timeout), SyncGroup, Heartbeat and LeaveGroup v0; a static member (KIP-345,
``group.instance.id``) JoinGroup v5, SyncGroup and Heartbeat v3. Pure: values in, request values out.
"""

from __future__ import annotations

from typing import Any

from zkafka.protocol import group_membership as gm


def join_group(
    group_id: str,
    session_timeout_ms: int,
    rebalance_timeout_ms: int,
    member_id: str,
    group_instance_id: str | None,
    protocols: list,
) -> Any:
    """JoinGroup v1 (rebalance timeout ``max.poll.interval.ms``), or v5 with the instance id."""
    if group_instance_id is None:
        return gm.JOIN_GROUP_REQUEST[1](
            group_id,
            session_timeout_ms,
            rebalance_timeout_ms,
            member_id,
            gm.CONSUMER_PROTOCOL_TYPE,
            protocols,
        )
    return gm.JoinGroupRequestV5(
        group_id,
        session_timeout_ms,
        rebalance_timeout_ms,
        member_id,
        group_instance_id,
        gm.CONSUMER_PROTOCOL_TYPE,
        protocols,
    )


def sync_group(
    group_id: str, generation: int, member_id: str, group_instance_id: str | None, assignments: list
) -> Any:
    if group_instance_id is None:
        return gm.SyncGroupRequestV0(group_id, generation, member_id, assignments)
    return gm.SyncGroupRequestV3(group_id, generation, member_id, group_instance_id, assignments)


def heartbeat(group_id: str, generation: int, member_id: str, group_instance_id: str | None) -> Any:
    if group_instance_id is None:
        return gm.HeartbeatRequestV0(group_id, generation, member_id)
    return gm.HeartbeatRequestV3(group_id, generation, member_id, group_instance_id)


def leave_group(group_id: str, member_id: str) -> Any:
    return gm.LeaveGroupRequestV0(group_id, member_id)
