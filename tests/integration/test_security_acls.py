"""ACLs on a secured, replicating two-broker cluster (``authorizer.class.name`` = Kafka's AclAuthorizer), with
kafka-python as the SASL client: an authenticated user with Describe but no Read gets TOPIC_AUTHORIZATION_FAILED
on Fetch and GROUP_AUTHORIZATION_FAILED on JoinGroup, and gets in once ``zkafka acls --add`` allows it; a
plaintext client from another address sends the controller's StopReplica, LeaderAndIsr and UpdateMetadata
(with the real controller's id and epoch) and is refused CLUSTER_AUTHORIZATION_FAILED, changing nothing,
while the brokers, User:ANONYMOUS from 127.0.0.1 on the inter-broker PLAINTEXT listener, keep replicating;
``zkafka acls --bootstrap-server`` lists and removes through DescribeAcls and DeleteAcls."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from tests.support.server08 import Client08, broker08_props
from zkafka.admin.topics import create_topic
from zkafka.cli.command import main
from zkafka.config08 import BrokerConfig08
from zkafka.protocol import inter_broker as admin
from zkafka.protocol.errors import ErrorCode
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration
kafka = pytest.importorskip("kafka")

JAAS = (
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
HOSTILE_ADDRESS = "127.0.0.2"  # a client the brokers' ACL (host 127.0.0.1) does not cover


def acls(zk_connect: str, *args: str) -> str:
    result = CliRunner().invoke(
        main, ["acls", "--authorizer-properties", f"zookeeper.connect={zk_connect}", *args]
    )
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def secured_cluster(tmp_path, zk_connect):
    """Two brokers; ANONYMOUS from 127.0.0.1 (the brokers on PLAINTEXT) may do anything, User:admin is super."""
    acls(zk_connect, "--add", "--allow-principal", "User:ANONYMOUS", "--allow-host", "127.0.0.1", "--cluster")
    acls(
        zk_connect,
        "--add",
        "--allow-principal",
        "User:ANONYMOUS",
        "--allow-host",
        "127.0.0.1",
        "--topic",
        "*",
    )
    brokers = []
    try:
        for broker_id in (0, 1):
            props = broker08_props(broker_id, tmp_path / f"broker08-{broker_id}", zk_connect)
            props.update(
                {
                    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                    "sasl.enabled.mechanisms": "PLAIN",
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
                    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                    "super.users": "User:admin",
                    "replica.lag.time.max.ms": "60000",
                    "controlled.shutdown.retry.backoff.ms": "100",  # the last one stops leading nothing else
                }
            )
            brokers.append(BrokerThread(BrokerConfig08(props)).start())
        yield brokers
    finally:
        for broker in reversed(brokers):
            broker.stop()


def sasl(broker, user: str) -> dict:
    return {
        "bootstrap_servers": f"127.0.0.1:{broker.listener_port('SASL_PLAINTEXT')}",
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": f"{user}-secret",
    }


def produce(broker, count: int, start: int = 0) -> None:
    producer = kafka.KafkaProducer(acks="all", **sasl(broker, "admin"))
    try:
        for i in range(start, start + count):
            producer.send("t", b"m%d" % i, partition=0).get(timeout=30)
    finally:
        producer.close()


def poll_until(consumer, wanted: int, refused: type, deadline_s: float = 30.0) -> tuple[list[bytes], bool]:
    """Poll until ``wanted`` messages came, or (``wanted`` 0) until a ``refused`` error, or the deadline: the
    messages and whether the refusal was raised (refusals before ``wanted`` messages are retried)."""
    got, seen = [], False
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline and (len(got) < wanted or not (wanted or seen)):
        try:
            for records in consumer.poll(timeout_ms=200).values():
                got += [r.value for r in records]
        except refused:
            seen = True
    return got, seen


def test_acls_gate_fetch_join_and_the_controllers_requests(secured_cluster, zk_connect, zk_client, tmp_path):
    broker0, broker1 = secured_cluster
    create_topic(zk_client, "t", 1, 2, {})
    produce(broker0, 5)
    acls(zk_connect, "--add", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", "t")

    # Fetch: Describe (Metadata, ListOffsets) but no Read
    consumer = kafka.KafkaConsumer(auto_offset_reset="earliest", group_id=None, **sasl(broker0, "alice"))
    try:
        consumer.assign([kafka.TopicPartition("t", 0)])
        refusal = kafka.errors.TopicAuthorizationFailedError
        assert poll_until(consumer, 0, refusal) == ([], True)
        output = acls(
            zk_connect, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t"
        )
        assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in output
        got, _ = poll_until(consumer, 5, refusal)  # once the change notification reached the leader
        assert got == [b"m%d" % i for i in range(5)]
    finally:
        consumer.close()

    # JoinGroup: Describe on the group (FindCoordinator) but no Read; then Read on every group named app-*
    prefixed = ("--resource-pattern-type", "prefixed", "--group", "app-")
    acls(zk_connect, "--add", "--allow-principal", "User:alice", "--operation", "Describe", *prefixed)
    consumer = kafka.KafkaConsumer(
        "t", group_id="app-1", auto_offset_reset="earliest", **sasl(broker0, "alice")
    )
    try:
        refusal = kafka.errors.GroupAuthorizationFailedError
        assert poll_until(consumer, 0, refusal) == ([], True)
        acls(zk_connect, "--add", "--allow-principal", "User:alice", "--operation", "Read", *prefixed)
        got, _ = poll_until(consumer, 5, refusal)
        assert got == [b"m%d" % i for i in range(5)]
    finally:
        consumer.close()

    # the controller's requests from a plaintext client elsewhere, with the real controller's id and epoch
    controller = json.loads(zk_client.get("/controller")[0])["brokerid"]
    epoch = int(zk_client.get("/controller_epoch")[0])
    follower = broker1 if controller == 0 else broker0
    state = admin.PartitionState(
        epoch, follower.server.broker_id, 1000, [follower.server.broker_id], 0, [0, 1]
    )
    forged = [
        admin.StopReplicaRequestV0(controller, epoch, 1, [admin.TopicPartition("t", 0)]),
        admin.LeaderAndIsrRequestV0(
            controller, epoch, [admin.PartitionStateEntry("t", 0, state)], [admin.Broker(0, "127.0.0.1", 1)]
        ),
        admin.UpdateMetadataRequestV0(
            controller,
            epoch,
            [admin.PartitionStateEntry("t", 0, admin.PartitionState(epoch, -2, 0, [], 0, []))],
            [],
        ),
    ]
    for broker in secured_cluster:
        with Client08(broker.port, source=HOSTILE_ADDRESS) as client:
            for request in forged:
                assert client.call(request).error == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, request

    # nothing changed: both replicas keep every message, and the next ones too
    produce(broker0, 3, start=5)
    for broker in secured_cluster:
        wait_until(
            lambda b=broker: b.server.replica_manager.partition("t", 0).log_end_offset == 8, timeout=20
        )
    leaders = {
        b.server.broker_id for b in secured_cluster if b.server.replica_manager.partition("t", 0).is_leader
    }
    assert len(leaders) == 1

    # through a broker (DescribeAcls, DeleteAcls): ANONYMOUS from 127.0.0.1 has Describe and Alter on the cluster
    bootstrap = ["acls", "--bootstrap-server", f"127.0.0.1:{broker1.port}"]
    listed = CliRunner().invoke(main, [*bootstrap, "--list", "--principal", "User:alice"])
    assert listed.exit_code == 0, listed.output
    assert "ResourcePattern(resourceType=GROUP, name=app-, patternType=PREFIXED)" in listed.output
    assert "operation=READ" in listed.output and "operation=DESCRIBE" in listed.output
    removed = CliRunner().invoke(
        main,
        [
            *bootstrap,
            "--remove",
            "--force",
            "--topic",
            "t",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Read",
        ],
    )
    assert removed.exit_code == 0, removed.output
    assert "operation=READ" not in removed.output and "operation=DESCRIBE" in removed.output
    assert "Read" not in zk_client.get("/kafka-acl/Topic/t")[0].decode()

    # through the SASL listener with --command-config: the super user may list, alice is refused in one line
    for user, refused in (("admin", False), ("alice", True)):
        config = tmp_path / f"{user}.properties"
        config.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{user}" password="{user}-secret";\n'
        )
        sasl_bootstrap = f"127.0.0.1:{broker1.listener_port('SASL_PLAINTEXT')}"
        result = CliRunner().invoke(
            main, ["acls", "--bootstrap-server", sasl_bootstrap, "--command-config", str(config), "--list"]
        )
        if refused:
            assert result.exit_code != 0 and "CLUSTER_AUTHORIZATION_FAILED" in result.output, result.output
        else:
            assert result.exit_code == 0 and "principal=User:alice" in result.output, result.output
    # topics and configs through the SASL listener take --command-config too; without it, one line and exit 1
    secured = ["--bootstrap-server", sasl_bootstrap, "--command-config", str(tmp_path / "admin.properties")]
    listed = CliRunner().invoke(main, ["topics", *secured, "--list"])
    assert listed.exit_code == 0 and "t" in listed.output.split(), listed.output
    entity = ["--entity-type", "topics", "--entity-name", "t"]
    described = CliRunner().invoke(main, ["configs", *secured, "--describe", *entity])
    assert described.exit_code == 0 and "t" in described.output, described.output
    unsecured = CliRunner().invoke(main, ["topics", "--bootstrap-server", sasl_bootstrap, "--list"])
    assert unsecured.exit_code != 0 and sasl_bootstrap in unsecured.output, unsecured.output
    assert len(unsecured.output.strip().splitlines()) == 1, unsecured.output
    # and so do consumer-groups (every connection: bootstrap, coordinator, leaders) and get-offsets
    groups = ["consumer-groups", *secured]
    listed = CliRunner().invoke(main, [*groups, "--list"])
    assert listed.exit_code == 0 and "app-1" in listed.output.split(), listed.output
    described = CliRunner().invoke(main, [*groups, "--describe", "--group", "app-1"])
    assert described.exit_code == 0 and ["app-1", "t", "0", "5", "8", "3"] in [
        line.split()[:6] for line in described.output.splitlines()
    ], described.output
    as_json = CliRunner().invoke(main, [*groups, "--describe", "--group", "app-1", "--topic", "t", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert [(r["offset"], r["log_end"]) for r in json.loads(as_json.output)["partitions"]] == [(5, 8)]
    reset = ["--reset-offsets", "--group", "app-1", "--topic", "t", "--to-earliest", "--execute"]
    done = CliRunner().invoke(main, [*groups, *reset])
    assert done.exit_code == 0 and ["app-1", "t", "0", "0"] in [
        line.split() for line in done.output.splitlines()
    ], done.output
    described = CliRunner().invoke(main, [*groups, "--describe", "--group", "app-1"])
    assert ["app-1", "t", "0", "0", "8", "8"] in [line.split()[:6] for line in described.output.splitlines()]
    # the group consumer takes the same keys: console-consumer reads the 8 again from the reset, commits them
    config = ["--consumer.config", str(tmp_path / "admin.properties")]
    read = CliRunner().invoke(main, ["console-consumer", "--bootstrap-server", sasl_bootstrap, *config,
                                     "--topic", "t", "--group", "app-1", "--max-messages", "8"])  # fmt: skip
    assert read.exit_code == 0 and [b"m%d" % i for i in range(8)] == [
        line.encode() for line in read.output.splitlines() if line.startswith("m")
    ], read.output
    described = CliRunner().invoke(main, [*groups, "--describe", "--group", "app-1"])
    assert ["app-1", "t", "0", "8", "8", "0"] in [line.split()[:6] for line in described.output.splitlines()]
    perf = ["perf", "consume", "--bootstrap-server", sasl_bootstrap, *config, "--topic", "t", "--messages", "8"]
    measured = CliRunner().invoke(main, [*perf, "--group", "perf-1", "--json", "--no-progress"])
    assert measured.exit_code == 0 and json.loads(measured.output)["total_messages"] == 8, measured.output
    ends = CliRunner().invoke(main, ["get-offsets", *secured, "--topic", "t"])
    assert ends.exit_code == 0 and ends.output.split() == ["t:0:8"], ends.output
    unsecured = CliRunner().invoke(main, ["consumer-groups", "--bootstrap-server", sasl_bootstrap, "--list"])
    assert unsecured.exit_code != 0 and sasl_bootstrap in unsecured.output, unsecured.output

    # kafka-python's admin client: alice may not administer; the super user reads and writes ACLs (v1 requests)
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        NewTopic,
        ResourcePattern,
        ResourcePatternFilter,
        ResourceType,
    )

    any_topic = ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY)
    bob = ACLFilter("User:bob", None, ACLOperation.ANY, ACLPermissionType.ANY, any_topic)
    alice_admin = KafkaAdminClient(**sasl(broker0, "alice"))
    try:
        with pytest.raises(kafka.errors.ClusterAuthorizationFailedError):
            alice_admin.describe_acls(bob)
        with pytest.raises(kafka.errors.TopicAuthorizationFailedError):
            alice_admin.create_topics([NewTopic("x", 1, 1)])
    finally:
        alice_admin.close()
    admin_client = KafkaAdminClient(**sasl(broker1, "admin"))
    try:
        write_t = ResourcePattern(ResourceType.TOPIC, "t", ACLResourcePatternType.LITERAL)
        acl = ACL("User:bob", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW, write_t)
        assert admin_client.create_acls([acl])["failed"] == []
        acls_found, error = admin_client.describe_acls(bob)
        assert error is kafka.errors.NoError and acls_found == [acl]
        assert "principal=User:bob, host=*, operation=WRITE" in acls(zk_connect, "--list", "--topic", "t")
        ((_, deleted, _),) = admin_client.delete_acls([bob])
        assert [found for found, _ in deleted] == [acl]
    finally:
        admin_client.close()
    assert "User:bob" not in zk_client.get("/kafka-acl/Topic/t")[0].decode()
