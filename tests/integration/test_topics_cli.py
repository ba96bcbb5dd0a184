"""`zkafka topics` (kafka-topics.sh) against a real ZooKeeper, with 0.8 brokers' registrations and controller."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.support.brokers08 import Brokers08
from zkafka.cli import main
from zkafka.utils import wait_until
from zkafka.zk.paths08 import parse_topic_assignment, parse_topic_config

pytestmark = pytest.mark.integration


@pytest.fixture
def brokers(zk_connect):
    with Brokers08(zk_connect) as start:
        yield start


@pytest.fixture
def topics(zk_connect):
    def run(*args: str, code: int = 0):
        result = CliRunner().invoke(main, ["topics", "--zookeeper", zk_connect, *args])
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout if code == 0 else result.stderr

    return run


def test_create_describe_list(brokers, topics, zk_client):
    for broker_id in (1, 2, 3):
        brokers(broker_id)
    assert (
        topics(
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "3",
            "--replication-factor",
            "2",
            "--config",
            "retention.ms=60000",
        )
        == 'Created topic "orders".\n'
    )
    assignment = parse_topic_assignment("orders", zk_client.get("/brokers/topics/orders")[0])
    assert sorted(assignment) == [0, 1, 2] and all(len(set(r)) == 2 for r in assignment.values())
    assert sorted(r[0] for r in assignment.values()) == [1, 2, 3]  # leaders spread over the brokers
    assert parse_topic_config("orders", zk_client.get("/config/topics/orders")[0]) == {
        "retention.ms": "60000"
    }

    def described():
        return topics("--describe", "--topic", "orders").splitlines()

    wait_until(lambda: "Leader: none" not in "".join(described()), 10, message="leaders elected")
    lines = described()
    assert lines[0] == "Topic:orders\tPartitionCount:3\tReplicationFactor:2\tConfigs:retention.ms=60000"
    for p, line in enumerate(lines[1:]):
        replicas = ",".join(map(str, assignment[p]))
        assert (
            line
            == f"\tTopic: orders\tPartition: {p}\tLeader: {assignment[p][0]}\tReplicas: {replicas}\tIsr: {replicas}"
        )

    topics("--create", "--topic", "a.b_c-1", "--replica-assignment", "3,1")
    assert topics("--list") == "a.b_c-1\norders\n"
    assert topics("--list", "--topic", "ord.*") == "orders\n"
    assert topics("--describe", "--topics-with-overrides").splitlines() == [lines[0]]


def test_create_refusals_write_nothing(brokers, topics, zk_client):
    brokers(1)
    error = topics("--create", "--topic", "t", "--partitions", "1", "--replication-factor", "2", code=1)
    assert error.count("\n") == 1 and "replication factor: 2 larger than available brokers: 1" in error
    error = topics(
        "--create", "--topic", "bad name", "--partitions", "1", "--replication-factor", "1", code=1
    )
    assert error.count("\n") == 1 and "'bad name'" in error
    error = topics("--create", "--topic", "x" * 255, "--partitions", "1", "--replication-factor", "1", code=1)
    assert error.count("\n") == 1 and "255 characters long; at most 249 are allowed" in error
    error = topics(
        "--create",
        "--topic",
        "t",
        "--partitions",
        "1",
        "--replication-factor",
        "1",
        "--config",
        "retention.mss=1",
        code=1,
    )
    assert error.count("\n") == 1 and "retention.mss" in error
    assert zk_client.get_children("/brokers/topics") == []
    assert zk_client.exists("/config/topics") is None or zk_client.get_children("/config/topics") == []

    topics("--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1")
    error = topics("--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1", code=1)
    assert 'topic "t" already exists' in error
    assert "give exactly one action" in topics("--list", "--describe", code=1)
    assert "--replication-factor goes with --create" in topics(
        "--alter", "--topic", "t", "--replication-factor", "2", code=1
    )


def test_alter_partitions_and_configs(brokers, topics, zk_client):
    brokers(1)
    brokers(2)
    topics("--create", "--topic", "t", "--partitions", "2", "--replication-factor", "2")
    out = topics(
        "--alter",
        "--topic",
        "t",
        "--partitions",
        "4",
        "--config",
        "cleanup.policy=compact",
        "--config",
        "retention.ms=5",
    )
    assert out.splitlines() == [
        'Updated config for topic "t".',
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the"
        " messages will be affected",
        "Adding partitions succeeded!",
    ]
    assignment = parse_topic_assignment("t", zk_client.get("/brokers/topics/t")[0])
    assert sorted(assignment) == [0, 1, 2, 3] and all(len(set(r)) == 2 for r in assignment.values())
    changes = zk_client.get_children("/config/changes")
    assert len(changes) == 1 and changes[0].startswith("config_change_")
    assert zk_client.get(f"/config/changes/{changes[0]}")[0] == b'"t"'
    wait_until(
        lambda: "Leader: none" not in topics("--describe", "--topic", "t"), 10, message="new partitions led"
    )

    topics("--alter", "--topic", "t", "--delete-config", "retention.ms")
    assert parse_topic_config("t", zk_client.get("/config/topics/t")[0]) == {"cleanup.policy": "compact"}
    assert "only be increased" in topics("--alter", "--topic", "t", "--partitions", "3", code=1)
    assert "topic nothing does not exist" in topics(
        "--alter", "--topic", "nothing", "--partitions", "9", code=1
    )
    topics("--alter", "--topic", "t", "--partitions", "5", "--replica-assignment", "2:1")
    assert parse_topic_assignment("t", zk_client.get("/brokers/topics/t")[0])[4] == [2, 1]


def test_describe_filters_and_delete(brokers, topics, zk_client):
    brokers(1)
    second = brokers(2)
    topics("--create", "--topic", "t", "--replica-assignment", "1,2")
    wait_until(lambda: "Leader: none" not in topics("--describe"), 10, message="leaders elected")
    assert topics("--describe", "--unavailable-partitions") == ""
    second.stop()
    wait_until(lambda: topics("--describe", "--unavailable-partitions") != "", 10, message="t-1 offline")
    assert (
        topics("--describe", "--unavailable-partitions")
        == "\tTopic: t\tPartition: 1\tLeader: -1\tReplicas: 2\tIsr: \n"
    )
    assert (
        topics("--describe", "--under-replicated-partitions")
        == "\tTopic: t\tPartition: 1\tLeader: -1\tReplicas: 2\tIsr: \n"
    )

    assert topics("--delete", "--topic", "t").splitlines() == [
        "Topic t is marked for deletion.",
        "Note: This will have no impact if delete.topic.enable is not set to true.",
    ]
    assert zk_client.exists("/admin/delete_topics/t")
    assert topics("--list") == "t - marked for deletion\n"
    assert topics("--delete", "--topic", "t") == "Topic t is already marked for deletion.\n"
    # as 0.8.2's TopicCommand: a topic that does not exist is said so, and the command succeeds
    assert topics("--delete", "--topic", "nosuch") == "Topic nosuch does not exist\n"
    assert zk_client.get_children("/admin/delete_topics") == ["t"]
