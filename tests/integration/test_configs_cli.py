"""`zkafka configs` (kafka-configs.sh) and `zkafka topics --bootstrap-server` against two real brokers and a
real ZooKeeper: the admin requests do the work, errors are one line naming the broker, topic or key."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.integration.test_metadata_versions import wait_for
from zkafka.cli import main

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(start_broker08, zk_client):
    """``cli(command, *args, code=0)``: runs ``zkafka <command> --bootstrap-server <broker 0> ...``."""
    props = {"delete.topic.enable": "true"}
    brokers = [start_broker08(i, **props) for i in (0, 1)]
    wait_for(lambda: len(zk_client.get_children("/brokers/ids")) == 2 and zk_client.exists("/controller"))
    bootstrap = f"127.0.0.1:{brokers[0].port}"

    def run(command: str, *args: str, code: int = 0) -> str:
        result = CliRunner().invoke(main, [command, "--bootstrap-server", bootstrap, *args])
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result.stdout if code == 0 else result.stderr

    run.brokers = brokers
    return run


def test_topics_and_configs_through_the_admin_requests(cli, zk_client):
    created = cli(
        "topics",
        "--create",
        "--topic",
        "cfg",
        "--partitions",
        "2",
        "--replication-factor",
        "2",
        "--config",
        "retention.ms=60000",
    )
    assert created == 'Created topic "cfg".\n'
    assert cli("topics", "--list") == "cfg\n"
    described = cli("topics", "--describe", "--topic", "cfg").splitlines()
    assert described[0] == "Topic:cfg\tPartitionCount:2\tReplicationFactor:2\tConfigs:retention.ms=60000"
    assert cli("topics", "--alter", "--topic", "cfg", "--partitions", "3") == "Adding partitions succeeded!\n"
    assert len(json.loads(zk_client.get("/brokers/topics/cfg")[0])["partitions"]) == 3

    topic = ("--entity-type", "topics", "--entity-name", "cfg")
    altered = cli(
        "configs", *topic, "--alter", "--add-config", "max.message.bytes=2000,cleanup.policy=[compact]"
    )
    assert altered == "Completed updating config for topic cfg.\n"
    assert cli("configs", *topic, "--alter", "--delete-config", "retention.ms")
    lines = cli("configs", *topic, "--describe").splitlines()
    assert lines[0] == "Dynamic configs for topic cfg are:"
    assert sorted(line.split()[0] for line in lines[1:]) == [
        "cleanup.policy=compact",
        "max.message.bytes=2000",
    ]
    assert (
        "synonyms={DYNAMIC_TOPIC_CONFIG:max.message.bytes=2000, DEFAULT_CONFIG:message.max.bytes="
        in lines[-1] + lines[-2]
    )
    wait_for(
        lambda: all(
            log.config.max_message_size == 2000 for log in cli.brokers[1].server.log_manager.all_logs()
        )
    )

    unknown = cli("configs", *topic, "--alter", "--add-config", "no.such.key=1", code=1)
    assert "no.such.key" in unknown and len(unknown.strip().splitlines()) == 1
    assert "Invalid config(s): segment.ms" in cli(
        "configs", *topic, "--alter", "--delete-config", "segment.ms", code=1
    )
    broker = cli("configs", "--entity-type", "brokers", "--entity-name", "0", "--describe", "--all")
    assert "  broker.id=0 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=0" in broker
    refused = cli(
        "configs",
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
        "--alter",
        "--add-config",
        "num.partitions=2",
        code=1,
    )
    assert "INVALID_CONFIG" in refused and "num.partitions" in refused

    assert cli("topics", "--delete", "--topic", "cfg") == "Topic cfg is marked for deletion.\n"
    wait_for(lambda: zk_client.exists("/brokers/topics/cfg") is None)
    missing = cli("configs", "--entity-type", "topics", "--entity-name", "cfg", "--describe", code=1)
    assert "topic cfg: UNKNOWN_TOPIC_OR_PARTITION" in missing


def test_an_unreachable_broker_is_named():
    result = CliRunner().invoke(
        main,
        [
            "configs",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--entity-type",
            "topics",
            "--entity-name",
            "t",
            "--describe",
        ],
    )
    assert (
        result.exit_code == 1
        and "127.0.0.1:1" in result.stderr
        and len(result.stderr.strip().splitlines()) == 1
    )
