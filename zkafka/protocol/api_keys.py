"""The 0.8/0.9 request API keys (``ApiKeys.java``), defined once, and the declaration helper of the schema
modules (``v08``, ``inter_broker``, ``group_membership``, ``offset_commit``)."""

from __future__ import annotations

from zkafka.protocol.flexible import TaggedField
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Type

PRODUCE = 0
FETCH = 1
LIST_OFFSETS = 2  # 0.8.2: Offsets
METADATA = 3
LEADER_AND_ISR = 4
STOP_REPLICA = 5
UPDATE_METADATA = 6
CONTROLLED_SHUTDOWN = 7
OFFSET_COMMIT = 8
OFFSET_FETCH = 9
GROUP_COORDINATOR = 10  # 0.8.2: ConsumerMetadata
JOIN_GROUP = 11
HEARTBEAT = 12
LEAVE_GROUP = 13
SYNC_GROUP = 14
DESCRIBE_GROUPS = 15
LIST_GROUPS = 16
SASL_HANDSHAKE = 17  # 0.10 (KIP-43)
API_VERSIONS = 18  # 0.10
CREATE_TOPICS = 19  # 0.10.1 (KIP-4)
DELETE_TOPICS = 20  # 0.10.1 (KIP-4)
DELETE_RECORDS = 21  # 0.11 (KIP-107)
INIT_PRODUCER_ID = 22  # 0.11 (KIP-98)
OFFSET_FOR_LEADER_EPOCH = 23  # 0.11 (KIP-101)
DESCRIBE_ACLS = 29  # 0.11 (KIP-140)
CREATE_ACLS = 30  # 0.11 (KIP-140)
DELETE_ACLS = 31  # 0.11 (KIP-140)
DESCRIBE_CONFIGS = 32  # 0.11 (KIP-133)
ALTER_CONFIGS = 33  # 0.11 (KIP-133)
SASL_AUTHENTICATE = 36  # 1.0 (KIP-152)
CREATE_PARTITIONS = 37  # 1.0 (KIP-195)
DELETE_GROUPS = 42  # 1.1 (KIP-229)
OFFSET_DELETE = 47  # 2.4 (KIP-496)

CONSUMER_METADATA = GROUP_COORDINATOR
FIND_COORDINATOR = GROUP_COORDINATOR  # its name from 0.11 (KIP-98)

API_NAMES: dict[int, str] = {
    PRODUCE: "Produce",
    FETCH: "Fetch",
    LIST_OFFSETS: "ListOffsets",
    METADATA: "Metadata",
    LEADER_AND_ISR: "LeaderAndIsr",
    STOP_REPLICA: "StopReplica",
    UPDATE_METADATA: "UpdateMetadata",
    CONTROLLED_SHUTDOWN: "ControlledShutdown",
    OFFSET_COMMIT: "OffsetCommit",
    OFFSET_FETCH: "OffsetFetch",
    GROUP_COORDINATOR: "GroupCoordinator",
    JOIN_GROUP: "JoinGroup",
    HEARTBEAT: "Heartbeat",
    LEAVE_GROUP: "LeaveGroup",
    SYNC_GROUP: "SyncGroup",
    DESCRIBE_GROUPS: "DescribeGroups",
    LIST_GROUPS: "ListGroups",
    SASL_HANDSHAKE: "SaslHandshake",
    API_VERSIONS: "ApiVersions",
    SASL_AUTHENTICATE: "SaslAuthenticate",
    CREATE_TOPICS: "CreateTopics",
    DELETE_TOPICS: "DeleteTopics",
    DELETE_RECORDS: "DeleteRecords",
    INIT_PRODUCER_ID: "InitProducerId",
    OFFSET_FOR_LEADER_EPOCH: "OffsetForLeaderEpoch",
    DESCRIBE_ACLS: "DescribeAcls",
    CREATE_ACLS: "CreateAcls",
    DELETE_ACLS: "DeleteAcls",
    DESCRIBE_CONFIGS: "DescribeConfigs",
    ALTER_CONFIGS: "AlterConfigs",
    CREATE_PARTITIONS: "CreatePartitions",
    DELETE_GROUPS: "DeleteGroups",
    OFFSET_DELETE: "OffsetDelete",
}


def api_struct(
    name: str,
    api_key: int,
    api_version: int,
    *fields: tuple[str, Type],
    doc: str = "",
    flexible: bool = False,
    tagged: tuple[TaggedField, ...] = (),
) -> type:
    """A request or response body class: a ``struct_class`` with ``API_KEY`` and ``API_VERSION`` set;
    ``flexible`` for a flexible version (KIP-482), with the ``tagged`` fields in its tag buffer."""
    return struct_class(
        name, *fields, doc=doc, flexible=flexible, tagged=tagged, API_KEY=api_key, API_VERSION=api_version
    )
