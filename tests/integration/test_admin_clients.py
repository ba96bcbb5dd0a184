"""Real third-party admin clients, unpinned, against a real zkafka cluster (a real ZooKeeper, two in-process
brokers): kafka-python's KafkaAdminClient and librdkafka's AdminClient (confluent-kafka) create topics, add
partitions and delete topics through CreateTopics, CreatePartitions and DeleteTopics, and see the controller
(and, librdkafka, the cluster id) through Metadata v1+. Which versions they chose is read from the brokers'
request log: each picks the newest both sides speak."""

from __future__ import annotations

import json
import time

import pytest

kafka = pytest.importorskip("kafka")
confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import admin as ck_admin  # noqa: E402
from kafka.admin import KafkaAdminClient, NewPartitions, NewTopic  # noqa: E402

from tests.integration.test_metadata_versions import ask, wait_for  # noqa: E402
from tests.support.server08 import Client08  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture
def cluster(start_broker08, zk_client):
    """Two brokers (0 in rack "r0"), topic deletion on; the bootstrap list and the controller's id."""
    props = {"delete.topic.enable": "true"}
    brokers = [start_broker08(0, **props, **{"broker.rack": "r0"}), start_broker08(1, **props)]
    with Client08(brokers[0].port) as client:
        answer = wait_for(lambda: (a := ask(client, 1, [])).controller_id >= 0 and len(a.brokers) == 2 and a)
    cluster_id = json.loads(zk_client.get("/cluster/id")[0])["id"]
    return ",".join(f"127.0.0.1:{b.port}" for b in brokers), answer.controller_id, cluster_id


def partitions_in_zk(zk_client, topic: str) -> int:
    return len(json.loads(zk_client.get(f"/brokers/topics/{topic}")[0])["partitions"])


def newest(names: set[str], api: str) -> int:
    """The highest version of ``api`` the brokers served (``CreateTopicsRequestV4`` → 4)."""
    return max(int(n.rsplit("V", 1)[1]) for n in names if n.startswith(f"{api}RequestV"))


def test_kafka_python_admin_client(cluster, zk_client, served):
    bootstrap, controller_id, _ = cluster
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        assert admin.describe_cluster()["controller_id"] == controller_id
        admin.create_topics([NewTopic("kp-admin", 2, 2)], timeout_ms=20000)
        assert partitions_in_zk(zk_client, "kp-admin") == 2
        admin.create_partitions({"kp-admin": NewPartitions(4)}, timeout_ms=20000)
        assert partitions_in_zk(zk_client, "kp-admin") == 4
        with pytest.raises(kafka.errors.TopicAlreadyExistsError):
            admin.create_topics([NewTopic("kp-admin", 1, 1)], timeout_ms=20000)
        admin.delete_topics(["kp-admin"], timeout_ms=20000)
        wait_for(lambda: zk_client.exists("/brokers/topics/kp-admin") is None)
    finally:
        admin.close()
    names = served()
    # kafka-python 2.3 knows CreateTopics v0-v3, DeleteTopics v0-v3, CreatePartitions v0-v1, Metadata v0-v8
    assert (newest(names, "CreateTopics"), newest(names, "DeleteTopics")) == (3, 3)
    assert newest(names, "CreatePartitions") == 1 and newest(names, "Metadata") == 8


def ck_result(futures: dict, timeout: float = 30) -> None:
    for future in futures.values():
        future.result(timeout)


def test_librdkafka_admin_client(cluster, zk_client, served):
    bootstrap, controller_id, cluster_id = cluster
    admin = ck_admin.AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(timeout=30)
    assert (metadata.controller_id, metadata.cluster_id) == (controller_id, cluster_id)
    assert sorted(metadata.brokers) == [0, 1]
    ck_result(admin.create_topics([ck_admin.NewTopic("ck-admin", 2, 2)], operation_timeout=20))
    assert partitions_in_zk(zk_client, "ck-admin") == 2
    ck_result(admin.create_partitions([ck_admin.NewPartitions("ck-admin", 3)], operation_timeout=20))
    assert partitions_in_zk(zk_client, "ck-admin") == 3
    refused = admin.create_topics([ck_admin.NewTopic("ck-admin", 1, 1)])["ck-admin"]
    with pytest.raises(confluent_kafka.KafkaException) as failure:
        refused.result(30)
    assert failure.value.args[0].code() == confluent_kafka.KafkaError.TOPIC_ALREADY_EXISTS
    ck_result(admin.delete_topics(["ck-admin"], operation_timeout=20))
    wait_for(lambda: zk_client.exists("/brokers/topics/ck-admin") is None)
    deadline = time.monotonic() + 20
    while "ck-admin" in admin.list_topics(timeout=10).topics and time.monotonic() < deadline:
        time.sleep(0.2)
    names = served()
    print(
        {api: newest(names, api) for api in ("CreateTopics", "DeleteTopics", "CreatePartitions", "Metadata")}
    )
    # librdkafka 2.16 asks for the newest each side speaks: the flexible versions
    assert newest(names, "CreateTopics") == 4 and newest(names, "DeleteTopics") == 4
    assert newest(names, "CreatePartitions") == 2 and newest(names, "Metadata") == 9
