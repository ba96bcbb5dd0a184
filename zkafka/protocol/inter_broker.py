"""The inter-broker APIs (controller → brokers, broker → controller) of 0.8.2 and 0.9.0.1, declared as schemas.

LeaderAndIsr v0, StopReplica v0, UpdateMetadata v0/v1, 0.10.0's v2 (each live broker's ``rack``) and
0.10.2's v3 (each end point's listener name), ControlledShutdown v0/v1. ControlledShutdown v0's
request header has no client id (the codec in ``v08`` knows). Pure: bytes in, values out.
"""

from __future__ import annotations

from zkafka.protocol.api_keys import (
    CONTROLLED_SHUTDOWN,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    api_struct,
)
from zkafka.protocol.schema import struct_class
from zkafka.protocol.types import Array, Int8, Int16, Int32, NullableString, String

PLAINTEXT = 0  # an end point's security protocol id (SecurityProtocol.PLAINTEXT)

PartitionState = struct_class(
    "PartitionState",
    ("controller_epoch", Int32),
    ("leader", Int32),
    ("leader_epoch", Int32),
    ("isr", Array(Int32)),
    ("zk_version", Int32),  # of the partition's state znode
    ("replicas", Array(Int32)),
    doc="The leader, ISR and epochs of one partition as the controller sends them.",
)
PartitionStateEntry = struct_class(
    "PartitionStateEntry", ("topic", String), ("partition", Int32), ("state", PartitionState.SCHEMA)
)
Broker = struct_class("Broker", ("node_id", Int32), ("host", String), ("port", Int32))
EndPoint = struct_class("EndPoint", ("port", Int32), ("host", String), ("security_protocol", Int16))
BrokerEndPoints = struct_class("BrokerEndPoints", ("node_id", Int32), ("end_points", Array(EndPoint.SCHEMA)))
RackedBroker = struct_class(
    "RackedBroker", ("node_id", Int32), ("end_points", Array(EndPoint.SCHEMA)), ("rack", NullableString)
)
ListenerEndPoint = struct_class(
    "ListenerEndPoint",
    ("port", Int32),
    ("host", String),
    ("listener_name", String),
    ("security_protocol", Int16),
)
ListenerBroker = struct_class(
    "ListenerBroker",
    ("node_id", Int32),
    ("end_points", Array(ListenerEndPoint.SCHEMA)),
    ("rack", NullableString),
)
TopicPartition = struct_class("TopicPartition", ("topic", String), ("partition", Int32))
TopicPartitionError = struct_class(
    "TopicPartitionError", ("topic", String), ("partition", Int32), ("error", Int16)
)

LeaderAndIsrRequestV0 = api_struct(
    "LeaderAndIsrRequestV0",
    LEADER_AND_ISR,
    0,
    ("controller_id", Int32),
    ("controller_epoch", Int32),
    ("partition_states", Array(PartitionStateEntry.SCHEMA)),
    ("leaders", Array(Broker.SCHEMA)),  # the live leaders of the listed partitions
)
LeaderAndIsrResponseV0 = api_struct(
    "LeaderAndIsrResponseV0",
    LEADER_AND_ISR,
    0,
    ("error", Int16),
    ("partitions", Array(TopicPartitionError.SCHEMA)),
)

StopReplicaRequestV0 = api_struct(
    "StopReplicaRequestV0",
    STOP_REPLICA,
    0,
    ("controller_id", Int32),
    ("controller_epoch", Int32),
    ("delete_partitions", Int8),  # 0 or 1
    ("partitions", Array(TopicPartition.SCHEMA)),
)
StopReplicaResponseV0 = api_struct(
    "StopReplicaResponseV0",
    STOP_REPLICA,
    0,
    ("error", Int16),
    ("partitions", Array(TopicPartitionError.SCHEMA)),
)

UpdateMetadataRequestV0 = api_struct(
    "UpdateMetadataRequestV0",
    UPDATE_METADATA,
    0,
    ("controller_id", Int32),
    ("controller_epoch", Int32),
    ("partition_states", Array(PartitionStateEntry.SCHEMA)),
    ("live_brokers", Array(Broker.SCHEMA)),
)
_UPDATE_METADATA_HEAD = (
    ("controller_id", Int32),
    ("controller_epoch", Int32),
    ("partition_states", Array(PartitionStateEntry.SCHEMA)),
)
UpdateMetadataRequestV1 = api_struct(
    "UpdateMetadataRequestV1",
    UPDATE_METADATA,
    1,
    *_UPDATE_METADATA_HEAD,
    ("live_brokers", Array(BrokerEndPoints.SCHEMA)),
)
UpdateMetadataRequestV2 = api_struct(
    "UpdateMetadataRequestV2",
    UPDATE_METADATA,
    2,
    *_UPDATE_METADATA_HEAD,
    ("live_brokers", Array(RackedBroker.SCHEMA)),
)
UpdateMetadataRequestV3 = api_struct(
    "UpdateMetadataRequestV3",
    UPDATE_METADATA,
    3,
    *_UPDATE_METADATA_HEAD,
    ("live_brokers", Array(ListenerBroker.SCHEMA)),
)
UpdateMetadataResponseV0 = api_struct("UpdateMetadataResponseV0", UPDATE_METADATA, 0, ("error", Int16))
UpdateMetadataResponseV1 = api_struct("UpdateMetadataResponseV1", UPDATE_METADATA, 1, ("error", Int16))
UpdateMetadataResponseV2 = api_struct("UpdateMetadataResponseV2", UPDATE_METADATA, 2, ("error", Int16))
UpdateMetadataResponseV3 = api_struct("UpdateMetadataResponseV3", UPDATE_METADATA, 3, ("error", Int16))

ControlledShutdownRequestV0 = api_struct(
    "ControlledShutdownRequestV0", CONTROLLED_SHUTDOWN, 0, ("broker_id", Int32)
)
ControlledShutdownRequestV1 = api_struct(
    "ControlledShutdownRequestV1", CONTROLLED_SHUTDOWN, 1, ("broker_id", Int32)
)
ControlledShutdownResponseV0 = api_struct(
    "ControlledShutdownResponseV0",
    CONTROLLED_SHUTDOWN,
    0,
    ("error", Int16),
    ("partitions_remaining", Array(TopicPartition.SCHEMA)),  # partitions the broker still leads
)
ControlledShutdownResponseV1 = api_struct(
    "ControlledShutdownResponseV1",
    CONTROLLED_SHUTDOWN,
    1,
    ("error", Int16),
    ("partitions_remaining", Array(TopicPartition.SCHEMA)),
)

ADMIN_APIS = (
    (LeaderAndIsrRequestV0, LeaderAndIsrResponseV0),
    (StopReplicaRequestV0, StopReplicaResponseV0),
    (UpdateMetadataRequestV0, UpdateMetadataResponseV0),
    (UpdateMetadataRequestV1, UpdateMetadataResponseV1),
    (UpdateMetadataRequestV2, UpdateMetadataResponseV2),
    (UpdateMetadataRequestV3, UpdateMetadataResponseV3),
    (ControlledShutdownRequestV0, ControlledShutdownResponseV0),
    (ControlledShutdownRequestV1, ControlledShutdownResponseV1),
)
