"""CreateTopics, DeleteTopics and CreatePartitions over real sockets, against a real ZooKeeper and in-process
brokers: answered by the controller only (NOT_CONTROLLER elsewhere), the ZooKeeper writes ``zkafka topics``
does, Kafka's per-topic errors, ``validate_only``, and the answer waiting until the new partitions have
leaders (or the deleted topic is gone)."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_metadata_versions import ask, wait_for
from tests.support.server08 import Client08
from zkafka.protocol import topic_admin as w
from zkafka.protocol.errors import ErrorCode

pytestmark = pytest.mark.integration

Creatable5 = w.CreatableTopic.SCHEMA.flexible_version().record
Config5 = w.TopicConfig.SCHEMA.flexible_version().record


def create(client, version, topics, timeout_ms=15000, validate_only=False):
    extra = (validate_only,) if version >= 1 else ()
    return client.call(w.CREATE_TOPICS_APIS[version][0](topics, timeout_ms, *extra))


def topic(name, partitions=1, factor=1, assignments=(), configs=()):
    return w.CreatableTopic(name, partitions, factor, list(assignments), list(configs))


def errors(answer):
    return {t.topic: t.error for t in answer.topics}


@pytest.fixture
def cluster(start_broker08):
    """``cluster(**props)``: two brokers; a client of the controller and one of the other broker."""
    clients = []

    def start(**props):
        brokers = [start_broker08(i, **props) for i in (0, 1)]
        with Client08(brokers[0].port) as client:
            answer = wait_for(
                lambda: (a := ask(client, 1, [])).controller_id >= 0 and len(a.brokers) == 2 and a
            )
        controller = brokers[answer.controller_id]
        clients.extend([Client08(controller.port), Client08(brokers[1 - answer.controller_id].port)])
        return clients

    try:
        yield start
    finally:
        for client in clients:
            client.sock.close()


def test_only_the_controller_answers(cluster):
    _, other = cluster()
    assert errors(create(other, 0, [topic("t")])) == {"t": ErrorCode.NOT_CONTROLLER}
    assert other.call(w.DELETE_TOPICS_APIS[0][0](["t"], 0)).topics[0].error == ErrorCode.NOT_CONTROLLER
    answer = other.call(w.CREATE_PARTITIONS_APIS[0][0]([w.PartitionsTopic("t", 2, None)], 0, False))
    assert answer.results[0].error == ErrorCode.NOT_CONTROLLER


def test_create_topics_writes_zookeeper_and_waits_for_leaders(cluster, zk_client):
    controller, _ = cluster()
    answer = create(controller, 1, [topic("made", 3, 2, configs=[w.TopicConfig("retention.ms", "1000")])])
    assert [tuple(t) for t in answer.topics] == [("made", 0, None)]
    (made,) = ask(controller, 1, ["made"]).topics  # the answer came once every partition had a leader
    assert made.error == 0 and len(made.partitions) == 3 and all(p.leader >= 0 for p in made.partitions)
    assignment = json.loads(zk_client.get("/brokers/topics/made")[0])["partitions"]
    assert sorted(assignment) == ["0", "1", "2"] and all(len(r) == 2 for r in assignment.values())
    assert json.loads(zk_client.get("/config/topics/made")[0])["config"] == {"retention.ms": "1000"}


def test_create_topics_errors_per_topic(cluster, zk_client):
    controller, _ = cluster()
    create(controller, 0, [topic("exists")])
    both = topic("both", 1, 1, assignments=[w.ReplicaAssignment(0, [0])])
    answer = create(
        controller,
        1,
        [
            topic("exists"),
            topic("bad/name"),
            topic("zero", 0),
            topic("wide", 1, 3),
            topic("cfg", configs=[w.TopicConfig("no.such.config", "1")]),
            both,
            topic("twice"),
            topic("twice"),
            topic("gap", -1, -1, assignments=[w.ReplicaAssignment(1, [0])]),
        ],
    )
    assert errors(answer) == {
        "exists": ErrorCode.TOPIC_ALREADY_EXISTS,
        "bad/name": ErrorCode.INVALID_TOPIC_EXCEPTION,
        "zero": ErrorCode.INVALID_PARTITIONS,
        "wide": ErrorCode.INVALID_REPLICATION_FACTOR,
        "cfg": ErrorCode.INVALID_CONFIG,
        "both": ErrorCode.INVALID_REQUEST,
        "twice": ErrorCode.INVALID_REQUEST,
        "gap": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    }
    assert all(t.error_message for t in answer.topics)
    assert zk_client.get_children("/brokers/topics") == ["exists"]


def test_validate_only_writes_nothing_and_v4_takes_the_broker_defaults(cluster, zk_client):
    controller, _ = cluster()
    assert errors(create(controller, 4, [topic("checked", -1, -1)], validate_only=True)) == {"checked": 0}
    assert zk_client.exists("/brokers/topics/checked") is None
    assert errors(create(controller, 3, [topic("old", -1, -1)])) == {"old": ErrorCode.INVALID_PARTITIONS}
    assert errors(create(controller, 4, [topic("defaults", -1, -1)])) == {"defaults": 0}
    assert len(json.loads(zk_client.get("/brokers/topics/defaults")[0])["partitions"]) == 1  # num.partitions


def test_v5_answers_partitions_replication_and_configs(cluster):
    controller, _ = cluster()
    request = w.CREATE_TOPICS_APIS[5][0](
        [Creatable5("five", 2, 2, [], [Config5("cleanup.policy", "compact")])], 15000, False
    )
    (result,) = controller.call(request).topics
    assert (result.error, result.num_partitions, result.replication_factor) == (0, 2, 2)
    configs = {c.name: (c.value, c.config_source) for c in result.configs}
    assert configs["cleanup.policy"] == ("compact", 1)  # DYNAMIC_TOPIC_CONFIG
    assert configs["retention.bytes"] == ("-1", 5)  # DEFAULT_CONFIG


def test_create_partitions(cluster, zk_client):
    controller, _ = cluster()
    create(controller, 0, [topic("grow", 2, 2)])
    request = w.CREATE_PARTITIONS_APIS[1][0]
    grow = [w.PartitionsTopic("grow", 4, None), w.PartitionsTopic("absent", 2, None)]
    answer = controller.call(request(grow, 15000, False))
    assert [(r.topic, r.error) for r in answer.results] == [
        ("grow", 0),
        ("absent", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    (grown,) = ask(controller, 1, ["grow"]).topics
    assert len(grown.partitions) == 4 and all(p.leader >= 0 for p in grown.partitions)
    refused = [w.PartitionsTopic("grow", 3, None)]
    assert controller.call(request(refused, 0, False)).results[0].error == ErrorCode.INVALID_PARTITIONS
    wrong = [w.PartitionsTopic("grow", 6, [w.PartitionsAssignment([0, 1])])]
    assert controller.call(request(wrong, 0, False)).results[0].error == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    checked = [w.PartitionsTopic("grow", 5, [w.PartitionsAssignment([1, 0])])]
    assert controller.call(request(checked, 0, True)).results[0].error == 0
    assert len(json.loads(zk_client.get("/brokers/topics/grow")[0])["partitions"]) == 4


def test_delete_topics_disabled(cluster):
    controller, _ = cluster()
    create(controller, 0, [topic("kept")])
    assert (
        controller.call(w.DELETE_TOPICS_APIS[0][0](["kept"], 0)).topics[0].error == ErrorCode.INVALID_REQUEST
    )
    answer = controller.call(w.DELETE_TOPICS_APIS[3][0](["kept", "absent"], 0))
    assert [t.error for t in answer.topics] == [
        ErrorCode.TOPIC_DELETION_DISABLED,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]


def test_delete_topics_waits_until_the_topic_is_gone(cluster, zk_client):
    controller, _ = cluster(**{"delete.topic.enable": "true"})
    create(controller, 0, [topic("doomed", 2, 2)])
    answer = controller.call(w.DELETE_TOPICS_APIS[1][0](["doomed", "doomed"], 15000))
    assert [tuple(t) for t in answer.topics] == [("doomed", ErrorCode.INVALID_REQUEST)]  # named twice
    answer = controller.call(w.DELETE_TOPICS_APIS[1][0](["doomed"], 15000))
    assert [tuple(t) for t in answer.topics] == [("doomed", 0)]
    assert (
        ask(controller, 4, ["doomed"], False).topics[0].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )  # gone
    assert wait_for(lambda: zk_client.exists("/brokers/topics/doomed") is None)
