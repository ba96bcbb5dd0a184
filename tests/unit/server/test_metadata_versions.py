"""Metadata v1-v9 answers of the metadata cache (Kafka 0.10-2.4): whole replica lists with offline replicas,
racks, the controller and cluster ids, ``allow_auto_topic_creation``, refused names, authorized operations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.server08 import cluster_snapshot
from zkafka.controller.request_planner import update_metadata_request
from zkafka.errors import InvalidReplicationFactorError
from zkafka.network.server import Session, client_session
from zkafka.protocol import metadata as m
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.inter_broker import ListenerBroker, ListenerEndPoint, UpdateMetadataRequestV3
from zkafka.server.metadata_cache import MetadataCache
from zkafka.zk.paths08 import BrokerRegistration


@pytest.fixture
def cache():
    snapshot = cluster_snapshot(
        {("t", 0): 1, ("__consumer_offsets", 0): 0}, alive=(0, 1), replicas=(1, 2), isr=(1, 2)
    )
    racked = {0: replace(snapshot.brokers[0], rack="r0"), 1: snapshot.brokers[1]}
    cache = MetadataCache(snapshot=replace(snapshot, brokers=racked), create_topic=created.append)
    cache.cluster_id, cache.controller_id = "cluster-1", 0
    created.clear()
    return cache


created: list[str] = []


def ask(cache, version, *fields):
    return cache.metadata_response(m.METADATA_APIS[version][0](*fields))


def test_v1_lists_racks_the_controller_and_whole_replica_lists(cache):
    answer = ask(cache, 1, ["t"])
    assert answer.brokers == [
        m.MetadataBrokerV1(0, "host-0", 9090, "r0"),
        m.MetadataBrokerV1(1, "host-1", 9091, None),
    ]
    assert answer.controller_id == 0
    # broker 2 is down: v0 would filter it and say REPLICA_NOT_AVAILABLE; v1+ lists it and says nothing
    assert answer.topics == [m.topic_class(1)(0, "t", False, [m.PartitionMetadata(0, 0, 1, [1, 2], [1, 2])])]


def test_null_topics_is_every_topic_and_empty_is_none(cache):
    assert [t.topic for t in ask(cache, 1, None).topics] == ["__consumer_offsets", "t"]
    assert ask(cache, 1, []).topics == []
    assert ask(cache, 1, ["__consumer_offsets"]).topics[0].is_internal is True


def test_v2_to_v7_add_cluster_id_throttle_offline_replicas_and_leader_epoch(cache):
    assert ask(cache, 2, []).cluster_id == "cluster-1"
    assert ask(cache, 3, []).throttle_time_ms == 0
    (partition,) = ask(cache, 5, ["t"], True).topics[0].partitions
    assert partition == m.PartitionMetadataV5(0, 0, 1, [1, 2], [1, 2], [2])
    (partition,) = ask(cache, 7, ["t"], True).topics[0].partitions
    assert partition == m.PartitionMetadataV7(0, 0, 1, 0, [1, 2], [1, 2], [2])


def test_a_leader_that_is_not_live_is_minus_one_with_the_replicas_kept(cache):
    snapshot = cache.snapshot()
    cache._snapshot = replace(snapshot, brokers={0: snapshot.brokers[0]})
    (partition,) = ask(cache, 5, ["t"], True).topics[0].partitions
    assert partition == m.PartitionMetadataV5(ErrorCode.LEADER_NOT_AVAILABLE, 0, -1, [1, 2], [1, 2], [1, 2])


def test_auto_creation_follows_the_request_and_the_broker(cache):
    assert ask(cache, 4, ["new"], False).topics[0].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert created == []
    assert ask(cache, 4, ["new"], True).topics[0].error == ErrorCode.LEADER_NOT_AVAILABLE
    assert created == ["new"]
    assert ask(cache, 1, ["other"]).topics[0].error == ErrorCode.LEADER_NOT_AVAILABLE  # v1-v3: allowed
    cache.auto_create_topics = False
    assert ask(cache, 4, ["third"], True).topics[0].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert created == ["new", "other"]


@pytest.mark.parametrize("name", ["x" * 250, "a/b", "..", ""])
def test_a_refused_name_is_invalid_topic_for_that_topic_alone_and_never_created(cache, name):
    answer = ask(cache, 4, [name, "t"], True)
    assert [(t.topic, t.error) for t in answer.topics] == [
        (name, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("t", 0),
    ]
    assert answer.brokers and created == []


def test_v8_authorized_operations_only_when_asked(cache):
    answer = ask(cache, 8, ["t"], True, False, False)
    assert answer.cluster_authorized_operations == answer.topics[0].topic_authorized_operations == -(2**31)
    answer = ask(cache, 8, ["t"], True, True, True)
    assert answer.cluster_authorized_operations == m.CLUSTER_OPERATIONS
    assert answer.topics[0].topic_authorized_operations == m.TOPIC_OPERATIONS


def test_v9_reads_topic_structs(cache):
    topic = m.MetadataRequestTopic.SCHEMA.flexible_version().record
    answer = ask(cache, 9, [topic("t")], True, False, False)
    assert [t.topic for t in answer.topics] == ["t"] and answer.controller_id == 0


def test_update_metadata_carries_the_controller_id_and_v3_the_racks_and_listeners():
    cache = MetadataCache()
    internal = {"endpoints": ("PLAINTEXT://h:9092", "INTERNAL://h:9192"), "protocol_map": INTERNAL_MAP}
    brokers = [BrokerRegistration(3, "h", 9092, rack="r3", **internal), BrokerRegistration(4, "g", 9093)]
    request = update_metadata_request(7, 1, [], brokers)
    assert request == UpdateMetadataRequestV3(
        7,
        1,
        [],
        [
            ListenerBroker(
                3, [ListenerEndPoint(9092, "h", "PLAINTEXT", 0), ListenerEndPoint(9192, "h", "INTERNAL", 3)], "r3"
            ),
            ListenerBroker(4, [ListenerEndPoint(9093, "g", "PLAINTEXT", 0)], None),
        ],
    )
    cache.update(request)
    assert cache.controller_id == 7
    assert ask(cache, 1, []).brokers == [
        m.MetadataBrokerV1(3, "h", 9092, "r3"),
        m.MetadataBrokerV1(4, "g", 9093, None),
    ]
    # a client on the INTERNAL listener is answered INTERNAL end points (broker 4 has none: left out)
    token = client_session.set(Session("INTERNAL", "SASL_SSL"))
    try:
        assert ask(cache, 1, []).brokers == [m.MetadataBrokerV1(3, "h", 9192, "r3")]
    finally:
        client_session.reset(token)
    # without racks and listeners the controller keeps UpdateMetadata v0, which 0.8.2 brokers read
    assert type(update_metadata_request(7, 1, [], brokers[1:])).__name__ == "UpdateMetadataRequestV0"


INTERNAL_MAP = (("PLAINTEXT", "PLAINTEXT"), ("INTERNAL", "SASL_SSL"))


def test_a_refused_replication_factor_is_38_from_v1_and_unknown_in_v0_as_0_8_2_answers():
    def refuse(topic):
        raise InvalidReplicationFactorError("replication factor: 3 larger than available brokers: 1")

    cache = MetadataCache(snapshot=cluster_snapshot({}), create_topic=refuse)
    assert ask(cache, 1, ["wide"]).topics[0].error == ErrorCode.INVALID_REPLICATION_FACTOR
    assert [(t.error, t.topic) for t in ask(cache, 0, ["wide"]).topics] == [(ErrorCode.UNKNOWN, "wide")]
