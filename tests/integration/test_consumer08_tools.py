"""The consumer-side tools on 0.8 clusters: console-consumer and offset-checker, against real 0.8 brokers."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from tests.integration.test_consumer_cli import zkafka
from tests.support.consumers import Collector
from tests.support.consumers08 import committed08, consumer08_config, produce08, start_cluster08
from tests.support.server08 import Client08
from zkafka.cli import main
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.utils import wait_until
from zkafka.zk.client import get_children
from zkafka.zk.line import cluster_line

pytestmark = pytest.mark.integration


@pytest.fixture
def cluster08(start_broker08, zk_client):
    brokers = start_cluster08(start_broker08, zk_client, topics={"logs": 2, "metrics": 1})
    config = {
        "metadata.broker.list": ",".join(f"127.0.0.1:{b.port}" for b in brokers),
        "request.required.acks": "1",
    }
    with Producer08(config) as producer:
        producer.send(KeyedMessage("logs", b"k1", b"first"), KeyedMessage("logs", None, b"second"))
        producer.send(KeyedMessage("metrics", b"cpu", None))
    return brokers


def test_the_cluster_line_is_told_from_zookeeper(cluster08, zk_client):
    assert cluster_line(zk_client) == "0.8"


def test_console_consumer_prints_keys_and_values(cluster08, zk_connect, zk_client):
    result = zkafka(
        "console-consumer", "--zookeeper", zk_connect, "--whitelist", "logs|metrics", "--from-beginning",
        "--max-messages", "3", "--property", "print.key=true", "--property", "key.separator=:",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.decode().splitlines()) == ["cpu:null", "k1:first", "null:second"]
    assert b"Consumed 3 messages" in result.stderr
    assert not [g for g in get_children(zk_client, "/consumers") if g.startswith("console-consumer-")]


def test_from_beginning_on_a_group_with_offsets_needs_delete_consumer_offsets(
    cluster08, zk_connect, zk_client
):
    args = [
        "console-consumer",
        "--zookeeper",
        zk_connect,
        "--topic",
        "logs",
        "--consumer-property",
        "group.id=keep",
    ]
    result = zkafka(*args, "--from-beginning", "--consumer-timeout-ms", "1500")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == [b"first", b"second"]
    assert sum(committed08(zk_client, "keep", "logs").values()) == 2  # kept: the group was named

    result = zkafka(*args, "--from-beginning", "--consumer-timeout-ms", "500")
    assert result.returncode == 1
    assert b"--delete-consumer-offsets" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = zkafka(*args, "--from-beginning", "--delete-consumer-offsets", "--consumer-timeout-ms", "1500")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == [b"first", b"second"]
    result = zkafka(*args, "--line", "0.8", "--consumer-timeout-ms", "1000")  # resumes at its offsets
    assert result.returncode == 0 and result.stdout == b""


def test_offset_checker_on_a_real_group(cluster08, zk_connect, zk_client):
    brokers = cluster08
    connector = ZookeeperConsumerConnector08(
        consumer08_config(zk_connect, "g", consumer_id="c0", auto_commit_enable="false")
    )
    try:
        collector = Collector(connector.create_message_streams({"logs": 1})["logs"])
        wait_until(lambda: len(collector.messages) == 2, message="two messages")
        connector.commit_offsets()
        produce08(brokers, "logs", 10, prefix="later")  # not consumed yet: lag
        with Client08(brokers[0].port) as client:
            answer = client.call(MetadataRequestV0(["logs"]))
        leaders = {p.partition: p.leader for p in answer.topics[0].partitions}

        def ends():
            out = {}
            for p, leader in leaders.items():
                with Client08(brokers[leader].port) as c:
                    request = ListOffsetsRequestV0(
                        -1, [ListOffsetsRequestTopic("logs", [ListOffsetsRequestPartition(p, -1, 1)])]
                    )
                    out[p] = c.call(request).topics[0].partitions[0].offsets[0]
            return out

        log_ends = wait_until(lambda: (e := ends()) and sum(e.values()) == 12 and e, message="log ends")
        consumed = committed08(zk_client, "g", "logs")
        result = CliRunner().invoke(
            main,
            ["offset-checker", "--zookeeper", zk_connect, "--group", "g", "--broker-info"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert re.split(r"\s+", lines[0]) == ["Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner"]
        assert lines[0].startswith("Group           Topic                          Pid Offset          ")
        rows = [re.split(r"\s+", line) for line in lines[1:3]]
        assert rows == [
            [
                "g",
                "logs",
                str(p),
                str(consumed[p]),
                str(log_ends[p]),
                str(log_ends[p] - consumed[p]),
                "g_c0-0",
            ]
            for p in (0, 1)
        ]
        assert lines[3] == "BROKER INFO"
        assert lines[4:] == [f"{i} -> 127.0.0.1:{b.port}" for i, b in enumerate(brokers)]

        groups = CliRunner().invoke(main, ["consumer-groups", "--zookeeper", zk_connect, "--list"])
        assert groups.exit_code == 0 and "g" in groups.output.split(), groups.output
        described = CliRunner().invoke(main, ["consumer-groups", "--zookeeper", zk_connect, "--describe", "--group", "g"])
        assert described.output.splitlines() == [  # 0.9's ZooKeeper describe, the owner its consumer thread
            "GROUP, TOPIC, PARTITION, CURRENT OFFSET, LOG END OFFSET, LAG, OWNER",
            *(f"g, logs, {p}, {consumed[p]}, {log_ends[p]}, {log_ends[p] - consumed[p]}, g_c0-0" for p in (0, 1)),
        ]
        missing = CliRunner().invoke(main, ["consumer-groups", "--zookeeper", zk_connect, "--describe", "--group", "x"])
        assert (missing.exit_code, missing.output.strip()) == (1, "zkafka: error: Consumer group 'x' does not exist in ZooKeeper.")
        result = CliRunner().invoke(
            main, ["offset-checker", "--zookeeper", zk_connect, "--group", "g", "--json"]
        )
        report = json.loads(result.output)
        assert [(r["partition"], r["offset"], r["log_size"]) for r in report["topics"][0]["partitions"]] == [
            (p, consumed[p], log_ends[p]) for p in (0, 1)
        ]
    finally:
        connector.shutdown()

    brokers[leaders[1]].stop()  # the leader of partition 1 goes away: the controller marks it leaderless
    state = "/brokers/topics/logs/partitions/1/state"
    wait_until(lambda: json.loads(zk_client.get(state)[0])["leader"] == -1, message="partition 1 offline")
    result = CliRunner().invoke(
        main, ["offset-checker", "--zookeeper", zk_connect, "--group", "g", "--line", "0.8"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [re.split(r"\s+", line)[:3] for line in lines[1:-1]] == [["g", "logs", "0"]]
    assert lines[-1] == "No broker for partition logs - 1"


def test_perf_consume_reads_a_08_topic_through_the_high_level_consumer(start_broker08, zk_connect, zk_client):
    brokers = start_cluster08(start_broker08, zk_client, topics={"perf": 3})
    produce08(brokers, "perf", 3000)
    result = zkafka(
        "perf", "consume", "--zookeeper", zk_connect, "--topic", "perf", "--messages", "3000", "--threads", "2",
        "--json", "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_messages"] == 3000
    assert report["total_bytes"] == sum(len(f"m-perf-{i}") for i in range(3000))
    assert not [g for g in get_children(zk_client, "/consumers") if g.startswith("perf-consumer-")]
