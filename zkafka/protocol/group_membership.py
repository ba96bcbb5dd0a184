"""The group membership APIs, every version Kafka 3.4 serves in ZooKeeper mode, each declared once
(``versioned``): JoinGroup v0-v9, SyncGroup v0-v5, Heartbeat v0-v4, LeaveGroup v0-v5, DescribeGroups v0-v5,
ListGroups v0-v4 and DeleteGroups v0-v2; and the "consumer" protocol embedded in their byte fields
(``ConsumerProtocolMetadata``, what a member sends per assignor in JoinGroup, v1 and v2 appending
``ConsumerProtocolOwnedPartitions`` and ``ConsumerProtocolGeneration``; ``ConsumerProtocolAssignment``, what
SyncGroup hands back).

What the versions add: ``rebalance_timeout`` (JoinGroup v1, KIP-62); ``throttle_time_ms`` in every answer
(JoinGroup v2, the others v1; always 0 here); ``group_instance_id`` (KIP-345: JoinGroup v5, SyncGroup and
Heartbeat v3, LeaveGroup v3 with its batch of members, DescribeGroups v4); ``authorized_operations``
(DescribeGroups v3); JoinGroup v4 needs no field (KIP-394: an empty member id is answered MEMBER_ID_REQUIRED);
flexible versions (KIP-482: JoinGroup v6, SyncGroup, Heartbeat and LeaveGroup v4, DescribeGroups v5,
ListGroups v3, DeleteGroups v2); ``protocol_type``/``protocol_name`` (JoinGroup v7 answers, SyncGroup v5);
``reason`` (KIP-800: JoinGroup v8, LeaveGroup v5); ``skip_assignment`` (KIP-814: JoinGroup v9);
``states_filter`` and ``group_state`` (ListGroups v4). Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import (
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    SYNC_GROUP,
)
from zkafka.protocol.errors import InvalidRequestError
from zkafka.protocol.schema import Struct, struct_class
from zkafka.protocol.types import Array, Boolean, Bytes, Int16, Int32, Reader, String
from zkafka.protocol.versioned import Field, Nested, declare, nested_class, pairs

CONSUMER_PROTOCOL_TYPE = "consumer"
NO_AUTHORIZED_OPERATIONS = -(1 << 31)  # DescribeGroups v3+: the operations were not asked for

# -- JoinGroup (11) ---------------------------------------------------------------------------------------

_GROUP_PROTOCOL = Nested("GroupProtocol", (Field("protocol_name", String), Field("protocol_metadata", Bytes)))
_JOIN_GROUP_MEMBER = Nested(
    "JoinGroupMember",
    (Field("member_id", String), Field("group_instance_id", String, 5, nullable_since=5), Field("member_metadata", Bytes)),
)
JOIN_GROUP_REQUEST = declare(
    "JoinGroupRequest",
    JOIN_GROUP,
    range(10),
    (
        Field("group_id", String),
        Field("session_timeout", Int32),
        Field("rebalance_timeout", Int32, 1),  # KIP-62: how long a rebalance waits for this member to rejoin
        Field("member_id", String),  # "" for a new member
        Field("group_instance_id", String, 5, nullable_since=5),  # None: a dynamic member
        Field("protocol_type", String),
        Field("group_protocols", _GROUP_PROTOCOL),
        Field("reason", String, 8, nullable_since=8),
    ),
    flexible_since=6,
)
JOIN_GROUP_RESPONSE = declare(
    "JoinGroupResponse",
    JOIN_GROUP,
    range(10),
    (
        Field("throttle_time_ms", Int32, 2),
        Field("error", Int16),
        Field("generation_id", Int32),
        Field("protocol_type", String, 7, nullable_since=7),
        Field("group_protocol", String, nullable_since=7),
        Field("leader_id", String),
        Field("skip_assignment", Boolean, 9),
        Field("member_id", String),
        Field("members", _JOIN_GROUP_MEMBER),  # filled only in the leader's response
    ),
    flexible_since=6,
)

# -- SyncGroup (14) ---------------------------------------------------------------------------------------

_SYNC_GROUP_ASSIGNMENT = Nested(
    "SyncGroupAssignment", (Field("member_id", String), Field("member_assignment", Bytes))
)
SYNC_GROUP_REQUEST = declare(
    "SyncGroupRequest",
    SYNC_GROUP,
    range(6),
    (
        Field("group_id", String),
        Field("generation_id", Int32),
        Field("member_id", String),
        Field("group_instance_id", String, 3, nullable_since=3),
        Field("protocol_type", String, 5, nullable_since=5),
        Field("protocol_name", String, 5, nullable_since=5),
        Field("group_assignment", _SYNC_GROUP_ASSIGNMENT),  # the leader's; [] from followers
    ),
    flexible_since=4,
)
SYNC_GROUP_RESPONSE = declare(
    "SyncGroupResponse",
    SYNC_GROUP,
    range(6),
    (
        Field("throttle_time_ms", Int32, 1),
        Field("error", Int16),
        Field("protocol_type", String, 5, nullable_since=5),
        Field("protocol_name", String, 5, nullable_since=5),
        Field("member_assignment", Bytes),
    ),
    flexible_since=4,
)

# -- Heartbeat (12) ---------------------------------------------------------------------------------------

HEARTBEAT_REQUEST = declare(
    "HeartbeatRequest",
    HEARTBEAT,
    range(5),
    (
        Field("group_id", String),
        Field("generation_id", Int32),
        Field("member_id", String),
        Field("group_instance_id", String, 3, nullable_since=3),
    ),
    flexible_since=4,
)
HEARTBEAT_RESPONSE = declare(
    "HeartbeatResponse", HEARTBEAT, range(5), (Field("throttle_time_ms", Int32, 1), Field("error", Int16)), 4
)

# -- LeaveGroup (13) --------------------------------------------------------------------------------------

_LEAVING_MEMBER = Nested(
    "LeavingMember",
    (
        Field("member_id", String, 3),
        Field("group_instance_id", String, 3, nullable_since=3),
        Field("reason", String, 5, nullable_since=5),
    ),
    aliases={3: "LeavingMember"},
)
_LEFT_MEMBER = Nested(
    "LeftMember",
    (Field("member_id", String), Field("group_instance_id", String, nullable_since=3), Field("error", Int16)),
    aliases={3: "LeftMember"},
)
LEAVE_GROUP_REQUEST = declare(
    "LeaveGroupRequest",
    LEAVE_GROUP,
    range(6),
    (Field("group_id", String), Field("member_id", String, 0, 2), Field("members", _LEAVING_MEMBER, 3)),
    flexible_since=4,
)
LEAVE_GROUP_RESPONSE = declare(
    "LeaveGroupResponse",
    LEAVE_GROUP,
    range(6),
    (
        Field("throttle_time_ms", Int32, 1),
        Field("error", Int16),  # the group's (coordinator errors); each member's own is in ``members``
        Field("members", _LEFT_MEMBER, 3),
    ),
    flexible_since=4,
)

# -- DescribeGroups (15), ListGroups (16), DeleteGroups (42) ----------------------------------------------

_DESCRIBED_MEMBER = Nested(
    "DescribedMember",
    (
        Field("member_id", String),
        Field("group_instance_id", String, 4, nullable_since=4),
        Field("client_id", String),
        Field("client_host", String),
        Field("member_metadata", Bytes),
        Field("member_assignment", Bytes),
    ),
)
_DESCRIBED_GROUP = Nested(
    "DescribedGroup",
    (
        Field("error", Int16),
        Field("group_id", String),
        Field("state", String),  # Empty, PreparingRebalance, CompletingRebalance, Stable, Dead ("" on error)
        Field("protocol_type", String),
        Field("protocol", String),
        Field("members", _DESCRIBED_MEMBER),
        Field("authorized_operations", Int32, 3),
    ),
)
DESCRIBE_GROUPS_REQUEST = declare(
    "DescribeGroupsRequest",
    DESCRIBE_GROUPS,
    range(6),
    (Field("group_ids", Array(String)), Field("include_authorized_operations", Boolean, 3)),
    flexible_since=5,
)
DESCRIBE_GROUPS_RESPONSE = declare(
    "DescribeGroupsResponse",
    DESCRIBE_GROUPS,
    range(6),
    (Field("throttle_time_ms", Int32, 1), Field("groups", _DESCRIBED_GROUP)),
    flexible_since=5,
)

_LISTED_GROUP = Nested(
    "ListedGroup", (Field("group_id", String), Field("protocol_type", String), Field("group_state", String, 4))
)
LIST_GROUPS_REQUEST = declare(
    "ListGroupsRequest", LIST_GROUPS, range(5), (Field("states_filter", Array(String), 4),), flexible_since=3
)
LIST_GROUPS_RESPONSE = declare(
    "ListGroupsResponse",
    LIST_GROUPS,
    range(5),
    (Field("throttle_time_ms", Int32, 1), Field("error", Int16), Field("groups", _LISTED_GROUP)),
    flexible_since=3,
)

_DELETED_GROUP = Nested("DeletableGroupResult", (Field("group_id", String), Field("error", Int16)))
DELETE_GROUPS_REQUEST = declare(
    "DeleteGroupsRequest", DELETE_GROUPS, range(3), (Field("group_ids", Array(String)),), flexible_since=2
)
DELETE_GROUPS_RESPONSE = declare(
    "DeleteGroupsResponse",
    DELETE_GROUPS,
    range(3),
    (Field("throttle_time_ms", Int32), Field("results", _DELETED_GROUP)),
    flexible_since=2,
)

GROUP_APIS = (
    *pairs(JOIN_GROUP_REQUEST, JOIN_GROUP_RESPONSE),
    *pairs(SYNC_GROUP_REQUEST, SYNC_GROUP_RESPONSE),
    *pairs(HEARTBEAT_REQUEST, HEARTBEAT_RESPONSE),
    *pairs(LEAVE_GROUP_REQUEST, LEAVE_GROUP_RESPONSE),
    *pairs(DESCRIBE_GROUPS_REQUEST, DESCRIBE_GROUPS_RESPONSE),
    *pairs(LIST_GROUPS_REQUEST, LIST_GROUPS_RESPONSE),
    *pairs(DELETE_GROUPS_REQUEST, DELETE_GROUPS_RESPONSE),
)

# The classes zkafka's own group client and tests name (0.9.0.1's v0; KIP-345's first versions).
JoinGroupRequestV0, JoinGroupResponseV0 = JOIN_GROUP_REQUEST[0], JOIN_GROUP_RESPONSE[0]
JoinGroupRequestV5, JoinGroupResponseV5 = JOIN_GROUP_REQUEST[5], JOIN_GROUP_RESPONSE[5]
SyncGroupRequestV0, SyncGroupResponseV0 = SYNC_GROUP_REQUEST[0], SYNC_GROUP_RESPONSE[0]
SyncGroupRequestV3, SyncGroupResponseV3 = SYNC_GROUP_REQUEST[3], SYNC_GROUP_RESPONSE[3]
HeartbeatRequestV0, HeartbeatResponseV0 = HEARTBEAT_REQUEST[0], HEARTBEAT_RESPONSE[0]
HeartbeatRequestV3, HeartbeatResponseV3 = HEARTBEAT_REQUEST[3], HEARTBEAT_RESPONSE[3]
LeaveGroupRequestV0, LeaveGroupResponseV0 = LEAVE_GROUP_REQUEST[0], LEAVE_GROUP_RESPONSE[0]
LeaveGroupRequestV3, LeaveGroupResponseV3 = LEAVE_GROUP_REQUEST[3], LEAVE_GROUP_RESPONSE[3]
DescribeGroupsRequestV0, DescribeGroupsResponseV0 = DESCRIBE_GROUPS_REQUEST[0], DESCRIBE_GROUPS_RESPONSE[0]
ListGroupsRequestV0, ListGroupsResponseV0 = LIST_GROUPS_REQUEST[0], LIST_GROUPS_RESPONSE[0]
GroupProtocol = nested_class(_GROUP_PROTOCOL, 0)
JoinGroupMember = nested_class(_JOIN_GROUP_MEMBER, 0)
JoinGroupMemberV5 = nested_class(_JOIN_GROUP_MEMBER, 5)
SyncGroupAssignment = nested_class(_SYNC_GROUP_ASSIGNMENT, 0)
LeavingMember = nested_class(_LEAVING_MEMBER, 3, 3)
LeftMember = nested_class(_LEFT_MEMBER, 3, 3)
DescribedMember = nested_class(_DESCRIBED_MEMBER, 0)
DescribedGroup = nested_class(_DESCRIBED_GROUP, 0)
ListedGroup = nested_class(_LISTED_GROUP, 0)

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
# What ConsumerProtocolSubscription v1 (KIP-429) and v2 append to v0's fields, in that order: the partitions
# the member owns, and the generation it owned them in (-1: unknown), so that an assignor can tell a stale claim.
ConsumerProtocolOwnedPartitions = struct_class(
    "ConsumerProtocolOwnedPartitions",
    ("owned_partitions", Array(TopicPartitions.SCHEMA)),
    doc="ConsumerProtocolSubscription v1's field: the partitions the member owns as it joins.",
)
ConsumerProtocolGeneration = struct_class(
    "ConsumerProtocolGeneration",
    ("generation_id", Int32),
    doc="ConsumerProtocolSubscription v2's field: the generation of the owned partitions (-1: unknown).",
)
ConsumerProtocolAssignment = struct_class(
    "ConsumerProtocolAssignment",
    ("version", Int16),  # 0
    ("partitions", Array(TopicPartitions.SCHEMA)),
    ("user_data", Bytes),
    doc="A member's partitions, handed out by the group leader through SyncGroup.",
    decode=classmethod(_decode_embedded),
)
