"""Metadata v1-v9 over real sockets, against a real ZooKeeper and in-process brokers: the controller id, the
cluster id the first broker writes at ``/cluster/id`` (and later brokers read), racks from ``broker.rack``
(an extra key in a registration 0.8.2 tools still read), ``allow_auto_topic_creation``, refused names, the
flexible v9 under response header v1; and kafka-python's own Metadata classes agreeing with the broker."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.server08 import Client08, wait_for_leaders
from zkafka.protocol import metadata as m
from zkafka.protocol.api_keys import METADATA
from zkafka.protocol.api_versions import ApiVersionRange, ApiVersionsRequestV0
from zkafka.protocol.errors import ErrorCode

pytestmark = pytest.mark.integration


def ask(client, version, *fields):
    return client.call(m.METADATA_APIS[version][0](*fields))


def wait_for(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def cluster(start_broker08):
    brokers = [start_broker08(0, **{"broker.rack": "r0"}), start_broker08(1)]
    client = Client08(brokers[0].port)
    try:
        wait_for(lambda: len(ask(client, 1, []).brokers) == 2 and ask(client, 1, []).controller_id >= 0)
        yield brokers, client
    finally:
        client.sock.close()


def test_v2_names_the_controller_the_cluster_id_and_the_racks(cluster, zk_client):
    brokers, client = cluster
    answer = ask(client, 2, [])
    controller = json.loads(zk_client.get("/controller")[0])["brokerid"]
    cluster_id = json.loads(zk_client.get("/cluster/id")[0])
    assert cluster_id["version"] == "1" and len(cluster_id["id"]) == 22
    assert (answer.controller_id, answer.cluster_id) == (controller, cluster_id["id"])
    assert [(b.node_id, b.rack) for b in answer.brokers] == [(0, "r0"), (1, None)]
    with Client08(brokers[1].port) as other:  # the second broker read the id the first one wrote
        assert ask(other, 2, []).cluster_id == cluster_id["id"]
    registration = json.loads(zk_client.get("/brokers/ids/0")[0])
    assert registration["version"] == 1 and registration["rack"] == "r0"  # 0.8.2 readers skip "rack"
    assert "rack" not in json.loads(zk_client.get("/brokers/ids/1")[0])


def test_metadata_versions_are_advertised(cluster):
    _, client = cluster
    assert ApiVersionRange(METADATA, 0, 9) in client.call(ApiVersionsRequestV0()).api_versions


def test_allow_auto_topic_creation_and_refused_names(cluster, zk_client):
    _, client = cluster
    assert ask(client, 4, ["kept-out"], False).topics[0].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    answer = ask(client, 4, ["x" * 250, "bad/name"], True)
    assert [t.error for t in answer.topics] == [ErrorCode.INVALID_TOPIC_EXCEPTION] * 2
    assert ask(client, 4, ["made"], True).topics[0].error == ErrorCode.LEADER_NOT_AVAILABLE
    assert zk_client.get_children("/brokers/topics") == ["made"]


def test_v9_is_flexible_with_offline_replicas_and_leader_epochs(cluster):
    _, client = cluster
    wait_for_leaders(client, ["flex"])
    topic = m.MetadataRequestTopic.SCHEMA.flexible_version().record
    correlation_id = client.send(m.MetadataRequestV9([topic("flex")], True, False, True))
    frame = client.read_frame()
    assert frame[4:9] == correlation_id.to_bytes(4, "big") + b"\x00"  # response header v1: a tag buffer
    answer = m.MetadataResponseV9.decode(frame[9:])
    (flex,) = answer.topics
    assert flex.topic_authorized_operations == m.TOPIC_OPERATIONS
    assert answer.cluster_authorized_operations == m.AUTHORIZED_OPERATIONS_OMITTED
    (partition,) = flex.partitions
    assert (partition.error, partition.leader_epoch, partition.offline_replicas) == (0, 0, [])
    assert partition.leader in partition.replicas and len(answer.brokers) == 2


@pytest.mark.parametrize("version", [1, 5, 8])
def test_kafka_python_metadata_classes_agree_with_the_broker(cluster, version):
    kp = pytest.importorskip("kafka.protocol.metadata")
    _, client = cluster
    wait_for_leaders(client, ["kp"])
    fields = {1: (["kp"],), 5: (["kp"], True), 8: (["kp"], True, True, True)}[version]
    request = getattr(kp, f"MetadataRequest_v{version}")(*fields)
    header = request.build_header(41, "kp")
    body = header.encode() + request.encode()
    client.sock.sendall(len(body).to_bytes(4, "big") + body)
    frame = client.read_frame()
    theirs = getattr(kp, f"MetadataResponse_v{version}").decode(frame[8:])
    ours = m.METADATA_APIS[version][1].decode(frame[8:])
    assert [tuple(b) for b in theirs.brokers] == [tuple(b) for b in ours.brokers]
    assert theirs.controller_id == ours.controller_id >= 0
    assert theirs.topics[0][1] == "kp" and theirs.topics[0][0] == 0
