"""The 0.9.0.1 group membership APIs (all v0) and the "consumer" protocol embedded in their byte fields.

JoinGroup, Heartbeat, LeaveGroup, SyncGroup, DescribeGroups, ListGroups; ``ConsumerProtocolMetadata`` (what a
member sends per assignor in JoinGroup) and ``ConsumerProtocolAssignment`` (what SyncGroup hands back).

Static membership (KIP-345): JoinGroup v5, SyncGroup v3 and Heartbeat v3 (Kafka 2.3) and LeaveGroup v3 (2.4,
the first LeaveGroup carrying ``group_instance_id``) add a nullable ``group_instance_id``; the later versions
also carry a ``throttle_time_ms`` in every response (always 0 here). These are served but listed in
``UNADVERTISED``: ApiVersions keeps answering 0.9.0.1's ranges, so clients that pick versions from it keep
speaking v0. Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    SYNC_GROUP,
    api_struct,
)
from zkafka.protocol.errors import InvalidRequestError
from zkafka.protocol.schema import Struct, struct_class
from zkafka.protocol.types import Array, Bytes, Int16, Int32, Reader, String

CONSUMER_PROTOCOL_TYPE = "consumer"

GroupProtocol = struct_class("GroupProtocol", ("protocol_name", String), ("protocol_metadata", Bytes))
JoinGroupMember = struct_class("JoinGroupMember", ("member_id", String), ("member_metadata", Bytes))
SyncGroupAssignment = struct_class("SyncGroupAssignment", ("member_id", String), ("member_assignment", Bytes))
DescribedMember = struct_class(
    "DescribedMember",
    ("member_id", String),
    ("client_id", String),
    ("client_host", String),
    ("member_metadata", Bytes),
    ("member_assignment", Bytes),
)
DescribedGroup = struct_class(
    "DescribedGroup",
    ("error", Int16),
    ("group_id", String),
    ("state", String),  # Dead, Stable, AwaitingSync, PreparingRebalance ("" on error)
    ("protocol_type", String),
    ("protocol", String),
    ("members", Array(DescribedMember.SCHEMA)),
)
ListedGroup = struct_class("ListedGroup", ("group_id", String), ("protocol_type", String))

JoinGroupRequestV0 = api_struct(
    "JoinGroupRequestV0",
    JOIN_GROUP,
    0,
    ("group_id", String),
    ("session_timeout", Int32),
    ("member_id", String),  # "" for a new member
    ("protocol_type", String),
    ("group_protocols", Array(GroupProtocol.SCHEMA)),
)
JoinGroupResponseV0 = api_struct(
    "JoinGroupResponseV0",
    JOIN_GROUP,
    0,
    ("error", Int16),
    ("generation_id", Int32),
    ("group_protocol", String),
    ("leader_id", String),
    ("member_id", String),
    ("members", Array(JoinGroupMember.SCHEMA)),  # filled only in the leader's response
)

HeartbeatRequestV0 = api_struct(
    "HeartbeatRequestV0",
    HEARTBEAT,
    0,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
)
HeartbeatResponseV0 = api_struct("HeartbeatResponseV0", HEARTBEAT, 0, ("error", Int16))

LeaveGroupRequestV0 = api_struct(
    "LeaveGroupRequestV0", LEAVE_GROUP, 0, ("group_id", String), ("member_id", String)
)
LeaveGroupResponseV0 = api_struct("LeaveGroupResponseV0", LEAVE_GROUP, 0, ("error", Int16))

SyncGroupRequestV0 = api_struct(
    "SyncGroupRequestV0",
    SYNC_GROUP,
    0,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
    ("group_assignment", Array(SyncGroupAssignment.SCHEMA)),  # the leader's; [] from followers
)
SyncGroupResponseV0 = api_struct(
    "SyncGroupResponseV0", SYNC_GROUP, 0, ("error", Int16), ("member_assignment", Bytes)
)

DescribeGroupsRequestV0 = api_struct(
    "DescribeGroupsRequestV0", DESCRIBE_GROUPS, 0, ("group_ids", Array(String))
)
DescribeGroupsResponseV0 = api_struct(
    "DescribeGroupsResponseV0", DESCRIBE_GROUPS, 0, ("groups", Array(DescribedGroup.SCHEMA))
)

ListGroupsRequestV0 = api_struct("ListGroupsRequestV0", LIST_GROUPS, 0)
ListGroupsResponseV0 = api_struct(
    "ListGroupsResponseV0", LIST_GROUPS, 0, ("error", Int16), ("groups", Array(ListedGroup.SCHEMA))
)

# -- static membership (KIP-345): served, not advertised ----------------------------------------------------

JoinGroupMemberV5 = struct_class(
    "JoinGroupMemberV5", ("member_id", String), ("group_instance_id", String), ("member_metadata", Bytes)
)
LeavingMember = struct_class("LeavingMember", ("member_id", String), ("group_instance_id", String))
LeftMember = struct_class(
    "LeftMember", ("member_id", String), ("group_instance_id", String), ("error", Int16)
)

JoinGroupRequestV5 = api_struct(
    "JoinGroupRequestV5",
    JOIN_GROUP,
    5,
    ("group_id", String),
    ("session_timeout", Int32),
    ("rebalance_timeout", Int32),  # how long a rebalance waits for this member to rejoin
    ("member_id", String),
    ("group_instance_id", String),  # None: a dynamic member
    ("protocol_type", String),
    ("group_protocols", Array(GroupProtocol.SCHEMA)),
)
JoinGroupResponseV5 = api_struct(
    "JoinGroupResponseV5",
    JOIN_GROUP,
    5,
    ("throttle_time_ms", Int32),
    ("error", Int16),
    ("generation_id", Int32),
    ("group_protocol", String),
    ("leader_id", String),
    ("member_id", String),
    ("members", Array(JoinGroupMemberV5.SCHEMA)),
)

HeartbeatRequestV3 = api_struct(
    "HeartbeatRequestV3",
    HEARTBEAT,
    3,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
    ("group_instance_id", String),
)
HeartbeatResponseV3 = api_struct(
    "HeartbeatResponseV3", HEARTBEAT, 3, ("throttle_time_ms", Int32), ("error", Int16)
)

LeaveGroupRequestV3 = api_struct(
    "LeaveGroupRequestV3", LEAVE_GROUP, 3, ("group_id", String), ("members", Array(LeavingMember.SCHEMA))
)
LeaveGroupResponseV3 = api_struct(
    "LeaveGroupResponseV3",
    LEAVE_GROUP,
    3,
    ("throttle_time_ms", Int32),
    ("error", Int16),  # the group's (coordinator errors); each member's own is in ``members``
    ("members", Array(LeftMember.SCHEMA)),
)

SyncGroupRequestV3 = api_struct(
    "SyncGroupRequestV3",
    SYNC_GROUP,
    3,
    ("group_id", String),
    ("generation_id", Int32),
    ("member_id", String),
    ("group_instance_id", String),
    ("group_assignment", Array(SyncGroupAssignment.SCHEMA)),
)
SyncGroupResponseV3 = api_struct(
    "SyncGroupResponseV3",
    SYNC_GROUP,
    3,
    ("throttle_time_ms", Int32),
    ("error", Int16),
    ("member_assignment", Bytes),
)

STATIC_MEMBERSHIP_APIS = (
    (JoinGroupRequestV5, JoinGroupResponseV5),
    (HeartbeatRequestV3, HeartbeatResponseV3),
    (LeaveGroupRequestV3, LeaveGroupResponseV3),
    (SyncGroupRequestV3, SyncGroupResponseV3),
)
# (api key, version) pairs served but left out of the ApiVersions answer.
UNADVERTISED = frozenset((request.API_KEY, request.API_VERSION) for request, _ in STATIC_MEMBERSHIP_APIS)

GROUP_APIS = (
    (JoinGroupRequestV0, JoinGroupResponseV0),
    (HeartbeatRequestV0, HeartbeatResponseV0),
    (LeaveGroupRequestV0, LeaveGroupResponseV0),
    (SyncGroupRequestV0, SyncGroupResponseV0),
    (DescribeGroupsRequestV0, DescribeGroupsResponseV0),
    (ListGroupsRequestV0, ListGroupsResponseV0),
    *STATIC_MEMBERSHIP_APIS,
)

# -- the "consumer" embedded protocol ---------------------------------------------------------------------

TopicPartitions = struct_class("TopicPartitions", ("topic", String), ("partitions", Array(Int32)))


def _decode_embedded(cls, buf: bytes | bytearray | memoryview, exact: bool = False) -> Struct:
    """Any version >= 0 is read as v0; the fields a later version appends are ignored unless ``exact``."""
    reader = Reader(buf)
    value = cls.read_from(reader)
    if value.version < 0:
        raise InvalidRequestError(f"{cls.__name__} has negative version {value.version}")
    if exact:
        reader.expect_end()
    return value


ConsumerProtocolMetadata = struct_class(
    "ConsumerProtocolMetadata",
    ("version", Int16),  # 0
    ("subscription", Array(String)),
    ("user_data", Bytes),  # b"" when the assignor has none
    doc="A member's subscription, sent once per assignor (range, roundrobin) in JoinGroup.",
    decode=classmethod(_decode_embedded),
)
ConsumerProtocolAssignment = struct_class(
    "ConsumerProtocolAssignment",
    ("version", Int16),  # 0
    ("partitions", Array(TopicPartitions.SCHEMA)),
    ("user_data", Bytes),
    doc="A member's partitions, handed out by the group leader through SyncGroup.",
    decode=classmethod(_decode_embedded),
)
